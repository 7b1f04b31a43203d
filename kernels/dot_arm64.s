// NEON (ARMv8.0 Advanced SIMD, plus SDOT variants for ARMv8.2 DotProd) dot
// products, ggml vec_dot semantics. Go's assembler lacks most widening integer
// and vector float instructions, so those are emitted as WORDs by the macros
// below (register numbers are plain integers, V0..V31). Block integer sums
// are exact for every byte pattern: int8 products are widened to int16 with
// SMULL and at most four of them share an int16 lane (|sum| <= 4*31*128 =
// 15872, Q5_1/Q5_K) before SADDLP/SMLAL widen to int32; int8×int8 (Q8_0)
// widens each product (|p| <= 16384) on its own.

#include "textflag.h"
#include "neon_arm64.h"

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

// Q4_K/Q5_K header: R4/R5 = fp16 d/dmin, V13.H[0..7] = the 6-bit scales,
// F30 = float(Σ min_j·(bsum_2j + bsum_2j+1)).
#define K4HEAD \
	MOVHU 0(R1), R4; \
	MOVHU 2(R1), R5; \
	MOVWU 4(R1), R6; \
	MOVWU 8(R1), R7; \
	MOVWU 12(R1), R8; \
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
	FMOVD R9, F13; \
	VUXTL V13.B8, V13.H8; \
	ORR R13<<32, R10, R10; \
	FMOVD R10, F12; \
	VUXTL V12.B8, V12.H8; \
	ADD $260, R2, R14; \
	VLD1 (R14), [V20.H8, V21.H8]; \
	VADDP V21.H8, V20.H8, V22.H8; \
	SMULL4S(24, 22, 12); \
	SMLAL2_4S(24, 22, 12); \
	VADDV V24.S4, V24; \
	VMOV V24.S[0], R16; \
	SCVTFWS R16, F30

// F25 += d·a.d·float(ΣV6) - dmin·a.d·F30.
#define K4TAIL \
	VADDV V6.S4, V6; \
	VMOV V6.S[0], R16; \
	SCVTFWS R16, F6; \
	FMOVS (R2), F1; \
	FMOVS R4, F2; \
	FCVTHS F2, F2; \
	FMULS F1, F2, F2; \
	FMOVS R5, F3; \
	FCVTHS F3, F3; \
	FMULS F1, F3, F3; \
	FMADDS F6, F25, F2, F25; \
	FMSUBS F30, F25, F3, F25

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
	K4HEAD
	VEOR V6.B16, V6.B16, V6.B16
	ADD $16, R1, R14
	ADD $4, R2, R15
	Q4K_CHUNK(0)
	Q4K_CHUNK(1)
	Q4K_CHUNK(2)
	Q4K_CHUNK(3)
	K4TAIL
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

// ---- remaining types.

// qhIdx: TBL indices spreading qh bytes 0,1 (and 2,3) over 8 lanes each;
// qhBit: the bit each lane tests.
DATA qhIdx<>+0(SB)/8, $0x0000000000000000
DATA qhIdx<>+8(SB)/8, $0x0101010101010101
DATA qhIdx<>+16(SB)/8, $0x0202020202020202
DATA qhIdx<>+24(SB)/8, $0x0303030303030303
DATA qhIdx<>+32(SB)/8, $0x8040201008040201
DATA qhIdx<>+40(SB)/8, $0x8040201008040201
GLOBL qhIdx<>(SB), RODATA|NOPTR, $48

// V21/V22 = 0x10 where bit j (j = 0..15 / 16..31) of the 32-bit word in R6
// is set. Needs V24, V25 = qhIdx and V26 = qhBit, V14 = 0x10 bytes.
#define QHBITS \
	FMOVS R6, F20; \
	VTBL V24.B16, [V20.B16], V21.B16; \
	VTBL V25.B16, [V20.B16], V22.B16; \
	VCMTST V26.B16, V21.B16, V21.B16; \
	VCMTST V26.B16, V22.B16, V22.B16; \
	VAND V14.B16, V21.B16, V21.B16; \
	VAND V14.B16, V22.B16, V22.B16

#define QHSETUP \
	MOVD $qhIdx<>(SB), R8; \
	VLD1 (R8), [V24.B16, V25.B16, V26.B16]; \
	VMOVI $16, V14.B16; \
	VMOVI $15, V15.B16

// V5.4S = Σ over one 32-element block of V1(lo16)·V2 + V0(hi16)·V3, int8.
#define BLOCKSUM \
	SMULL8H(4, 1, 2); \
	SMLAL2_8H(4, 1, 2); \
	SMLAL8H(4, 0, 3); \
	SMLAL2_8H(4, 0, 3); \
	SADDLP4S(5, 4); \
	SCVTF4S(5, 5)

