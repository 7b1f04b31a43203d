// NEON four-row dot products: DotRows4 (one activation row, four weight rows
// at w + j·stride: generation's MatVec) and Dot4 (one weight row, four
// activation rows at a + j·stride: prefill's MatMul). Each output must be
// bit-identical to the same path's one-row routine in dot_arm64.s, so every
// row repeats that routine's instructions exactly: the same integer lane
// sums, the same float operations with the same operand order (NaN payloads
// included), and the same final reduction. Only work that does not depend
// on the other operand is shared: the activation block is loaded once for
// the four weight rows (DotRows4), the weight block is loaded and unpacked
// once for the four activation rows (Dot4). Row j's accumulator is V16+j
// (the one-row routine's V16), and for the SDOT variants, which alternate
// two accumulators between even and odd blocks, V20+j is its V17.

#include "textflag.h"
#include "neon_arm64.h"

// y[0..3] = the horizontal sums of V16..V19, each added as HSUM16 adds:
// (l0+l1)+(l2+l3).
#define STORE4 \
	MOVD y+32(FP), R9; \
	FADDP4S(16, 16, 17); \
	FADDP4S(18, 18, 19); \
	FADDP4S(16, 16, 18); \
	VST1 [V16.S4], (R9)

// The SDOT variants' final V16+V17 of each row, then STORE4.
#define FOLD4STORE \
	FADD4S(16, 16, 20); \
	FADD4S(17, 17, 21); \
	FADD4S(18, 18, 22); \
	FADD4S(19, 19, 23); \
	STORE4

#define ZERO4 \
	VEOR V16.B16, V16.B16, V16.B16; \
	VEOR V17.B16, V17.B16, V17.B16; \
	VEOR V18.B16, V18.B16, V18.B16; \
	VEOR V19.B16, V19.B16, V19.B16

#define ZERO8 \
	ZERO4; \
	VEOR V20.B16, V20.B16, V20.B16; \
	VEOR V21.B16, V21.B16, V21.B16; \
	VEOR V22.B16, V22.B16, V22.B16; \
	VEOR V23.B16, V23.B16, V23.B16

// Arguments: R0 = nb, R1 = w, R2 = a, and the four strided rows' pointers in
// R1, R6, R7, R8 (ROWS4ARGS) or R2, R6, R7, R8 (DOT4ARGS).
#define ROWS4ARGS \
	MOVD nb+0(FP), R0; \
	MOVD w+8(FP), R1; \
	MOVD a+16(FP), R2; \
	MOVD stride+24(FP), R3; \
	ADD R3, R1, R6; \
	ADD R3, R6, R7; \
	ADD R3, R7, R8

#define DOT4ARGS \
	MOVD nb+0(FP), R0; \
	MOVD w+8(FP), R1; \
	MOVD a+16(FP), R2; \
	MOVD stride+24(FP), R3; \
	ADD R3, R2, R6; \
	ADD R3, R6, R7; \
	ADD R3, R7, R8

// ---- Q4_0 × Q8_0. Weight block: fp16 d, 16 bytes of nibbles; activation
// block: fp16 d, 32 int8.

// V1 = low nibbles - 8, V0 = high nibbles - 8 (V15 = 0x0f, V14 = 8).
#define Q40_UNPACK \
	VAND V15.B16, V0.B16, V1.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VSUB V14.B16, V1.B16, V1.B16; \
	VSUB V14.B16, V0.B16, V0.B16

// V(acc) += F9 · float(lane sums of V1·V2 + V0·V3) (dotQ4_0Q8_0NEON's block).
#define Q40_SUM(acc) \
	SMULL8H(4, 1, 2); \
	SMLAL2_8H(4, 1, 2); \
	SMLAL8H(4, 0, 3); \
	SMLAL2_8H(4, 0, 3); \
	SADDLP4S(5, 4); \
	SCVTF4S(5, 5); \
	FMLAS0(acc, 5, 9)

// The same with SDOT (dotQ4_0Q8_0NEONDot's block); also IQ4_NL's.
#define Q40_DSUM(acc) \
	VEOR V5.B16, V5.B16, V5.B16; \
	SDOT4S(5, 1, 2); \
	SDOT4S(5, 0, 3); \
	SCVTF4S(5, 5); \
	FMLAS0(acc, 5, 9)

// One weight row's block against the loaded activation block (R5, V2, V3).
#define Q40_W(wp, acc) \
	MOVHU.P 2(wp), R4; \
	VLD1.P 16(wp), [V0.B16]; \
	DPRODH; \
	Q40_UNPACK; \
	Q40_SUM(acc)

#define Q40_DW(wp, acc) \
	MOVHU.P 2(wp), R4; \
	VLD1.P 16(wp), [V0.B16]; \
	DPRODH; \
	Q40_UNPACK; \
	Q40_DSUM(acc)

// One activation row's block against the unpacked weight block (R4, V1, V0).
#define ACT_LOAD(ap) \
	MOVHU.P 2(ap), R5; \
	VLD1.P 32(ap), [V2.B16, V3.B16]; \
	DPRODH

// func dotRows4Q4_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q4_0Q8_0NEON(SB), NOSPLIT, $0-40
	ROWS4ARGS
	VMOVI $15, V15.B16
	VMOVI $8, V14.B16
	ZERO4
	CBZ R0, r4q40done
r4q40loop:
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	Q40_W(R1, 16)
	Q40_W(R6, 17)
	Q40_W(R7, 18)
	Q40_W(R8, 19)
	SUBS $1, R0, R0
	BNE r4q40loop
r4q40done:
	STORE4
	RET

// func dot4Q4_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q4_0Q8_0NEON(SB), NOSPLIT, $0-40
	DOT4ARGS
	VMOVI $15, V15.B16
	VMOVI $8, V14.B16
	ZERO4
	CBZ R0, d4q40done
d4q40loop:
	MOVHU.P 2(R1), R4
	VLD1.P 16(R1), [V0.B16]
	Q40_UNPACK
	ACT_LOAD(R2)
	Q40_SUM(16)
	ACT_LOAD(R6)
	Q40_SUM(17)
	ACT_LOAD(R7)
	Q40_SUM(18)
	ACT_LOAD(R8)
	Q40_SUM(19)
	SUBS $1, R0, R0
	BNE d4q40loop
d4q40done:
	STORE4
	RET

// Even blocks accumulate in V16+j, odd ones in V20+j, as the one-row SDOT
// routine alternates V16 and V17.
// func dotRows4Q4_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q4_0Q8_0NEONDot(SB), NOSPLIT, $0-40
	ROWS4ARGS
	VMOVI $15, V15.B16
	VMOVI $8, V14.B16
	ZERO8
r4dq40loop2:
	CMP $2, R0
	BLT r4dq40tail
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	Q40_DW(R1, 16)
	Q40_DW(R6, 17)
	Q40_DW(R7, 18)
	Q40_DW(R8, 19)
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	Q40_DW(R1, 20)
	Q40_DW(R6, 21)
	Q40_DW(R7, 22)
	Q40_DW(R8, 23)
	SUB $2, R0, R0
	B r4dq40loop2
r4dq40tail:
	CBZ R0, r4dq40done
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	Q40_DW(R1, 16)
	Q40_DW(R6, 17)
	Q40_DW(R7, 18)
	Q40_DW(R8, 19)
r4dq40done:
	FOLD4STORE
	RET

#define Q40_D4BLK(a0, a1, a2, a3) \
	MOVHU.P 2(R1), R4; \
	VLD1.P 16(R1), [V0.B16]; \
	Q40_UNPACK; \
	ACT_LOAD(R2); \
	Q40_DSUM(a0); \
	ACT_LOAD(R6); \
	Q40_DSUM(a1); \
	ACT_LOAD(R7); \
	Q40_DSUM(a2); \
	ACT_LOAD(R8); \
	Q40_DSUM(a3)

// func dot4Q4_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q4_0Q8_0NEONDot(SB), NOSPLIT, $0-40
	DOT4ARGS
	VMOVI $15, V15.B16
	VMOVI $8, V14.B16
	ZERO8
d4dq40loop2:
	CMP $2, R0
	BLT d4dq40tail
	Q40_D4BLK(16, 17, 18, 19)
	Q40_D4BLK(20, 21, 22, 23)
	SUB $2, R0, R0
	B d4dq40loop2
d4dq40tail:
	CBZ R0, d4dq40done
	Q40_D4BLK(16, 17, 18, 19)
d4dq40done:
	FOLD4STORE
	RET

// ---- Q8_0 × Q8_0: fp16 d, 32 int8 on both sides.

// V(acc) += F9 · float(lane sums of V0·V2 + V1·V3) (dotQ8_0Q8_0NEON's block).
#define Q80_SUM(acc) \
	SMULL8H(4, 0, 2); \
	SMULL2_8H(5, 0, 2); \
	SMULL8H(6, 1, 3); \
	SMULL2_8H(7, 1, 3); \
	SADDLP4S(8, 4); \
	SADALP4S(8, 5); \
	SADALP4S(8, 6); \
	SADALP4S(8, 7); \
	SCVTF4S(8, 8); \
	FMLAS0(acc, 8, 9)

#define Q80_DSUM(acc) \
	VEOR V8.B16, V8.B16, V8.B16; \
	SDOT4S(8, 0, 2); \
	SDOT4S(8, 1, 3); \
	SCVTF4S(8, 8); \
	FMLAS0(acc, 8, 9)

#define Q80_W(wp, acc) \
	MOVHU.P 2(wp), R4; \
	VLD1.P 32(wp), [V0.B16, V1.B16]; \
	DPRODH; \
	Q80_SUM(acc)

#define Q80_DW(wp, acc) \
	MOVHU.P 2(wp), R4; \
	VLD1.P 32(wp), [V0.B16, V1.B16]; \
	DPRODH; \
	Q80_DSUM(acc)

// func dotRows4Q8_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q8_0Q8_0NEON(SB), NOSPLIT, $0-40
	ROWS4ARGS
	ZERO4
	CBZ R0, r4q80done
r4q80loop:
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	Q80_W(R1, 16)
	Q80_W(R6, 17)
	Q80_W(R7, 18)
	Q80_W(R8, 19)
	SUBS $1, R0, R0
	BNE r4q80loop
r4q80done:
	STORE4
	RET

// func dot4Q8_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q8_0Q8_0NEON(SB), NOSPLIT, $0-40
	DOT4ARGS
	ZERO4
	CBZ R0, d4q80done
d4q80loop:
	MOVHU.P 2(R1), R4
	VLD1.P 32(R1), [V0.B16, V1.B16]
	ACT_LOAD(R2)
	Q80_SUM(16)
	ACT_LOAD(R6)
	Q80_SUM(17)
	ACT_LOAD(R7)
	Q80_SUM(18)
	ACT_LOAD(R8)
	Q80_SUM(19)
	SUBS $1, R0, R0
	BNE d4q80loop
d4q80done:
	STORE4
	RET

// func dotRows4Q8_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q8_0Q8_0NEONDot(SB), NOSPLIT, $0-40
	ROWS4ARGS
	ZERO8
r4dq80loop2:
	CMP $2, R0
	BLT r4dq80tail
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	Q80_DW(R1, 16)
	Q80_DW(R6, 17)
	Q80_DW(R7, 18)
	Q80_DW(R8, 19)
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	Q80_DW(R1, 20)
	Q80_DW(R6, 21)
	Q80_DW(R7, 22)
	Q80_DW(R8, 23)
	SUB $2, R0, R0
	B r4dq80loop2
