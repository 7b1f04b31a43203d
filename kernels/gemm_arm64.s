// Packed matrix × matrix kernels for NEON with the ARMv8.2 dot-product
// extension (ASIMDDP), over gemm.go's 32-element packed layout: per block,
// vector j (64 bytes) holds bytes 4j..4j+3 of each of the 16 rows as
// unsigned quants (Q4_0: q in 0..15, Q8_0: w+128), then the 16 rows' f32
// scales. SDOT by element multiplies one 16-byte quarter of a vector (four
// rows' four quants) with the activation's four bytes 4j..4j+3, so 32
// SDOTs give the 16 rows' exact block sums with no horizontal reduction.
// SDOT is signed × signed: Q4_0's 0..15 are the same bytes signed, and
// the prep's -8·Σa removes the offset; Q8_0's w+128 (and IQ4_NL's codebook
// value + 128, which shares the Q8_0 kernel) are flipped back to signed
// bytes (EOR 0x80) and the prep's bias is not used.

#include "textflag.h"
#include "neon_arm64.h"

// Vd.4S += Σ of each 4 consecutive Vn.16B × Vm.4B[i] (signed, exact).
#define SDOTE(d, n, m, i) WORD $(0x4F80E000 | (((i)&1)<<21) | ((((i)>>1)&1)<<11) | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S = Vn.4S × Vm.4S.
#define FMUL4S(d, n, m) WORD $(0x6E20DC00 | ((m)<<16) | ((n)<<5) | (d))

// func gemmKernelQ4_0NEONDot(nblk int, pw, a *byte, as int, prep *byte, pstride int, y *float32, ys, ntok, first int)
TEXT ·gemmKernelQ4_0NEONDot(SB), NOSPLIT, $0-80
	MOVD nblk+0(FP), R0
	MOVD a+16(FP), R2
	MOVD as+24(FP), R3
	MOVD prep+32(FP), R4
	MOVD pstride+40(FP), R5
	MOVD y+48(FP), R7
	MOVD ys+56(FP), R8
	LSL $2, R8, R8
	MOVD ntok+64(FP), R9
	MOVD first+72(FP), R10
	VMOVI $128, V12.B16
g4tok:
	CBZ R10, g4load
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	B g4blocks
g4load:
	VLD1 (R7), [V16.S4, V17.S4, V18.S4, V19.S4]
g4blocks:
	MOVD pw+8(FP), R6
	MOVD R2, R11
	MOVD R4, R12
	MOVD R0, R13
g4blk:
	ADD $2, R11, R14
	VLD1 (R14), [V0.B16, V1.B16]
	ADD $34, R11, R11
	MOVWU (R12), R15
	FMOVS 4(R12), F3
	ADD R5, R12, R12
	VDUP R15, V8.S4
	VDUP R15, V9.S4
	VDUP R15, V10.S4
	VDUP R15, V11.S4
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	SDOTE(8, 4, 0, 0)
	SDOTE(9, 5, 0, 0)
	SDOTE(10, 6, 0, 0)
	SDOTE(11, 7, 0, 0)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	SDOTE(8, 4, 0, 1)
	SDOTE(9, 5, 0, 1)
	SDOTE(10, 6, 0, 1)
	SDOTE(11, 7, 0, 1)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	SDOTE(8, 4, 0, 2)
	SDOTE(9, 5, 0, 2)
	SDOTE(10, 6, 0, 2)
	SDOTE(11, 7, 0, 2)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	SDOTE(8, 4, 0, 3)
	SDOTE(9, 5, 0, 3)
	SDOTE(10, 6, 0, 3)
	SDOTE(11, 7, 0, 3)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	SDOTE(8, 4, 1, 0)
	SDOTE(9, 5, 1, 0)
	SDOTE(10, 6, 1, 0)
	SDOTE(11, 7, 1, 0)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	SDOTE(8, 4, 1, 1)
	SDOTE(9, 5, 1, 1)
	SDOTE(10, 6, 1, 1)
	SDOTE(11, 7, 1, 1)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	SDOTE(8, 4, 1, 2)
	SDOTE(9, 5, 1, 2)
	SDOTE(10, 6, 1, 2)
	SDOTE(11, 7, 1, 2)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	SDOTE(8, 4, 1, 3)
	SDOTE(9, 5, 1, 3)
	SDOTE(10, 6, 1, 3)
	SDOTE(11, 7, 1, 3)
	VLD1.P 64(R6), [V4.S4, V5.S4, V6.S4, V7.S4]
	SCVTF4S(8, 8)
	SCVTF4S(9, 9)
	SCVTF4S(10, 10)
	SCVTF4S(11, 11)
	FMUL4S(8, 4, 8)
	FMUL4S(9, 5, 9)
	FMUL4S(10, 6, 10)
	FMUL4S(11, 7, 11)
	FMLAS0(16, 8, 3)
	FMLAS0(17, 9, 3)
	FMLAS0(18, 10, 3)
	FMLAS0(19, 11, 3)
	SUBS $1, R13, R13
	BNE g4blk
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R7)
	ADD R3, R2, R2
	ADD $8, R4, R4
	ADD R8, R7, R7
	SUBS $1, R9, R9
	BNE g4tok
	RET