// func dotQ4_1Q8_1NEON(nb int, w, a *byte) float32
TEXT ·dotQ4_1Q8_1NEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $15, V15.B16
	VEOR V16.B16, V16.B16, V16.B16
	FMOVS ZR, F26
	CBZ R0, q41done
q41loop:
	MOVHU.P 2(R1), R4
	MOVHU.P 2(R1), R6
	MOVHU.P 2(R2), R5
	MOVHU.P 2(R2), R7
	VLD1.P 16(R1), [V0.B16]
	VLD1.P 32(R2), [V2.B16, V3.B16]
	DPRODH
	FMOVS R6, F11
	FCVTHS F11, F11
	FMOVS R7, F12
	FCVTHS F12, F12
	FMADDS F12, F26, F11, F26
	VAND V15.B16, V0.B16, V1.B16
	VUSHR $4, V0.B16, V0.B16
	BLOCKSUM
	FMLAS0(16, 5, 9)
	SUBS $1, R0, R0
	BNE q41loop
q41done:
	HSUM16
	FADDS F26, F0, F0
	FMOVS F0, ret+24(FP)
	RET

// func dotQ5_0Q8_0NEON(nb int, w, a *byte) float32
TEXT ·dotQ5_0Q8_0NEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	QHSETUP
	VEOR V16.B16, V16.B16, V16.B16
	CBZ R0, q50done
q50loop:
	MOVHU.P 2(R1), R4
	MOVWU.P 4(R1), R6
	MOVHU.P 2(R2), R5
	VLD1.P 16(R1), [V0.B16]
	VLD1.P 32(R2), [V2.B16, V3.B16]
	DPRODH
	QHBITS
	VAND V15.B16, V0.B16, V1.B16
	VUSHR $4, V0.B16, V0.B16
	VORR V21.B16, V1.B16, V1.B16
	VORR V22.B16, V0.B16, V0.B16
	VSUB V14.B16, V1.B16, V1.B16
	VSUB V14.B16, V0.B16, V0.B16
	BLOCKSUM
	FMLAS0(16, 5, 9)
	SUBS $1, R0, R0
	BNE q50loop
q50done:
	HSUM16
	FMOVS F0, ret+24(FP)
	RET

// func dotQ5_1Q8_1NEON(nb int, w, a *byte) float32
TEXT ·dotQ5_1Q8_1NEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	QHSETUP
	VEOR V16.B16, V16.B16, V16.B16
	FMOVS ZR, F27
	CBZ R0, q51done
q51loop:
	MOVHU.P 2(R1), R4
	MOVHU.P 2(R1), R7
	MOVWU.P 4(R1), R6
	MOVHU.P 2(R2), R5
	MOVHU.P 2(R2), R8
	VLD1.P 16(R1), [V0.B16]
	VLD1.P 32(R2), [V2.B16, V3.B16]
	DPRODH
	FMOVS R7, F11
	FCVTHS F11, F11
	FMOVS R8, F12
	FCVTHS F12, F12
	FMADDS F12, F27, F11, F27
	QHBITS
	VAND V15.B16, V0.B16, V1.B16
	VUSHR $4, V0.B16, V0.B16
	VORR V21.B16, V1.B16, V1.B16
	VORR V22.B16, V0.B16, V0.B16
	BLOCKSUM
	FMLAS0(16, 5, 9)
	SUBS $1, R0, R0
	BNE q51loop
q51done:
	HSUM16
	FADDS F27, F0, F0
	FMOVS F0, ret+24(FP)
	RET

// Q5_K chunk j: Q4_K's chunk with bit 2j / 2j+1 of qh (V28 = qh[0:16],
// V29 = qh[16:32]) as bit 4 of the low / high nibbles.
#define Q5K_CHUNK(j) \
	VLD1.P 32(R14), [V0.B16, V1.B16]; \
	VLD1.P 64(R15), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	VAND V15.B16, V0.B16, V7.B16; \
	VAND V15.B16, V1.B16, V8.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VUSHR $4, V1.B16, V1.B16; \
	VMOVI $(1<<(2*j)), V26.B16; \
	VCMTST V26.B16, V28.B16, V27.B16; \
	VAND V14.B16, V27.B16, V27.B16; \
	VORR V27.B16, V7.B16, V7.B16; \
	VCMTST V26.B16, V29.B16, V27.B16; \
	VAND V14.B16, V27.B16, V27.B16; \
	VORR V27.B16, V8.B16, V8.B16; \
	VMOVI $(2<<(2*j)), V26.B16; \
	VCMTST V26.B16, V28.B16, V27.B16; \
	VAND V14.B16, V27.B16, V27.B16; \
	VORR V27.B16, V0.B16, V0.B16; \
	VCMTST V26.B16, V29.B16, V27.B16; \
	VAND V14.B16, V27.B16, V27.B16; \
	VORR V27.B16, V1.B16, V1.B16; \
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

