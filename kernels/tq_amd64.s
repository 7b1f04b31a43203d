// TQ2_0 against Q8_K on AVX2. The stored codes c = value + 1 (0..3) are
// unsigned bytes: VPMADDUBSW(c, a) pairs are at most 2·3·128 = 768 in
// magnitude, so a super-block's eight products per int16 lane (at most
// 6144) add without saturating, VPMADDWD widens them, and the activation
// block sums (Q8_K's bsums, Σ a) subtract the +1: the int32 Σ (c-1)·a is
// exact for every byte pattern. The float step is the scalar dot's, in the
// same order (d = d_a·fp16(d_w); sum += float(isum)·d), so both routines
// here are bit-identical to dotTQ2_0 for activations whose bsums are their
// sums (QuantizeAct's), and to each other for any bytes.

#include "textflag.h"
#include "rows4_amd64.h"

DATA tqc03<>+0(SB)/4, $0x03030303
GLOBL tqc03<>(SB), RODATA|NOPTR, $4
DATA tqcw1<>+0(SB)/4, $0x00010001
GLOBL tqcw1<>(SB), RODATA|NOPTR, $4

// acc16 += VPMADDUBSW((q >> 2l) & 3, the 32 activations at ao(DI)); Y15 =
// 0x03 bytes, q is left intact, Y13/Y12 are scratch.
#define TQ2_PART(q, l, ao, acc16) \
	VPSRLW $(2*l), q, Y13; \
	VPAND Y15, Y13, Y13; \
	VPMADDUBSW ao(DI), Y13, Y13; \
	VPADDW Y13, acc16, acc16

// acc16 = the int16 pair sums of all 256 codes of the block at r against
// the activation block at DI. Clobbers Y10, Y11.
#define TQ2_CODES(r, acc16) \
	VMOVDQU (r), Y10; \
	VMOVDQU 32(r), Y11; \
	VPSRLW $0, Y10, Y13; \
	VPAND Y15, Y13, Y13; \
	VPMADDUBSW 4(DI), Y13, acc16; \
	TQ2_PART(Y10, 1, 36, acc16); \
	TQ2_PART(Y10, 2, 68, acc16); \
	TQ2_PART(Y10, 3, 100, acc16); \
	TQ2_PART(Y11, 0, 132, acc16); \
	TQ2_PART(Y11, 1, 164, acc16); \
	TQ2_PART(Y11, 2, 196, acc16); \
	TQ2_PART(Y11, 3, 228, acc16)

// AX = the int32 Σ (c-1)·a from acc16 (x: its low half) and Y9 = VPMADDWD(bsums, 1).
// Clobbers Y12, acc16.
#define TQ2_ISUM(acc16, x) \
	VPMADDWD Y14, acc16, acc16; \
	VPSUBD Y9, acc16, acc16; \
	VEXTRACTI128 $1, acc16, X12; \
	VPADDD X12, x, x; \
	VPSHUFD $0x4E, x, X12; \
	VPADDD X12, x, x; \
	VPSHUFD $0xB1, x, X12; \
	VPADDD X12, x, x; \
	VMOVD x, AX

// sum += float(AX) · (d_a (f32 at DI) · fp16(d_w at r+64)). Clobbers X12, X13, BX.
#define TQ2_FIN(r, sum) \
	MOVWLZX 64(r), BX; \
	VMOVD BX, X13; \
	VCVTPH2PS X13, X13; \
	VMULSS (DI), X13, X13; \
	VCVTSI2SSL AX, X12, X12; \
	VMULSS X13, X12, X12; \
	VADDSS X12, sum, sum

// Y9 = the activation block's bsums pairwise added (8 int32).
#define TQ2_BSUMS \
	VMOVDQU 260(DI), Y9; \
	VPMADDWD Y14, Y9, Y9

// func dotTQ2_0Q8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotTQ2_0Q8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD tqc03<>(SB), Y15
	VPBROADCASTD tqcw1<>(SB), Y14
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ tq2done
tq2loop:
	TQ2_BSUMS
	TQ2_CODES(SI, Y1)
	TQ2_ISUM(Y1, X1)
	TQ2_FIN(SI, X0)
	ADDQ $66, SI
	ADDQ $292, DI
	DECQ CX
	JNZ tq2loop
