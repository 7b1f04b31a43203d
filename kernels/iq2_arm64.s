// IQ2_XXS, IQ2_XS and IQ2_S against Q8_K on NEON (ARMv8.0); the per-group
// code below is unrolled per 32 weights by a one-off script. Per 32
// weights: the four 8-byte grid entries (iq2grid.go) and their ±1 sign bytes
// (iq2SignTabs) are loaded by index into V0/V4 and V1/V5, multiplied (MUL:
// v = grid·sign, |v| ≤ 43), and SMULL/SMLAL2 against the signed activations
// give two int16 accumulators (groups 0-1 and 2-3; each lane two products,
// |·| ≤ 2·43·128 = 11008) that SMLAL by element with the scales 2s+1 (V15.H[0],
// V15.H[1]) widens into the int32 super-block sum. That sum is the scalar
// dot's isum exactly for any bytes, and the float steps are the scalar
// dot's in order (sum += fl(d_w·d_a)·isum, then ·1/8), so these dots are
// bit-identical to the scalar ones. No four-row routines are written for
// arm64 yet (MatVec runs the dot per row); speed is unmeasured (checked
// under qemu only).
//
// Registers: R1 = w block, R2 = a block, R5 = activation cursor, R8 = the
// grid, R9 = iq2SignTabs.signs7, R10 = .signs8; R3, R4, R6, R7, R11 scratch.

#include "textflag.h"
#include "neon_arm64.h"

// Vd.16B = Vn.16B × Vm.16B (MUL, vector, bytes).
#define MUL16B(d, n, m) WORD $(0x4E209C00 | ((m)<<16) | ((n)<<5) | (d))

// vr.D[lane] = the 8 bytes at tab + 8·idx. Clobbers R7.
#define IQ2N_LD(tab, idx, vr, lane) \
	MOVD (tab)(idx<<3), R7; \
	VMOV R7, vr.D[lane]

// The shared multiply-accumulate of one group of 32 (see above).
#define IQ2N_MAC \
	VLD1.P 32(R5), [V2.B16, V3.B16]; \
	MUL16B(0, 0, 1); \
	MUL16B(4, 4, 5); \
	SMULL8H(16, 0, 2); \
	SMLAL2_8H(16, 0, 2); \
	SMULL8H(17, 4, 3); \
	SMLAL2_8H(17, 4, 3); \
	SMLALE(18, 16, 15, 0); \
	SMLAL2E(18, 16, 15, 0); \
	SMLALE(18, 17, 15, 1); \
	SMLAL2E(18, 17, 15, 1)

// V15.H[0], V15.H[1] = 2·lo+1, 2·hi+1 of the scale byte at so(R1).
#define IQ2N_SC2(so) \
	MOVBU so(R1), R4; \
	AND $15, R4, R6; \
	LSR $4, R4, R4; \
	LSL $1, R6, R6; \
	ADD $1, R6, R6; \
	LSL $1, R4, R4; \
	ADD $1, R4, R4; \
	VMOV R6, V15.H[0]; \
	VMOV R4, V15.H[1]

// sum F20 += float(Σ V18) · (fp16 d at 0(R1) · d_a at 0(R2)).
#define IQ2N_FIN \
	VADDV V18.S4, V18; \
	VMOV V18.S[0], R6; \
	SCVTFWS R6, F11; \
	MOVHU (R1), R4; \
	FMOVS R4, F9; \
	FCVTHS F9, F9; \
	FMOVS (R2), F10; \
	FMULS F9, F10, F10; \
	FMULS F10, F11, F11; \
	FADDS F11, F20, F20


// func dotIQ2_XXSQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotIQ2_XXSQ8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	MOVD $·iq2xxsGrid(SB), R8
	MOVD $·iq2SignTabs(SB), R9
	ADD $1024, R9, R10
	FMOVS ZR, F20
	CBZ R0, iq2xxsndone
