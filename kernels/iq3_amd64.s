// IQ3_XXS and IQ3_S against Q8_K on AVX2. Per 32-weight group: the eight
// grid entries are scalar loads inserted into lanes (IQ3_S first forms its
// nine-bit indices in a vector, the quant bytes ORed with the qh bit moved
// by a per-lane shift, and stores them to the frame; VPGATHERDD measured
// 3.5× slower on Zen 5),
// the 32 sign bits become a byte mask (VPSHUFB byte broadcast, AND with
// the bit of each position, compare), the grid bytes are negated under the
// mask (|grid| ≤ 62 fits int8), and VPMADDUBSW(|a|, sign(a)·grid) forms the
// products: exact for every activation byte, -128 included, and its int16
// pair sums (≤ 2·128·62) cannot saturate. VPMADDWD by the group's odd
// scale 2s+1 widens to int32; a super-block's sum (≤ 256·62·128·31 < 2^31)
// is exact. The float step is the scalar dot's, in the same order, so the
// routines are bit-identical to dotIQ3_XXS / dotIQ3_S, and the four-row
// ones to the one-row ones.

#include "textflag.h"
#include "rows4_amd64.h"

// iq3shuf broadcasts byte l of a dword into bytes 8l..8l+7 (VPSHUFB works
// per 128-bit lane; the dword is in both).
DATA iq3shuf<>+0(SB)/8, $0x0000000000000000
DATA iq3shuf<>+8(SB)/8, $0x0101010101010101
DATA iq3shuf<>+16(SB)/8, $0x0202020202020202
DATA iq3shuf<>+24(SB)/8, $0x0303030303030303
GLOBL iq3shuf<>(SB), RODATA|NOPTR, $32
DATA iq3bits<>+0(SB)/8, $0x8040201008040201
GLOBL iq3bits<>(SB), RODATA|NOPTR, $8
// iq3hshift moves bit m of a qh byte to bit 8 in dword lane m.
DATA iq3hshift<>+0(SB)/4, $8
DATA iq3hshift<>+4(SB)/4, $7
DATA iq3hshift<>+8(SB)/4, $6
DATA iq3hshift<>+12(SB)/4, $5
DATA iq3hshift<>+16(SB)/4, $4
DATA iq3hshift<>+20(SB)/4, $3
DATA iq3hshift<>+24(SB)/4, $2
DATA iq3hshift<>+28(SB)/4, $1
GLOBL iq3hshift<>(SB), RODATA|NOPTR, $32
DATA iq3h100<>+0(SB)/4, $0x100
GLOBL iq3h100<>(SB), RODATA|NOPTR, $4
DATA iq3quarter<>+0(SB)/4, $0x3e800000
GLOBL iq3quarter<>(SB), RODATA|NOPTR, $4

// Constants: Y15 = iq3shuf, Y14 = iq3bits; IQ3_S also Y13 = iq3hshift,
// Y12 = 0x100 dwords. R13 = iq3xxsSignMask (IQ3_XXS), R14 = the grid.
#define IQ3_CONSTS \
	VMOVDQU iq3shuf<>(SB), Y15; \
	VPBROADCASTQ iq3bits<>(SB), Y14

// Y5 = 0xff in the bytes whose sign bit in the dword broadcast in Y5 is set.
#define IQ3_SIGNMASK \
	VPSHUFB Y15, Y5, Y5; \
	VPAND Y14, Y5, Y5; \
	VPCMPEQB Y14, Y5, Y5

// acc += AX·Σ (sign·grid)·a over the group: grid entries in Y8, sign mask
// in Y5, activations at aoff(DI), odd scale in AX. Clobbers Y8..Y11.
#define IQ3_MUL(aoff, acc) \
	VPXOR Y5, Y8, Y8; \
	VPSUBB Y5, Y8, Y8; \
	VMOVDQU aoff(DI), Y9; \
	VPABSB Y9, Y10; \
	VPSIGNB Y9, Y8, Y8; \
	VPMADDUBSW Y8, Y10, Y8; \
	VMOVD AX, X11; \
	VPBROADCASTW X11, Y11; \
	VPMADDWD Y11, Y8, Y8; \
	VPADDD Y8, acc, acc

// Y8 = the grid entries (base R14) of the eight index bytes at q(r)
// (IQ3_XXS). Scalar loads inserted into lanes: faster than VPGATHERDD.
// Clobbers X7, R8 (free in the four-row routines once ARGSR4 has used the stride).
#define IQ3_LOOK8B(r, q) \
	MOVBLZX q(r), R8; \
	VMOVD (R14)(R8*4), X8; \
	MOVBLZX q+1(r), R8; \
	VPINSRD $1, (R14)(R8*4), X8, X8; \
	MOVBLZX q+2(r), R8; \
	VPINSRD $2, (R14)(R8*4), X8, X8; \
	MOVBLZX q+3(r), R8; \
	VPINSRD $3, (R14)(R8*4), X8, X8; \
	MOVBLZX q+4(r), R8; \
	VMOVD (R14)(R8*4), X7; \
	MOVBLZX q+5(r), R8; \
	VPINSRD $1, (R14)(R8*4), X7, X7; \
	MOVBLZX q+6(r), R8; \
	VPINSRD $2, (R14)(R8*4), X7, X7; \
	MOVBLZX q+7(r), R8; \
	VPINSRD $3, (R14)(R8*4), X7, X7; \
	VINSERTI128 $1, X7, Y8, Y8

