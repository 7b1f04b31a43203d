// IQ1_S and IQ1_M against Q8_K on NEON (ARMv8.0). Per 32-weight group:
// the four grid entries (eight int8 values in {-1, 0, 1}) are scalar loads
// by the 11-bit indices formed in general registers, inserted as the two
// doublewords of two vectors; each value becomes v = 8·grid + delta with
// the ±1 delta of its eight (SHL by 3, ADD), |v| ≤ 9, and SMULL/SMLAL
// forms int16 lanes of four products (≤ 4·9·128) whose SADDLP and
// horizontal sum times the odd scale of each 16 accumulate, in a general
// register, C = 8·sumi + sumi1 exactly. As on AVX2 (iq1_amd64.s), C/8 is
// the scalar dot's sumi + sumi1/8 and exact in f32, so with its remaining
// float steps these dots are bit-identical to dotIQ1_S / dotIQ1_M for
// activations whose sums of 16 are their quants' sums (QuantizeAct's).

#include "textflag.h"
#include "neon_arm64.h"

// Doubleword i of v = grid entry (base R13) qs byte at q(R1) | bits
// sh..sh+2 of R11 as index bits 8..10.
#define IQ1N_LANE(q, sh, v, i) \
	MOVBU q(R1), R10; \
	UBFX $sh, R11, $3, R12; \
	ORR R12<<8, R10, R10; \
	MOVD (R13)(R10<<3), R10; \
	VMOV R10, v.D[i]

// V0, V1 = the 32 values 8·grid of the group (before the delta).
#define IQ1N_SHIFT \
	VSHL $3, V0.B16, V0.B16; \
	VSHL $3, V1.B16, V1.B16

// R6 = Σ of the int16 lanes of V(n)·V(a) (8 + 8 products of 16 bytes).
#define IQ1N_DOT16(n, a) \
	SMULL8H(16, n, a); \
	SMLAL2_8H(16, n, a); \
	SADDLP4S(17, 16); \
	VADDV V17.S4, V17; \
	VMOV V17.S[0], R6; \
	MOVW R6, R6

// R8 += R7·Σ v·a over weights 0..15 (V0, V4) and R9·Σ over 16..31 (V1, V5),
// activations at aoff(R2).
#define IQ1N_MAC(aoff) \
	ADD $aoff, R2, R5; \
	VLD1 (R5), [V4.B16, V5.B16]; \
	IQ1N_DOT16(0, 4); \
	MUL R7, R6, R6; \
	ADD R6, R8, R8; \
	IQ1N_DOT16(1, 5); \
	MUL R9, R6, R6; \
	ADD R6, R8, R8

// An IQ1_S group g: qs at q(R1), qh at h(R1) (index bits 3l..3l+2, scale
// bits 12..14, delta sign bit 15). R15 = 0x0101010101010101.
#define IQ1SN_GROUP(q, h, aoff) \
	MOVHU h(R1), R11; \
	IQ1N_LANE(q, 0, V0, 0); \
	IQ1N_LANE(q+1, 3, V0, 1); \
	IQ1N_LANE(q+2, 6, V1, 0); \
	IQ1N_LANE(q+3, 9, V1, 1); \
	IQ1N_SHIFT; \
	UBFX $15, R11, $1, R10; \
	NEG R10, R10; \
	ORR R15, R10, R10; \
	VDUP R10, V2.D2; \
	VADD V2.B16, V0.B16, V0.B16; \
	VADD V2.B16, V1.B16, V1.B16; \
	UBFX $12, R11, $3, R7; \
	ADD R7, R7, R7; \
	ADD $1, R7, R7; \
	MOVD R7, R9; \
	IQ1N_MAC(aoff)

// Doubleword i of V2 = the delta bytes of bit b of R11 (-1 if set, else +1).
#define IQ1MN_DELTA(b, i) \
	UBFX $b, R11, $1, R10; \
	NEG R10, R10; \
	ORR R15, R10, R10; \
	VMOV R10, V2.D[i]