tq2done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotRows4TQ2_0Q8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4TQ2_0Q8_KAVX2(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD tqc03<>(SB), Y15
	VPBROADCASTD tqcw1<>(SB), Y14
	VXORPS X4, X4, X4
	VXORPS X5, X5, X5
	VXORPS X6, X6, X6
	VXORPS X7, X7, X7
	TESTQ CX, CX
	JZ r4tq2done
r4tq2loop:
	TQ2_BSUMS
	TQ2_CODES(SI, Y0)
	TQ2_CODES(R10, Y1)
	TQ2_CODES(R11, Y2)
	TQ2_CODES(R12, Y3)
	TQ2_ISUM(Y0, X0)
	TQ2_FIN(SI, X4)
	TQ2_ISUM(Y1, X1)
	TQ2_FIN(R10, X5)
	TQ2_ISUM(Y2, X2)
	TQ2_FIN(R11, X6)
	TQ2_ISUM(Y3, X3)
	TQ2_FIN(R12, X7)
	ADVW4(66)
	ADDQ $292, DI
	DECQ CX
	JNZ r4tq2loop
r4tq2done:
	MOVSS X4, 0(R9)
	MOVSS X5, 4(R9)
	MOVSS X6, 8(R9)
	MOVSS X7, 12(R9)
	VZEROUPPER
	RET

// ---- TQ1_0 against Q8_K on AVX2. Trit n of a byte b is
// ((b·3^n mod 256)·3) >> 8: per 16-bit word, the low byte and the high byte
// are multiplied by 3^n separately (VPMULLW; the low one masked to 8 bits,
// the high one's product already sits mod 256 in the high byte), moved to
// the high byte and VPMULHUW by 3 gives (q·3) >> 8. Eight 32-byte vectors
// of trits cover a super-block in the activations' order: qs[0..31] at
// 3^0..3^4 (elements 0..159), qs[32..47] in both lanes at (1, 3), (9, 27)
// (elements 160..223), and qs[32..47] at 81 beside qh[0..3] repeated four
// times at 1, 3, 9, 27 (elements 224..255). Trits ≤ 2 make each
// VPMADDUBSW pair at most 512 in magnitude, eight of them add in int16, and
// the bsums remove the +1 as for TQ2_0: the int32 Σ (t-1)·a is exact, and
// the float step is the scalar dot's (bit-identical to dotTQ1_0 for
// QuantizeAct's activations).

DATA tqp1<>+0(SB)/8, $0x0001000100010001
DATA tqp1<>+8(SB)/8, $0x0001000100010001
DATA tqp1<>+16(SB)/8, $0x0001000100010001
DATA tqp1<>+24(SB)/8, $0x0001000100010001
GLOBL tqp1<>(SB), RODATA|NOPTR, $32
DATA tqp3<>+0(SB)/8, $0x0003000300030003
DATA tqp3<>+8(SB)/8, $0x0003000300030003
DATA tqp3<>+16(SB)/8, $0x0003000300030003
DATA tqp3<>+24(SB)/8, $0x0003000300030003
GLOBL tqp3<>(SB), RODATA|NOPTR, $32
DATA tqp9<>+0(SB)/8, $0x0009000900090009
DATA tqp9<>+8(SB)/8, $0x0009000900090009
DATA tqp9<>+16(SB)/8, $0x0009000900090009
DATA tqp9<>+24(SB)/8, $0x0009000900090009
GLOBL tqp9<>(SB), RODATA|NOPTR, $32
DATA tqp27<>+0(SB)/8, $0x001b001b001b001b
DATA tqp27<>+8(SB)/8, $0x001b001b001b001b
DATA tqp27<>+16(SB)/8, $0x001b001b001b001b
DATA tqp27<>+24(SB)/8, $0x001b001b001b001b
GLOBL tqp27<>(SB), RODATA|NOPTR, $32
DATA tqp81<>+0(SB)/8, $0x0051005100510051
DATA tqp81<>+8(SB)/8, $0x0051005100510051
DATA tqp81<>+16(SB)/8, $0x0051005100510051
DATA tqp81<>+24(SB)/8, $0x0051005100510051
GLOBL tqp81<>(SB), RODATA|NOPTR, $32
DATA tqp5<>+0(SB)/8, $0x0001000100010001
DATA tqp5<>+8(SB)/8, $0x0001000100010001
DATA tqp5<>+16(SB)/8, $0x0003000300030003
DATA tqp5<>+24(SB)/8, $0x0003000300030003
GLOBL tqp5<>(SB), RODATA|NOPTR, $32
DATA tqp6<>+0(SB)/8, $0x0009000900090009
DATA tqp6<>+8(SB)/8, $0x0009000900090009
DATA tqp6<>+16(SB)/8, $0x001b001b001b001b
DATA tqp6<>+24(SB)/8, $0x001b001b001b001b
GLOBL tqp6<>(SB), RODATA|NOPTR, $32
DATA tqp7<>+0(SB)/8, $0x0051005100510051
DATA tqp7<>+8(SB)/8, $0x0051005100510051
DATA tqp7<>+16(SB)/8, $0x0003000300010001
DATA tqp7<>+24(SB)/8, $0x001b001b00090009
GLOBL tqp7<>(SB), RODATA|NOPTR, $32
DATA tqw3<>+0(SB)/8, $0x0003000300030003
DATA tqw3<>+8(SB)/8, $0x0003000300030003
DATA tqw3<>+16(SB)/8, $0x0003000300030003
DATA tqw3<>+24(SB)/8, $0x0003000300030003
GLOBL tqw3<>(SB), RODATA|NOPTR, $32
DATA tqlo<>+0(SB)/8, $0x00ff00ff00ff00ff
DATA tqlo<>+8(SB)/8, $0x00ff00ff00ff00ff
DATA tqlo<>+16(SB)/8, $0x00ff00ff00ff00ff
DATA tqlo<>+24(SB)/8, $0x00ff00ff00ff00ff
GLOBL tqlo<>(SB), RODATA|NOPTR, $32

// dst = the trits of the bytes in src at the word multipliers p (a memory
// operand). Y15 = 0x00ff words, Y13 = 3 words; clobbers Y12.
#define TQ1_TRITS(src, p, dst) \
	VPAND Y15, src, dst; \
	VPMULLW p, dst, dst; \
	VPAND Y15, dst, dst; \
	VPSLLW $8, dst, dst; \
	VPMULHUW Y13, dst, dst; \
	VPANDN src, Y15, Y12; \
	VPMULLW p, Y12, Y12; \
	VPMULHUW Y13, Y12, Y12; \
	VPSLLW $8, Y12, Y12; \
	VPOR Y12, dst, dst

// acc16 (+)= VPMADDUBSW(trits of src at p, the activations at ao(DI)).
#define TQ1_FIRST(src, p, ao, acc16) \
	TQ1_TRITS(src, p, Y8); \
	VPMADDUBSW ao(DI), Y8, acc16

#define TQ1_PART(src, p, ao, acc16) \
	TQ1_TRITS(src, p, Y8); \
	VPMADDUBSW ao(DI), Y8, Y8; \
	VPADDW Y8, acc16, acc16

// acc16 = the int16 pair sums of the block at r against the activations
// at DI. Clobbers Y8, Y10, Y11, Y12.
#define TQ1_CODES(r, acc16) \
	VMOVDQU (r), Y10; \
	TQ1_FIRST(Y10, tqp1<>(SB), 4, acc16); \
	TQ1_PART(Y10, tqp3<>(SB), 36, acc16); \
	TQ1_PART(Y10, tqp9<>(SB), 68, acc16); \
	TQ1_PART(Y10, tqp27<>(SB), 100, acc16); \
	TQ1_PART(Y10, tqp81<>(SB), 132, acc16); \
	VBROADCASTI128 32(r), Y11; \
	TQ1_PART(Y11, tqp5<>(SB), 164, acc16); \
	TQ1_PART(Y11, tqp6<>(SB), 196, acc16); \
	VPBROADCASTD 48(r), X10; \
	VINSERTI128 $1, X10, Y11, Y11; \
	TQ1_PART(Y11, tqp7<>(SB), 228, acc16)

// sum += float(AX) · (d_a (f32 at DI) · fp16(d_w at r+52)).
#define TQ1_FIN(r, sum) \
	MOVWLZX 52(r), BX; \
	VMOVD BX, X13; \
	VCVTPH2PS X13, X13; \
	VMULSS (DI), X13, X13; \
	VCVTSI2SSL AX, X12, X12; \
	VMULSS X13, X12, X12; \
	VADDSS X12, sum, sum

// Y13 = 3 words again after TQ1_FIN used X13.
#define TQ1_RELOAD VMOVDQU tqw3<>(SB), Y13

// func dotTQ1_0Q8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotTQ1_0Q8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VMOVDQU tqlo<>(SB), Y15
	VPBROADCASTD tqcw1<>(SB), Y14
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ tq1done
tq1loop:
	TQ1_RELOAD
	TQ2_BSUMS
	TQ1_CODES(SI, Y1)
	TQ2_ISUM(Y1, X1)
	TQ1_FIN(SI, X0)
	ADDQ $54, SI
	ADDQ $292, DI
	DECQ CX
	JNZ tq1loop
tq1done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotRows4TQ1_0Q8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4TQ1_0Q8_KAVX2(SB), NOSPLIT, $0-40
	ARGSR4
	VMOVDQU tqlo<>(SB), Y15
	VPBROADCASTD tqcw1<>(SB), Y14
	VXORPS X4, X4, X4
	VXORPS X5, X5, X5
	VXORPS X6, X6, X6
	VXORPS X7, X7, X7
	TESTQ CX, CX
	JZ r4tq1done
r4tq1loop:
	TQ1_RELOAD
	TQ2_BSUMS
	TQ1_CODES(SI, Y0)
	TQ1_CODES(R10, Y1)
	TQ1_CODES(R11, Y2)
	TQ1_CODES(R12, Y3)
	TQ2_ISUM(Y0, X0)
	TQ1_FIN(SI, X4)
	TQ2_ISUM(Y1, X1)
	TQ1_FIN(R10, X5)
	TQ2_ISUM(Y2, X2)
	TQ1_FIN(R11, X6)
	TQ2_ISUM(Y3, X3)
	TQ1_FIN(R12, X7)
	ADVW4(54)
	ADDQ $292, DI
	DECQ CX
	JNZ r4tq1loop
r4tq1done:
	MOVSS X4, 0(R9)
	MOVSS X5, 4(R9)
	MOVSS X6, 8(R9)
	MOVSS X7, 12(R9)
	VZEROUPPER
	RET

// ---- TQ1_0 on AVX-512 (BW): TQ1_TRITS on ZMM, four 64-trit vectors per
// super-block: qs[0..31] in both halves at (1, 3) and (9, 27) (elements
// 0..127), [qs[0..31] | qs[32..47] | qs[32..47]] at (81 | 1 | 3)
// (128..191), and [qs[32..47] ×3 | qh[0..3] ×4] at (9 | 27 | 81 | 1, 3, 9,
// 27) (192..255). The int32 Σ (t-1)·a is exact as on AVX2 and the float
// step the scalar dot's, so both routines are bit-identical to dotTQ1_0
// (for QuantizeAct's activations) and to the AVX2 ones.

DATA tqz1<>+0(SB)/8, $0x0001000100010001
DATA tqz1<>+8(SB)/8, $0x0001000100010001
DATA tqz1<>+16(SB)/8, $0x0001000100010001
DATA tqz1<>+24(SB)/8, $0x0001000100010001
DATA tqz1<>+32(SB)/8, $0x0003000300030003
DATA tqz1<>+40(SB)/8, $0x0003000300030003
DATA tqz1<>+48(SB)/8, $0x0003000300030003
DATA tqz1<>+56(SB)/8, $0x0003000300030003
GLOBL tqz1<>(SB), RODATA|NOPTR, $64
DATA tqz2<>+0(SB)/8, $0x0009000900090009
DATA tqz2<>+8(SB)/8, $0x0009000900090009
DATA tqz2<>+16(SB)/8, $0x0009000900090009
DATA tqz2<>+24(SB)/8, $0x0009000900090009
DATA tqz2<>+32(SB)/8, $0x001b001b001b001b
DATA tqz2<>+40(SB)/8, $0x001b001b001b001b
DATA tqz2<>+48(SB)/8, $0x001b001b001b001b
DATA tqz2<>+56(SB)/8, $0x001b001b001b001b
GLOBL tqz2<>(SB), RODATA|NOPTR, $64
DATA tqz3<>+0(SB)/8, $0x0051005100510051
DATA tqz3<>+8(SB)/8, $0x0051005100510051
DATA tqz3<>+16(SB)/8, $0x0051005100510051
DATA tqz3<>+24(SB)/8, $0x0051005100510051
DATA tqz3<>+32(SB)/8, $0x0001000100010001
DATA tqz3<>+40(SB)/8, $0x0001000100010001
DATA tqz3<>+48(SB)/8, $0x0003000300030003
DATA tqz3<>+56(SB)/8, $0x0003000300030003
GLOBL tqz3<>(SB), RODATA|NOPTR, $64
DATA tqz4<>+0(SB)/8, $0x0009000900090009
DATA tqz4<>+8(SB)/8, $0x0009000900090009
DATA tqz4<>+16(SB)/8, $0x001b001b001b001b
DATA tqz4<>+24(SB)/8, $0x001b001b001b001b
DATA tqz4<>+32(SB)/8, $0x0051005100510051
DATA tqz4<>+40(SB)/8, $0x0051005100510051
DATA tqz4<>+48(SB)/8, $0x0003000300010001
DATA tqz4<>+56(SB)/8, $0x001b001b00090009
GLOBL tqz4<>(SB), RODATA|NOPTR, $64

// dst = the trits of the bytes in src at the word multipliers p (memory).
// Z31 = 0x00ff words, Z30 = 3 words; clobbers Z29.
#define TQ1Z_TRITS(src, p, dst) \
	VPANDD Z31, src, dst; \
	VPMULLW p, dst, dst; \
	VPANDD Z31, dst, dst; \
	VPSLLW $8, dst, dst; \
	VPMULHUW Z30, dst, dst; \
	VPANDND src, Z31, Z29; \
	VPMULLW p, Z29, Z29; \
	VPMULHUW Z30, Z29, Z29; \
	VPSLLW $8, Z29, Z29; \
	VPORD Z29, dst, dst

#define TQ1Z_PART(src, p, ao, acc16) \
	TQ1Z_TRITS(src, p, Z28); \
	VPMADDUBSW ao(DI), Z28, Z28; \
	VPADDW Z28, acc16, acc16

// acc16 = the int16 pair sums of the block at r against the activations
// at DI (acc16 a ZMM). Clobbers Z25..Z29.
#define TQ1Z_CODES(r, acc16) \
	VBROADCASTI64X4 (r), Z26; \
	TQ1Z_TRITS(Z26, tqz1<>(SB), Z28); \
	VPMADDUBSW 4(DI), Z28, acc16; \
	TQ1Z_PART(Z26, tqz2<>(SB), 68, acc16); \
	VBROADCASTI32X4 32(r), Z27; \
	VINSERTI64X4 $1, Y27, Z26, Z26; \
	TQ1Z_PART(Z26, tqz3<>(SB), 132, acc16); \
	VPBROADCASTD 48(r), X25; \
	VINSERTI32X4 $3, X25, Z27, Z27; \
	TQ1Z_PART(Z27, tqz4<>(SB), 196, acc16)

// AX = the int32 Σ (t-1)·a from the ZMM acc16 (y, x: its lower halves) and
// Y9 = VPMADDWD(bsums, 1) (8 int32). Z24 = 1 words. Clobbers Y12.
#define TQ1Z_ISUM(acc16, y, x) \
	VPMADDWD Z24, acc16, acc16; \
	VEXTRACTI64X4 $1, acc16, Y12; \
	VPADDD Y12, y, y; \
	VPSUBD Y9, y, y; \
	VEXTRACTI128 $1, y, X12; \
	VPADDD X12, x, x; \
	VPSHUFD $0x4E, x, X12; \
	VPADDD X12, x, x; \
	VPSHUFD $0xB1, x, X12; \
	VPADDD X12, x, x; \
	VMOVD x, AX

#define TQ1Z_SETUP \
	VPBROADCASTD tqlo<>(SB), Z31; \
	VPBROADCASTW tqw3<>(SB), Z30; \
	VPBROADCASTD tqcw1<>(SB), Z24; \
	VPBROADCASTD tqcw1<>(SB), Y14

// func dotTQ1_0Q8_KAVX512(nb int, w, a *byte) float32
TEXT ·dotTQ1_0Q8_KAVX512(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	TQ1Z_SETUP
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ tq1zdone
tq1zloop:
	TQ2_BSUMS
	TQ1Z_CODES(SI, Z1)
	TQ1Z_ISUM(Z1, Y1, X1)
	TQ1_FIN(SI, X0)
	ADDQ $54, SI
	ADDQ $292, DI
	DECQ CX
	JNZ tq1zloop
tq1zdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotRows4TQ1_0Q8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4TQ1_0Q8_KAVX512(SB), NOSPLIT, $0-40
	ARGSR4
	TQ1Z_SETUP
	VXORPS X4, X4, X4
	VXORPS X5, X5, X5
	VXORPS X6, X6, X6
	VXORPS X7, X7, X7
	TESTQ CX, CX
	JZ r4tq1zdone
r4tq1zloop:
	TQ2_BSUMS
	TQ1Z_CODES(SI, Z0)
	TQ1Z_CODES(R10, Z1)
	TQ1Z_CODES(R11, Z2)
	TQ1Z_CODES(R12, Z3)
	TQ1Z_ISUM(Z0, Y0, X0)
	TQ1_FIN(SI, X4)
	TQ1Z_ISUM(Z1, Y1, X1)
	TQ1_FIN(R10, X5)
	TQ1Z_ISUM(Z2, Y2, X2)
	TQ1_FIN(R11, X6)
	TQ1Z_ISUM(Z3, Y3, X3)
	TQ1_FIN(R12, X7)
	ADVW4(54)
	ADDQ $292, DI
	DECQ CX
	JNZ r4tq1zloop
r4tq1zdone:
	MOVSS X4, 0(R9)
	MOVSS X5, 4(R9)
	MOVSS X6, 8(R9)
	MOVSS X7, 12(R9)
	VZEROUPPER
	RET