// Y8 = the grid entries of the eight index dwords stored at 0(SP)
// (IQ3_S). Clobbers X7, R8.
#define IQ3_LOOK8D \
	MOVL 0(SP), R8; \
	VMOVD (R14)(R8*4), X8; \
	MOVL 4(SP), R8; \
	VPINSRD $1, (R14)(R8*4), X8, X8; \
	MOVL 8(SP), R8; \
	VPINSRD $2, (R14)(R8*4), X8, X8; \
	MOVL 12(SP), R8; \
	VPINSRD $3, (R14)(R8*4), X8, X8; \
	MOVL 16(SP), R8; \
	VMOVD (R14)(R8*4), X7; \
	MOVL 20(SP), R8; \
	VPINSRD $1, (R14)(R8*4), X7, X7; \
	MOVL 24(SP), R8; \
	VPINSRD $2, (R14)(R8*4), X7, X7; \
	MOVL 28(SP), R8; \
	VPINSRD $3, (R14)(R8*4), X7, X7; \
	VINSERTI128 $1, X7, Y8, Y8

// IQ3_XXS group: scale-and-sign word at soff(r), indices at qoff(r). The
// sign mask is four lookups of iq3xxsSignMask (R13: ksigns as 0x00/0xff
// bytes) by the word's 7-bit fields. Clobbers AX, DX, X9.
#define IQ3XXS_GROUP(r, soff, qoff, aoff, acc) \
	MOVL soff(r), AX; \
	MOVL AX, DX; \
	ANDL $127, DX; \
	VMOVQ (R13)(DX*8), X5; \
	MOVL AX, DX; \
	SHRL $7, DX; \
	ANDL $127, DX; \
	VPINSRQ $1, (R13)(DX*8), X5, X5; \
	MOVL AX, DX; \
	SHRL $14, DX; \
	ANDL $127, DX; \
	VMOVQ (R13)(DX*8), X9; \
	MOVL AX, DX; \
	SHRL $21, DX; \
	ANDL $127, DX; \
	VPINSRQ $1, (R13)(DX*8), X9, X9; \
	VINSERTI128 $1, X9, Y5, Y5; \
	SHRL $28, AX; \
	LEAL 1(AX)(AX*1), AX; \
	IQ3_LOOK8B(r, qoff); \
	IQ3_MUL(aoff, acc)

// acc = the exact int32 lanes of an IQ3_XXS super-block at r against DI.
#define IQ3XXS_BLOCK(r, acc) \
	VPXOR acc, acc, acc; \
	IQ3XXS_GROUP(r, 66, 2, 4, acc); \
	IQ3XXS_GROUP(r, 70, 10, 36, acc); \
	IQ3XXS_GROUP(r, 74, 18, 68, acc); \
	IQ3XXS_GROUP(r, 78, 26, 100, acc); \
	IQ3XXS_GROUP(r, 82, 34, 132, acc); \
	IQ3XXS_GROUP(r, 86, 42, 164, acc); \
	IQ3XXS_GROUP(r, 90, 50, 196, acc); \
	IQ3XXS_GROUP(r, 94, 58, 228, acc)

// IQ3_S group g: indices at qoff(r) with bit 8 from the qh byte at hoff(r),
// signs at soff(r), scale nibble sh of the byte at coff(r).
#define IQ3S_GROUP(r, qoff, hoff, soff, coff, sh, aoff, acc) \
	VPBROADCASTD soff(r), Y5; \
	IQ3_SIGNMASK; \
	MOVBLZX hoff(r), DX; \
	VMOVD DX, X7; \
	VPBROADCASTD X7, Y7; \
	VPSLLVD Y13, Y7, Y7; \
	VPAND Y12, Y7, Y7; \
	VPMOVZXBD qoff(r), Y6; \
	VPOR Y7, Y6, Y6; \
	VMOVDQU Y6, 0(SP); \
	IQ3_LOOK8D; \
	MOVBLZX coff(r), AX; \
	SHRL $sh, AX; \
	ANDL $15, AX; \
	LEAL 1(AX)(AX*1), AX; \
	IQ3_MUL(aoff, acc)