iq2xxsnloop:
	VEOR V18.B16, V18.B16, V18.B16
	ADD $4, R2, R5
	MOVWU 2(R1), R3
	MOVWU 6(R1), R4
	UBFX $0, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $0, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $8, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $7, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $16, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $14, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $24, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $21, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	LSR $28, R4, R6
	LSL $1, R6, R6
	ADD $1, R6, R6
	VMOV R6, V15.H[0]
	VMOV R6, V15.H[1]
	IQ2N_MAC
	MOVWU 10(R1), R3
	MOVWU 14(R1), R4
	UBFX $0, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $0, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $8, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $7, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $16, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $14, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $24, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $21, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	LSR $28, R4, R6
	LSL $1, R6, R6
	ADD $1, R6, R6
	VMOV R6, V15.H[0]
	VMOV R6, V15.H[1]
	IQ2N_MAC
	MOVWU 18(R1), R3
	MOVWU 22(R1), R4
	UBFX $0, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $0, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $8, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $7, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $16, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $14, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $24, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $21, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	LSR $28, R4, R6
	LSL $1, R6, R6
	ADD $1, R6, R6
	VMOV R6, V15.H[0]
	VMOV R6, V15.H[1]
	IQ2N_MAC
	MOVWU 26(R1), R3
	MOVWU 30(R1), R4
	UBFX $0, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $0, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $8, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $7, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $16, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $14, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $24, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $21, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	LSR $28, R4, R6
	LSL $1, R6, R6
	ADD $1, R6, R6
	VMOV R6, V15.H[0]
	VMOV R6, V15.H[1]
	IQ2N_MAC
	MOVWU 34(R1), R3
	MOVWU 38(R1), R4
	UBFX $0, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $0, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $8, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $7, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $16, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $14, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $24, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $21, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	LSR $28, R4, R6
	LSL $1, R6, R6
	ADD $1, R6, R6
	VMOV R6, V15.H[0]
	VMOV R6, V15.H[1]
	IQ2N_MAC
	MOVWU 42(R1), R3
	MOVWU 46(R1), R4
	UBFX $0, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $0, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $8, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $7, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $16, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $14, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $24, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $21, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	LSR $28, R4, R6
	LSL $1, R6, R6
	ADD $1, R6, R6
	VMOV R6, V15.H[0]
	VMOV R6, V15.H[1]
	IQ2N_MAC
	MOVWU 50(R1), R3
	MOVWU 54(R1), R4
	UBFX $0, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $0, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $8, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $7, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $16, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $14, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $24, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $21, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	LSR $28, R4, R6
	LSL $1, R6, R6
	ADD $1, R6, R6
	VMOV R6, V15.H[0]
	VMOV R6, V15.H[1]
	IQ2N_MAC
	MOVWU 58(R1), R3
	MOVWU 62(R1), R4
	UBFX $0, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $0, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $8, R3, $8, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $7, R4, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $16, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $14, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $24, R3, $8, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $21, R4, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	LSR $28, R4, R6
	LSL $1, R6, R6
	ADD $1, R6, R6
	VMOV R6, V15.H[0]
	VMOV R6, V15.H[1]
	IQ2N_MAC
	IQ2N_FIN
	ADD $66, R1
	ADD $292, R2
	SUBS $1, R0, R0
	BNE iq2xxsnloop
iq2xxsndone:
	FMOVS $0.125, F1
	FMULS F1, F20, F20
	FMOVS F20, ret+24(FP)
	RET

// func dotIQ2_XSQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotIQ2_XSQ8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	MOVD $·iq2xsGrid(SB), R8
	MOVD $·iq2SignTabs(SB), R9
	ADD $1024, R9, R10
	FMOVS ZR, F20
	CBZ R0, iq2xsndone