r4dq80tail:
	CBZ R0, r4dq80done
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	Q80_DW(R1, 16)
	Q80_DW(R6, 17)
	Q80_DW(R7, 18)
	Q80_DW(R8, 19)
r4dq80done:
	FOLD4STORE
	RET

#define Q80_D4BLK(a0, a1, a2, a3) \
	MOVHU.P 2(R1), R4; \
	VLD1.P 32(R1), [V0.B16, V1.B16]; \
	ACT_LOAD(R2); \
	Q80_DSUM(a0); \
	ACT_LOAD(R6); \
	Q80_DSUM(a1); \
	ACT_LOAD(R7); \
	Q80_DSUM(a2); \
	ACT_LOAD(R8); \
	Q80_DSUM(a3)

// func dot4Q8_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q8_0Q8_0NEONDot(SB), NOSPLIT, $0-40
	DOT4ARGS
	ZERO8
d4dq80loop2:
	CMP $2, R0
	BLT d4dq80tail
	Q80_D4BLK(16, 17, 18, 19)
	Q80_D4BLK(20, 21, 22, 23)
	SUB $2, R0, R0
	B d4dq80loop2
d4dq80tail:
	CBZ R0, d4dq80done
	Q80_D4BLK(16, 17, 18, 19)
d4dq80done:
	FOLD4STORE
	RET

// ---- IQ4_NL × Q8_0: Q4_0's layout with the nibbles looked up in the
// codebook (V12 = iq4kv4, V15 = 0x0f).

DATA iq4kv4<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA iq4kv4<>+8(SB)/8, $0x7159453526190d01
GLOBL iq4kv4<>(SB), RODATA|NOPTR, $16

#define IQ4NL_SETUP \
	MOVD $iq4kv4<>(SB), R10; \
	VLD1 (R10), [V12.B16]; \
	VMOVI $15, V15.B16

// V1 = codebook[low nibbles], V0 = codebook[high nibbles].
#define IQ4NL_UNPACK \
	VAND V15.B16, V0.B16, V1.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VTBL V1.B16, [V12.B16], V1.B16; \
	VTBL V0.B16, [V12.B16], V0.B16

// dotIQ4_NLQ8_0NEON's block sum.
#define IQ4NL_SUM(acc) \
	SMULL8H(4, 1, 2); \
	SMLAL2_8H(4, 1, 2); \
	SMULL8H(5, 0, 3); \
	SMLAL2_8H(5, 0, 3); \
	SADDLP4S(6, 4); \
	SADALP4S(6, 5); \
	SCVTF4S(6, 6); \
	FMLAS0(acc, 6, 9)

#define IQ4NL_W(wp, acc) \
	MOVHU.P 2(wp), R4; \
	VLD1.P 16(wp), [V0.B16]; \
	DPRODH; \
	IQ4NL_UNPACK; \
	IQ4NL_SUM(acc)

#define IQ4NL_DW(wp, acc) \
	MOVHU.P 2(wp), R4; \
	VLD1.P 16(wp), [V0.B16]; \
	DPRODH; \
	IQ4NL_UNPACK; \
	Q40_DSUM(acc)

// func dotRows4IQ4_NLQ8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ4_NLQ8_0NEON(SB), NOSPLIT, $0-40
	ROWS4ARGS
	IQ4NL_SETUP
	ZERO4
	CBZ R0, r4iq4nldone
r4iq4nlloop:
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	IQ4NL_W(R1, 16)
	IQ4NL_W(R6, 17)
	IQ4NL_W(R7, 18)
	IQ4NL_W(R8, 19)
	SUBS $1, R0, R0
	BNE r4iq4nlloop
r4iq4nldone:
	STORE4
	RET

// func dot4IQ4_NLQ8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4IQ4_NLQ8_0NEON(SB), NOSPLIT, $0-40
	DOT4ARGS
	IQ4NL_SETUP
	ZERO4
	CBZ R0, d4iq4nldone
d4iq4nlloop:
	MOVHU.P 2(R1), R4
	VLD1.P 16(R1), [V0.B16]
	IQ4NL_UNPACK
	ACT_LOAD(R2)
	IQ4NL_SUM(16)
	ACT_LOAD(R6)
	IQ4NL_SUM(17)
	ACT_LOAD(R7)
	IQ4NL_SUM(18)
	ACT_LOAD(R8)
	IQ4NL_SUM(19)
	SUBS $1, R0, R0
	BNE d4iq4nlloop
d4iq4nldone:
	STORE4
	RET

// func dotRows4IQ4_NLQ8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ4_NLQ8_0NEONDot(SB), NOSPLIT, $0-40
	ROWS4ARGS
	IQ4NL_SETUP
	ZERO8
r4diq4nlloop2:
	CMP $2, R0
	BLT r4diq4nltail
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	IQ4NL_DW(R1, 16)
	IQ4NL_DW(R6, 17)
	IQ4NL_DW(R7, 18)
	IQ4NL_DW(R8, 19)
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	IQ4NL_DW(R1, 20)
	IQ4NL_DW(R6, 21)
	IQ4NL_DW(R7, 22)
	IQ4NL_DW(R8, 23)
	SUB $2, R0, R0
	B r4diq4nlloop2
r4diq4nltail:
	CBZ R0, r4diq4nldone
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	IQ4NL_DW(R1, 16)
	IQ4NL_DW(R6, 17)
	IQ4NL_DW(R7, 18)
	IQ4NL_DW(R8, 19)
r4diq4nldone:
	FOLD4STORE
	RET

#define IQ4NL_D4BLK(a0, a1, a2, a3) \
	MOVHU.P 2(R1), R4; \
	VLD1.P 16(R1), [V0.B16]; \
	IQ4NL_UNPACK; \
	ACT_LOAD(R2); \
	Q40_DSUM(a0); \
	ACT_LOAD(R6); \
	Q40_DSUM(a1); \
	ACT_LOAD(R7); \
	Q40_DSUM(a2); \
	ACT_LOAD(R8); \
	Q40_DSUM(a3)

// func dot4IQ4_NLQ8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4IQ4_NLQ8_0NEONDot(SB), NOSPLIT, $0-40
	DOT4ARGS
	IQ4NL_SETUP
	ZERO8
d4diq4nlloop2:
	CMP $2, R0
	BLT d4diq4nltail
	IQ4NL_D4BLK(16, 17, 18, 19)
	IQ4NL_D4BLK(20, 21, 22, 23)
	SUB $2, R0, R0
	B d4diq4nlloop2
d4diq4nltail:
	CBZ R0, d4diq4nldone
	IQ4NL_D4BLK(16, 17, 18, 19)
d4diq4nldone:
	FOLD4STORE
	RET

// ---- K-quants and IQ4_XS (256-element super-blocks against Q8_K). Their
// one-row routines reduce each super-block's exact integer sum to one int32
// before any float operation, so only those integers and the float tail
// must match, and the integer parts may be summed in any order: the
// routines below work chunk by chunk (the activation chunk loaded once for
// four weight rows, or the weight chunk unpacked once for four activation
// rows) and then run the one-row tail per row. The ARMv8.0 and SDOT one-row
// routines compute the same exact integers, so these ARMv8.0 routines are
// bit-identical to both and serve both tables.
//
// GPRs: R0 = super-blocks left; the four strided rows' block pointers are
// R1, R19, R20, R21 (DotRows4: weights; Dot4: R1 is the weight row and the
// activation rows are R2, R19, R20, R21); R22..R25 walk the four rows'
// quants or activations inside a super-block; R4..R16 are scratch.
#define ROWS4ARGSK \
	MOVD nb+0(FP), R0; \
	MOVD w+8(FP), R1; \
	MOVD a+16(FP), R2; \
	MOVD stride+24(FP), R3; \
	ADD R3, R1, R19; \
	ADD R3, R19, R20; \
	ADD R3, R20, R21

#define DOT4ARGSK \
	MOVD nb+0(FP), R0; \
	MOVD w+8(FP), R1; \
	MOVD a+16(FP), R2; \
	MOVD stride+24(FP), R3; \
	ADD R3, R2, R19; \
	ADD R3, R19, R20; \
	ADD R3, R20, R21

// Float accumulators of the four rows: F24..F27 (the one-row F25).
#define ZEROACC4 \
	VEOR V24.B16, V24.B16, V24.B16; \
	VEOR V25.B16, V25.B16, V25.B16; \
	VEOR V26.B16, V26.B16, V26.B16; \
	VEOR V27.B16, V27.B16, V27.B16

#define ZEROSUMI4 \
	VEOR V16.B16, V16.B16, V16.B16; \
	VEOR V17.B16, V17.B16, V17.B16; \
	VEOR V18.B16, V18.B16, V18.B16; \
	VEOR V19.B16, V19.B16, V19.B16

#define STOREACC4 \
	MOVD y+32(FP), R9; \
	FMOVS F24, (R9); \
	FMOVS F25, 4(R9); \
	FMOVS F26, 8(R9); \
	FMOVS F27, 12(R9)

// Q4_K/Q5_K header of the block at wp: the 6-bit scales to V(sv).H[0..7]
// and the mins to V(mv).H[0..7] (K4HEAD's unpacking; sf, mf name the
// registers' scalar views).
#define K4SCMIN(wp, sv, sf, mv, mf) \
	MOVWU 4(wp), R6; \
	MOVWU 8(wp), R7; \
	MOVWU 12(wp), R8; \
	ANDW $0x3f3f3f3f, R6, R9; \
	ANDW $0x3f3f3f3f, R7, R10; \
	ANDW $0x0f0f0f0f, R8, R11; \
	LSRW $6, R6, R12; \
	ANDW $0x03030303, R12, R12; \
	ORRW R12<<4, R11, R11; \
	LSRW $4, R8, R13; \
	ANDW $0x0f0f0f0f, R13, R13; \
	LSRW $6, R7, R12; \
	ANDW $0x03030303, R12, R12; \
	ORRW R12<<4, R13, R13; \
	ORR R11<<32, R9, R9; \
	FMOVD R9, sf; \
	VUXTL sv.B8, sv.H8; \
	ORR R13<<32, R10, R10; \
	FMOVD R10, mf; \
	VUXTL mv.B8, mv.H8

// V31.H[i] = bsum(2i) + bsum(2i+1) of the Q8_K block at ap.
#define K4PAIRS(ap) \
	ADD $260, ap, R14; \
	VLD1 (R14), [V29.H8, V30.H8]; \
	VADDP V30.H8, V29.H8, V31.H8

// fm = float(Σ V(p).H · V(m).H), K4HEAD's min term; V6 is scratch.
#define K4MINSUM(p, m, fm) \
	SMULL4S(6, p, m); \
	SMLAL2_4S(6, p, m); \
	VADDV V6.S4, V6; \
	VMOV V6.S[0], R16; \
	SCVTFWS R16, fm

// K4TAIL for one row pair: facc += fp16(w.d)·a.d·float(ΣV(sumi)) -
// fp16(w.dmin)·a.d·fmin, with the block's w at wp and a at ap.
#define K4TAILX(wp, ap, sumi, fmin, facc) \
	VADDV sumi.S4, V6; \
	VMOV V6.S[0], R16; \
	SCVTFWS R16, F6; \
	FMOVS (ap), F1; \
	MOVHU 0(wp), R4; \
	MOVHU 2(wp), R5; \
	FMOVS R4, F2; \
	FCVTHS F2, F2; \
	FMULS F1, F2, F2; \
	FMOVS R5, F3; \
	FCVTHS F3, F3; \
	FMULS F1, F3, F3; \
	FMADDS F6, facc, F2, facc; \
	FMSUBS fmin, facc, F3, facc

