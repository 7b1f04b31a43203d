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

// ---- TQ1_0 against Q8_K on NEON (ARMv8.0). Trit n of a byte b is
// ((b·3^n mod 256)·3) >> 8: a byte MUL by 3^n (mod 256 by construction),
// UMULL/UMULL2 by 3 to 16 bits and UZP2 keeping the high bytes. The trits
// (0..2) then go through SMLAL/SMLAL2 as TQ2_0's codes do (32 products of
// at most 2·128 per int16 lane), in the activations' order: qs[0..31] at
// 3^0..3^4 (elements 0..159), qs[32..47] at 3^0..3^4 (160..239), and
// qh[0..3] repeated four times at 1, 1, 1, 1, 3, ..., 27 (240..255).

// Vd.16B = Vn.16B × Vm.16B (MUL, vector, bytes).
#define MUL16B(d, n, m) WORD $(0x4E209C00 | ((m)<<16) | ((n)<<5) | (d))
// Vd.8H = Vn.8B × Vm.8B unsigned (UMULL), upper halves (UMULL2).
#define UMULL8H(d, n, m) WORD $(0x2E20C000 | ((m)<<16) | ((n)<<5) | (d))
#define UMULL2_8H(d, n, m) WORD $(0x6E20C000 | ((m)<<16) | ((n)<<5) | (d))
// Vd.16B = the odd bytes of Vn.16B then of Vm.16B (UZP2).
#define UZP2_16B(d, n, m) WORD $(0x4E005800 | ((m)<<16) | ((n)<<5) | (d))

// The multipliers of qh's replicated bytes: 1, 3, 9, 27 four times each.
DATA tq1qhp<>+0(SB)/8, $0x0303030301010101
DATA tq1qhp<>+8(SB)/8, $0x1b1b1b1b09090909
GLOBL tq1qhp<>(SB), RODATA|NOPTR, $16

// V8 = the trits of the bytes in V(src) already multiplied (q); V21 = 3.
#define TQ1N_TRITS(q) \
	UMULL8H(10, q, 21); \
	UMULL2_8H(11, q, 21); \
	UZP2_16B(8, 10, 11)

// V16.8H += trits of V(src)·V(p) against V(a) (p = 0: the bytes as they are).
#define TQ1N(src, p, a) \
	MUL16B(9, src, p); \
	TQ1N_TRITS(9); \
	SMLAL8H(16, 8, a); \
	SMLAL2_8H(16, 8, a)

#define TQ1N0(src, a) \
	TQ1N_TRITS(src); \
	SMLAL8H(16, 8, a); \
	SMLAL2_8H(16, 8, a)

// func dotTQ1_0Q8_KNEON(nb int, w, a *byte) float32
TEXT ·dotTQ1_0Q8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $3, V21.B16
	VMOVI $9, V22.B16
	VMOVI $27, V23.B16
	VMOVI $81, V24.B16
	MOVD $tq1qhp<>(SB), R3
	VLD1 (R3), [V25.B16]
	FMOVS ZR, F20
	CBZ R0, tq1ndone
tq1nloop:
	VEOR V16.B16, V16.B16, V16.B16
	VLD1 (R1), [V0.B16, V1.B16, V2.B16]
	MOVWU 48(R1), R7
	VDUP R7, V3.S4
	ADD $4, R2, R5
	VLD1.P 64(R5), [V4.B16, V5.B16, V6.B16, V7.B16]
	TQ1N0(0, 4)
	TQ1N0(1, 5)
	TQ1N(0, 21, 6)
	TQ1N(1, 21, 7)
	VLD1.P 64(R5), [V4.B16, V5.B16, V6.B16, V7.B16]
	TQ1N(0, 22, 4)
	TQ1N(1, 22, 5)
	TQ1N(0, 23, 6)
	TQ1N(1, 23, 7)
	VLD1.P 64(R5), [V4.B16, V5.B16, V6.B16, V7.B16]
	TQ1N(0, 24, 4)
	TQ1N(1, 24, 5)
	TQ1N0(2, 6)
	TQ1N(2, 21, 7)
	VLD1.P 64(R5), [V4.B16, V5.B16, V6.B16, V7.B16]
	TQ1N(2, 22, 4)
	TQ1N(2, 23, 5)
	TQ1N(2, 24, 6)
	TQ1N(3, 25, 7)
	// R5 = a+260: the 16 int16 bsums.
	VLD1 (R5), [V4.H8, V5.H8]
	SADDLP4S(6, 16)
	SADDLP4S(7, 4)
	SADALP4S(7, 5)
	VSUB V7.S4, V6.S4, V6.S4
	VADDV V6.S4, V6
	VMOV V6.S[0], R6
	SCVTFWS R6, F11
	MOVHU 52(R1), R4
	FMOVS R4, F9
	FCVTHS F9, F9
	FMOVS (R2), F10
	FMULS F9, F10, F10
	FMULS F10, F11, F11
	FADDS F11, F20, F20
	ADD $54, R1
	ADD $292, R2
	SUBS $1, R0, R0
	BNE tq1nloop
tq1ndone:
	FMOVS F20, ret+24(FP)
	RET