// An IQ1_M group g: qs at q(R1), the qh bytes at h(R1) (nibble per eight:
// index bits 0..2, delta bit 3), the scale word at s(R1) with the two
// 3-bit scales at bit sh and sh+3.
#define IQ1MN_GROUP(q, h, s, sh, aoff) \
	MOVHU h(R1), R11; \
	IQ1N_LANE(q, 0, V0, 0); \
	IQ1N_LANE(q+1, 4, V0, 1); \
	IQ1N_LANE(q+2, 8, V1, 0); \
	IQ1N_LANE(q+3, 12, V1, 1); \
	IQ1N_SHIFT; \
	IQ1MN_DELTA(3, 0); \
	IQ1MN_DELTA(7, 1); \
	VADD V2.B16, V0.B16, V0.B16; \
	IQ1MN_DELTA(11, 0); \
	IQ1MN_DELTA(15, 1); \
	VADD V2.B16, V1.B16, V1.B16; \
	MOVHU s(R1), R12; \
	UBFX $sh, R12, $3, R7; \
	ADD R7, R7, R7; \
	ADD $1, R7, R7; \
	UBFX $(sh+3), R12, $3, R9; \
	ADD R9, R9, R9; \
	ADD $1, R9, R9; \
	IQ1N_MAC(aoff)

// F20 += fl(fp16(R4)·d_a)·(float(R8)/8).
#define IQ1N_FIN \
	SCVTFWS R8, F11; \
	FMULS F12, F11, F11; \
	FMOVS R4, F9; \
	FCVTHS F9, F9; \
	FMOVS (R2), F10; \
	FMULS F9, F10, F10; \
	FMULS F11, F10, F10; \
	FADDS F10, F20, F20

#define IQ1N_START \
	MOVD nb+0(FP), R0; \
	MOVD w+8(FP), R1; \
	MOVD a+16(FP), R2; \
	MOVD $·iq1sGrid(SB), R13; \
	MOVD $0x0101010101010101, R15; \
	FMOVS $0.125, F12; \
	FMOVS ZR, F20

// func dotIQ1_SQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotIQ1_SQ8_KNEON(SB), NOSPLIT, $0-28
	IQ1N_START
	CBZ R0, sndone
snloop:
	MOVD ZR, R8
	IQ1SN_GROUP(2, 34, 4)
	IQ1SN_GROUP(6, 36, 36)
	IQ1SN_GROUP(10, 38, 68)
	IQ1SN_GROUP(14, 40, 100)
	IQ1SN_GROUP(18, 42, 132)
	IQ1SN_GROUP(22, 44, 164)
	IQ1SN_GROUP(26, 46, 196)
	IQ1SN_GROUP(30, 48, 228)
	MOVHU (R1), R4
	IQ1N_FIN
	ADD $50, R1
	ADD $292, R2
	SUBS $1, R0, R0
	BNE snloop
sndone:
	FMOVS F20, ret+24(FP)
	RET

// func dotIQ1_MQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotIQ1_MQ8_KNEON(SB), NOSPLIT, $0-28
	IQ1N_START
	CBZ R0, mndone
mnloop:
	MOVD ZR, R8
	IQ1MN_GROUP(0, 32, 48, 0, 4)
	IQ1MN_GROUP(4, 34, 48, 6, 36)
	IQ1MN_GROUP(8, 36, 50, 0, 68)
	IQ1MN_GROUP(12, 38, 50, 6, 100)
	IQ1MN_GROUP(16, 40, 52, 0, 132)
	IQ1MN_GROUP(20, 42, 52, 6, 164)
	IQ1MN_GROUP(24, 44, 54, 0, 196)
	IQ1MN_GROUP(28, 46, 54, 6, 228)
	// R4 = fp16 d from the scale words' top nibbles.
	MOVHU 48(R1), R4
	LSR $12, R4, R4
	MOVHU 50(R1), R5
	LSR $12, R5, R5
	ORR R5<<4, R4, R4
	MOVHU 52(R1), R5
	LSR $12, R5, R5
	ORR R5<<8, R4, R4
	MOVHU 54(R1), R5
	LSR $12, R5, R5
	ORR R5<<12, R4, R4
	IQ1N_FIN
	ADD $56, R1
	ADD $292, R2
	SUBS $1, R0, R0
	BNE mnloop
mndone:
	FMOVS F20, ret+24(FP)
	RET