// func gemmKernelQ8_0NEONDot(nblk int, pw, a *byte, as int, prep *byte, pstride int, y *float32, ys, ntok, first int)
TEXT ·gemmKernelQ8_0NEONDot(SB), NOSPLIT, $0-80
	MOVD nblk+0(FP), R0
	MOVD a+16(FP), R2
	MOVD as+24(FP), R3
	MOVD prep+32(FP), R4
	MOVD pstride+40(FP), R5
	MOVD y+48(FP), R7
	MOVD ys+56(FP), R8
	LSL $2, R8, R8
	MOVD ntok+64(FP), R9
	MOVD first+72(FP), R10
	VMOVI $128, V12.B16
g8tok:
	CBZ R10, g8load
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	B g8blocks
g8load:
	VLD1 (R7), [V16.S4, V17.S4, V18.S4, V19.S4]
g8blocks:
	MOVD pw+8(FP), R6
	MOVD R2, R11
	MOVD R4, R12
	MOVD R0, R13
g8blk:
	ADD $2, R11, R14
	VLD1 (R14), [V0.B16, V1.B16]
	ADD $34, R11, R11
	MOVWU (R12), R15
	FMOVS 4(R12), F3
	ADD R5, R12, R12
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	VEOR V12.B16, V4.B16, V4.B16
	VEOR V12.B16, V5.B16, V5.B16
	VEOR V12.B16, V6.B16, V6.B16
	VEOR V12.B16, V7.B16, V7.B16
	SDOTE(8, 4, 0, 0)
	SDOTE(9, 5, 0, 0)
	SDOTE(10, 6, 0, 0)
	SDOTE(11, 7, 0, 0)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	VEOR V12.B16, V4.B16, V4.B16
	VEOR V12.B16, V5.B16, V5.B16
	VEOR V12.B16, V6.B16, V6.B16
	VEOR V12.B16, V7.B16, V7.B16
	SDOTE(8, 4, 0, 1)
	SDOTE(9, 5, 0, 1)
	SDOTE(10, 6, 0, 1)
	SDOTE(11, 7, 0, 1)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	VEOR V12.B16, V4.B16, V4.B16
	VEOR V12.B16, V5.B16, V5.B16
	VEOR V12.B16, V6.B16, V6.B16
	VEOR V12.B16, V7.B16, V7.B16
	SDOTE(8, 4, 0, 2)
	SDOTE(9, 5, 0, 2)
	SDOTE(10, 6, 0, 2)
	SDOTE(11, 7, 0, 2)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	VEOR V12.B16, V4.B16, V4.B16
	VEOR V12.B16, V5.B16, V5.B16
	VEOR V12.B16, V6.B16, V6.B16
	VEOR V12.B16, V7.B16, V7.B16
	SDOTE(8, 4, 0, 3)
	SDOTE(9, 5, 0, 3)
	SDOTE(10, 6, 0, 3)
	SDOTE(11, 7, 0, 3)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	VEOR V12.B16, V4.B16, V4.B16
	VEOR V12.B16, V5.B16, V5.B16
	VEOR V12.B16, V6.B16, V6.B16
	VEOR V12.B16, V7.B16, V7.B16
	SDOTE(8, 4, 1, 0)
	SDOTE(9, 5, 1, 0)
	SDOTE(10, 6, 1, 0)
	SDOTE(11, 7, 1, 0)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	VEOR V12.B16, V4.B16, V4.B16
	VEOR V12.B16, V5.B16, V5.B16
	VEOR V12.B16, V6.B16, V6.B16
	VEOR V12.B16, V7.B16, V7.B16
	SDOTE(8, 4, 1, 1)
	SDOTE(9, 5, 1, 1)
	SDOTE(10, 6, 1, 1)
	SDOTE(11, 7, 1, 1)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	VEOR V12.B16, V4.B16, V4.B16
	VEOR V12.B16, V5.B16, V5.B16
	VEOR V12.B16, V6.B16, V6.B16
	VEOR V12.B16, V7.B16, V7.B16
	SDOTE(8, 4, 1, 2)
	SDOTE(9, 5, 1, 2)
	SDOTE(10, 6, 1, 2)
	SDOTE(11, 7, 1, 2)
	VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]
	VEOR V12.B16, V4.B16, V4.B16
	VEOR V12.B16, V5.B16, V5.B16
	VEOR V12.B16, V6.B16, V6.B16
	VEOR V12.B16, V7.B16, V7.B16
	SDOTE(8, 4, 1, 3)
	SDOTE(9, 5, 1, 3)
	SDOTE(10, 6, 1, 3)
	SDOTE(11, 7, 1, 3)
	VLD1.P 64(R6), [V4.S4, V5.S4, V6.S4, V7.S4]
	SCVTF4S(8, 8)
	SCVTF4S(9, 9)
	SCVTF4S(10, 10)
	SCVTF4S(11, 11)
	FMUL4S(8, 4, 8)
	FMUL4S(9, 5, 9)
	FMUL4S(10, 6, 10)
	FMUL4S(11, 7, 11)
	FMLAS0(16, 8, 3)
	FMLAS0(17, 9, 3)
	FMLAS0(18, 10, 3)
	FMLAS0(19, 11, 3)
	SUBS $1, R13, R13
	BNE g8blk
	VST1 [V16.S4, V17.S4, V18.S4, V19.S4], (R7)
	ADD R3, R2, R2
	ADD $8, R4, R4
	ADD R8, R7, R7
	SUBS $1, R9, R9
	BNE g8tok
	RET
