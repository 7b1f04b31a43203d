// IQ3_XXS and IQ3_S against Q8_K on NEON (ARMv8.0). Per 32-weight group:
// eight grid entries looked up with scalar loads and inserted into two
// vectors, the 32 sign bits turned into a byte mask (TBL byte broadcast,
// AND with each position's bit, CMEQ), the grid bytes negated under the
// mask (|grid| ≤ 62 fits int8), and SMULL/SMLAL into int16 lanes of four
// products each (≤ 4·62·128 = 31744: no wrap), SADDLP and a horizontal
// add to the group's exact sum, times its odd scale in a general register.
// The float step is the scalar dot's, in the same order, so both dots are
// bit-identical to dotIQ3_XXS / dotIQ3_S.

#include "textflag.h"
#include "neon_arm64.h"

// Each byte's bit, and the TBL indices broadcasting byte l of the sign
// word to bytes 8l..8l+7.
DATA iq3nidx<>+0(SB)/8, $0x8040201008040201
DATA iq3nidx<>+8(SB)/8, $0x8040201008040201
DATA iq3nidx<>+16(SB)/8, $0x0000000000000000
DATA iq3nidx<>+24(SB)/8, $0x0101010101010101
DATA iq3nidx<>+32(SB)/8, $0x0202020202020202
DATA iq3nidx<>+40(SB)/8, $0x0303030303030303
GLOBL iq3nidx<>(SB), RODATA|NOPTR, $48

// V28, V29 = the TBL indices, V27 = the bits; R13 = grid.
#define IQ3N_CONSTS(grid) \
	MOVD $iq3nidx<>(SB), R5; \
	VLD1 (R5), [V27.B16, V28.B16, V29.B16]; \
	MOVD $grid(SB), R13

// Lane i of v = the grid entry of the index byte at off(R1).
#define IQ3N_LANE(off, v, i) \
	MOVBU off(R1), R10; \
	MOVWU (R13)(R10<<2), R10; \
	VMOV R10, v.S[i]

// IQ3_S: the same with bit b of R11 (the group's qh byte) as bit 8.
#define IQ3SN_LANE(off, b, v, i) \
	MOVBU off(R1), R10; \
	UBFX $b, R11, $1, R12; \
	ORR R12<<8, R10, R10; \
	MOVWU (R13)(R10<<2), R10; \
	VMOV R10, v.S[i]

// R8 += R7 · Σ sign·grid·a over the group: grid bytes in V0 (weights
// 0..15) and V1 (16..31), the 32 sign bits in R9, activations at aoff(R2).
#define IQ3N_MAC(aoff) \
	VMOV R9, V2.S[0]; \
	VTBL V28.B16, [V2.B16], V3.B16; \
	VTBL V29.B16, [V2.B16], V6.B16; \
	VAND V27.B16, V3.B16, V3.B16; \
	VAND V27.B16, V6.B16, V6.B16; \
	VCMEQ V27.B16, V3.B16, V3.B16; \
	VCMEQ V27.B16, V6.B16, V6.B16; \
	VEOR V3.B16, V0.B16, V0.B16; \
	VSUB V3.B16, V0.B16, V0.B16; \
	VEOR V6.B16, V1.B16, V1.B16; \
	VSUB V6.B16, V1.B16, V1.B16; \
	ADD $aoff, R2, R5; \
	VLD1 (R5), [V4.B16, V5.B16]; \
	SMULL8H(16, 0, 4); \
	SMLAL2_8H(16, 0, 4); \
	SMLAL8H(16, 1, 5); \
	SMLAL2_8H(16, 1, 5); \
	SADDLP4S(17, 16); \
	VADDV V17.S4, V17; \
	VMOV V17.S[0], R6; \
	MOVW R6, R6; \
	MUL R7, R6, R6; \
	ADD R6, R8, R8