// func dotQ5_KQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotQ5_KQ8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $15, V15.B16
	VMOVI $16, V14.B16
	FMOVS ZR, F25
	CBZ R0, q5kdone
q5kloop:
	K4HEAD
	ADD $16, R1, R14
	VLD1 (R14), [V28.B16, V29.B16]
	VEOR V6.B16, V6.B16, V6.B16
	ADD $48, R1, R14
	ADD $4, R2, R15
	Q5K_CHUNK(0)
	Q5K_CHUNK(1)
	Q5K_CHUNK(2)
	Q5K_CHUNK(3)
	K4TAIL
	ADD $176, R1, R1
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE q5kloop
q5kdone:
	FMOVS F25, ret+24(FP)
	RET

// One 16-element group with scale H[i] of Vs: sumi V6 += scale·Σ Vq·Vy.
#define KGROUP(q, y, s, i) \
	SMULL8H(24, q, y); \
	SMLAL2_8H(24, q, y); \
	SMLALE(6, 24, s, i); \
	SMLAL2E(6, 24, s, i)

// Q2_K half: 2-bit quants V0 (q[0:16]), V1 (q[16:32]) at shift 2j go with
// activations V16.. (R15) and scales 2j, 2j+1 of Vs.
#define Q2K_HALF(s) \
	VLD1.P 32(R14), [V0.B16, V1.B16]; \
	VLD1.P 64(R15), [V16.B16, V17.B16, V18.B16, V19.B16]; \
	VLD1.P 64(R15), [V20.B16, V21.B16, V22.B16, V23.B16]; \
	VAND V15.B16, V0.B16, V7.B16; \
	VAND V15.B16, V1.B16, V8.B16; \
	KGROUP(7, 16, s, 0); \
	KGROUP(8, 17, s, 1); \
	VUSHR $2, V0.B16, V7.B16; \
	VUSHR $2, V1.B16, V8.B16; \
	VAND V15.B16, V7.B16, V7.B16; \
	VAND V15.B16, V8.B16, V8.B16; \
	KGROUP(7, 18, s, 2); \
	KGROUP(8, 19, s, 3); \
	VUSHR $4, V0.B16, V7.B16; \
	VUSHR $4, V1.B16, V8.B16; \
	VAND V15.B16, V7.B16, V7.B16; \
	VAND V15.B16, V8.B16, V8.B16; \
	KGROUP(7, 20, s, 4); \
	KGROUP(8, 21, s, 5); \
	VUSHR $6, V0.B16, V7.B16; \
	VUSHR $6, V1.B16, V8.B16; \
	KGROUP(7, 22, s, 6); \
	KGROUP(8, 23, s, 7)

// func dotQ2_KQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotQ2_KQ8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $3, V15.B16
	VMOVI $15, V14.B16
	FMOVS ZR, F25
	CBZ R0, q2kdone
q2kloop:
	MOVHU 80(R1), R4
	MOVHU 82(R1), R5
	VLD1 (R1), [V0.B16]
	VUSHR $4, V0.B16, V1.B16
	VAND V14.B16, V0.B16, V0.B16
	VUXTL2 V1.B16, V11.H8
	VUXTL V1.B8, V10.H8
	VUXTL2 V0.B16, V13.H8
	VUXTL V0.B8, V12.H8
	ADD $260, R2, R14
	VLD1 (R14), [V20.H8, V21.H8]
	SMULL4S(24, 20, 10)
	SMLAL2_4S(24, 20, 10)
	SMLAL4S(24, 21, 11)
	SMLAL2_4S(24, 21, 11)
	VADDV V24.S4, V24
	VMOV V24.S[0], R16
	SCVTFWS R16, F30
	VEOR V6.B16, V6.B16, V6.B16
	ADD $16, R1, R14
	ADD $4, R2, R15
	Q2K_HALF(12)
	Q2K_HALF(13)
	K4TAIL
	ADD $84, R1, R1
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE q2kloop
q2kdone:
	FMOVS F25, ret+24(FP)
	RET

// Q3_K chunk: 2-bit values in the low bits of V7/V8 (V0/V1 shifted), high bit m of hmask
// (V28/V29) clear means -4; groups use scales k, k+1 of Vs.
#define Q3K_CHUNK(m, s, k, ya, yb) \
	VAND V15.B16, V7.B16, V7.B16; \
	VAND V15.B16, V8.B16, V8.B16; \
	VMOVI $(1<<(m)), V26.B16; \
	VCMTST V26.B16, V28.B16, V27.B16; \
	VAND V14.B16, V27.B16, V27.B16; \
	VORR V27.B16, V7.B16, V7.B16; \
	VCMTST V26.B16, V29.B16, V27.B16; \
	VAND V14.B16, V27.B16, V27.B16; \
	VORR V27.B16, V8.B16, V8.B16; \
	VSUB V14.B16, V7.B16, V7.B16; \
	VSUB V14.B16, V8.B16, V8.B16; \
	KGROUP(7, ya, s, k); \
	KGROUP(8, yb, s, k+1)