// V7/V8 = low nibbles of V0/V1, V0/V1 = high nibbles.
#define K4SPLIT \
	VAND V15.B16, V0.B16, V7.B16; \
	VAND V15.B16, V1.B16, V8.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VUSHR $4, V1.B16, V1.B16

// Chunk j's two sub-blocks (low nibbles V7,V8 with activations V2,V3;
// high V0,V1 with V4,V5) into V(acc) with scales 2j, 2j+1 of V(s) (s ≤ 15).
#define K4PROD(s, acc, j) \
	SMULL8H(9, 7, 2); \
	SMLAL2_8H(9, 7, 2); \
	SMLAL8H(9, 8, 3); \
	SMLAL2_8H(9, 8, 3); \
	SMLALE(acc, 9, s, 2*j); \
	SMLAL2E(acc, 9, s, 2*j); \
	SMULL8H(10, 0, 4); \
	SMLAL2_8H(10, 0, 4); \
	SMLAL8H(10, 1, 5); \
	SMLAL2_8H(10, 1, 5); \
	SMLALE(acc, 10, s, 2*j+1); \
	SMLAL2E(acc, 10, s, 2*j+1)

// Q5_K: bit 2j / 2j+1 of qh (qa = qh[0:16], qb = qh[16:32]) as bit 4 of
// the low (V7, V8) / high (V0, V1) nibbles; c16 holds 0x10 bytes.
#define Q5K_QH(j, qa, qb, bm, tmp, c16) \
	VMOVI $(1<<(2*j)), bm.B16; \
	VCMTST bm.B16, qa.B16, tmp.B16; \
	VAND c16.B16, tmp.B16, tmp.B16; \
	VORR tmp.B16, V7.B16, V7.B16; \
	VCMTST bm.B16, qb.B16, tmp.B16; \
	VAND c16.B16, tmp.B16, tmp.B16; \
	VORR tmp.B16, V8.B16, V8.B16; \
	VMOVI $(2<<(2*j)), bm.B16; \
	VCMTST bm.B16, qa.B16, tmp.B16; \
	VAND c16.B16, tmp.B16, tmp.B16; \
	VORR tmp.B16, V0.B16, V0.B16; \
	VCMTST bm.B16, qb.B16, tmp.B16; \
	VAND c16.B16, tmp.B16, tmp.B16; \
	VORR tmp.B16, V1.B16, V1.B16

// Q4_K four weight rows: activation chunk j in V2..V5 once; row r's
// nibbles from R22+r, its scales in V11+r, its sum in V16+r.
#define Q4K_R4CHUNK(j) \
	VLD1.P 64(R14), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	VLD1.P 32(R22), [V0.B16, V1.B16]; \
	K4SPLIT; \
	K4PROD(11, 16, j); \
	VLD1.P 32(R23), [V0.B16, V1.B16]; \
	K4SPLIT; \
	K4PROD(12, 17, j); \
	VLD1.P 32(R24), [V0.B16, V1.B16]; \
	K4SPLIT; \
	K4PROD(13, 18, j); \
	VLD1.P 32(R25), [V0.B16, V1.B16]; \
	K4SPLIT; \
	K4PROD(14, 19, j)

// Heads of the four weight rows against the one activation block: scales
// to V11..V14, min terms to F20..F23.
#define K4ROWS4HEAD \
	K4PAIRS(R2); \
	K4SCMIN(R1, V11, F11, V28, F28); \
	K4MINSUM(31, 28, F20); \
	K4SCMIN(R19, V12, F12, V28, F28); \
	K4MINSUM(31, 28, F21); \
	K4SCMIN(R20, V13, F13, V28, F28); \
	K4MINSUM(31, 28, F22); \
	K4SCMIN(R21, V14, F14, V28, F28); \
	K4MINSUM(31, 28, F23)

#define K4ROWS4TAIL \
	K4TAILX(R1, R2, V16, F20, F24); \
	K4TAILX(R19, R2, V17, F21, F25); \
	K4TAILX(R20, R2, V18, F22, F26); \
	K4TAILX(R21, R2, V19, F23, F27)

// func dotRows4Q4_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q4_KQ8_KNEON(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	VMOVI $15, V15.B16
	ZEROACC4
	CBZ R0, r4q4kdone
r4q4kloop:
	K4ROWS4HEAD
	ZEROSUMI4
	ADD $4, R2, R14
	ADD $16, R1, R22
	ADD $16, R19, R23
	ADD $16, R20, R24
	ADD $16, R21, R25
	Q4K_R4CHUNK(0)
	Q4K_R4CHUNK(1)
	Q4K_R4CHUNK(2)
	Q4K_R4CHUNK(3)
	K4ROWS4TAIL
	ADD $144, R1, R1
	ADD $144, R19, R19
	ADD $144, R20, R20
	ADD $144, R21, R21
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE r4q4kloop
r4q4kdone:
	STOREACC4
	RET

// Heads of the one weight row against four activation blocks: scales to
// V13, mins to V12, min terms to F20..F23.
#define K4DOT4HEAD \
	K4SCMIN(R1, V13, F13, V12, F12); \
	K4PAIRS(R2); \
	K4MINSUM(31, 12, F20); \
	K4PAIRS(R19); \
	K4MINSUM(31, 12, F21); \
	K4PAIRS(R20); \
	K4MINSUM(31, 12, F22); \
	K4PAIRS(R21); \
	K4MINSUM(31, 12, F23)

#define K4DOT4TAIL \
	K4TAILX(R1, R2, V16, F20, F24); \
	K4TAILX(R1, R19, V17, F21, F25); \
	K4TAILX(R1, R20, V18, F22, F26); \
	K4TAILX(R1, R21, V19, F23, F27)

// The unpacked weight chunk j (V7, V8, V0, V1) against the four activation
// rows' chunks (R22..R25) into V16..V19.
#define K4DOT4PRODS(j) \
	VLD1.P 64(R22), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	K4PROD(13, 16, j); \
	VLD1.P 64(R23), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	K4PROD(13, 17, j); \
	VLD1.P 64(R24), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	K4PROD(13, 18, j); \
	VLD1.P 64(R25), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	K4PROD(13, 19, j)

#define ACTWALK4 \
	ADD $4, R2, R22; \
	ADD $4, R19, R23; \
	ADD $4, R20, R24; \
	ADD $4, R21, R25

#define ACTNEXT4 \
	ADD $292, R2, R2; \
	ADD $292, R19, R19; \
	ADD $292, R20, R20; \
	ADD $292, R21, R21

#define Q4K_D4CHUNK(j) \
	VLD1.P 32(R14), [V0.B16, V1.B16]; \
	K4SPLIT; \
	K4DOT4PRODS(j)

// func dot4Q4_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q4_KQ8_KNEON(SB), NOSPLIT, $0-40
	DOT4ARGSK
	VMOVI $15, V15.B16
	ZEROACC4
	CBZ R0, d4q4kdone
d4q4kloop:
	K4DOT4HEAD
	ZEROSUMI4
	ADD $16, R1, R14
	ACTWALK4
	Q4K_D4CHUNK(0)
	Q4K_D4CHUNK(1)
	Q4K_D4CHUNK(2)
	Q4K_D4CHUNK(3)
	K4DOT4TAIL
	ADD $144, R1, R1
	ACTNEXT4
	SUBS $1, R0, R0
	BNE d4q4kloop
d4q4kdone:
	STOREACC4
	RET

// Q5_K (176-byte blocks: d, dmin, scales, qh[32] at 16, nibbles at 48).
// Four weight rows: row r's qh at R10+r, loaded per chunk into V28, V29;
// V6 = 0x10 bytes, V30/V31 scratch.
#define Q5K_R4ROW(wp, qhp, s, acc, j) \
	VLD1.P 32(wp), [V0.B16, V1.B16]; \
	VLD1 (qhp), [V28.B16, V29.B16]; \
	K4SPLIT; \
	Q5K_QH(j, V28, V29, V30, V31, V6); \
	K4PROD(s, acc, j)

#define Q5K_R4CHUNK(j) \
	VLD1.P 64(R14), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	Q5K_R4ROW(R22, R10, 11, 16, j); \
	Q5K_R4ROW(R23, R11, 12, 17, j); \
	Q5K_R4ROW(R24, R12, 13, 18, j); \
	Q5K_R4ROW(R25, R13, 14, 19, j)

// func dotRows4Q5_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q5_KQ8_KNEON(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	VMOVI $15, V15.B16
	ZEROACC4
	CBZ R0, r4q5kdone
r4q5kloop:
	K4ROWS4HEAD
	ZEROSUMI4
	VMOVI $16, V6.B16
	ADD $4, R2, R14
	ADD $16, R1, R10
	ADD $16, R19, R11
	ADD $16, R20, R12
	ADD $16, R21, R13
	ADD $48, R1, R22
	ADD $48, R19, R23
	ADD $48, R20, R24
	ADD $48, R21, R25
	Q5K_R4CHUNK(0)
	Q5K_R4CHUNK(1)
	Q5K_R4CHUNK(2)
	Q5K_R4CHUNK(3)
	K4ROWS4TAIL
	ADD $176, R1, R1
	ADD $176, R19, R19
	ADD $176, R20, R20
	ADD $176, R21, R21
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE r4q5kloop
r4q5kdone:
	STOREACC4
	RET

// One weight row: qh in V28, V29 for the whole block, V14 = 0x10 bytes,
// V11/V6 scratch.
#define Q5K_D4CHUNK(j) \
	VLD1.P 32(R14), [V0.B16, V1.B16]; \
	K4SPLIT; \
	Q5K_QH(j, V28, V29, V11, V6, V14); \
	K4DOT4PRODS(j)

// func dot4Q5_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q5_KQ8_KNEON(SB), NOSPLIT, $0-40
	DOT4ARGSK
	VMOVI $15, V15.B16
	VMOVI $16, V14.B16
	ZEROACC4
	CBZ R0, d4q5kdone
d4q5kloop:
	K4DOT4HEAD
	ZEROSUMI4
	ADD $16, R1, R14
	VLD1.P 32(R14), [V28.B16, V29.B16]
	ACTWALK4
	Q5K_D4CHUNK(0)
	Q5K_D4CHUNK(1)
	Q5K_D4CHUNK(2)
	Q5K_D4CHUNK(3)
	K4DOT4TAIL
	ADD $176, R1, R1
	ACTNEXT4
	SUBS $1, R0, R0
	BNE d4q5kloop
d4q5kdone:
	STOREACC4
	RET

// ---- Q6_K (210-byte blocks: ql[128], qh[64], int8 scales[16], fp16 d at
// 208). V15 = 0x0f, V14 = 48, V11 = 32 bytes; sums in V28..V31, float
// accumulators F24..F27.

// One 16-element group: V(acc) += scale H[i] of V(s) · Σ V(q)·V(y).
#define Q6GA(q, y, s, i, acc) \
	SMULL8H(9, q, y); \
	SMLAL2_8H(9, q, y); \
	SMLALE(acc, 9, s, i); \
	SMLAL2E(acc, 9, s, i)