#define IQ3S_BLOCK(r, acc) \
	VPXOR acc, acc, acc; \
	IQ3S_GROUP(r, 2, 66, 74, 106, 0, 4, acc); \
	IQ3S_GROUP(r, 10, 67, 78, 106, 4, 36, acc); \
	IQ3S_GROUP(r, 18, 68, 82, 107, 0, 68, acc); \
	IQ3S_GROUP(r, 26, 69, 86, 107, 4, 100, acc); \
	IQ3S_GROUP(r, 34, 70, 90, 108, 0, 132, acc); \
	IQ3S_GROUP(r, 42, 71, 94, 108, 4, 164, acc); \
	IQ3S_GROUP(r, 50, 72, 98, 109, 0, 196, acc); \
	IQ3S_GROUP(r, 58, 73, 102, 109, 4, 228, acc)

// sum += float(Σ acc) · (fp16(d at r) · d_a (f32 at DI)), the scalar dot's
// float steps. Clobbers AX, BX, X9, X10.
#define IQ3_FIN(acc, x, r, sum) \
	VEXTRACTI128 $1, acc, X9; \
	VPADDD X9, x, x; \
	VPSHUFD $0x4E, x, X9; \
	VPADDD X9, x, x; \
	VPSHUFD $0xB1, x, X9; \
	VPADDD X9, x, x; \
	VMOVD x, AX; \
	MOVWLZX (r), BX; \
	VMOVD BX, X9; \
	VCVTPH2PS X9, X9; \
	VMULSS (DI), X9, X9; \
	VCVTSI2SSL AX, X10, X10; \
	VMULSS X9, X10, X10; \
	VADDSS X10, sum, sum

// func dotIQ3_XXSQ8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotIQ3_XXSQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	LEAQ ·iq3xxsSignMask(SB), R13
	LEAQ ·iq3xxsGrid(SB), R14
	IQ3_CONSTS
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ xxsdone
xxsloop:
	IQ3XXS_BLOCK(SI, Y1)
	IQ3_FIN(Y1, X1, SI, X0)
	ADDQ $98, SI
	ADDQ $292, DI
	DECQ CX
	JNZ xxsloop
xxsdone:
	VMULSS iq3quarter<>(SB), X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotRows4IQ3_XXSQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ3_XXSQ8_KAVX2(SB), NOSPLIT, $0-40
	ARGSR4
	LEAQ ·iq3xxsSignMask(SB), R13
	LEAQ ·iq3xxsGrid(SB), R14
	IQ3_CONSTS
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	TESTQ CX, CX
	JZ r4xxsdone
r4xxsloop:
	IQ3XXS_BLOCK(SI, Y4)
	IQ3_FIN(Y4, X4, SI, X0)
	IQ3XXS_BLOCK(R10, Y4)
	IQ3_FIN(Y4, X4, R10, X1)
	IQ3XXS_BLOCK(R11, Y4)
	IQ3_FIN(Y4, X4, R11, X2)
	IQ3XXS_BLOCK(R12, Y4)
	IQ3_FIN(Y4, X4, R12, X3)
	ADVW4(98)
	ADDQ $292, DI
	DECQ CX
	JNZ r4xxsloop
r4xxsdone:
	VMOVSS iq3quarter<>(SB), X4
	VMULSS X4, X0, X0
	VMULSS X4, X1, X1
	VMULSS X4, X2, X2
	VMULSS X4, X3, X3
	MOVSS X0, 0(R9)
	MOVSS X1, 4(R9)
	MOVSS X2, 8(R9)
	MOVSS X3, 12(R9)
	VZEROUPPER
	RET

#define IQ3S_CONSTS \
	IQ3_CONSTS; \
	VMOVDQU iq3hshift<>(SB), Y13; \
	VPBROADCASTD iq3h100<>(SB), Y12

// func dotIQ3_SQ8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotIQ3_SQ8_KAVX2(SB), NOSPLIT, $32-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	LEAQ ·iq3sGrid(SB), R14
	IQ3S_CONSTS
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ sdone
sloop:
	IQ3S_BLOCK(SI, Y1)
	IQ3_FIN(Y1, X1, SI, X0)
	ADDQ $110, SI
	ADDQ $292, DI
	DECQ CX
	JNZ sloop
sdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotRows4IQ3_SQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ3_SQ8_KAVX2(SB), NOSPLIT, $32-40
	ARGSR4
	LEAQ ·iq3sGrid(SB), R14
	IQ3S_CONSTS
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	TESTQ CX, CX
	JZ r4sdone
r4sloop:
	IQ3S_BLOCK(SI, Y4)
	IQ3_FIN(Y4, X4, SI, X0)
	IQ3S_BLOCK(R10, Y4)
	IQ3_FIN(Y4, X4, R10, X1)
	IQ3S_BLOCK(R11, Y4)
	IQ3_FIN(Y4, X4, R11, X2)
	IQ3S_BLOCK(R12, Y4)
	IQ3_FIN(Y4, X4, R12, X3)
	ADVW4(110)
	ADDQ $292, DI
	DECQ CX
	JNZ r4sloop
r4sdone:
	MOVSS X0, 0(R9)
	MOVSS X1, 4(R9)
	MOVSS X2, 8(R9)
	MOVSS X3, 12(R9)
	VZEROUPPER
	RET
