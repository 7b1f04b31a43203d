// NEON (ARMv8.0 Advanced SIMD) dot products, ggml vec_dot semantics. Go's
// assembler lacks most widening integer and vector float instructions, so
// those are emitted as WORDs by the macros below (register numbers are
// plain integers, V0..V31). Block integer sums are exact for every byte
// pattern: int8 products are widened to int16 with SMULL and never more than
// four products (≤ 4·8·128 for Q4_0, ≤ 4·15·128 for Q4_K) or two (≤ 2·32·128
// for Q6_K) share an int16 lane before being widened again to int32.

#include "textflag.h"

// Vd.8H = Vn.8B × Vm.8B (signed), and the accumulate / upper-half forms.
#define SMULL8H(d, n, m) WORD $(0x0E20C000 | ((m)<<16) | ((n)<<5) | (d))
#define SMULL2_8H(d, n, m) WORD $(0x4E20C000 | ((m)<<16) | ((n)<<5) | (d))
#define SMLAL8H(d, n, m) WORD $(0x0E208000 | ((m)<<16) | ((n)<<5) | (d))
#define SMLAL2_8H(d, n, m) WORD $(0x4E208000 | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S = Vn.4H × Vm.4H (signed); SMLAL2_4S accumulates the upper halves.
#define SMULL4S(d, n, m) WORD $(0x0E60C000 | ((m)<<16) | ((n)<<5) | (d))
#define SMLAL2_4S(d, n, m) WORD $(0x4E608000 | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S += Vn.4H × Vm.H[i] (lower / upper four lanes of Vn); m ≤ 15.
#define SMLALE(d, n, m, i) WORD $(0x0F402000 | ((((i)>>2)&1)<<11) | ((((i)>>1)&1)<<21) | (((i)&1)<<20) | ((m)<<16) | ((n)<<5) | (d))
#define SMLAL2E(d, n, m, i) WORD $(0x4F402000 | ((((i)>>2)&1)<<11) | ((((i)>>1)&1)<<21) | (((i)&1)<<20) | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S = pairwise sums of Vn.8H (SADDLP), or += (SADALP).
#define SADDLP4S(d, n) WORD $(0x4E602800 | ((n)<<5) | (d))
#define SADALP4S(d, n) WORD $(0x4E606800 | ((n)<<5) | (d))
// Vd.8H = sign-extended Vn.8B (lower / upper half).
#define SXTL8H(d, n) WORD $(0x0F08A400 | ((n)<<5) | (d))
#define SXTL2_8H(d, n) WORD $(0x4F08A400 | ((n)<<5) | (d))
// Vd.4S = float(Vn.4S int32).
#define SCVTF4S(d, n) WORD $(0x4E21D800 | ((n)<<5) | (d))
// Vd.4S += Vn.4S × Vm.S[0].
#define FMLAS0(d, n, m) WORD $(0x4F801000 | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S = Vn.4S + Vm.4S; pairwise add; Sd = Vn.S[0] + Vn.S[1].
#define FADD4S(d, n, m) WORD $(0x4E20D400 | ((m)<<16) | ((n)<<5) | (d))
#define FADDP4S(d, n, m) WORD $(0x6E20D400 | ((m)<<16) | ((n)<<5) | (d))
#define FADDPS(d, n) WORD $(0x7E30D800 | ((n)<<5) | (d))
// Vd.4S = float(Vn.4H half) lower / upper half.
#define FCVTL4S(d, n) WORD $(0x0E217800 | ((n)<<5) | (d))
#define FCVTL2_4S(d, n) WORD $(0x4E217800 | ((n)<<5) | (d))

// F9 = fp16(R4) * fp16(R5).
#define DPRODH \
	FMOVS R4, F9; \
	FCVTHS F9, F9; \
	FMOVS R5, F10; \
	FCVTHS F10, F10; \
	FMULS F10, F9, F9

// F0 = horizontal sum of V16.4S.
#define HSUM16 \
	FADDP4S(16, 16, 16); \
	FADDPS(0, 16)