// func dotQ3_KQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotQ3_KQ8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $3, V15.B16
	VMOVI $4, V14.B16
	VMOVI $32, V11.B16
	FMOVS ZR, F25
	CBZ R0, q3kdone
q3kloop:
	MOVHU 108(R1), R4
	MOVWU 96(R1), R6
	MOVWU 100(R1), R7
	MOVWU 104(R1), R8
	ANDW $0x0f0f0f0f, R6, R9
	ANDW $0x03030303, R8, R12
	ORRW R12<<4, R9, R9
	ANDW $0x0f0f0f0f, R7, R10
	LSRW $2, R8, R12
	ANDW $0x03030303, R12, R12
	ORRW R12<<4, R10, R10
	LSRW $4, R6, R11
	ANDW $0x0f0f0f0f, R11, R11
	LSRW $4, R8, R12
	ANDW $0x03030303, R12, R12
	ORRW R12<<4, R11, R11
	LSRW $4, R7, R13
	ANDW $0x0f0f0f0f, R13, R13
	LSRW $6, R8, R12
	ANDW $0x03030303, R12, R12
	ORRW R12<<4, R13, R13
	ORR R10<<32, R9, R9
	ORR R13<<32, R11, R11
	FMOVD R9, F12
	VMOV R11, V12.D[1]
	VSUB V11.B16, V12.B16, V12.B16
	SXTL2_8H(13, 12)
	SXTL8H(12, 12)
	VLD1 (R1), [V28.B16, V29.B16]
	VEOR V6.B16, V6.B16, V6.B16
	ADD $32, R1, R14
	ADD $4, R2, R15
	VLD1.P 32(R14), [V0.B16, V1.B16]
	VLD1.P 64(R15), [V16.B16, V17.B16, V18.B16, V19.B16]
	VLD1.P 64(R15), [V20.B16, V21.B16, V22.B16, V23.B16]
	VORR V0.B16, V0.B16, V7.B16
	VORR V1.B16, V1.B16, V8.B16
	Q3K_CHUNK(0, 12, 0, 16, 17)
	VUSHR $2, V0.B16, V7.B16
	VUSHR $2, V1.B16, V8.B16
	Q3K_CHUNK(1, 12, 2, 18, 19)
	VUSHR $4, V0.B16, V7.B16
	VUSHR $4, V1.B16, V8.B16
	Q3K_CHUNK(2, 12, 4, 20, 21)
	VUSHR $6, V0.B16, V7.B16
	VUSHR $6, V1.B16, V8.B16
	Q3K_CHUNK(3, 12, 6, 22, 23)
	VLD1.P 32(R14), [V0.B16, V1.B16]
	VLD1.P 64(R15), [V16.B16, V17.B16, V18.B16, V19.B16]
	VLD1.P 64(R15), [V20.B16, V21.B16, V22.B16, V23.B16]
	VORR V0.B16, V0.B16, V7.B16
	VORR V1.B16, V1.B16, V8.B16
	Q3K_CHUNK(4, 13, 0, 16, 17)
	VUSHR $2, V0.B16, V7.B16
	VUSHR $2, V1.B16, V8.B16
	Q3K_CHUNK(5, 13, 2, 18, 19)
	VUSHR $4, V0.B16, V7.B16
	VUSHR $4, V1.B16, V8.B16
	Q3K_CHUNK(6, 13, 4, 20, 21)
	VUSHR $6, V0.B16, V7.B16
	VUSHR $6, V1.B16, V8.B16
	Q3K_CHUNK(7, 13, 6, 22, 23)
	VADDV V6.S4, V6
	VMOV V6.S[0], R16
	SCVTFWS R16, F6
	FMOVS (R2), F1
	FMOVS R4, F2
	FCVTHS F2, F2
	FMULS F1, F2, F2
	FMADDS F6, F25, F2, F25
	ADD $110, R1, R1
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE q3kloop
q3kdone:
	FMOVS F25, ret+24(FP)
	RET