// An IQ3_XXS group: scale-and-sign word at soff(R1), index bytes at
// q(R1)..q+7(R1). R14 = ksigns.
#define IQ3XXSN_GROUP(soff, q, aoff) \
	MOVWU soff(R1), R7; \
	UBFX $0, R7, $7, R10; \
	MOVBU (R14)(R10), R9; \
	UBFX $7, R7, $7, R10; \
	MOVBU (R14)(R10), R10; \
	ORR R10<<8, R9, R9; \
	UBFX $14, R7, $7, R10; \
	MOVBU (R14)(R10), R10; \
	ORR R10<<16, R9, R9; \
	UBFX $21, R7, $7, R10; \
	MOVBU (R14)(R10), R10; \
	ORR R10<<24, R9, R9; \
	LSRW $28, R7, R7; \
	ADD R7, R7, R7; \
	ADD $1, R7, R7; \
	IQ3N_LANE(q, V0, 0); \
	IQ3N_LANE(q+1, V0, 1); \
	IQ3N_LANE(q+2, V0, 2); \
	IQ3N_LANE(q+3, V0, 3); \
	IQ3N_LANE(q+4, V1, 0); \
	IQ3N_LANE(q+5, V1, 1); \
	IQ3N_LANE(q+6, V1, 2); \
	IQ3N_LANE(q+7, V1, 3); \
	IQ3N_MAC(aoff)

// An IQ3_S group g: indices at q(R1).. with bit 8 from the qh byte at
// h(R1), signs at s(R1), scale nibble at bit sh of the byte at c(R1).
#define IQ3SN_GROUP(q, h, s, c, sh, aoff) \
	MOVBU h(R1), R11; \
	MOVWU s(R1), R9; \
	MOVBU c(R1), R7; \
	UBFX $sh, R7, $4, R7; \
	ADD R7, R7, R7; \
	ADD $1, R7, R7; \
	IQ3SN_LANE(q, 0, V0, 0); \
	IQ3SN_LANE(q+1, 1, V0, 1); \
	IQ3SN_LANE(q+2, 2, V0, 2); \
	IQ3SN_LANE(q+3, 3, V0, 3); \
	IQ3SN_LANE(q+4, 4, V1, 0); \
	IQ3SN_LANE(q+5, 5, V1, 1); \
	IQ3SN_LANE(q+6, 6, V1, 2); \
	IQ3SN_LANE(q+7, 7, V1, 3); \
	IQ3N_MAC(aoff)

// F20 += float(R8) · (fp16(d at R1) · d_a (f32 at R2)).
#define IQ3N_FIN \
	SCVTFWS R8, F11; \
	MOVHU (R1), R4; \
	FMOVS R4, F9; \
	FCVTHS F9, F9; \
	FMOVS (R2), F10; \
	FMULS F9, F10, F10; \
	FMULS F10, F11, F11; \
	FADDS F11, F20, F20

// func dotIQ3_XXSQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotIQ3_XXSQ8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	IQ3N_CONSTS(·iq3xxsGrid)
	MOVD $·kSigns(SB), R14
	FMOVS ZR, F20
	CBZ R0, xxsndone
xxsnloop:
	MOVD ZR, R8
	IQ3XXSN_GROUP(66, 2, 4)
	IQ3XXSN_GROUP(70, 10, 36)
	IQ3XXSN_GROUP(74, 18, 68)
	IQ3XXSN_GROUP(78, 26, 100)
	IQ3XXSN_GROUP(82, 34, 132)
	IQ3XXSN_GROUP(86, 42, 164)
	IQ3XXSN_GROUP(90, 50, 196)
	IQ3XXSN_GROUP(94, 58, 228)
	IQ3N_FIN
	ADD $98, R1
	ADD $292, R2
	SUBS $1, R0, R0
	BNE xxsnloop
xxsndone:
	FMOVS $0.25, F12
	FMULS F12, F20, F20
	FMOVS F20, ret+24(FP)
	RET

// func dotIQ3_SQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotIQ3_SQ8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	IQ3N_CONSTS(·iq3sGrid)
	FMOVS ZR, F20
	CBZ R0, sndone
snloop:
	MOVD ZR, R8
	IQ3SN_GROUP(2, 66, 74, 106, 0, 4)
	IQ3SN_GROUP(10, 67, 78, 106, 4, 36)
	IQ3SN_GROUP(18, 68, 82, 107, 0, 68)
	IQ3SN_GROUP(26, 69, 86, 107, 4, 100)
	IQ3SN_GROUP(34, 70, 90, 108, 0, 132)
	IQ3SN_GROUP(42, 71, 94, 108, 4, 164)
	IQ3SN_GROUP(50, 72, 98, 109, 0, 196)
	IQ3SN_GROUP(58, 73, 102, 109, 4, 228)
	IQ3N_FIN
	ADD $110, R1
	ADD $292, R2
	SUBS $1, R0, R0
	BNE snloop
sndone:
	FMOVS F20, ret+24(FP)
	RET