// func dotQ4_0Q8_0NEON(nb int, w, a *byte) float32
TEXT ·dotQ4_0Q8_0NEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $15, V15.B16
	VMOVI $8, V14.B16
	VEOR V16.B16, V16.B16, V16.B16
	CBZ R0, q40done
q40loop:
	MOVHU.P 2(R1), R4
	MOVHU.P 2(R2), R5
	VLD1.P 16(R1), [V0.B16]
	VLD1.P 32(R2), [V2.B16, V3.B16]
	DPRODH
	VAND V15.B16, V0.B16, V1.B16
	VUSHR $4, V0.B16, V0.B16
	VSUB V14.B16, V1.B16, V1.B16
	VSUB V14.B16, V0.B16, V0.B16
	SMULL8H(4, 1, 2)
	SMLAL2_8H(4, 1, 2)
	SMLAL8H(4, 0, 3)
	SMLAL2_8H(4, 0, 3)
	SADDLP4S(5, 4)
	SCVTF4S(5, 5)
	FMLAS0(16, 5, 9)
	SUBS $1, R0, R0
	BNE q40loop
q40done:
	HSUM16
	FMOVS F0, ret+24(FP)
	RET

// func dotQ8_0Q8_0NEON(nb int, w, a *byte) float32
TEXT ·dotQ8_0Q8_0NEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VEOR V16.B16, V16.B16, V16.B16
	CBZ R0, q80done
q80loop:
	MOVHU.P 2(R1), R4
	MOVHU.P 2(R2), R5
	VLD1.P 32(R1), [V0.B16, V1.B16]
	VLD1.P 32(R2), [V2.B16, V3.B16]
	DPRODH
	SMULL8H(4, 0, 2)
	SMULL2_8H(5, 0, 2)
	SMULL8H(6, 1, 3)
	SMULL2_8H(7, 1, 3)
	SADDLP4S(8, 4)
	SADALP4S(8, 5)
	SADALP4S(8, 6)
	SADALP4S(8, 7)
	SCVTF4S(8, 8)
	FMLAS0(16, 8, 9)
	SUBS $1, R0, R0
	BNE q80loop
q80done:
	HSUM16
	FMOVS F0, ret+24(FP)
	RET

// Q4_K sub-block pair of chunk j: nibbles in V0,V1 (32 bytes), activations
// V2..V5 (64 bytes); sumi V6 += scale(2j)·Σlow + scale(2j+1)·Σhigh.
#define Q4K_CHUNK(j) \
	VLD1.P 32(R14), [V0.B16, V1.B16]; \
	VLD1.P 64(R15), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	VAND V15.B16, V0.B16, V7.B16; \
	VAND V15.B16, V1.B16, V8.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VUSHR $4, V1.B16, V1.B16; \
	SMULL8H(9, 7, 2); \
	SMLAL2_8H(9, 7, 2); \
	SMLAL8H(9, 8, 3); \
	SMLAL2_8H(9, 8, 3); \
	SMLALE(6, 9, 13, 2*j); \
	SMLAL2E(6, 9, 13, 2*j); \
	SMULL8H(10, 0, 4); \
	SMLAL2_8H(10, 0, 4); \
	SMLAL8H(10, 1, 5); \
	SMLAL2_8H(10, 1, 5); \
	SMLALE(6, 10, 13, 2*j+1); \
	SMLAL2E(6, 10, 13, 2*j+1)

// The running sum lives in F25 because V0 (F0) is a load register here.
// func dotQ4_KQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotQ4_KQ8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $15, V15.B16
	FMOVS ZR, F25
	CBZ R0, q4kdone