// func dotBF16NEON(n int, w, a *byte) float32
// bf16 → f32 is a 16-bit left shift: zip zeros below each half.
TEXT ·dotBF16NEON(SB), NOSPLIT, $0-28
	MOVD n+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VEOR V31.B16, V31.B16, V31.B16
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
bf16loop8:
	CMP $8, R0
	BLT bf16fold
	VLD1.P 16(R1), [V0.H8]
	VLD1.P 16(R2), [V2.H8]
	VZIP1 V0.H8, V31.H8, V4.H8
	VZIP2 V0.H8, V31.H8, V5.H8
	VZIP1 V2.H8, V31.H8, V6.H8
	VZIP2 V2.H8, V31.H8, V7.H8
	VFMLA V6.S4, V4.S4, V16.S4
	VFMLA V7.S4, V5.S4, V17.S4
	SUB $8, R0, R0
	B bf16loop8
bf16fold:
	FADD4S(16, 16, 17)
	HSUM16
bf16tl:
	CBZ R0, bf16done
	MOVHU.P 2(R1), R4
	MOVHU.P 2(R2), R5
	LSLW $16, R4, R4
	LSLW $16, R5, R5
	FMOVS R4, F1
	FMOVS R5, F2
	FMADDS F2, F0, F1, F0
	SUB $1, R0, R0
	B bf16tl
bf16done:
	FMOVS F0, ret+24(FP)
	RET

// ---- ARMv8.2 dot-product (SDOT) variants, used when the CPU has ASIMDDP.


// One Q4_0 / Q8_0 block with SDOT into accumulator V(acc); the callers
// alternate two accumulators so the FMLA latency chain does not bound the
// loop.
#define Q4_0_DBLK(acc) \
	MOVHU.P 2(R1), R4; \
	MOVHU.P 2(R2), R5; \
	VLD1.P 16(R1), [V0.B16]; \
	VLD1.P 32(R2), [V2.B16, V3.B16]; \
	DPRODH; \
	VAND V15.B16, V0.B16, V1.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VSUB V14.B16, V1.B16, V1.B16; \
	VSUB V14.B16, V0.B16, V0.B16; \
	VEOR V5.B16, V5.B16, V5.B16; \
	SDOT4S(5, 1, 2); \
	SDOT4S(5, 0, 3); \
	SCVTF4S(5, 5); \
	FMLAS0(acc, 5, 9)

#define Q8_0_DBLK(acc) \
	MOVHU.P 2(R1), R4; \
	MOVHU.P 2(R2), R5; \
	VLD1.P 32(R1), [V0.B16, V1.B16]; \
	VLD1.P 32(R2), [V2.B16, V3.B16]; \
	DPRODH; \
	VEOR V8.B16, V8.B16, V8.B16; \
	SDOT4S(8, 0, 2); \
	SDOT4S(8, 1, 3); \
	SCVTF4S(8, 8); \
	FMLAS0(acc, 8, 9)