// Q6K_HALF's eight groups for ql in V0..V3, qh in V4, V5, activations in
// V16..V23, scales in V(s); V7, V8 scratch.
#define Q6K_GROUPS(s, acc) \
	VAND V15.B16, V0.B16, V7.B16; \
	VSHL $4, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GA(7, 16, s, 0, acc); \
	VAND V15.B16, V1.B16, V7.B16; \
	VSHL $4, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GA(7, 17, s, 1, acc); \
	VAND V15.B16, V2.B16, V7.B16; \
	VSHL $2, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GA(7, 18, s, 2, acc); \
	VAND V15.B16, V3.B16, V7.B16; \
	VSHL $2, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GA(7, 19, s, 3, acc); \
	VUSHR $4, V0.B16, V7.B16; \
	VAND V14.B16, V4.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GA(7, 20, s, 4, acc); \
	VUSHR $4, V1.B16, V7.B16; \
	VAND V14.B16, V5.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GA(7, 21, s, 5, acc); \
	VUSHR $4, V2.B16, V7.B16; \
	VUSHR $2, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GA(7, 22, s, 6, acc); \
	VUSHR $4, V3.B16, V7.B16; \
	VUSHR $2, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GA(7, 23, s, 7, acc)

// V10.H = the eight int8 scales at off(wp), sign-extended.
#define Q6K_SCALES(wp, off) \
	MOVD off(wp), R5; \
	FMOVD R5, F10; \
	SXTL8H(10, 10)

// One weight row's half (ql at qloff, qh at qhoff, scales at scoff) against
// the activations in V16..V23.
#define Q6K_R4ROW(wp, qloff, qhoff, scoff, acc) \
	ADD $qloff, wp, R14; \
	VLD1 (R14), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	ADD $qhoff, wp, R13; \
	VLD1 (R13), [V4.B16, V5.B16]; \
	Q6K_SCALES(wp, scoff); \
	Q6K_GROUPS(10, acc)

// Tail of one row pair for blocks whose only float scale is the fp16 at
// doff(wp) (Q6_K, IQ4_XS): facc += fp16(w.d)·a.d·float(ΣV(sumi)).
#define DTAILX(wp, doff, ap, sumi, facc) \
	VADDV sumi.S4, V6; \
	VMOV V6.S[0], R16; \
	SCVTFWS R16, F6; \
	FMOVS (ap), F1; \
	MOVHU doff(wp), R4; \
	FMOVS R4, F2; \
	FCVTHS F2, F2; \
	FMULS F1, F2, F2; \
	FMADDS F6, facc, F2, facc

#define ZEROSUMI4HI \
	VEOR V28.B16, V28.B16, V28.B16; \
	VEOR V29.B16, V29.B16, V29.B16; \
	VEOR V30.B16, V30.B16, V30.B16; \
	VEOR V31.B16, V31.B16, V31.B16

#define Q6K_ACTHALF(ap) \
	VLD1.P 64(ap), [V16.B16, V17.B16, V18.B16, V19.B16]; \
	VLD1.P 64(ap), [V20.B16, V21.B16, V22.B16, V23.B16]

// func dotRows4Q6_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q6_KQ8_KNEON(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	VMOVI $15, V15.B16
	VMOVI $48, V14.B16
	VMOVI $32, V11.B16
	ZEROACC4
	CBZ R0, r4q6kdone
r4q6kloop:
	ZEROSUMI4HI
	ADD $4, R2, R15
	Q6K_ACTHALF(R15)
	Q6K_R4ROW(R1, 0, 128, 192, 28)
	Q6K_R4ROW(R19, 0, 128, 192, 29)
	Q6K_R4ROW(R20, 0, 128, 192, 30)
	Q6K_R4ROW(R21, 0, 128, 192, 31)
	Q6K_ACTHALF(R15)
	Q6K_R4ROW(R1, 64, 160, 200, 28)
	Q6K_R4ROW(R19, 64, 160, 200, 29)
	Q6K_R4ROW(R20, 64, 160, 200, 30)
	Q6K_R4ROW(R21, 64, 160, 200, 31)
	DTAILX(R1, 208, R2, V28, F24)
	DTAILX(R19, 208, R2, V29, F25)
	DTAILX(R20, 208, R2, V30, F26)
	DTAILX(R21, 208, R2, V31, F27)
	ADD $210, R1, R1
	ADD $210, R19, R19
	ADD $210, R20, R20
	ADD $210, R21, R21
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE r4q6kloop
r4q6kdone:
	STOREACC4
	RET

// One weight half unpacked once: ql loaded into V16..V19, qh into V20,
// V21 (before the activations take those registers), the eight 6-bit
// groups minus 32 to V0..V7 (Q6K_GROUPS' values), scales to V10.
#define Q6K_UNPACK8(qloff, qhoff, scoff) \
	ADD $qloff, R1, R14; \
	VLD1 (R14), [V16.B16, V17.B16, V18.B16, V19.B16]; \
	ADD $qhoff, R1, R13; \
	VLD1 (R13), [V20.B16, V21.B16]; \
	Q6K_SCALES(R1, scoff); \
	VAND V15.B16, V16.B16, V0.B16; \
	VSHL $4, V20.B16, V22.B16; \
	VAND V14.B16, V22.B16, V22.B16; \
	VORR V22.B16, V0.B16, V0.B16; \
	VSUB V11.B16, V0.B16, V0.B16; \
	VAND V15.B16, V17.B16, V1.B16; \
	VSHL $4, V21.B16, V22.B16; \
	VAND V14.B16, V22.B16, V22.B16; \
	VORR V22.B16, V1.B16, V1.B16; \
	VSUB V11.B16, V1.B16, V1.B16; \
	VAND V15.B16, V18.B16, V2.B16; \
	VSHL $2, V20.B16, V22.B16; \
	VAND V14.B16, V22.B16, V22.B16; \
	VORR V22.B16, V2.B16, V2.B16; \
	VSUB V11.B16, V2.B16, V2.B16; \
	VAND V15.B16, V19.B16, V3.B16; \
	VSHL $2, V21.B16, V22.B16; \
	VAND V14.B16, V22.B16, V22.B16; \
	VORR V22.B16, V3.B16, V3.B16; \
	VSUB V11.B16, V3.B16, V3.B16; \
	VUSHR $4, V16.B16, V4.B16; \
	VAND V14.B16, V20.B16, V22.B16; \
	VORR V22.B16, V4.B16, V4.B16; \
	VSUB V11.B16, V4.B16, V4.B16; \
	VUSHR $4, V17.B16, V5.B16; \
	VAND V14.B16, V21.B16, V22.B16; \
	VORR V22.B16, V5.B16, V5.B16; \
	VSUB V11.B16, V5.B16, V5.B16; \
	VUSHR $4, V18.B16, V6.B16; \
	VUSHR $2, V20.B16, V22.B16; \
	VAND V14.B16, V22.B16, V22.B16; \
	VORR V22.B16, V6.B16, V6.B16; \
	VSUB V11.B16, V6.B16, V6.B16; \
	VUSHR $4, V19.B16, V7.B16; \
	VUSHR $2, V21.B16, V22.B16; \
	VAND V14.B16, V22.B16, V22.B16; \
	VORR V22.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16

// The unpacked half against one activation row's half (walked by ap).
#define Q6K_D4ROW(ap, acc) \
	Q6K_ACTHALF(ap); \
	Q6GA(0, 16, 10, 0, acc); \
	Q6GA(1, 17, 10, 1, acc); \
	Q6GA(2, 18, 10, 2, acc); \
	Q6GA(3, 19, 10, 3, acc); \
	Q6GA(4, 20, 10, 4, acc); \
	Q6GA(5, 21, 10, 5, acc); \
	Q6GA(6, 22, 10, 6, acc); \
	Q6GA(7, 23, 10, 7, acc)

// func dot4Q6_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q6_KQ8_KNEON(SB), NOSPLIT, $0-40
	DOT4ARGSK
	VMOVI $15, V15.B16
	VMOVI $48, V14.B16
	VMOVI $32, V11.B16
	ZEROACC4
	CBZ R0, d4q6kdone
d4q6kloop:
	ZEROSUMI4HI
	ACTWALK4
	Q6K_UNPACK8(0, 128, 192)
	Q6K_D4ROW(R22, 28)
	Q6K_D4ROW(R23, 29)
	Q6K_D4ROW(R24, 30)
	Q6K_D4ROW(R25, 31)
	Q6K_UNPACK8(64, 160, 200)
	Q6K_D4ROW(R22, 28)
	Q6K_D4ROW(R23, 29)
	Q6K_D4ROW(R24, 30)
	Q6K_D4ROW(R25, 31)
	DTAILX(R1, 208, R2, V28, F24)
	DTAILX(R1, 208, R19, V29, F25)
	DTAILX(R1, 208, R20, V30, F26)
	DTAILX(R1, 208, R21, V31, F27)
	ADD $210, R1, R1
	ACTNEXT4
	SUBS $1, R0, R0
	BNE d4q6kloop
d4q6kdone:
	STOREACC4
	RET

// ---- IQ4_XS (136-byte blocks: fp16 d, scales_h, scales_l[4], qs[128] at
// 8). V12 = codebook, V15 = 0x0f, c32 = 32 bytes; sums V16..V19, float
// accumulators F24..F27.

// IQ4XS_SCALES of the block at wp into V(svn).H (sv, sf: its names).
#define IQ4XS_SC(wp, sv, sf, svn, c32) \
	MOVWU 4(wp), R6; \
	ORR R6<<16, R6, R6; \
	AND $0x0000ffff0000ffff, R6, R6; \
	ORR R6<<8, R6, R6; \
	AND $0x00ff00ff00ff00ff, R6, R6; \
	ORR R6<<4, R6, R6; \
	AND $0x0f0f0f0f0f0f0f0f, R6, R6; \
	MOVHU 2(wp), R7; \
	ORR R7<<24, R7, R7; \
	AND $0x000000ff000000ff, R7, R7; \
	ORR R7<<12, R7, R7; \
	AND $0x000f000f000f000f, R7, R7; \
	ORR R7<<6, R7, R7; \
	AND $0x0303030303030303, R7, R7; \
	ORR R7<<4, R6, R6; \
	FMOVD R6, sf; \
	VSUB c32.B16, sv.B16, sv.B16; \
	SXTL8H(svn, svn)

// V0, V1 (32 bytes of indices) to codebook values: V7 = lo(V0), V0 =
// hi(V0), V8 = lo(V1), V1 = hi(V1).
#define IQ4XS_LOOKUP \
	VAND V15.B16, V0.B16, V7.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VAND V15.B16, V1.B16, V8.B16; \
	VUSHR $4, V1.B16, V1.B16; \
	VTBL V7.B16, [V12.B16], V7.B16; \
	VTBL V0.B16, [V12.B16], V0.B16; \
	VTBL V8.B16, [V12.B16], V8.B16; \
	VTBL V1.B16, [V12.B16], V1.B16

// Sub-blocks 2p, 2p+1 against activations V2..V5 (IQ4XS_PAIR's sums).
#define IQ4XS_PROD(s, acc, p) \
	SMULL8H(9, 7, 2); \
	SMLAL2_8H(9, 7, 2); \
	SMLALE(acc, 9, s, 2*p); \
	SMLAL2E(acc, 9, s, 2*p); \
	SMULL8H(10, 0, 3); \
	SMLAL2_8H(10, 0, 3); \
	SMLALE(acc, 10, s, 2*p); \
	SMLAL2E(acc, 10, s, 2*p); \
	SMULL8H(9, 8, 4); \
	SMLAL2_8H(9, 8, 4); \
	SMLALE(acc, 9, s, 2*p+1); \
	SMLAL2E(acc, 9, s, 2*p+1); \
	SMULL8H(10, 1, 5); \
	SMLAL2_8H(10, 1, 5); \
	SMLALE(acc, 10, s, 2*p+1); \
	SMLAL2E(acc, 10, s, 2*p+1)