q4kloop:
	MOVHU 0(R1), R4
	MOVHU 2(R1), R5
	MOVWU 4(R1), R6
	MOVWU 8(R1), R7
	MOVWU 12(R1), R8
	ANDW $0x3f3f3f3f, R6, R9
	ANDW $0x3f3f3f3f, R7, R10
	ANDW $0x0f0f0f0f, R8, R11
	LSRW $6, R6, R12
	ANDW $0x03030303, R12, R12
	ORRW R12<<4, R11, R11
	LSRW $4, R8, R13
	ANDW $0x0f0f0f0f, R13, R13
	LSRW $6, R7, R12
	ANDW $0x03030303, R12, R12
	ORRW R12<<4, R13, R13
	ORR R11<<32, R9, R9
	FMOVD R9, F13
	VUXTL V13.B8, V13.H8
	ORR R13<<32, R10, R10
	FMOVD R10, F12
	VUXTL V12.B8, V12.H8
	ADD $260, R2, R14
	VLD1 (R14), [V20.H8, V21.H8]
	VADDP V21.H8, V20.H8, V22.H8
	SMULL4S(24, 22, 12)
	SMLAL2_4S(24, 22, 12)
	VADDV V24.S4, V24
	VMOV V24.S[0], R16
	SCVTFWS R16, F24
	VEOR V6.B16, V6.B16, V6.B16
	ADD $16, R1, R14
	ADD $4, R2, R15
	Q4K_CHUNK(0)
	Q4K_CHUNK(1)
	Q4K_CHUNK(2)
	Q4K_CHUNK(3)
	VADDV V6.S4, V6
	VMOV V6.S[0], R16
	SCVTFWS R16, F6
	FMOVS (R2), F1
	FMOVS R4, F2
	FCVTHS F2, F2
	FMULS F1, F2, F2
	FMOVS R5, F3
	FCVTHS F3, F3
	FMULS F1, F3, F3
	FMADDS F6, F25, F2, F25
	FMSUBS F24, F25, F3, F25
	ADD $144, R1, R1
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE q4kloop
q4kdone:
	FMOVS F25, ret+24(FP)
	RET

// One 16-element Q6_K group: signed 6-bit values in Vq, activations in Vy,
// scale H[i] of Vs; sumi V6 += scale·Σ.
#define Q6G(q, y, s, i) \
	SMULL8H(24, q, y); \
	SMLAL2_8H(24, q, y); \
	SMLALE(6, 24, s, i); \
	SMLAL2E(6, 24, s, i)

// Q6_K half: ql at R14 (64 bytes), qh at R13 (32 bytes), activations at R15
// (128 bytes), scales in V(s).H[0..7].
#define Q6K_HALF(s) \
	VLD1.P 64(R14), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	VLD1.P 32(R13), [V4.B16, V5.B16]; \
	VLD1.P 64(R15), [V16.B16, V17.B16, V18.B16, V19.B16]; \
	VLD1.P 64(R15), [V20.B16, V21.B16, V22.B16, V23.B16]; \
	VAND V15.B16, V0.B16, V7.B16; \
	VSHL $4, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6G(7, 16, s, 0); \
	VAND V15.B16, V1.B16, V7.B16; \
	VSHL $4, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6G(7, 17, s, 1); \
	VAND V15.B16, V2.B16, V7.B16; \
	VSHL $2, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6G(7, 18, s, 2); \
	VAND V15.B16, V3.B16, V7.B16; \
	VSHL $2, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6G(7, 19, s, 3); \
	VUSHR $4, V0.B16, V7.B16; \
	VAND V14.B16, V4.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6G(7, 20, s, 4); \
	VUSHR $4, V1.B16, V7.B16; \
	VAND V14.B16, V5.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6G(7, 21, s, 5); \
	VUSHR $4, V2.B16, V7.B16; \
	VUSHR $2, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6G(7, 22, s, 6); \
	VUSHR $4, V3.B16, V7.B16; \
	VUSHR $2, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6G(7, 23, s, 7)

// func dotQ6_KQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotQ6_KQ8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $15, V15.B16
	VMOVI $48, V14.B16
	VMOVI $32, V11.B16
	FMOVS ZR, F25
	CBZ R0, q6kdone
