#include "textflag.h"
#include "pairt4_amd64.h"

// The activation prep and the weight packer of the byte-layout IQ4_XS
// MatMul (gemmiq4xs8_amd64.go); its AVX-512 kernel is generated
// (gemmiq4xs8_avx512_amd64.s).

// func gemmPrepQ8KI8AVX512(nblk int, a *byte, dst *byte, stride int)
//
// For each of nblk consecutive Q8_K blocks at a: per sub-block s its 32
// quants at dst + 36s and −128·(bsums[2s] + bsums[2s+1]) as int32 at
// dst + 36s + 32, the f32 scale at dst + 288, zero at dst + 292; then
// dst += stride.
TEXT ·gemmPrepQ8KI8AVX512(SB), NOSPLIT, $0-32
	MOVQ nblk+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ dst+16(FP), DI
	MOVQ stride+24(FP), DX
	VPBROADCASTW iq4xs8M128<>(SB), Y15
	TESTQ CX, CX
	JZ b8prepdone
b8preploop:
	MOVL (SI), AX
	MOVL AX, 288(DI)
	MOVL $0, 292(DI)
	VMOVDQU 4(SI), Y0
	VMOVDQU Y0, 0(DI)
	VMOVDQU 36(SI), Y1
	VMOVDQU Y1, 36(DI)
	VMOVDQU 68(SI), Y2
	VMOVDQU Y2, 72(DI)
	VMOVDQU 100(SI), Y3
	VMOVDQU Y3, 108(DI)
	VMOVDQU 132(SI), Y0
	VMOVDQU Y0, 144(DI)
	VMOVDQU 164(SI), Y1
	VMOVDQU Y1, 180(DI)
	VMOVDQU 196(SI), Y2
	VMOVDQU Y2, 216(DI)
	VMOVDQU 228(SI), Y3
	VMOVDQU Y3, 252(DI)
	VMOVDQU 260(SI), Y4
	VPMADDWD Y15, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VMOVD X4, 32(DI)
	VPEXTRD $1, X4, 68(DI)
	VPEXTRD $2, X4, 104(DI)
	VPEXTRD $3, X4, 140(DI)
	VMOVD X5, 176(DI)
	VPEXTRD $1, X5, 212(DI)
	VPEXTRD $2, X5, 248(DI)
	VPEXTRD $3, X5, 284(DI)
	ADDQ $292, SI
	ADDQ DX, DI
	DECQ CX
	JNZ b8preploop
b8prepdone:
	VZEROUPPER
	RET

DATA iq4xs8M128<>+0(SB)/2, $0xff80
GLOBL iq4xs8M128<>(SB), RODATA|NOPTR, $2

DATA iq4xs8Nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA iq4xs8Nib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL iq4xs8Nib<>(SB), RODATA|NOPTR, $16
// kvalues_iq4nl + 128 as uint8.
DATA iq4xs8Val<>+0(SB)/8, $0x766a5d4f3f2d1801
DATA iq4xs8Val<>+8(SB)/8, $0xf1d9c5b5a6998d81
GLOBL iq4xs8Val<>(SB), RODATA|NOPTR, $16

// Row i (0..3 of the group at R10) of sub-block s: its scale code − 32 as
// int32 at so(R9), its 32 values + 128 as bytes in y (elements 0..15 from
// the low nibbles in the low half, 16..31 from the high nibbles in the
// high half). X15 = 0x0f bytes, X14 = the codebook + 128.
#define BPROW(s, q, sb, sh, shs, y, x, so) \
	MOVBLZX sb, AX; \
	SHRL shs, AX; \
	ANDL $15, AX; \
	MOVWLZX sh, DX; \
	SHRL $(2*s), DX; \
	ANDL $3, DX; \
	SHLL $4, DX; \
	ORL DX, AX; \
	SUBL $32, AX; \
	MOVL AX, so(R9); \
	VMOVDQU q, X8; \
	VPSRLW $4, X8, X9; \
	VPAND X15, X8, X8; \
	VPAND X15, X9, X9; \
	VPSHUFB X8, X14, x; \
	VPSHUFB X9, X14, X9; \
	VINSERTI128 $1, X9, y, y

// Sub-block s of the four rows at R10: values at 8+16s, scale bits at
// 4+s/2 (nibble s%2) and 2 (bits 2s, 2s+1).
#define BPSUB(s) \
	BPROW(s, (8+16*s)(R10), (4+s/2)(R10), 2(R10), $(4*(s%2)), Y0, X0, (576*s+512)); \
	BPROW(s, (8+16*s)(R10)(R8*1), (4+s/2)(R10)(R8*1), 2(R10)(R8*1), $(4*(s%2)), Y1, X1, (576*s+516)); \
	BPROW(s, (8+16*s)(R10)(R8*2), (4+s/2)(R10)(R8*2), 2(R10)(R8*2), $(4*(s%2)), Y2, X2, (576*s+520)); \
	BPROW(s, (8+16*s)(R10)(R11*1), (4+s/2)(R10)(R11*1), 2(R10)(R11*1), $(4*(s%2)), Y3, X3, (576*s+524)); \
	PAIRT4(Y0, Y1, Y2, Y3, X1, X2, X3, (576*s))

// func gemmPackIQ4XS8AVX2(nblk int, w *byte, ws int, dst *byte)
//
// The values and scales of packIQ4XS8's layout (not the d's): super-blocks
// [0, nblk) of the 16 rows w, w+ws, ..., w+15·ws, four rows at a time.
TEXT ·gemmPackIQ4XS8AVX2(SB), NOSPLIT, $0-32
	MOVQ nblk+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ ws+16(FP), R8
	MOVQ dst+24(FP), DI
	LEAQ (R8)(R8*2), R11
	VMOVDQU iq4xs8Nib<>(SB), X15
	VMOVDQU iq4xs8Val<>(SB), X14
	TESTQ CX, CX
	JZ b8pdone
b8pblock:
	MOVQ SI, R10
	MOVQ DI, R9
	MOVQ $4, BX
b8pgroup:
	BPSUB(0)
	BPSUB(1)
	BPSUB(2)
	BPSUB(3)
	BPSUB(4)
	BPSUB(5)
	BPSUB(6)
	BPSUB(7)
	LEAQ (R10)(R8*4), R10
	ADDQ $16, R9
	DECQ BX
	JNZ b8pgroup
	ADDQ $136, SI
	ADDQ $4672, DI
	DECQ CX
	JNZ b8pblock
b8pdone:
	VZEROUPPER
	RET