// func dotQ4_0Q8_0NEONDot(nb int, w, a *byte) float32
TEXT ·dotQ4_0Q8_0NEONDot(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $15, V15.B16
	VMOVI $8, V14.B16
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
dq40loop2:
	CMP $2, R0
	BLT dq40tail
	Q4_0_DBLK(16)
	Q4_0_DBLK(17)
	SUB $2, R0, R0
	B dq40loop2
dq40tail:
	CBZ R0, dq40done
	Q4_0_DBLK(16)
dq40done:
	FADD4S(16, 16, 17)
	HSUM16
	FMOVS F0, ret+24(FP)
	RET

// func dotQ8_0Q8_0NEONDot(nb int, w, a *byte) float32
TEXT ·dotQ8_0Q8_0NEONDot(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
dq80loop2:
	CMP $2, R0
	BLT dq80tail
	Q8_0_DBLK(16)
	Q8_0_DBLK(17)
	SUB $2, R0, R0
	B dq80loop2
dq80tail:
	CBZ R0, dq80done
	Q8_0_DBLK(16)
dq80done:
	FADD4S(16, 16, 17)
	HSUM16
	FMOVS F0, ret+24(FP)
	RET


// Q4_K chunk j with SDOT: sub-block sums in V9/V10, scaled by the int32
// scales in V17 (0..3) / V18 (4..7).
#define Q4K_DCHUNK(j) \
	VLD1.P 32(R14), [V0.B16, V1.B16]; \
	VLD1.P 64(R15), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	VAND V15.B16, V0.B16, V7.B16; \
	VAND V15.B16, V1.B16, V8.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VUSHR $4, V1.B16, V1.B16; \
	VEOR V9.B16, V9.B16, V9.B16; \
	SDOT4S(9, 7, 2); \
	SDOT4S(9, 8, 3); \
	VEOR V10.B16, V10.B16, V10.B16; \
	SDOT4S(10, 0, 4); \
	SDOT4S(10, 1, 5); \
	MLAS(6, 9, 17+(j/2), (2*j)%4); \
	MLAS(6, 10, 17+(j/2), (2*j+1)%4)

// func dotQ4_KQ8_KNEONDot(nb int, w, a *byte) float32
TEXT ·dotQ4_KQ8_KNEONDot(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $15, V15.B16
	FMOVS ZR, F25
	CBZ R0, dq4kdone
dq4kloop:
	K4HEAD
	VUXTL V13.H4, V17.S4
	VUXTL2 V13.H8, V18.S4
	VEOR V6.B16, V6.B16, V6.B16
	ADD $16, R1, R14
	ADD $4, R2, R15
	Q4K_DCHUNK(0)
	Q4K_DCHUNK(1)
	Q4K_DCHUNK(2)
	Q4K_DCHUNK(3)
	K4TAIL
	ADD $144, R1, R1
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE dq4kloop
dq4kdone:
	FMOVS F25, ret+24(FP)
	RET

// One 16-element Q6_K group with SDOT; scale = Vs.S[i] (int32).
#define Q6GD(q, y, s, i) \
	VEOR V24.B16, V24.B16, V24.B16; \
	SDOT4S(24, q, y); \
	MLAS(6, 24, s, i)

#define Q6K_DHALF(sa, sb) \
	VLD1.P 64(R14), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	VLD1.P 32(R13), [V4.B16, V5.B16]; \
	VLD1.P 64(R15), [V16.B16, V17.B16, V18.B16, V19.B16]; \
	VLD1.P 64(R15), [V20.B16, V21.B16, V22.B16, V23.B16]; \
	VAND V15.B16, V0.B16, V7.B16; \
	VSHL $4, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GD(7, 16, sa, 0); \
	VAND V15.B16, V1.B16, V7.B16; \
	VSHL $4, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GD(7, 17, sa, 1); \
	VAND V15.B16, V2.B16, V7.B16; \
	VSHL $2, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GD(7, 18, sa, 2); \
	VAND V15.B16, V3.B16, V7.B16; \
	VSHL $2, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GD(7, 19, sa, 3); \
	VUSHR $4, V0.B16, V7.B16; \
	VAND V14.B16, V4.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GD(7, 20, sb, 0); \
	VUSHR $4, V1.B16, V7.B16; \
	VAND V14.B16, V5.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GD(7, 21, sb, 1); \
	VUSHR $4, V2.B16, V7.B16; \
	VUSHR $2, V4.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GD(7, 22, sb, 2); \
	VUSHR $4, V3.B16, V7.B16; \
	VUSHR $2, V5.B16, V8.B16; \
	VAND V14.B16, V8.B16, V8.B16; \
	VORR V8.B16, V7.B16, V7.B16; \
	VSUB V11.B16, V7.B16, V7.B16; \
	Q6GD(7, 23, sb, 3)

// func dotQ6_KQ8_KNEONDot(nb int, w, a *byte) float32
TEXT ·dotQ6_KQ8_KNEONDot(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	VMOVI $15, V15.B16
	VMOVI $48, V14.B16
	VMOVI $32, V11.B16
	FMOVS ZR, F25
	CBZ R0, dq6kdone
dq6kloop:
	MOVHU 208(R1), R4
	ADD $192, R1, R5
	VLD1 (R5), [V12.B16]
	SXTL2_8H(13, 12)
	SXTL8H(12, 12)
	SXTL4S(26, 12)
	SXTL2_4S(27, 12)
	SXTL4S(28, 13)
	SXTL2_4S(29, 13)
	VEOR V6.B16, V6.B16, V6.B16
	MOVD R1, R14
	ADD $128, R1, R13
	ADD $4, R2, R15
	Q6K_DHALF(26, 27)
	Q6K_DHALF(28, 29)
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
	BNE dq6kloop
dq6kdone:
	FMOVS F25, ret+24(FP)
	RET

// ---- IQ4_NL (against Q8_0) and IQ4_XS (against Q8_K): 4-bit indices into
// the non-linear codebook kvalues_iq4nl, looked up with TBL. The values are
// signed int8 in [-127, 113]; SMULL/SMLAL2 put two products (each at most
// 127·128 = 16256 in magnitude) in an int16 lane, |sum| <= 32512, before
// SADDLP/SADALP/SMLAL widen; SDOT is exact by construction.

// The 16 codebook values as bytes (ggml-common.h kvalues_iq4nl).
DATA iq4kvn<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA iq4kvn<>+8(SB)/8, $0x7159453526190d01
GLOBL iq4kvn<>(SB), RODATA|NOPTR, $16

// One IQ4_NL block (ARMv8.0) into V16: V12 = codebook, V15 = 0x0f bytes.
#define IQ4NL_BLK \
	MOVHU.P 2(R1), R4; \
	MOVHU.P 2(R2), R5; \
	VLD1.P 16(R1), [V0.B16]; \
	VLD1.P 32(R2), [V2.B16, V3.B16]; \
	DPRODH; \
	VAND V15.B16, V0.B16, V1.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VTBL V1.B16, [V12.B16], V1.B16; \
	VTBL V0.B16, [V12.B16], V0.B16; \
	SMULL8H(4, 1, 2); \
	SMLAL2_8H(4, 1, 2); \
	SMULL8H(5, 0, 3); \
	SMLAL2_8H(5, 0, 3); \
	SADDLP4S(6, 4); \
	SADALP4S(6, 5); \
	SCVTF4S(6, 6); \
	FMLAS0(16, 6, 9)

// func dotIQ4_NLQ8_0NEON(nb int, w, a *byte) float32
TEXT ·dotIQ4_NLQ8_0NEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	MOVD $iq4kvn<>(SB), R3
	VLD1 (R3), [V12.B16]
	VMOVI $15, V15.B16
	VEOR V16.B16, V16.B16, V16.B16
	CBZ R0, iq4nldone
iq4nlloop:
	IQ4NL_BLK
	SUBS $1, R0, R0
	BNE iq4nlloop
iq4nldone:
	HSUM16
	FMOVS F0, ret+24(FP)
	RET

// One IQ4_NL block with SDOT into accumulator V(acc).
#define IQ4NL_DBLK(acc) \
	MOVHU.P 2(R1), R4; \
	MOVHU.P 2(R2), R5; \
	VLD1.P 16(R1), [V0.B16]; \
	VLD1.P 32(R2), [V2.B16, V3.B16]; \
	DPRODH; \
	VAND V15.B16, V0.B16, V1.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VTBL V1.B16, [V12.B16], V1.B16; \
	VTBL V0.B16, [V12.B16], V0.B16; \
	VEOR V5.B16, V5.B16, V5.B16; \
	SDOT4S(5, 1, 2); \
	SDOT4S(5, 0, 3); \
	SCVTF4S(5, 5); \
	FMLAS0(acc, 5, 9)

// func dotIQ4_NLQ8_0NEONDot(nb int, w, a *byte) float32
TEXT ·dotIQ4_NLQ8_0NEONDot(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	MOVD $iq4kvn<>(SB), R3
	VLD1 (R3), [V12.B16]
	VMOVI $15, V15.B16
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
diq4nlloop2:
	CMP $2, R0
	BLT diq4nltail
	IQ4NL_DBLK(16)
	IQ4NL_DBLK(17)
	SUB $2, R0, R0
	B diq4nlloop2
diq4nltail:
	CBZ R0, diq4nldone
	IQ4NL_DBLK(16)
diq4nldone:
	FADD4S(16, 16, 17)
	HSUM16
	FMOVS F0, ret+24(FP)
	RET

// IQ4_XS scales: V13.H[ib] = code(ib) - 32 for the eight sub-blocks. The
// nibbles of scales_l (uint32 at 4) and the 2-bit fields of scales_h (uint16
// at 2) are spread to one byte each with shift-or-mask steps, combined as
// low | high<<4, and offset by -32 (V14 = 32 bytes) before sign extension.
#define IQ4XS_SCALES \
	MOVWU 4(R1), R6; \
	ORR R6<<16, R6, R6; \
	AND $0x0000ffff0000ffff, R6, R6; \
	ORR R6<<8, R6, R6; \
	AND $0x00ff00ff00ff00ff, R6, R6; \
	ORR R6<<4, R6, R6; \
	AND $0x0f0f0f0f0f0f0f0f, R6, R6; \
	MOVHU 2(R1), R7; \
	ORR R7<<24, R7, R7; \
	AND $0x000000ff000000ff, R7, R7; \
	ORR R7<<12, R7, R7; \
	AND $0x000f000f000f000f, R7, R7; \
	ORR R7<<6, R7, R7; \
	AND $0x0303030303030303, R7, R7; \
	ORR R7<<4, R6, R6; \
	FMOVD R6, F13; \
	VSUB V14.B16, V13.B16, V13.B16; \
	SXTL8H(13, 13)

// F25 += fp16(w.d)·a.d·float(ΣV6.4S), the super-block's exact integer sum.
#define IQ4XS_TAIL \
	VADDV V6.S4, V6; \
	VMOV V6.S[0], R16; \
	SCVTFWS R16, F6; \
	FMOVS (R2), F1; \
	MOVHU (R1), R4; \
	FMOVS R4, F2; \
	FCVTHS F2, F2; \
	FMULS F1, F2, F2; \
	FMADDS F6, F25, F2, F25

// Sub-blocks 2p and 2p+1 (ARMv8.0): V6 += scale · Σ value·activation.
#define IQ4XS_PAIR(p) \
	VLD1.P 32(R14), [V0.B16, V1.B16]; \
	VLD1.P 64(R15), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	VAND V15.B16, V0.B16, V7.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VAND V15.B16, V1.B16, V8.B16; \
	VUSHR $4, V1.B16, V1.B16; \
	VTBL V7.B16, [V12.B16], V7.B16; \
	VTBL V0.B16, [V12.B16], V0.B16; \
	VTBL V8.B16, [V12.B16], V8.B16; \
	VTBL V1.B16, [V12.B16], V1.B16; \
	SMULL8H(9, 7, 2); \
	SMLAL2_8H(9, 7, 2); \
	SMLALE(6, 9, 13, 2*p); \
	SMLAL2E(6, 9, 13, 2*p); \
	SMULL8H(10, 0, 3); \
	SMLAL2_8H(10, 0, 3); \
	SMLALE(6, 10, 13, 2*p); \
	SMLAL2E(6, 10, 13, 2*p); \
	SMULL8H(9, 8, 4); \
	SMLAL2_8H(9, 8, 4); \
	SMLALE(6, 9, 13, 2*p+1); \
	SMLAL2E(6, 9, 13, 2*p+1); \
	SMULL8H(10, 1, 5); \
	SMLAL2_8H(10, 1, 5); \
	SMLALE(6, 10, 13, 2*p+1); \
	SMLAL2E(6, 10, 13, 2*p+1)

// func dotIQ4_XSQ8_KNEON(nb int, w, a *byte) float32
TEXT ·dotIQ4_XSQ8_KNEON(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	MOVD $iq4kvn<>(SB), R3
	VLD1 (R3), [V12.B16]
	VMOVI $15, V15.B16
	VMOVI $32, V14.B16
	FMOVS ZR, F25
	CBZ R0, iq4xsdone
iq4xsloop:
	IQ4XS_SCALES
	VEOR V6.B16, V6.B16, V6.B16
	ADD $8, R1, R14
	ADD $4, R2, R15
	IQ4XS_PAIR(0)
	IQ4XS_PAIR(1)
	IQ4XS_PAIR(2)
	IQ4XS_PAIR(3)
	IQ4XS_TAIL
	ADD $136, R1, R1
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE iq4xsloop
iq4xsdone:
	FMOVS F25, ret+24(FP)
	RET

// Sub-blocks 2p and 2p+1 with SDOT; int32 scales in V17 (0..3), V18 (4..7).
#define IQ4XS_DPAIR(p) \
	VLD1.P 32(R14), [V0.B16, V1.B16]; \
	VLD1.P 64(R15), [V2.B16, V3.B16, V4.B16, V5.B16]; \
	VAND V15.B16, V0.B16, V7.B16; \
	VUSHR $4, V0.B16, V0.B16; \
	VAND V15.B16, V1.B16, V8.B16; \
	VUSHR $4, V1.B16, V1.B16; \
	VTBL V7.B16, [V12.B16], V7.B16; \
	VTBL V0.B16, [V12.B16], V0.B16; \
	VTBL V8.B16, [V12.B16], V8.B16; \
	VTBL V1.B16, [V12.B16], V1.B16; \
	VEOR V9.B16, V9.B16, V9.B16; \
	SDOT4S(9, 7, 2); \
	SDOT4S(9, 0, 3); \
	VEOR V10.B16, V10.B16, V10.B16; \
	SDOT4S(10, 8, 4); \
	SDOT4S(10, 1, 5); \
	MLAS(6, 9, 17+(p/2), (2*p)%4); \
	MLAS(6, 10, 17+(p/2), (2*p+1)%4)

// func dotIQ4_XSQ8_KNEONDot(nb int, w, a *byte) float32
TEXT ·dotIQ4_XSQ8_KNEONDot(SB), NOSPLIT, $0-28
	MOVD nb+0(FP), R0
	MOVD w+8(FP), R1
	MOVD a+16(FP), R2
	MOVD $iq4kvn<>(SB), R3
	VLD1 (R3), [V12.B16]
	VMOVI $15, V15.B16
	VMOVI $32, V14.B16
	FMOVS ZR, F25
	CBZ R0, diq4xsdone
diq4xsloop:
	IQ4XS_SCALES
	SXTL4S(17, 13)
	SXTL2_4S(18, 13)
	VEOR V6.B16, V6.B16, V6.B16
	ADD $8, R1, R14
	ADD $4, R2, R15
	IQ4XS_DPAIR(0)
	IQ4XS_DPAIR(1)
	IQ4XS_DPAIR(2)
	IQ4XS_DPAIR(3)
	IQ4XS_TAIL
	ADD $136, R1, R1
	ADD $292, R2, R2
	SUBS $1, R0, R0
	BNE diq4xsloop
diq4xsdone:
	FMOVS F25, ret+24(FP)
	RET