iq2xsnloop:
	VEOR V18.B16, V18.B16, V18.B16
	ADD $4, R2, R5
	MOVD 2(R1), R3
	UBFX $0, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $9, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $16, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $25, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $32, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $41, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $48, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $57, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	IQ2N_SC2(66)
	IQ2N_MAC
	MOVD 10(R1), R3
	UBFX $0, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $9, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $16, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $25, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $32, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $41, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $48, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $57, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	IQ2N_SC2(67)
	IQ2N_MAC
	MOVD 18(R1), R3
	UBFX $0, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $9, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $16, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $25, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $32, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $41, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $48, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $57, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	IQ2N_SC2(68)
	IQ2N_MAC
	MOVD 26(R1), R3
	UBFX $0, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $9, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $16, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $25, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $32, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $41, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $48, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $57, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	IQ2N_SC2(69)
	IQ2N_MAC
	MOVD 34(R1), R3
	UBFX $0, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $9, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $16, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $25, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $32, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $41, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $48, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $57, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	IQ2N_SC2(70)
	IQ2N_MAC
	MOVD 42(R1), R3
	UBFX $0, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $9, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $16, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $25, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $32, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $41, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $48, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $57, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	IQ2N_SC2(71)
	IQ2N_MAC
	MOVD 50(R1), R3
	UBFX $0, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $9, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $16, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $25, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $32, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $41, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $48, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $57, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	IQ2N_SC2(72)
	IQ2N_MAC
	MOVD 58(R1), R3
	UBFX $0, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 0)
	UBFX $9, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 0)
	UBFX $16, R3, $9, R6
	IQ2N_LD(R8, R6, V0, 1)
	UBFX $25, R3, $7, R6
	IQ2N_LD(R9, R6, V1, 1)
	UBFX $32, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 0)
	UBFX $41, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 0)
	UBFX $48, R3, $9, R6
	IQ2N_LD(R8, R6, V4, 1)
	UBFX $57, R3, $7, R6
	IQ2N_LD(R9, R6, V5, 1)
	IQ2N_SC2(73)
	IQ2N_MAC
	IQ2N_FIN
	ADD $74, R1
	ADD $292, R2
	SUBS $1, R0, R0
	BNE iq2xsnloop
iq2xsndone:
	FMOVS $0.125, F1
	FMULS F1, F20, F20
	FMOVS F20, ret+24(FP)
	RET

// func dotIQ2_SQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotIQ2_SQ8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	MOVD $·iq2sGrid(SB), R8
	MOVD $·iq2SignTabs(SB), R9
	ADD $1024, R9, R10
	FMOVS ZR, F20
	CBZ R0, iq2sndone