q6kloop:
	MOVHU 208(R1), R4
	ADD $192, R1, R5
	VLD1 (R5), [V12.B16]
	SXTL2_8H(13, 12)
	SXTL8H(12, 12)
	VEOR V6.B16, V6.B16, V6.B16
	MOVD R1, R14
	ADD $128, R1, R13
	ADD $4, R2, R15
	Q6K_HALF(12)
	Q6K_HALF(13)
	VADDV V6.S4, V6
	VMOV V6.S[0], R16
	SCVTFWS R16, F6
	FMOVS (R2), F1
	FMOVS R4, F2
	FCVTHS F2, F2
	FMULS F1, F2, F2
	FMADDS F6, F25, F2, F25
	ADD $210, R1, R1
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE q6kloop
q6kdone:
	FMOVS F25, ret+24(FP)
	RET

// func dotF32NEON(n int, w, a *byte) float32
TEXT ·dotF32NEON(SB), NOSPLIT, $0-28
	MOVD n+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
f32loop16:
	CMP $16, R0
	BLT f32loop4
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R2), [V4.S4, V5.S4, V6.S4, V7.S4]
	VFMLA V4.S4, V0.S4, V16.S4
	VFMLA V5.S4, V1.S4, V17.S4
	VFMLA V6.S4, V2.S4, V18.S4
	VFMLA V7.S4, V3.S4, V19.S4
	SUB $16, R0, R0
	B f32loop16
f32loop4:
	CMP $4, R0
	BLT f32fold
	VLD1.P 16(R1), [V0.S4]
	VLD1.P 16(R2), [V4.S4]
	VFMLA V4.S4, V0.S4, V16.S4
	SUB $4, R0, R0
	B f32loop4
f32fold:
	FADD4S(16, 16, 17)
	FADD4S(18, 18, 19)
	FADD4S(16, 16, 18)
	HSUM16
f32tl:
	CBZ R0, f32done
	FMOVS.P 4(R1), F1
	FMOVS.P 4(R2), F2
	FMADDS F2, F0, F1, F0
	SUB $1, R0, R0
	B f32tl
f32done:
	FMOVS F0, ret+24(FP)
	RET

// func dotF16NEON(n int, w, a *byte) float32
TEXT ·dotF16NEON(SB), NOSPLIT, $0-28
	MOVD n+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
f16loop16:
	CMP $16, R0
	BLT f16loop8
	VLD1.P 32(R1), [V0.H8, V1.H8]
	VLD1.P 32(R2), [V2.H8, V3.H8]
	FCVTL4S(4, 0)
	FCVTL2_4S(5, 0)
	FCVTL4S(6, 1)
	FCVTL2_4S(7, 1)
	FCVTL4S(8, 2)
	FCVTL2_4S(9, 2)
	FCVTL4S(10, 3)
	FCVTL2_4S(11, 3)
	VFMLA V8.S4, V4.S4, V16.S4
	VFMLA V9.S4, V5.S4, V17.S4
	VFMLA V10.S4, V6.S4, V18.S4
	VFMLA V11.S4, V7.S4, V19.S4
	SUB $16, R0, R0
	B f16loop16
f16loop8:
	CMP $8, R0
	BLT f16fold
	VLD1.P 16(R1), [V0.H8]
	VLD1.P 16(R2), [V2.H8]
	FCVTL4S(4, 0)
	FCVTL2_4S(5, 0)
	FCVTL4S(8, 2)
	FCVTL2_4S(9, 2)
	VFMLA V8.S4, V4.S4, V16.S4
	VFMLA V9.S4, V5.S4, V17.S4
	SUB $8, R0, R0
	B f16loop8
f16fold:
	FADD4S(16, 16, 17)
	FADD4S(18, 18, 19)
	FADD4S(16, 16, 18)
	HSUM16
f16tl:
	CBZ R0, f16done
	MOVHU.P 2(R1), R4
	MOVHU.P 2(R2), R5
	FMOVS R4, F1
	FCVTHS F1, F1
	FMOVS R5, F2
	FCVTHS F2, F2
	FMADDS F2, F0, F1, F0
	SUB $1, R0, R0
	B f16tl
f16done:
	FMOVS F0, ret+24(FP)
	RET