#define IQ4XS_SETUP \
	MOVD $iq4kv4<>(SB), R10; \
	VLD1 (R10), [V12.B16]; \
	VMOVI $15, V15.B16

// Four weight rows: row r's scales in V6, V11, V13, V14 (all ≤ V15 for
// SMLALE), V20 = 32 bytes.
#define IQ4XS_R4PAIR(p) \
	VLD1.P 64(R14), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	VLD1.P 32(R22), [V0.B16, V1.B16]; \
	IQ4XS_LOOKUP; \
	IQ4XS_PROD(6, 16, p); \
	VLD1.P 32(R23), [V0.B16, V1.B16]; \
	IQ4XS_LOOKUP; \
	IQ4XS_PROD(11, 17, p); \
	VLD1.P 32(R24), [V0.B16, V1.B16]; \
	IQ4XS_LOOKUP; \
	IQ4XS_PROD(13, 18, p); \
	VLD1.P 32(R25), [V0.B16, V1.B16]; \
	IQ4XS_LOOKUP; \
	IQ4XS_PROD(14, 19, p)

// func dotRows4IQ4_XSQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ4_XSQ8_KNEON(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	IQ4XS_SETUP
	VMOVI $32, V20.B16
	ZEROACC4
	CBZ R0, r4iq4xsdone
r4iq4xsloop:
	IQ4XS_SC(R1, V6, F6, 6, V20)
	IQ4XS_SC(R19, V11, F11, 11, V20)
	IQ4XS_SC(R20, V13, F13, 13, V20)
	IQ4XS_SC(R21, V14, F14, 14, V20)
	ZEROSUMI4
	ADD $4, R2, R14
	ADD $8, R1, R22
	ADD $8, R19, R23
	ADD $8, R20, R24
	ADD $8, R21, R25
	IQ4XS_R4PAIR(0)
	IQ4XS_R4PAIR(1)
	IQ4XS_R4PAIR(2)
	IQ4XS_R4PAIR(3)
	DTAILX(R1, 0, R2, V16, F24)
	DTAILX(R19, 0, R2, V17, F25)
	DTAILX(R20, 0, R2, V18, F26)
	DTAILX(R21, 0, R2, V19, F27)
	ADD $136, R1, R1
	ADD $136, R19, R19
	ADD $136, R20, R20
	ADD $136, R21, R21
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE r4iq4xsloop
r4iq4xsdone:
	STOREACC4
	RET

// One weight row: scales in V13, V14 = 32 bytes; the looked-up pair (V7,
// V0, V8, V1) against the four activation rows' chunks.
#define IQ4XS_D4PAIR(p) \
	VLD1.P 32(R14), [V0.B16, V1.B16]; \
	IQ4XS_LOOKUP; \
	VLD1.P 64(R22), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	IQ4XS_PROD(13, 16, p); \
	VLD1.P 64(R23), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	IQ4XS_PROD(13, 17, p); \
	VLD1.P 64(R24), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	IQ4XS_PROD(13, 18, p); \
	VLD1.P 64(R25), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	IQ4XS_PROD(13, 19, p)

// func dot4IQ4_XSQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4IQ4_XSQ8_KNEON(SB), NOSPLIT, $0-40
	DOT4ARGSK
	IQ4XS_SETUP
	VMOVI $32, V14.B16
	ZEROACC4
	CBZ R0, d4iq4xsdone
d4iq4xsloop:
	IQ4XS_SC(R1, V13, F13, 13, V14)
	ZEROSUMI4
	ADD $8, R1, R14
	ACTWALK4
	IQ4XS_D4PAIR(0)
	IQ4XS_D4PAIR(1)
	IQ4XS_D4PAIR(2)
	IQ4XS_D4PAIR(3)
	DTAILX(R1, 0, R2, V16, F24)
	DTAILX(R1, 0, R19, V17, F25)
	DTAILX(R1, 0, R20, V18, F26)
	DTAILX(R1, 0, R21, V19, F27)
	ADD $136, R1, R1
	ACTNEXT4
	SUBS $1, R0, R0
	BNE d4iq4xsloop
d4iq4xsdone:
	STOREACC4
	RET

// ---- SDOT four-row variants of Q4_K, Q6_K and IQ4_XS for the ASIMDDP
// table. Same exact integers as the routines above (and as both one-row
// routines), fewer instructions: sub-block sums with SDOT, scaled by int32
// scales with MLA by element (any V register may hold those scales).

// V(acc) += chunk j's two sub-block sums (nibbles V7, V8 / V0, V1 against
// V2, V3 / V4, V5) × scales 2j, 2j+1, which are lanes of V(slo) (scales
// 0..3) or V(shi) (4..7); V9, V10 scratch (Q4K_DCHUNK's sums).
#define K4DPROD(slo, shi, acc, j) \
	VEOR V9.B16, V9.B16, V9.B16; \
	SDOT4S(9, 7, 2); \
	SDOT4S(9, 8, 3); \
	VEOR V10.B16, V10.B16, V10.B16; \
	SDOT4S(10, 0, 4); \
	SDOT4S(10, 1, 5); \
	MLAS(acc, 9, slo+(j/2)*(shi-slo), (2*j)%4); \
	MLAS(acc, 10, slo+(j/2)*(shi-slo), (2*j+1)%4)

// Four weight rows' heads for the SDOT chunks: bsum pairs in V4, row r's
// scales as int32 in V11+r (0..3) and V28+r (4..7), min terms F20..F23.
#define K4DSC(wp, slo, shi, fm) \
	K4SCMIN(wp, V7, F7, V5, F5); \
	VUXTL V7.H4, slo.S4; \
	VUXTL2 V7.H8, shi.S4; \
	K4MINSUM(4, 5, fm)

#define K4DROWS4HEAD \
	ADD $260, R2, R14; \
	VLD1 (R14), [V2.H8, V3.H8]; \
	VADDP V3.H8, V2.H8, V4.H8; \
	K4DSC(R1, V11, V28, F20); \
	K4DSC(R19, V12, V29, F21); \
	K4DSC(R20, V13, V30, F22); \
	K4DSC(R21, V14, V31, F23)

#define Q4K_DR4CHUNK(j) \
	VLD1.P 64(R14), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	VLD1.P 32(R22), [V0.B16, V1.B16]; \
	K4SPLIT; \
	K4DPROD(11, 28, 16, j); \
	VLD1.P 32(R23), [V0.B16, V1.B16]; \
	K4SPLIT; \
	K4DPROD(12, 29, 17, j); \
	VLD1.P 32(R24), [V0.B16, V1.B16]; \
	K4SPLIT; \
	K4DPROD(13, 30, 18, j); \
	VLD1.P 32(R25), [V0.B16, V1.B16]; \
	K4SPLIT; \
	K4DPROD(14, 31, 19, j)

// func dotRows4Q4_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q4_KQ8_KNEONDot(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	VMOVI $15, V15.B16
	ZEROACC4
	CBZ R0, r4dq4kdone
r4dq4kloop:
	K4DROWS4HEAD
	ZEROSUMI4
	ADD $4, R2, R14
	ADD $16, R1, R22
	ADD $16, R19, R23
	ADD $16, R20, R24
	ADD $16, R21, R25
	Q4K_DR4CHUNK(0)
	Q4K_DR4CHUNK(1)
	Q4K_DR4CHUNK(2)
	Q4K_DR4CHUNK(3)
	K4ROWS4TAIL
	ADD $144, R1, R1
	ADD $144, R19, R19
	ADD $144, R20, R20
	ADD $144, R21, R21
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE r4dq4kloop
r4dq4kdone:
	STOREACC4
	RET

// One weight row: scales as int32 in V28 (0..3), V29 (4..7).
#define Q4K_DD4CHUNK(j) \
	VLD1.P 32(R14), [V0.B16, V1.B16]; \
	K4SPLIT; \
	VLD1.P 64(R22), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	K4DPROD(28, 29, 16, j); \
	VLD1.P 64(R23), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	K4DPROD(28, 29, 17, j); \
	VLD1.P 64(R24), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	K4DPROD(28, 29, 18, j); \
	VLD1.P 64(R25), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	K4DPROD(28, 29, 19, j)

// func dot4Q4_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q4_KQ8_KNEONDot(SB), NOSPLIT, $0-40
	DOT4ARGSK
	VMOVI $15, V15.B16
	ZEROACC4
	CBZ R0, d4dq4kdone
d4dq4kloop:
	K4DOT4HEAD
	VUXTL V13.H4, V28.S4
	VUXTL2 V13.H8, V29.S4
	ZEROSUMI4
	ADD $16, R1, R14
	ACTWALK4
	Q4K_DD4CHUNK(0)
	Q4K_DD4CHUNK(1)
	Q4K_DD4CHUNK(2)
	Q4K_DD4CHUNK(3)
	K4DOT4TAIL
	ADD $144, R1, R1
	ACTNEXT4
	SUBS $1, R0, R0
	BNE d4dq4kloop
d4dq4kdone:
	STOREACC4
	RET

// Q6_K with SDOT: one group, V(acc) += scale (lane i of V(s), int32) · Σ.
#define Q6GDA(q, y, s, i, acc) \
	VEOR V9.B16, V9.B16, V9.B16; \
	SDOT4S(9, q, y); \
	MLAS(acc, 9, s, i)

// Q6K_SCALES widened: V12 = scales 0..3, V13 = 4..7 of the half, int32.
#define Q6K_DSCALES(wp, off) \
	Q6K_SCALES(wp, off); \
	SXTL4S(12, 10); \
	SXTL2_4S(13, 10)

// Q6K_GROUPS with SDOT (scales from Q6K_DSCALES).
#define Q6K_DGROUPS(acc) \
	VAND V15.B16, V0.B16, V7.B16; \
	VSHL $4, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GDA(7, 16, 12, 0, acc); \
	VAND V15.B16, V1.B16, V7.B16; \
	VSHL $4, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GDA(7, 17, 12, 1, acc); \
	VAND V15.B16, V2.B16, V7.B16; \
	VSHL $2, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GDA(7, 18, 12, 2, acc); \
	VAND V15.B16, V3.B16, V7.B16; \
	VSHL $2, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GDA(7, 19, 12, 3, acc); \
	VUSHR $4, V0.B16, V7.B16; \
	VAND V14.B16, V4.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GDA(7, 20, 13, 0, acc); \
	VUSHR $4, V1.B16, V7.B16; \
	VAND V14.B16, V5.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GDA(7, 21, 13, 1, acc); \
	VUSHR $4, V2.B16, V7.B16; \
	VUSHR $2, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GDA(7, 22, 13, 2, acc); \
	VUSHR $4, V3.B16, V7.B16; \
	VUSHR $2, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GDA(7, 23, 13, 3, acc)

#define Q6K_DR4ROW(wp, qloff, qhoff, scoff, acc) \
	ADD $qloff, wp, R14; \
	VLD1 (R14), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	ADD $qhoff, wp, R13; \
	VLD1 (R13), [V4.B16, V5.B16]; \
	Q6K_DSCALES(wp, scoff); \
	Q6K_DGROUPS(acc)

// func dotRows4Q6_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q6_KQ8_KNEONDot(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	VMOVI $15, V15.B16
	VMOVI $48, V14.B16
	VMOVI $32, V11.B16
	ZEROACC4
	CBZ R0, r4dq6kdone