iq2snloop:
	VEOR V18.B16, V18.B16, V18.B16
	ADD $4, R2, R5
	MOVWU 2(R1), R3
	MOVBU 66(R1), R4
	UBFX $0, R3, $8, R6
	UBFX $0, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 0)
	MOVBU 34(R1), R6
	IQ2N_LD(R10, R6, V1, 0)
	UBFX $8, R3, $8, R6
	UBFX $2, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 1)
	MOVBU 35(R1), R6
	IQ2N_LD(R10, R6, V1, 1)
	UBFX $16, R3, $8, R6
	UBFX $4, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 0)
	MOVBU 36(R1), R6
	IQ2N_LD(R10, R6, V5, 0)
	UBFX $24, R3, $8, R6
	UBFX $6, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 1)
	MOVBU 37(R1), R6
	IQ2N_LD(R10, R6, V5, 1)
	IQ2N_SC2(74)
	IQ2N_MAC
	MOVWU 6(R1), R3
	MOVBU 67(R1), R4
	UBFX $0, R3, $8, R6
	UBFX $0, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 0)
	MOVBU 38(R1), R6
	IQ2N_LD(R10, R6, V1, 0)
	UBFX $8, R3, $8, R6
	UBFX $2, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 1)
	MOVBU 39(R1), R6
	IQ2N_LD(R10, R6, V1, 1)
	UBFX $16, R3, $8, R6
	UBFX $4, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 0)
	MOVBU 40(R1), R6
	IQ2N_LD(R10, R6, V5, 0)
	UBFX $24, R3, $8, R6
	UBFX $6, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 1)
	MOVBU 41(R1), R6
	IQ2N_LD(R10, R6, V5, 1)
	IQ2N_SC2(75)
	IQ2N_MAC
	MOVWU 10(R1), R3
	MOVBU 68(R1), R4
	UBFX $0, R3, $8, R6
	UBFX $0, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 0)
	MOVBU 42(R1), R6
	IQ2N_LD(R10, R6, V1, 0)
	UBFX $8, R3, $8, R6
	UBFX $2, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 1)
	MOVBU 43(R1), R6
	IQ2N_LD(R10, R6, V1, 1)
	UBFX $16, R3, $8, R6
	UBFX $4, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 0)
	MOVBU 44(R1), R6
	IQ2N_LD(R10, R6, V5, 0)
	UBFX $24, R3, $8, R6
	UBFX $6, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 1)
	MOVBU 45(R1), R6
	IQ2N_LD(R10, R6, V5, 1)
	IQ2N_SC2(76)
	IQ2N_MAC
	MOVWU 14(R1), R3
	MOVBU 69(R1), R4
	UBFX $0, R3, $8, R6
	UBFX $0, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 0)
	MOVBU 46(R1), R6
	IQ2N_LD(R10, R6, V1, 0)
	UBFX $8, R3, $8, R6
	UBFX $2, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 1)
	MOVBU 47(R1), R6
	IQ2N_LD(R10, R6, V1, 1)
	UBFX $16, R3, $8, R6
	UBFX $4, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 0)
	MOVBU 48(R1), R6
	IQ2N_LD(R10, R6, V5, 0)
	UBFX $24, R3, $8, R6
	UBFX $6, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 1)
	MOVBU 49(R1), R6
	IQ2N_LD(R10, R6, V5, 1)
	IQ2N_SC2(77)
	IQ2N_MAC
	MOVWU 18(R1), R3
	MOVBU 70(R1), R4
	UBFX $0, R3, $8, R6
	UBFX $0, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 0)
	MOVBU 50(R1), R6
	IQ2N_LD(R10, R6, V1, 0)
	UBFX $8, R3, $8, R6
	UBFX $2, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 1)
	MOVBU 51(R1), R6
	IQ2N_LD(R10, R6, V1, 1)
	UBFX $16, R3, $8, R6
	UBFX $4, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 0)
	MOVBU 52(R1), R6
	IQ2N_LD(R10, R6, V5, 0)
	UBFX $24, R3, $8, R6
	UBFX $6, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 1)
	MOVBU 53(R1), R6
	IQ2N_LD(R10, R6, V5, 1)
	IQ2N_SC2(78)
	IQ2N_MAC
	MOVWU 22(R1), R3
	MOVBU 71(R1), R4
	UBFX $0, R3, $8, R6
	UBFX $0, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 0)
	MOVBU 54(R1), R6
	IQ2N_LD(R10, R6, V1, 0)
	UBFX $8, R3, $8, R6
	UBFX $2, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 1)
	MOVBU 55(R1), R6
	IQ2N_LD(R10, R6, V1, 1)
	UBFX $16, R3, $8, R6
	UBFX $4, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 0)
	MOVBU 56(R1), R6
	IQ2N_LD(R10, R6, V5, 0)
	UBFX $24, R3, $8, R6
	UBFX $6, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 1)
	MOVBU 57(R1), R6
	IQ2N_LD(R10, R6, V5, 1)
	IQ2N_SC2(79)
	IQ2N_MAC
	MOVWU 26(R1), R3
	MOVBU 72(R1), R4
	UBFX $0, R3, $8, R6
	UBFX $0, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 0)
	MOVBU 58(R1), R6
	IQ2N_LD(R10, R6, V1, 0)
	UBFX $8, R3, $8, R6
	UBFX $2, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 1)
	MOVBU 59(R1), R6
	IQ2N_LD(R10, R6, V1, 1)
	UBFX $16, R3, $8, R6
	UBFX $4, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 0)
	MOVBU 60(R1), R6
	IQ2N_LD(R10, R6, V5, 0)
	UBFX $24, R3, $8, R6
	UBFX $6, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 1)
	MOVBU 61(R1), R6
	IQ2N_LD(R10, R6, V5, 1)
	IQ2N_SC2(80)
	IQ2N_MAC
	MOVWU 30(R1), R3
	MOVBU 73(R1), R4
	UBFX $0, R3, $8, R6
	UBFX $0, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 0)
	MOVBU 62(R1), R6
	IQ2N_LD(R10, R6, V1, 0)
	UBFX $8, R3, $8, R6
	UBFX $2, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V0, 1)
	MOVBU 63(R1), R6
	IQ2N_LD(R10, R6, V1, 1)
	UBFX $16, R3, $8, R6
	UBFX $4, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 0)
	MOVBU 64(R1), R6
	IQ2N_LD(R10, R6, V5, 0)
	UBFX $24, R3, $8, R6
	UBFX $6, R4, $2, R11
	ORR R11<<8, R6, R6
	IQ2N_LD(R8, R6, V4, 1)
	MOVBU 65(R1), R6
	IQ2N_LD(R10, R6, V5, 1)
	IQ2N_SC2(81)
	IQ2N_MAC
	IQ2N_FIN
	ADD $82, R1
	ADD $292, R2
	SUBS $1, R0, R0
	BNE iq2snloop
iq2sndone:
	FMOVS $0.125, F1
	FMULS F1, F20, F20
	FMOVS F20, ret+24(FP)
	RET
