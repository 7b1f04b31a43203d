// TQ2_0 against Q8_K on NEON (ARMv8.0). The stored codes c = value + 1
// (0..3) multiply the signed activations with SMLAL/SMLAL2 into one int16
// accumulator per super-block: each lane takes 32 products of at most
// 3·128, so |sum| ≤ 12288 and nothing wraps; SADDLP widens, the Q8_K
// bsums (Σ a) remove the +1, and the exact int32 Σ (c-1)·a is scaled as the
// scalar dot scales it (d = d_a·fp16(d_w); sum += float(isum)·d), so the
// result is bit-identical to dotTQ2_0 for QuantizeAct's activations.

#include "textflag.h"
#include "neon_arm64.h"

// V16.8H += V8.16B (masked codes) × V(a).16B.
#define TQ2N_MAC(a) \
	SMLAL8H(16, 8, a); \
	SMLAL2_8H(16, 8, a)

// Bit pair 0 of the code bytes in c (a V.B16 arrangement) against V(a).
#define TQ2N_L0(c, a) \
	VAND V30.B16, c, V8.B16; \
	TQ2N_MAC(a)

// Bit pair sh/2 of the code bytes in c against V(a).
#define TQ2N_L(sh, c, a) \
	VUSHR $sh, c, V8.B16; \
	VAND V30.B16, V8.B16, V8.B16; \
	TQ2N_MAC(a)

// func dotTQ2_0Q8_KNEON(nb int, w, a *byte) float32
TEXT ·dotTQ2_0Q8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $3, V30.B16
	FMOVS ZR, F20
	CBZ R0, tq2ndone
tq2nloop:
	VEOR V16.B16, V16.B16, V16.B16
	VLD1 (R1), [V0.B16, V1.B16, V2.B16, V3.B16]
	ADD $4, R2, R5
	VLD1.P 64(R5), [V4.B16, V5.B16, V6.B16, V7.B16]
	TQ2N_L0(V0.B16, 4)
	TQ2N_L0(V1.B16, 5)
	TQ2N_L(2, V0.B16, 6)
	TQ2N_L(2, V1.B16, 7)
	VLD1.P 64(R5), [V4.B16, V5.B16, V6.B16, V7.B16]
	TQ2N_L(4, V0.B16, 4)
	TQ2N_L(4, V1.B16, 5)
	TQ2N_L(6, V0.B16, 6)
	TQ2N_L(6, V1.B16, 7)
	VLD1.P 64(R5), [V4.B16, V5.B16, V6.B16, V7.B16]
	TQ2N_L0(V2.B16, 4)
	TQ2N_L0(V3.B16, 5)
	TQ2N_L(2, V2.B16, 6)
	TQ2N_L(2, V3.B16, 7)
	VLD1.P 64(R5), [V4.B16, V5.B16, V6.B16, V7.B16]
	TQ2N_L(4, V2.B16, 4)
	TQ2N_L(4, V3.B16, 5)
	TQ2N_L(6, V2.B16, 6)
	TQ2N_L(6, V3.B16, 7)
	// R5 = a+260: the 16 int16 bsums.
	VLD1 (R5), [V4.H8, V5.H8]
	SADDLP4S(6, 16)
	SADDLP4S(7, 4)
	SADALP4S(7, 5)
	VSUB V7.S4, V6.S4, V6.S4
	VADDV V6.S4, V6
	VMOV V6.S[0], R6
	SCVTFWS R6, F11
	MOVHU 64(R1), R4
	FMOVS R4, F9
	FCVTHS F9, F9
	FMOVS (R2), F10
	FMULS F9, F10, F10
	FMULS F10, F11, F11
	FADDS F11, F20, F20
	ADD $66, R1
	ADD $292, R2
	SUBS $1, R0, R0
	BNE tq2nloop
tq2ndone:
	FMOVS F20, ret+24(FP)
	RET