r4dq6kloop:
	ZEROSUMI4HI
	ADD $4, R2, R15
	Q6K_ACTHALF(R15)
	Q6K_DR4ROW(R1, 0, 128, 192, 28)
	Q6K_DR4ROW(R19, 0, 128, 192, 29)
	Q6K_DR4ROW(R20, 0, 128, 192, 30)
	Q6K_DR4ROW(R21, 0, 128, 192, 31)
	Q6K_ACTHALF(R15)
	Q6K_DR4ROW(R1, 64, 160, 200, 28)
	Q6K_DR4ROW(R19, 64, 160, 200, 29)
	Q6K_DR4ROW(R20, 64, 160, 200, 30)
	Q6K_DR4ROW(R21, 64, 160, 200, 31)
	DTAILX(R1, 208, R2, V28, F24)
	DTAILX(R19, 208, R2, V29, F25)
	DTAILX(R20, 208, R2, V30, F26)
	DTAILX(R21, 208, R2, V31, F27)
	ADD $210, R1, R1
	ADD $210, R19, R19
	ADD $210, R20, R20
	ADD $210, R21, R21
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE r4dq6kloop
r4dq6kdone:
	STOREACC4
	RET

#define Q6K_DD4ROW(ap, acc) \
	Q6K_ACTHALF(ap); \
	Q6GDA(0, 16, 12, 0, acc); \
	Q6GDA(1, 17, 12, 1, acc); \
	Q6GDA(2, 18, 12, 2, acc); \
	Q6GDA(3, 19, 12, 3, acc); \
	Q6GDA(4, 20, 13, 0, acc); \
	Q6GDA(5, 21, 13, 1, acc); \
	Q6GDA(6, 22, 13, 2, acc); \
	Q6GDA(7, 23, 13, 3, acc)

// func dot4Q6_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q6_KQ8_KNEONDot(SB), NOSPLIT, $0-40
	DOT4ARGSK
	VMOVI $15, V15.B16
	VMOVI $48, V14.B16
	VMOVI $32, V11.B16
	ZEROACC4
	CBZ R0, d4dq6kdone
d4dq6kloop:
	ZEROSUMI4HI
	ACTWALK4
	Q6K_UNPACK8(0, 128, 192)
	SXTL4S(12, 10)
	SXTL2_4S(13, 10)
	Q6K_DD4ROW(R22, 28)
	Q6K_DD4ROW(R23, 29)
	Q6K_DD4ROW(R24, 30)
	Q6K_DD4ROW(R25, 31)
	Q6K_UNPACK8(64, 160, 200)
	SXTL4S(12, 10)
	SXTL2_4S(13, 10)
	Q6K_DD4ROW(R22, 28)
	Q6K_DD4ROW(R23, 29)
	Q6K_DD4ROW(R24, 30)
	Q6K_DD4ROW(R25, 31)
	DTAILX(R1, 208, R2, V28, F24)
	DTAILX(R1, 208, R19, V29, F25)
	DTAILX(R1, 208, R20, V30, F26)
	DTAILX(R1, 208, R21, V31, F27)
	ADD $210, R1, R1
	ACTNEXT4
	SUBS $1, R0, R0
	BNE d4dq6kloop
d4dq6kdone:
	STOREACC4
	RET

// IQ4_XS with SDOT: sub-blocks 2p, 2p+1 (looked up V7, V0 / V8, V1 against
// V2, V3 / V4, V5) × int32 scales in lanes of V(slo) (0..3) / V(shi) (4..7).
#define IQ4XS_DPROD(slo, shi, acc, p) \
	VEOR V9.B16, V9.B16, V9.B16; \
	SDOT4S(9, 7, 2); \
	SDOT4S(9, 0, 3); \
	VEOR V10.B16, V10.B16, V10.B16; \
	SDOT4S(10, 8, 4); \
	SDOT4S(10, 1, 5); \
	MLAS(acc, 9, slo+(p/2)*(shi-slo), (2*p)%4); \
	MLAS(acc, 10, slo+(p/2)*(shi-slo), (2*p+1)%4)

// Row r's scales as int32 in V(slo) and V(shi), through V22; V21 = 32s.
#define IQ4XS_DSC(wp, slo, shi) \
	IQ4XS_SC(wp, V22, F22, 22, V21); \
	SXTL4S(slo, 22); \
	SXTL2_4S(shi, 22)

#define IQ4XS_DR4PAIR(p) \
	VLD1.P 64(R14), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	VLD1.P 32(R22), [V0.B16, V1.B16]; \
	IQ4XS_LOOKUP; \
	IQ4XS_DPROD(6, 28, 16, p); \
	VLD1.P 32(R23), [V0.B16, V1.B16]; \
	IQ4XS_LOOKUP; \
	IQ4XS_DPROD(11, 29, 17, p); \
	VLD1.P 32(R24), [V0.B16, V1.B16]; \
	IQ4XS_LOOKUP; \
	IQ4XS_DPROD(13, 30, 18, p); \
	VLD1.P 32(R25), [V0.B16, V1.B16]; \
	IQ4XS_LOOKUP; \
	IQ4XS_DPROD(14, 31, 19, p)

// func dotRows4IQ4_XSQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ4_XSQ8_KNEONDot(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	IQ4XS_SETUP
	VMOVI $32, V21.B16
	ZEROACC4
	CBZ R0, r4diq4xsdone
r4diq4xsloop:
	IQ4XS_DSC(R1, 6, 28)
	IQ4XS_DSC(R19, 11, 29)
	IQ4XS_DSC(R20, 13, 30)
	IQ4XS_DSC(R21, 14, 31)
	ZEROSUMI4
	ADD $4, R2, R14
	ADD $8, R1, R22
	ADD $8, R19, R23
	ADD $8, R20, R24
	ADD $8, R21, R25
	IQ4XS_DR4PAIR(0)
	IQ4XS_DR4PAIR(1)
	IQ4XS_DR4PAIR(2)
	IQ4XS_DR4PAIR(3)
	DTAILX(R1, 0, R2, V16, F24)
	DTAILX(R19, 0, R2, V17, F25)
	DTAILX(R20, 0, R2, V18, F26)
	DTAILX(R21, 0, R2, V19, F27)
	ADD $136, R1, R1
	ADD $136, R19, R19
	ADD $136, R20, R20
	ADD $136, R21, R21
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE r4diq4xsloop
r4diq4xsdone:
	STOREACC4
	RET

#define IQ4XS_DD4PAIR(p) \
	VLD1.P 32(R14), [V0.B16, V1.B16]; \
	IQ4XS_LOOKUP; \
	VLD1.P 64(R22), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	IQ4XS_DPROD(28, 29, 16, p); \
	VLD1.P 64(R23), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	IQ4XS_DPROD(28, 29, 17, p); \
	VLD1.P 64(R24), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	IQ4XS_DPROD(28, 29, 18, p); \
	VLD1.P 64(R25), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	IQ4XS_DPROD(28, 29, 19, p)

// func dot4IQ4_XSQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4IQ4_XSQ8_KNEONDot(SB), NOSPLIT, $0-40
	DOT4ARGSK
	IQ4XS_SETUP
	VMOVI $32, V21.B16
	ZEROACC4
	CBZ R0, d4diq4xsdone
d4diq4xsloop:
	IQ4XS_DSC(R1, 28, 29)
	ZEROSUMI4
	ADD $8, R1, R14
	ACTWALK4
	IQ4XS_DD4PAIR(0)
	IQ4XS_DD4PAIR(1)
	IQ4XS_DD4PAIR(2)
	IQ4XS_DD4PAIR(3)
	DTAILX(R1, 0, R2, V16, F24)
	DTAILX(R1, 0, R19, V17, F25)
	DTAILX(R1, 0, R20, V18, F26)
	DTAILX(R1, 0, R21, V19, F27)
	ADD $136, R1, R1
	ACTNEXT4
	SUBS $1, R0, R0
	BNE d4diq4xsloop
d4diq4xsdone:
	STOREACC4
	RET

// ---- Q2_K (84-byte blocks: scales[16] at 0 (low nibble scale, high
// nibble min), qs[64] at 16, fp16 d at 80, dmin at 82) and Q3_K (110-byte
// blocks: hmask[32] at 0, qs[64] at 32, 6-bit scales[12] at 96, fp16 d at
// 108), ARMv8.0 only like their one-row routines. Both go half by half
// (128 activations in V16..V23); the min terms are kept as int32 in
// R6..R9 and converted in the tail (the same int32, so the same float).

// The Q2_K/Q3_K tail of one row pair: facc += fp16(w.d)·a.d·float(ΣV(sumi))
// [- fp16(w.dmin)·a.d·float(rmin)], K4TAIL's / the Q3_K routine's float ops.
#define KTAIL_DM(wp, doff, moff, ap, sumi, rmin, facc) \
	VADDV sumi.S4, V6; \
	VMOV V6.S[0], R16; \
	SCVTFWS R16, F6; \
	SCVTFWS rmin, F7; \
	FMOVS (ap), F1; \
	MOVHU doff(wp), R4; \
	MOVHU moff(wp), R5; \
	FMOVS R4, F2; \
	FCVTHS F2, F2; \
	FMULS F1, F2, F2; \
	FMOVS R5, F3; \
	FCVTHS F3, F3; \
	FMULS F1, F3, F3; \
	FMADDS F6, facc, F2, facc; \
	FMSUBS F7, facc, F3, facc

// Q2_K min term of the block at wp against the bsums in V18 (0..7), V19
// (8..15): rmin = Σ bsum_i · (scales[i] >> 4); V12, V13, V9 scratch.
#define Q2K_MIN(wp, rmin) \
	VLD1 (wp), [V12.B16]; \
	VUSHR $4, V12.B16, V12.B16; \
	VUXTL2 V12.B16, V13.H8; \
	VUXTL V12.B8, V12.H8; \
	SMULL4S(9, 18, 12); \
	SMLAL2_4S(9, 18, 12); \
	SMLAL4S(9, 19, 13); \
	SMLAL2_4S(9, 19, 13); \
	VADDV V9.S4, V9; \
	VMOV V9.S[0], rmin

#define Q2K_BSUMS(ap) \
	ADD $260, ap, R14; \
	VLD1 (R14), [V18.H8, V19.H8]

// V10.H = the low nibbles of the eight scale bytes at off(wp).
#define Q2K_SCALES(wp, off) \
	MOVD off(wp), R10; \
	FMOVD R10, F10; \
	VAND V14.B16, V10.B16, V10.B16; \
	VUXTL V10.B8, V10.H8

// Q2K_HALF's eight groups: 2-bit quants of V0 (q[0:16]), V1 (q[16:32]) at
// shifts 0, 2, 4, 6 against V16..V23, scales in V10 (V15 = 3).
#define Q2K_GROUPS(acc) \
	VAND V15.B16, V0.B16, V7.B16; \
	VAND V15.B16, V1.B16, V8.B16; \
	Q6GA(7, 16, 10, 0, acc); \
	Q6GA(8, 17, 10, 1, acc); \
	VUSHR $2, V0.B16, V7.B16; \
	VUSHR $2, V1.B16, V8.B16; \
	VAND V15.B16, V7.B16, V7.B16; \
	VAND V15.B16, V8.B16, V8.B16; \
	Q6GA(7, 18, 10, 2, acc); \
	Q6GA(8, 19, 10, 3, acc); \
	VUSHR $4, V0.B16, V7.B16; \
	VUSHR $4, V1.B16, V8.B16; \
	VAND V15.B16, V7.B16, V7.B16; \
	VAND V15.B16, V8.B16, V8.B16; \
	Q6GA(7, 20, 10, 4, acc); \
	Q6GA(8, 21, 10, 5, acc); \
	VUSHR $6, V0.B16, V7.B16; \
	VUSHR $6, V1.B16, V8.B16; \
	Q6GA(7, 22, 10, 6, acc); \
	Q6GA(8, 23, 10, 7, acc)

#define Q2K_R4ROW(wp, qoff, scoff, acc) \
	ADD $qoff, wp, R14; \
	VLD1 (R14), [V0.B16, V1.B16]; \
	Q2K_SCALES(wp, scoff); \
	Q2K_GROUPS(acc)

// func dotRows4Q2_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q2_KQ8_KNEON(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	VMOVI $3, V15.B16
	VMOVI $15, V14.B16
	ZEROACC4
	CBZ R0, r4q2kdone
r4q2kloop:
	Q2K_BSUMS(R2)
	Q2K_MIN(R1, R6)
	Q2K_MIN(R19, R7)
	Q2K_MIN(R20, R8)
	Q2K_MIN(R21, R9)
	ZEROSUMI4HI
	ADD $4, R2, R15
	Q6K_ACTHALF(R15)
	Q2K_R4ROW(R1, 16, 0, 28)
	Q2K_R4ROW(R19, 16, 0, 29)
	Q2K_R4ROW(R20, 16, 0, 30)
	Q2K_R4ROW(R21, 16, 0, 31)
	Q6K_ACTHALF(R15)
	Q2K_R4ROW(R1, 48, 8, 28)
	Q2K_R4ROW(R19, 48, 8, 29)
	Q2K_R4ROW(R20, 48, 8, 30)
	Q2K_R4ROW(R21, 48, 8, 31)
	KTAIL_DM(R1, 80, 82, R2, V28, R6, F24)
	KTAIL_DM(R19, 80, 82, R2, V29, R7, F25)
	KTAIL_DM(R20, 80, 82, R2, V30, R8, F26)
	KTAIL_DM(R21, 80, 82, R2, V31, R9, F27)
	ADD $84, R1, R1
	ADD $84, R19, R19
	ADD $84, R20, R20
	ADD $84, R21, R21
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE r4q2kloop
r4q2kdone:
	STOREACC4
	RET

// One weight half unpacked once: q loaded into V20, V21, the eight groups'
// 2-bit values to V0..V7, scales to V10.
#define Q2K_UNPACK8(qoff, scoff) \
	ADD $qoff, R1, R14; \
	VLD1 (R14), [V20.B16, V21.B16]; \
	Q2K_SCALES(R1, scoff); \
	VAND V15.B16, V20.B16, V0.B16; \
	VAND V15.B16, V21.B16, V1.B16; \
	VUSHR $2, V20.B16, V2.B16; \
	VUSHR $2, V21.B16, V3.B16; \
	VAND V15.B16, V2.B16, V2.B16; \
	VAND V15.B16, V3.B16, V3.B16; \
	VUSHR $4, V20.B16, V4.B16; \
	VUSHR $4, V21.B16, V5.B16; \
	VAND V15.B16, V4.B16, V4.B16; \
	VAND V15.B16, V5.B16, V5.B16; \
	VUSHR $6, V20.B16, V6.B16; \
	VUSHR $6, V21.B16, V7.B16

// func dot4Q2_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q2_KQ8_KNEON(SB), NOSPLIT, $0-40
	DOT4ARGSK
	VMOVI $3, V15.B16
	VMOVI $15, V14.B16
	ZEROACC4
	CBZ R0, d4q2kdone
d4q2kloop:
	Q2K_BSUMS(R2)
	Q2K_MIN(R1, R6)
	Q2K_BSUMS(R19)
	Q2K_MIN(R1, R7)
	Q2K_BSUMS(R20)
	Q2K_MIN(R1, R8)
	Q2K_BSUMS(R21)
	Q2K_MIN(R1, R9)
	ZEROSUMI4HI
	ACTWALK4
	Q2K_UNPACK8(16, 0)
	Q6K_D4ROW(R22, 28)
	Q6K_D4ROW(R23, 29)
	Q6K_D4ROW(R24, 30)
	Q6K_D4ROW(R25, 31)
	Q2K_UNPACK8(48, 8)
	Q6K_D4ROW(R22, 28)
	Q6K_D4ROW(R23, 29)
	Q6K_D4ROW(R24, 30)
	Q6K_D4ROW(R25, 31)
	KTAIL_DM(R1, 80, 82, R2, V28, R6, F24)
	KTAIL_DM(R1, 80, 82, R19, V29, R7, F25)
	KTAIL_DM(R1, 80, 82, R20, V30, R8, F26)
	KTAIL_DM(R1, 80, 82, R21, V31, R9, F27)
	ADD $84, R1, R1
	ACTNEXT4
	SUBS $1, R0, R0
	BNE d4q2kloop
d4q2kdone:
	STOREACC4
	RET

// Q3_K scales of the block at wp (the one-row routine's decoding), the
// half selected by rsel (R9: scales 0..7, R11: 8..15) minus 32 to V10.H
// (V11 = 32 bytes); R6..R13 scratch.
#define Q3K_SC(wp, rsel) \
	MOVWU 96(wp), R6; \
	MOVWU 100(wp), R7; \
	MOVWU 104(wp), R8; \
	ANDW $0x0f0f0f0f, R6, R9; \
	ANDW $0x03030303, R8, R12; \
	ORRW R12<<4, R9, R9; \
	ANDW $0x0f0f0f0f, R7, R10; \
	LSRW $2, R8, R12; \
	ANDW $0x03030303, R12, R12; \
	ORRW R12<<4, R10, R10; \
	LSRW $4, R6, R11; \
	ANDW $0x0f0f0f0f, R11, R11; \
	LSRW $4, R8, R12; \
	ANDW $0x03030303, R12, R12; \
	ORRW R12<<4, R11, R11; \
	LSRW $4, R7, R13; \
	ANDW $0x0f0f0f0f, R13, R13; \
	LSRW $6, R8, R12; \
	ANDW $0x03030303, R12, R12; \
	ORRW R12<<4, R13, R13; \
	ORR R10<<32, R9, R9; \
	ORR R13<<32, R11, R11; \
	FMOVD rsel, F10; \
	VSUB V11.B16, V10.B16, V10.B16; \
	SXTL8H(10, 10)

// Q3K_CHUNK for one weight row: V7/V8 (shifted q[0:16] / q[16:32]) to
// 3-bit values with hmask bit m of V2 / V3 (clear: -4), against act ya/yb
// with scales k, k+1 of V10 (V15 = 3, V14 = 4; V4, V5 scratch).
#define Q3K_RCH(m, k, ya, yb, acc) \
	VAND V15.B16, V7.B16, V7.B16; \
	VAND V15.B16, V8.B16, V8.B16; \
	VMOVI $(1<<(m)), V4.B16; \
	VCMTST V4.B16, V2.B16, V5.B16; \
	VAND V14.B16, V5.B16, V5.B16; \
	VORR V5.B16, V7.B16, V7.B16; \
	VCMTST V4.B16, V3.B16, V5.B16; \
	VAND V14.B16, V5.B16, V5.B16; \
	VORR V5.B16, V8.B16, V8.B16; \
	VSUB V14.B16, V7.B16, V7.B16; \
	VSUB V14.B16, V8.B16, V8.B16; \
	Q6GA(7, ya, 10, k, acc); \
	Q6GA(8, yb, 10, k+1, acc)

// One weight row's half (quants at qoff, hmask bits mb..mb+3).
#define Q3K_R4ROW(wp, qoff, mb, rsel, acc) \
	VLD1 (wp), [V2.B16, V3.B16]; \
	ADD $qoff, wp, R14; \
	VLD1 (R14), [V0.B16, V1.B16]; \
	Q3K_SC(wp, rsel); \
	VORR V0.B16, V0.B16, V7.B16; \
	VORR V1.B16, V1.B16, V8.B16; \
	Q3K_RCH(mb, 0, 16, 17, acc); \
	VUSHR $2, V0.B16, V7.B16; \
	VUSHR $2, V1.B16, V8.B16; \
	Q3K_RCH(mb+1, 2, 18, 19, acc); \
	VUSHR $4, V0.B16, V7.B16; \
	VUSHR $4, V1.B16, V8.B16; \
	Q3K_RCH(mb+2, 4, 20, 21, acc); \
	VUSHR $6, V0.B16, V7.B16; \
	VUSHR $6, V1.B16, V8.B16; \
	Q3K_RCH(mb+3, 6, 22, 23, acc)

// func dotRows4Q3_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q3_KQ8_KNEON(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	VMOVI $3, V15.B16
	VMOVI $4, V14.B16
	VMOVI $32, V11.B16
	ZEROACC4
	CBZ R0, r4q3kdone
r4q3kloop:
	ZEROSUMI4HI
	ADD $4, R2, R15
	Q6K_ACTHALF(R15)
	Q3K_R4ROW(R1, 32, 0, R9, 28)
	Q3K_R4ROW(R19, 32, 0, R9, 29)
	Q3K_R4ROW(R20, 32, 0, R9, 30)
	Q3K_R4ROW(R21, 32, 0, R9, 31)
	Q6K_ACTHALF(R15)
	Q3K_R4ROW(R1, 64, 4, R11, 28)
	Q3K_R4ROW(R19, 64, 4, R11, 29)
	Q3K_R4ROW(R20, 64, 4, R11, 30)
	Q3K_R4ROW(R21, 64, 4, R11, 31)
	DTAILX(R1, 108, R2, V28, F24)
	DTAILX(R19, 108, R2, V29, F25)
	DTAILX(R20, 108, R2, V30, F26)
	DTAILX(R21, 108, R2, V31, F27)
	ADD $110, R1, R1
	ADD $110, R19, R19
	ADD $110, R20, R20
	ADD $110, R21, R21
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE r4q3kloop
r4q3kdone:
	STOREACC4
	RET

// dst (q & 3) to its 3-bit value: hmask bit m of hm clear means -4 (V12,
// V8 scratch).
#define Q3K_FIX(dst, hm, m) \
	VMOVI $(1<<(m)), V12.B16; \
	VCMTST V12.B16, hm.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, dst.B16, dst.B16; \
	VSUB V14.B16, dst.B16, dst.B16

// One weight half unpacked once: hmask to V22, V23, quants to V20, V21
// (before the activations take them), the eight groups' values to V0..V7
// (even groups from q[0:16] with hmask[0:16], odd from q[16:32] with
// hmask[16:32], as Q3K_CHUNK's V7 / V8), scales to V10.
#define Q3K_UNPACK8(qoff, mb, rsel) \
	VLD1 (R1), [V22.B16, V23.B16]; \
	ADD $qoff, R1, R14; \
	VLD1 (R14), [V20.B16, V21.B16]; \
	Q3K_SC(R1, rsel); \
	VAND V15.B16, V20.B16, V0.B16; \
	Q3K_FIX(V0, V22, mb); \
	VAND V15.B16, V21.B16, V1.B16; \
	Q3K_FIX(V1, V23, mb); \
	VUSHR $2, V20.B16, V2.B16; \
	VAND V15.B16, V2.B16, V2.B16; \
	Q3K_FIX(V2, V22, mb+1); \
	VUSHR $2, V21.B16, V3.B16; \
	VAND V15.B16, V3.B16, V3.B16; \
	Q3K_FIX(V3, V23, mb+1); \
	VUSHR $4, V20.B16, V4.B16; \
	VAND V15.B16, V4.B16, V4.B16; \
	Q3K_FIX(V4, V22, mb+2); \
	VUSHR $4, V21.B16, V5.B16; \
	VAND V15.B16, V5.B16, V5.B16; \
	Q3K_FIX(V5, V23, mb+2); \
	VUSHR $6, V20.B16, V6.B16; \
	Q3K_FIX(V6, V22, mb+3); \
	VUSHR $6, V21.B16, V7.B16; \
	Q3K_FIX(V7, V23, mb+3)

// func dot4Q3_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q3_KQ8_KNEON(SB), NOSPLIT, $0-40
	DOT4ARGSK
	VMOVI $3, V15.B16
	VMOVI $4, V14.B16
	VMOVI $32, V11.B16
	ZEROACC4
	CBZ R0, d4q3kdone
d4q3kloop:
	ZEROSUMI4HI
	ACTWALK4
	Q3K_UNPACK8(32, 0, R9)
	Q6K_D4ROW(R22, 28)
	Q6K_D4ROW(R23, 29)
	Q6K_D4ROW(R24, 30)
	Q6K_D4ROW(R25, 31)
	Q3K_UNPACK8(64, 4, R11)
	Q6K_D4ROW(R22, 28)
	Q6K_D4ROW(R23, 29)
	Q6K_D4ROW(R24, 30)
	Q6K_D4ROW(R25, 31)
	DTAILX(R1, 108, R2, V28, F24)
	DTAILX(R1, 108, R19, V29, F25)
	DTAILX(R1, 108, R20, V30, F26)
	DTAILX(R1, 108, R21, V31, F27)
	ADD $110, R1, R1
	ACTNEXT4
	SUBS $1, R0, R0
	BNE d4q3kloop
d4q3kdone:
	STOREACC4
	RET

// ---- Q4_1 × Q8_1, Q5_0 × Q8_0, Q5_1 × Q8_1 (ARMv8.0 only, like their
// one-row routines): Q4_0's per-row structure, plus for the types with a
// min a scalar m·s accumulator per row in F28+j (the one-row F26/F27),
// added after the horizontal sum as the one-row routine adds it.

// y[j] += F28+j, after STORE4 (R9 = y): the one-row FADDS ms, F0, F0.
#define ADDMS4 \
	FMOVS (R9), F0; \
	FADDS F28, F0, F0; \
	FMOVS F0, (R9); \
	FMOVS 4(R9), F0; \
	FADDS F29, F0, F0; \
	FMOVS F0, 4(R9); \
	FMOVS 8(R9), F0; \
	FADDS F30, F0, F0; \
	FMOVS F0, 8(R9); \
	FMOVS 12(R9), F0; \
	FADDS F31, F0, F0; \
	FMOVS F0, 12(R9)

#define ZEROMS4 \
	VEOR V28.B16, V28.B16, V28.B16; \
	VEOR V29.B16, V29.B16, V29.B16; \
	VEOR V30.B16, V30.B16, V30.B16; \
	VEOR V31.B16, V31.B16, V31.B16

// ms += fp16(rm)·fp16(rs) (the one-row FMADDS F12, F26, F11, F26).
#define MSFMA(rm, rs, ms) \
	FMOVS rm, F11; \
	FCVTHS F11, F11; \
	FMOVS rs, F12; \
	FCVTHS F12, F12; \
	FMADDS F12, ms, F11, ms

// Q4_1: weight block fp16 d, m, 16 bytes of nibbles; Q8_1 activation block
// fp16 d, s, 32 int8.
#define Q41_W(wp, acc, ms) \
	MOVHU.P 2(wp), R4; \
	MOVHU.P 2(wp), R6; \
	VLD1.P 16(wp), [V0.B16]; \
	DPRODH; \
	MSFMA(R6, R7, ms); \
	VAND V15.B16, V0.B16, V1.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	Q40_SUM(acc)

#define Q81_ACT(ap) \
	MOVHU.P 2(ap), R5; \
	MOVHU.P 2(ap), R7; \
	VLD1.P 32(ap), [V2.B16, V3.B16]

// func dotRows4Q4_1Q8_1NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q4_1Q8_1NEON(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	VMOVI $15, V15.B16
	ZERO4
	ZEROMS4
	CBZ R0, r4q41done
r4q41loop:
	Q81_ACT(R2)
	Q41_W(R1, 16, F28)
	Q41_W(R19, 17, F29)
	Q41_W(R20, 18, F30)
	Q41_W(R21, 19, F31)
	SUBS $1, R0, R0
	BNE r4q41loop
r4q41done:
	STORE4
	ADDMS4
	RET

#define Q41_A(ap, acc, ms) \
	Q81_ACT(ap); \
	DPRODH; \
	MSFMA(R6, R7, ms); \
	Q40_SUM(acc)

// func dot4Q4_1Q8_1NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q4_1Q8_1NEON(SB), NOSPLIT, $0-40
	DOT4ARGSK
	VMOVI $15, V15.B16
	ZERO4
	ZEROMS4
	CBZ R0, d4q41done
d4q41loop:
	MOVHU.P 2(R1), R4
	MOVHU.P 2(R1), R6
	VLD1.P 16(R1), [V0.B16]
	VAND V15.B16, V0.B16, V1.B16
	VUSHR $4, V0.B16, V0.B16
	Q41_A(R2, 16, F28)
	Q41_A(R19, 17, F29)
	Q41_A(R20, 18, F30)
	Q41_A(R21, 19, F31)
	SUBS $1, R0, R0
	BNE d4q41loop
d4q41done:
	STORE4
	ADDMS4
	RET

// Q5_0/Q5_1 high bits: dot_arm64.s's QHBITS (V21/V22 = 0x10 where bit j of
// the 32-bit qh in R6 is set; V24, V25 = indices, V26 = bits, V14 = 0x10).
DATA qhIdx4<>+0(SB)/8, $0x0000000000000000
DATA qhIdx4<>+8(SB)/8, $0x0101010101010101
DATA qhIdx4<>+16(SB)/8, $0x0202020202020202
DATA qhIdx4<>+24(SB)/8, $0x0303030303030303
DATA qhIdx4<>+32(SB)/8, $0x8040201008040201
DATA qhIdx4<>+40(SB)/8, $0x8040201008040201
GLOBL qhIdx4<>(SB), RODATA|NOPTR, $48

#define QHSETUP4 \
	MOVD $qhIdx4<>(SB), R10; \
	VLD1 (R10), [V24.B16, V25.B16, V26.B16]; \
	VMOVI $16, V14.B16; \
	VMOVI $15, V15.B16

#define QHBITS4 \
	FMOVS R6, F20; \
	VTBL V24.B16, [V20.B16], V21.B16; \
	VTBL V25.B16, [V20.B16], V22.B16; \
	VCMTST V26.B16, V21.B16, V21.B16; \
	VCMTST V26.B16, V22.B16, V22.B16; \
	VAND V14.B16, V21.B16, V21.B16; \
	VAND V14.B16, V22.B16, V22.B16

// V1 = low nibbles | bit 4, V0 = high nibbles | bit 4 (minus 16 for Q5_0).
#define Q5_UNPACK \
	VAND V15.B16, V0.B16, V1.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VORR V21.B16, V1.B16, V1.B16; \
	VORR V22.B16, V0.B16, V0.B16

#define Q50_UNPACK \
	Q5_UNPACK; \
	VSUB V14.B16, V1.B16, V1.B16; \
	VSUB V14.B16, V0.B16, V0.B16

// Q5_0: weight block fp16 d, qh (32 bits), 16 bytes of nibbles.
#define Q50_W(wp, acc) \
	MOVHU.P 2(wp), R4; \
	MOVWU.P 4(wp), R6; \
	VLD1.P 16(wp), [V0.B16]; \
	DPRODH; \
	QHBITS4; \
	Q50_UNPACK; \
	Q40_SUM(acc)

// func dotRows4Q5_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q5_0Q8_0NEON(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	QHSETUP4
	ZERO4
	CBZ R0, r4q50done
r4q50loop:
	MOVHU.P 2(R2), R5
	VLD1.P 32(R2), [V2.B16, V3.B16]
	Q50_W(R1, 16)
	Q50_W(R19, 17)
	Q50_W(R20, 18)
	Q50_W(R21, 19)
	SUBS $1, R0, R0
	BNE r4q50loop
r4q50done:
	STORE4
	RET

// func dot4Q5_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q5_0Q8_0NEON(SB), NOSPLIT, $0-40
	DOT4ARGSK
	QHSETUP4
	ZERO4
	CBZ R0, d4q50done
d4q50loop:
	MOVHU.P 2(R1), R4
	MOVWU.P 4(R1), R6
	VLD1.P 16(R1), [V0.B16]
	QHBITS4
	Q50_UNPACK
	ACT_LOAD(R2)
	Q40_SUM(16)
	ACT_LOAD(R19)
	Q40_SUM(17)
	ACT_LOAD(R20)
	Q40_SUM(18)
	ACT_LOAD(R21)
	Q40_SUM(19)
	SUBS $1, R0, R0
	BNE d4q50loop
d4q50done:
	STORE4
	RET

// Q5_1: weight block fp16 d, m, qh, 16 bytes of nibbles; Q8_1 activations
// (a.d in R5, a.s in R8).
#define Q51_W(wp, acc, ms) \
	MOVHU.P 2(wp), R4; \
	MOVHU.P 2(wp), R7; \
	MOVWU.P 4(wp), R6; \
	VLD1.P 16(wp), [V0.B16]; \
	DPRODH; \
	MSFMA(R7, R8, ms); \
	QHBITS4; \
	Q5_UNPACK; \
	Q40_SUM(acc)

#define Q51_ACT(ap) \
	MOVHU.P 2(ap), R5; \
	MOVHU.P 2(ap), R8; \
	VLD1.P 32(ap), [V2.B16, V3.B16]

// func dotRows4Q5_1Q8_1NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q5_1Q8_1NEON(SB), NOSPLIT, $0-40
	ROWS4ARGSK
	QHSETUP4
	ZERO4
	ZEROMS4
	CBZ R0, r4q51done
r4q51loop:
	Q51_ACT(R2)
	Q51_W(R1, 16, F28)
	Q51_W(R19, 17, F29)
	Q51_W(R20, 18, F30)
	Q51_W(R21, 19, F31)
	SUBS $1, R0, R0
	BNE r4q51loop
r4q51done:
	STORE4
	ADDMS4
	RET

#define Q51_A(ap, acc, ms) \
	Q51_ACT(ap); \
	DPRODH; \
	MSFMA(R7, R8, ms); \
	Q40_SUM(acc)

// func dot4Q5_1Q8_1NEON(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q5_1Q8_1NEON(SB), NOSPLIT, $0-40
	DOT4ARGSK
	QHSETUP4
	ZERO4
	ZEROMS4
	CBZ R0, d4q51done
d4q51loop:
	MOVHU.P 2(R1), R4
	MOVHU.P 2(R1), R7
	MOVWU.P 4(R1), R6
	VLD1.P 16(R1), [V0.B16]
	QHBITS4
	Q5_UNPACK
	Q51_A(R2, 16, F28)
	Q51_A(R19, 17, F29)
	Q51_A(R20, 18, F30)
	Q51_A(R21, 19, F31)
	SUBS $1, R0, R0
	BNE d4q51loop
d4q51done:
	STORE4
	ADDMS4
	RET
