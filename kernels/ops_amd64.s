// AVX2+FMA+F16C attention and f32 vector ops (see ops_amd64.go and the
// portable references in ops_dispatch.go). Element-wise updates use a
// separate VMULPS and VADDPS, never FMA, so they round exactly like the Go
// float32(s*x) + y they replace.

#include "textflag.h"
#include "scores512_amd64.h"

// Vector e^x constants, 8 lanes each: range reduction x = n·ln2 + r with
// ln2 split in a 9-bit high part (n·ln2hi is exact for |n| < 2^15) and the
// rest, then the Taylor series of e^r to degree 7 on |r| ≤ ln2/2 (truncation
// < 1e-8 relative) by Horner with FMA, scaled by 2^n through the exponent.
DATA expLog2e<>+0(SB)/4, $0x3fb8aa3b
DATA expLog2e<>+4(SB)/4, $0x3fb8aa3b
DATA expLog2e<>+8(SB)/4, $0x3fb8aa3b
DATA expLog2e<>+12(SB)/4, $0x3fb8aa3b
DATA expLog2e<>+16(SB)/4, $0x3fb8aa3b
DATA expLog2e<>+20(SB)/4, $0x3fb8aa3b
DATA expLog2e<>+24(SB)/4, $0x3fb8aa3b
DATA expLog2e<>+28(SB)/4, $0x3fb8aa3b
GLOBL expLog2e<>(SB), RODATA|NOPTR, $32
DATA expLn2hi<>+0(SB)/4, $0x3f318000
DATA expLn2hi<>+4(SB)/4, $0x3f318000
DATA expLn2hi<>+8(SB)/4, $0x3f318000
DATA expLn2hi<>+12(SB)/4, $0x3f318000
DATA expLn2hi<>+16(SB)/4, $0x3f318000
DATA expLn2hi<>+20(SB)/4, $0x3f318000
DATA expLn2hi<>+24(SB)/4, $0x3f318000
DATA expLn2hi<>+28(SB)/4, $0x3f318000
GLOBL expLn2hi<>(SB), RODATA|NOPTR, $32
DATA expLn2lo<>+0(SB)/4, $0xb95e8083
DATA expLn2lo<>+4(SB)/4, $0xb95e8083
DATA expLn2lo<>+8(SB)/4, $0xb95e8083
DATA expLn2lo<>+12(SB)/4, $0xb95e8083
DATA expLn2lo<>+16(SB)/4, $0xb95e8083
DATA expLn2lo<>+20(SB)/4, $0xb95e8083
DATA expLn2lo<>+24(SB)/4, $0xb95e8083
DATA expLn2lo<>+28(SB)/4, $0xb95e8083
GLOBL expLn2lo<>(SB), RODATA|NOPTR, $32
DATA expC7<>+0(SB)/4, $0x39500d01
DATA expC7<>+4(SB)/4, $0x39500d01
DATA expC7<>+8(SB)/4, $0x39500d01
DATA expC7<>+12(SB)/4, $0x39500d01
DATA expC7<>+16(SB)/4, $0x39500d01
DATA expC7<>+20(SB)/4, $0x39500d01
DATA expC7<>+24(SB)/4, $0x39500d01
DATA expC7<>+28(SB)/4, $0x39500d01
GLOBL expC7<>(SB), RODATA|NOPTR, $32
DATA expC6<>+0(SB)/4, $0x3ab60b61
DATA expC6<>+4(SB)/4, $0x3ab60b61
DATA expC6<>+8(SB)/4, $0x3ab60b61
DATA expC6<>+12(SB)/4, $0x3ab60b61
DATA expC6<>+16(SB)/4, $0x3ab60b61
DATA expC6<>+20(SB)/4, $0x3ab60b61
DATA expC6<>+24(SB)/4, $0x3ab60b61
DATA expC6<>+28(SB)/4, $0x3ab60b61
GLOBL expC6<>(SB), RODATA|NOPTR, $32
DATA expC5<>+0(SB)/4, $0x3c088889
DATA expC5<>+4(SB)/4, $0x3c088889
DATA expC5<>+8(SB)/4, $0x3c088889
DATA expC5<>+12(SB)/4, $0x3c088889
DATA expC5<>+16(SB)/4, $0x3c088889
DATA expC5<>+20(SB)/4, $0x3c088889
DATA expC5<>+24(SB)/4, $0x3c088889
DATA expC5<>+28(SB)/4, $0x3c088889
GLOBL expC5<>(SB), RODATA|NOPTR, $32
DATA expC4<>+0(SB)/4, $0x3d2aaaab
DATA expC4<>+4(SB)/4, $0x3d2aaaab
DATA expC4<>+8(SB)/4, $0x3d2aaaab
DATA expC4<>+12(SB)/4, $0x3d2aaaab
DATA expC4<>+16(SB)/4, $0x3d2aaaab
DATA expC4<>+20(SB)/4, $0x3d2aaaab
DATA expC4<>+24(SB)/4, $0x3d2aaaab
DATA expC4<>+28(SB)/4, $0x3d2aaaab
GLOBL expC4<>(SB), RODATA|NOPTR, $32
DATA expC3<>+0(SB)/4, $0x3e2aaaab
DATA expC3<>+4(SB)/4, $0x3e2aaaab
DATA expC3<>+8(SB)/4, $0x3e2aaaab
DATA expC3<>+12(SB)/4, $0x3e2aaaab
DATA expC3<>+16(SB)/4, $0x3e2aaaab
DATA expC3<>+20(SB)/4, $0x3e2aaaab
DATA expC3<>+24(SB)/4, $0x3e2aaaab
DATA expC3<>+28(SB)/4, $0x3e2aaaab
GLOBL expC3<>(SB), RODATA|NOPTR, $32
DATA expC2<>+0(SB)/4, $0x3f000000
DATA expC2<>+4(SB)/4, $0x3f000000
DATA expC2<>+8(SB)/4, $0x3f000000
DATA expC2<>+12(SB)/4, $0x3f000000
DATA expC2<>+16(SB)/4, $0x3f000000
DATA expC2<>+20(SB)/4, $0x3f000000
DATA expC2<>+24(SB)/4, $0x3f000000
DATA expC2<>+28(SB)/4, $0x3f000000
GLOBL expC2<>(SB), RODATA|NOPTR, $32
DATA expOne<>+0(SB)/4, $0x3f800000
DATA expOne<>+4(SB)/4, $0x3f800000
DATA expOne<>+8(SB)/4, $0x3f800000
DATA expOne<>+12(SB)/4, $0x3f800000
DATA expOne<>+16(SB)/4, $0x3f800000
DATA expOne<>+20(SB)/4, $0x3f800000
DATA expOne<>+24(SB)/4, $0x3f800000
DATA expOne<>+28(SB)/4, $0x3f800000
GLOBL expOne<>(SB), RODATA|NOPTR, $32
DATA expHi<>+0(SB)/4, $0x42b00000
DATA expHi<>+4(SB)/4, $0x42b00000
DATA expHi<>+8(SB)/4, $0x42b00000
DATA expHi<>+12(SB)/4, $0x42b00000
DATA expHi<>+16(SB)/4, $0x42b00000
DATA expHi<>+20(SB)/4, $0x42b00000
DATA expHi<>+24(SB)/4, $0x42b00000
DATA expHi<>+28(SB)/4, $0x42b00000
GLOBL expHi<>(SB), RODATA|NOPTR, $32
DATA expLo<>+0(SB)/4, $0xc2ad0000
DATA expLo<>+4(SB)/4, $0xc2ad0000
DATA expLo<>+8(SB)/4, $0xc2ad0000
DATA expLo<>+12(SB)/4, $0xc2ad0000
DATA expLo<>+16(SB)/4, $0xc2ad0000
DATA expLo<>+20(SB)/4, $0xc2ad0000
DATA expLo<>+24(SB)/4, $0xc2ad0000
DATA expLo<>+28(SB)/4, $0xc2ad0000
GLOBL expLo<>(SB), RODATA|NOPTR, $32

// EXP8(x, t, u, v) replaces the 8 floats of x by e^x. Inputs are clamped
// to [-86.5, 88] so 2^n stays a normal float; inputs below -86.5 (including
// -Inf) give 0 (the true value is < 3e-38); NaN is not propagated. t, u, v
// are scratch.
#define EXP8(x, t, u, v) \
	VCMPPS $1, expLo<>(SB), x, u; \
	VMAXPS expLo<>(SB), x, x; \
	VMINPS expHi<>(SB), x, x; \
	VMULPS expLog2e<>(SB), x, v; \
	VROUNDPS $0, v, v; \
	VFNMADD231PS expLn2hi<>(SB), v, x; \
	VFNMADD231PS expLn2lo<>(SB), v, x; \
	VCVTPS2DQ v, v; \
	VPSLLD $23, v, v; \
	VMOVUPS expC7<>(SB), t; \
	VFMADD213PS expC6<>(SB), x, t; \
	VFMADD213PS expC5<>(SB), x, t; \
	VFMADD213PS expC4<>(SB), x, t; \
	VFMADD213PS expC3<>(SB), x, t; \
	VFMADD213PS expC2<>(SB), x, t; \
	VFMADD213PS expOne<>(SB), x, t; \
	VFMADD213PS expOne<>(SB), x, t; \
	VPADDD v, t, x; \
	VANDNPS x, u, x

// Horizontal sum of the 8 floats of a+b into lane 0 of xa (t is scratch).
#define HSUM2(a, b, xa, t) \
	VADDPS b, a, a; \
	VEXTRACTF128 $1, a, t; \
	VADDPS t, xa, xa; \
	VPERMILPS $0x4E, xa, t; \
	VADDPS t, xa, xa; \
	VMOVSHDUP xa, t; \
	VADDSS t, xa, xa

// func addScaledAVX2(dst, x *float32, n int, s float32)
TEXT ·addScaledAVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS s+24(FP), Y15
	XORQ AX, AX
as32:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $32
	JLT as8
	VMULPS 0(SI)(AX*4), Y15, Y0
	VMULPS 32(SI)(AX*4), Y15, Y1
	VMULPS 64(SI)(AX*4), Y15, Y2
	VMULPS 96(SI)(AX*4), Y15, Y3
	VADDPS 0(DI)(AX*4), Y0, Y0
	VADDPS 32(DI)(AX*4), Y1, Y1
	VADDPS 64(DI)(AX*4), Y2, Y2
	VADDPS 96(DI)(AX*4), Y3, Y3
	VMOVUPS Y0, 0(DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	ADDQ $32, AX
	JMP as32
as8:
	CMPQ DX, $8
	JLT as1
	VMULPS 0(SI)(AX*4), Y15, Y0
	VADDPS 0(DI)(AX*4), Y0, Y0
	VMOVUPS Y0, 0(DI)(AX*4)
	ADDQ $8, AX
	SUBQ $8, DX
	JMP as8
as1:
	CMPQ AX, CX
	JGE asdone
	VMOVSS 0(SI)(AX*4), X0
	VMULSS X15, X0, X0
	VADDSS 0(DI)(AX*4), X0, X0
	VMOVSS X0, 0(DI)(AX*4)
	INCQ AX
	JMP as1
asdone:
	VZEROUPPER
	RET

// func accumF16AVX2(out *float32, nq, hd int, w *float32, ws int, vals *byte, stride, n int)
//
// For each value row p (outer, in order) and output row j (inner):
// out_j += w[j*ws+p] * v_p with VMULPS then VADDPS. hd == 64 keeps the
// converted value row in Y4..Y11.
TEXT ·accumF16AVX2(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), DX
	MOVQ hd+16(FP), R9
	MOVQ w+24(FP), SI
	MOVQ ws+32(FP), R12
	SHLQ $2, R12
	MOVQ vals+40(FP), DI
	MOVQ stride+48(FP), R10
	MOVQ n+56(FP), R11
	MOVQ R9, R13
	SHLQ $2, R13
acp:
	TESTQ R11, R11
	JZ acdone
	MOVQ nq+8(FP), CX
	MOVQ DX, AX
	MOVQ SI, BX
	CMPQ R9, $64
	JEQ ac64
acj:
	VBROADCASTSS 0(BX), Y3
	XORQ R8, R8
acd:
	VCVTPH2PS 0(DI)(R8*2), Y0
	VCVTPH2PS 16(DI)(R8*2), Y1
	VMULPS Y3, Y0, Y0
	VMULPS Y3, Y1, Y1
	VADDPS 0(AX)(R8*4), Y0, Y0
	VADDPS 32(AX)(R8*4), Y1, Y1
	VMOVUPS Y0, 0(AX)(R8*4)
	VMOVUPS Y1, 32(AX)(R8*4)
	ADDQ $16, R8
	CMPQ R8, R9
	JLT acd
	ADDQ R13, AX
	ADDQ R12, BX
	DECQ CX
	JNZ acj
	JMP acnext
ac64:
	VCVTPH2PS 0(DI), Y4
	VCVTPH2PS 16(DI), Y5
	VCVTPH2PS 32(DI), Y6
	VCVTPH2PS 48(DI), Y7
	VCVTPH2PS 64(DI), Y8
	VCVTPH2PS 80(DI), Y9
	VCVTPH2PS 96(DI), Y10
	VCVTPH2PS 112(DI), Y11
ac64j:
	VBROADCASTSS 0(BX), Y3
	VMULPS Y3, Y4, Y0
	VMULPS Y3, Y5, Y1
	VMULPS Y3, Y6, Y2
	VMULPS Y3, Y7, Y12
	VADDPS 0(AX), Y0, Y0
	VADDPS 32(AX), Y1, Y1
	VADDPS 64(AX), Y2, Y2
	VADDPS 96(AX), Y12, Y12
	VMOVUPS Y0, 0(AX)
	VMOVUPS Y1, 32(AX)
	VMOVUPS Y2, 64(AX)
	VMOVUPS Y12, 96(AX)
	VMULPS Y3, Y8, Y0
	VMULPS Y3, Y9, Y1
	VMULPS Y3, Y10, Y2
	VMULPS Y3, Y11, Y12
	VADDPS 128(AX), Y0, Y0
	VADDPS 160(AX), Y1, Y1
	VADDPS 192(AX), Y2, Y2
	VADDPS 224(AX), Y12, Y12
	VMOVUPS Y0, 128(AX)
	VMOVUPS Y1, 160(AX)
	VMOVUPS Y2, 192(AX)
	VMOVUPS Y12, 224(AX)
	ADDQ $256, AX
	ADDQ R12, BX
	DECQ CX
	JNZ ac64j
acnext:
	ADDQ R10, DI
	ADDQ $4, SI
	DECQ R11
	JMP acp
acdone:
	VZEROUPPER
	RET

// func maxAVX2(x *float32, n int) float32
// n is a positive multiple of 8.
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS 0(SI), Y0
	ADDQ $32, SI
	SUBQ $8, CX
mxl:
	TESTQ CX, CX
	JZ mxh
	VMAXPS 0(SI), Y0, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JMP mxl
mxh:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VMOVSHDUP X0, X1
	VMAXSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET

// func expSubSumAVX2(x *float32, n int, m float32) float64
// x[i] = e^(x[i]-m) for n (a positive multiple of 8) elements; returns
// their sum accumulated in float64.
TEXT ·expSubSumAVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS m+16(FP), Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
esl:
	TESTQ CX, CX
	JZ esdone
	VMOVUPS 0(SI), Y0
	VSUBPS Y9, Y0, Y0
	EXP8(Y0, Y1, Y2, Y3)
	VMOVUPS Y0, 0(SI)
	VCVTPS2PD X0, Y4
	VEXTRACTF128 $1, Y0, X5
	VCVTPS2PD X5, Y5
	VADDPD Y4, Y10, Y10
	VADDPD Y5, Y11, Y11
	ADDQ $32, SI
	SUBQ $8, CX
	JMP esl
esdone:
	VADDPD Y11, Y10, Y10
	VEXTRACTF128 $1, Y10, X11
	VADDPD X11, X10, X10
	VPERMILPD $1, X10, X11
	VADDSD X11, X10, X10
	VZEROUPPER
	MOVSD X10, ret+24(FP)
	RET

// EXP16 is EXP8 on the 16 floats of a zmm x, the same operations per lane
// (constants broadcast from the same tables; VRNDSCALEPS $0 is VROUNDPS $0,
// round to nearest even), so each lane's e^x is bit-identical to EXP8's;
// inputs below -86.5 (and NaN) give 0 through the K1 mask. t, v are
// scratch zmm.
#define EXP16(x, t, v) \
	VCMPPS.BCST $13, expLo<>(SB), x, K1; \
	VMAXPS.BCST expLo<>(SB), x, x; \
	VMINPS.BCST expHi<>(SB), x, x; \
	VMULPS.BCST expLog2e<>(SB), x, v; \
	VRNDSCALEPS $0, v, v; \
	VFNMADD231PS.BCST expLn2hi<>(SB), v, x; \
	VFNMADD231PS.BCST expLn2lo<>(SB), v, x; \
	VCVTPS2DQ v, v; \
	VPSLLD $23, v, v; \
	VBROADCASTSS expC7<>(SB), t; \
	VFMADD213PS.BCST expC6<>(SB), x, t; \
	VFMADD213PS.BCST expC5<>(SB), x, t; \
	VFMADD213PS.BCST expC4<>(SB), x, t; \
	VFMADD213PS.BCST expC3<>(SB), x, t; \
	VFMADD213PS.BCST expC2<>(SB), x, t; \
	VFMADD213PS.BCST expOne<>(SB), x, t; \
	VFMADD213PS.BCST expOne<>(SB), x, t; \
	VPADDD.Z v, t, K1, x

// func expSubSumAVX512(x *float32, n int, m float32) float64
// expSubSumAVX2 for n a positive multiple of 16, sixteen lanes at a time
// (the float64 sum in four 4-lane accumulators).
TEXT ·expSubSumAVX512(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS m+16(FP), Z9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
e16l:
	TESTQ CX, CX
	JZ e16done
	VMOVUPS 0(SI), Z0
	VSUBPS Z9, Z0, Z0
	EXP16(Z0, Z1, Z3)
	VMOVUPS Z0, 0(SI)
	VCVTPS2PD X0, Y4
	VEXTRACTF128 $1, Y0, X5
	VCVTPS2PD X5, Y5
	VEXTRACTF32X4 $2, Z0, X6
	VCVTPS2PD X6, Y6
	VEXTRACTF32X4 $3, Z0, X7
	VCVTPS2PD X7, Y7
	VADDPD Y4, Y10, Y10
	VADDPD Y5, Y11, Y11
	VADDPD Y6, Y12, Y12
	VADDPD Y7, Y13, Y13
	ADDQ $64, SI
	SUBQ $16, CX
	JMP e16l
e16done:
	VADDPD Y11, Y10, Y10
	VADDPD Y13, Y12, Y12
	VADDPD Y12, Y10, Y10
	VEXTRACTF128 $1, Y10, X11
	VADDPD X11, X10, X10
	VPERMILPD $1, X10, X11
	VADDSD X11, X10, X10
	VZEROUPPER
	MOVSD X10, ret+24(FP)
	RET

// func scaleAVX2(x *float32, n int, s float32)
// x[i] *= s for n (a multiple of 8) elements.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS s+16(FP), Y9
scl:
	TESTQ CX, CX
	JZ scldone
	VMULPS 0(SI), Y9, Y0
	VMOVUPS Y0, 0(SI)
	ADDQ $32, SI
	SUBQ $8, CX
	JMP scl
scldone:
	VZEROUPPER
	RET

// func siluMulAVX2(gate, up *float32, n int)
// gate[i] = gate[i] / (1 + e^-gate[i]) * up[i] for n (a multiple of 8).
TEXT ·siluMulAVX2(SB), NOSPLIT, $0-24
	MOVQ gate+0(FP), DI
	MOVQ up+8(FP), SI
	MOVQ n+16(FP), CX
	VXORPS Y8, Y8, Y8
smloop:
	TESTQ CX, CX
	JZ smdone
	VMOVUPS 0(DI), Y6
	VSUBPS Y6, Y8, Y0
	EXP8(Y0, Y1, Y2, Y3)
	VADDPS expOne<>(SB), Y0, Y0
	VDIVPS Y0, Y6, Y6
	VMULPS 0(SI), Y6, Y6
	VMOVUPS Y6, 0(DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $8, CX
	JMP smloop
smdone:
	VZEROUPPER
	RET

// Constants for the Q8_0 and F16 activation encoders.
DATA absMask<>+0(SB)/4, $0x7fffffff
DATA absMask<>+4(SB)/4, $0x7fffffff
DATA absMask<>+8(SB)/4, $0x7fffffff
DATA absMask<>+12(SB)/4, $0x7fffffff
DATA absMask<>+16(SB)/4, $0x7fffffff
DATA absMask<>+20(SB)/4, $0x7fffffff
DATA absMask<>+24(SB)/4, $0x7fffffff
DATA absMask<>+28(SB)/4, $0x7fffffff
GLOBL absMask<>(SB), RODATA|NOPTR, $32
DATA signMask<>+0(SB)/4, $0x80000000
DATA signMask<>+4(SB)/4, $0x80000000
DATA signMask<>+8(SB)/4, $0x80000000
DATA signMask<>+12(SB)/4, $0x80000000
DATA signMask<>+16(SB)/4, $0x80000000
DATA signMask<>+20(SB)/4, $0x80000000
DATA signMask<>+24(SB)/4, $0x80000000
DATA signMask<>+28(SB)/4, $0x80000000
GLOBL signMask<>(SB), RODATA|NOPTR, $32
DATA fHalf<>+0(SB)/4, $0x3f000000
DATA fHalf<>+4(SB)/4, $0x3f000000
DATA fHalf<>+8(SB)/4, $0x3f000000
DATA fHalf<>+12(SB)/4, $0x3f000000
DATA fHalf<>+16(SB)/4, $0x3f000000
DATA fHalf<>+20(SB)/4, $0x3f000000
DATA fHalf<>+24(SB)/4, $0x3f000000
DATA fHalf<>+28(SB)/4, $0x3f000000
GLOBL fHalf<>(SB), RODATA|NOPTR, $32
DATA f127<>+0(SB)/4, $0x42fe0000
DATA f127<>+4(SB)/4, $0x42fe0000
DATA f127<>+8(SB)/4, $0x42fe0000
DATA f127<>+12(SB)/4, $0x42fe0000
DATA f127<>+16(SB)/4, $0x42fe0000
DATA f127<>+20(SB)/4, $0x42fe0000
DATA f127<>+24(SB)/4, $0x42fe0000
DATA f127<>+28(SB)/4, $0x42fe0000
GLOBL f127<>(SB), RODATA|NOPTR, $32
DATA q8perm<>+0(SB)/4, $0
DATA q8perm<>+4(SB)/4, $4
DATA q8perm<>+8(SB)/4, $1
DATA q8perm<>+12(SB)/4, $5
DATA q8perm<>+16(SB)/4, $2
DATA q8perm<>+20(SB)/4, $6
DATA q8perm<>+24(SB)/4, $3
DATA q8perm<>+28(SB)/4, $7
GLOBL q8perm<>(SB), RODATA|NOPTR, $32

// ROUNDAWAY(v, t, u) rounds the 8 floats of v to integers, halves away from
// zero (C roundf, as ggml's quantize_row_q8_0): t = trunc(v), plus
// copysign(1, v) where |v − t| ≥ 0.5 (the difference is exact). Result in v.
#define ROUNDAWAY(v, t, u) \
	VROUNDPS $3, v, t; \
	VSUBPS t, v, u; \
	VANDPS absMask<>(SB), u, u; \
	VCMPPS $13, fHalf<>(SB), u, u; \
	VANDPS signMask<>(SB), v, v; \
	VORPS expOne<>(SB), v, v; \
	VANDPS u, v, v; \
	VADDPS t, v, v

// func quantQ8_0AVX2(x *float32, nb int, dst *byte)
// nb blocks of 32 floats to Q8_0 (fp16 d = amax/127, then 32 int8
// roundf(x/d)), bit-exact with quantQ8_0 for finite inputs.
TEXT ·quantQ8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ nb+8(FP), CX
	MOVQ dst+16(FP), DI
	VMOVUPS q8perm<>(SB), Y15
	VMOVUPS absMask<>(SB), Y14
	VXORPS X13, X13, X13
q8blk:
	TESTQ CX, CX
	JZ q8done
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VANDPS Y14, Y0, Y4
	VANDPS Y14, Y1, Y5
	VANDPS Y14, Y2, Y6
	VANDPS Y14, Y3, Y7
	VMAXPS Y5, Y4, Y4
	VMAXPS Y7, Y6, Y6
	VMAXPS Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS X5, X4, X4
	VPERMILPS $0x4E, X4, X5
	VMAXPS X5, X4, X4
	VMOVSHDUP X4, X5
	VMAXSS X5, X4, X4
	VDIVSS f127<>(SB), X4, X5
	VCVTPS2PH $0, X5, X6
	VMOVD X6, AX
	MOVW AX, 0(DI)
	VXORPS X7, X7, X7
	VUCOMISS X13, X5
	JEQ q8zero
	VMOVSS expOne<>(SB), X7
	VDIVSS X5, X7, X7
q8zero:
	VBROADCASTSS X7, Y7
	VMULPS Y7, Y0, Y0
	VMULPS Y7, Y1, Y1
	VMULPS Y7, Y2, Y2
	VMULPS Y7, Y3, Y3
	ROUNDAWAY(Y0, Y8, Y9)
	ROUNDAWAY(Y1, Y8, Y9)
	ROUNDAWAY(Y2, Y8, Y9)
	ROUNDAWAY(Y3, Y8, Y9)
	VCVTTPS2DQ Y0, Y0
	VCVTTPS2DQ Y1, Y1
	VCVTTPS2DQ Y2, Y2
	VCVTTPS2DQ Y3, Y3
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD Y0, Y15, Y0
	VMOVDQU Y0, 2(DI)
	ADDQ $128, SI
	ADDQ $34, DI
	DECQ CX
	JMP q8blk
q8done:
	VZEROUPPER
	RET

// func f16RowAVX2(x *float32, n int, dst *byte)
// n (a multiple of 8) floats to F16 with round-to-nearest-even (VCVTPS2PH),
// bit-exact with F32ToF16.
TEXT ·f16RowAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ dst+16(FP), DI
f16r:
	TESTQ CX, CX
	JZ f16rdone
	VMOVUPS 0(SI), Y0
	VCVTPS2PH $0, Y0, X1
	VMOVDQU X1, 0(DI)
	ADDQ $32, SI
	ADDQ $16, DI
	SUBQ $8, CX
	JMP f16r
f16rdone:
	VZEROUPPER
	RET

// func roundF16AVX2(dst, x *float32, n int)
// dst[i] = the F16 rounding of x[i] widened back to f32, n a multiple of 8.
TEXT ·roundF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
rf16:
	TESTQ CX, CX
	JZ rf16done
	VMOVUPS 0(SI), Y0
	VCVTPS2PH $0, Y0, X1
	VCVTPH2PS X1, Y0
	VMOVUPS Y0, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP rf16
rf16done:
	VZEROUPPER
	RET

// func accumF16x64AVX512(out *float32, nq int, w *float32, ws int, vals *byte, stride, n, os int)
//
// AccumF16 on a 64-column slab on AVX-512: output rows os bytes apart (the
// head dim × 4; a wider head is done slab by slab, each element's sum being
// independent). Four output rows (16 zmm) stay in registers across all n
// value rows, so per value row and output there is one broadcast and four
// VMULPS+VADDPS and no load/store of the outputs; leftover rows (nq mod 4)
// go one at a time. Same operations in the same order per element as
// accumF16AVX2 (out + s*v, positions in order).
TEXT ·accumF16x64AVX512(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), AX
	MOVQ nq+8(FP), CX
	MOVQ w+16(FP), SI
	MOVQ ws+24(FP), R12
	SHLQ $2, R12
	LEAQ (R12)(R12*2), R13
	MOVQ stride+40(FP), R10
	MOVQ os+56(FP), R8
	LEAQ (R8)(R8*2), R9
	MOVQ R10, R14
	SHLQ $4, R14              // prefetch distance: 16 value rows
ax4:
	CMPQ CX, $4
	JLT ax1
	VMOVUPS 0(AX), Z0
	VMOVUPS 64(AX), Z1
	VMOVUPS 128(AX), Z2
	VMOVUPS 192(AX), Z3
	VMOVUPS 0(AX)(R8*1), Z4
	VMOVUPS 64(AX)(R8*1), Z5
	VMOVUPS 128(AX)(R8*1), Z6
	VMOVUPS 192(AX)(R8*1), Z7
	VMOVUPS 0(AX)(R8*2), Z8
	VMOVUPS 64(AX)(R8*2), Z9
	VMOVUPS 128(AX)(R8*2), Z10
	VMOVUPS 192(AX)(R8*2), Z11
	VMOVUPS 0(AX)(R9*1), Z12
	VMOVUPS 64(AX)(R9*1), Z13
	VMOVUPS 128(AX)(R9*1), Z14
	VMOVUPS 192(AX)(R9*1), Z15
	MOVQ vals+32(FP), DI
	MOVQ SI, BX
	MOVQ n+48(FP), R11
ax4p:
	PREFETCHT0 0(DI)(R14*1)
	PREFETCHT0 64(DI)(R14*1)
	VCVTPH2PS 0(DI), Z16
	VCVTPH2PS 32(DI), Z17
	VCVTPH2PS 64(DI), Z18
	VCVTPH2PS 96(DI), Z19
	VBROADCASTSS (BX), Z20
	VBROADCASTSS (BX)(R12*1), Z21
	VBROADCASTSS (BX)(R12*2), Z22
	VBROADCASTSS (BX)(R13*1), Z23
	VMULPS Z20, Z16, Z24
	VADDPS Z24, Z0, Z0
	VMULPS Z20, Z17, Z24
	VADDPS Z24, Z1, Z1
	VMULPS Z20, Z18, Z24
	VADDPS Z24, Z2, Z2
	VMULPS Z20, Z19, Z24
	VADDPS Z24, Z3, Z3
	VMULPS Z21, Z16, Z24
	VADDPS Z24, Z4, Z4
	VMULPS Z21, Z17, Z24
	VADDPS Z24, Z5, Z5
	VMULPS Z21, Z18, Z24
	VADDPS Z24, Z6, Z6
	VMULPS Z21, Z19, Z24
	VADDPS Z24, Z7, Z7
	VMULPS Z22, Z16, Z24
	VADDPS Z24, Z8, Z8
	VMULPS Z22, Z17, Z24
	VADDPS Z24, Z9, Z9
	VMULPS Z22, Z18, Z24
	VADDPS Z24, Z10, Z10
	VMULPS Z22, Z19, Z24
	VADDPS Z24, Z11, Z11
	VMULPS Z23, Z16, Z24
	VADDPS Z24, Z12, Z12
	VMULPS Z23, Z17, Z24
	VADDPS Z24, Z13, Z13
	VMULPS Z23, Z18, Z24
	VADDPS Z24, Z14, Z14
	VMULPS Z23, Z19, Z24
	VADDPS Z24, Z15, Z15
	ADDQ R10, DI
	ADDQ $4, BX
	DECQ R11
	JNZ ax4p
	VMOVUPS Z0, 0(AX)
	VMOVUPS Z1, 64(AX)
	VMOVUPS Z2, 128(AX)
	VMOVUPS Z3, 192(AX)
	VMOVUPS Z4, 0(AX)(R8*1)
	VMOVUPS Z5, 64(AX)(R8*1)
	VMOVUPS Z6, 128(AX)(R8*1)
	VMOVUPS Z7, 192(AX)(R8*1)
	VMOVUPS Z8, 0(AX)(R8*2)
	VMOVUPS Z9, 64(AX)(R8*2)
	VMOVUPS Z10, 128(AX)(R8*2)
	VMOVUPS Z11, 192(AX)(R8*2)
	VMOVUPS Z12, 0(AX)(R9*1)
	VMOVUPS Z13, 64(AX)(R9*1)
	VMOVUPS Z14, 128(AX)(R9*1)
	VMOVUPS Z15, 192(AX)(R9*1)
	LEAQ (AX)(R8*4), AX
	LEAQ (SI)(R12*4), SI
	SUBQ $4, CX
	JMP ax4
ax1:
	TESTQ CX, CX
	JZ axdone
	VMOVUPS 0(AX), Z0
	VMOVUPS 64(AX), Z1
	VMOVUPS 128(AX), Z2
	VMOVUPS 192(AX), Z3
	MOVQ vals+32(FP), DI
	MOVQ SI, BX
	MOVQ n+48(FP), R11
ax1p:
	PREFETCHT0 0(DI)(R14*1)
	PREFETCHT0 64(DI)(R14*1)
	VCVTPH2PS 0(DI), Z16
	VCVTPH2PS 32(DI), Z17
	VCVTPH2PS 64(DI), Z18
	VCVTPH2PS 96(DI), Z19
	VBROADCASTSS (BX), Z20
	VMULPS Z20, Z16, Z24
	VADDPS Z24, Z0, Z0
	VMULPS Z20, Z17, Z24
	VADDPS Z24, Z1, Z1
	VMULPS Z20, Z18, Z24
	VADDPS Z24, Z2, Z2
	VMULPS Z20, Z19, Z24
	VADDPS Z24, Z3, Z3
	ADDQ R10, DI
	ADDQ $4, BX
	DECQ R11
	JNZ ax1p
	VMOVUPS Z0, 0(AX)
	VMOVUPS Z1, 64(AX)
	VMOVUPS Z2, 128(AX)
	VMOVUPS Z3, 192(AX)
	ADDQ R8, AX
	ADDQ R12, SI
	DECQ CX
	JMP ax1
axdone:
	VZEROUPPER
	RET

// func scoresF16x4AVX2(q *float32, nq, hd int, keys *byte, stride, n int, scale float32, out *float32, ws int)
//
// ScoresF16 for hd a positive multiple of 8 and nq a positive multiple of 4:
// blocks of four query rows (outer) against all key rows (inner), as
// scoresF16x64x2AVX2 (scores_amd64.s) but one key row at a time and with a
// loop over the 8-element chunks; per term
// hd/8 + 3 roundings.
TEXT ·scoresF16x4AVX2(SB), NOSPLIT, $0-72
	MOVQ q+0(FP), SI
	MOVQ nq+8(FP), CX
	MOVQ stride+32(FP), R10
	VBROADCASTSS scale+48(FP), X15
	MOVQ out+56(FP), DX
	MOVQ ws+64(FP), R12
	SHLQ $2, R12
	LEAQ (R12)(R12*2), R13
	MOVQ R10, R14
	SHLQ $4, R14              // prefetch distance: 16 key rows
gb4:
	TESTQ CX, CX
	JZ gbdone
	MOVQ hd+16(FP), R9
	SHLQ $2, R9
	LEAQ (SI)(R9*1), AX
	LEAQ (AX)(R9*1), BX
	ADDQ BX, R9
	MOVQ keys+24(FP), DI
	MOVQ n+40(FP), R11
gbp:
	PREFETCHT0 0(DI)(R14*1)
	PREFETCHT0 64(DI)(R14*1)
	CMPQ hd+16(FP), $64       // rows of more than 128 bytes: two more lines
	JLE gbpf
	PREFETCHT0 128(DI)(R14*1)
	PREFETCHT0 192(DI)(R14*1)
gbpf:
	VCVTPH2PS 0(DI), Y4
	VMULPS 0(SI), Y4, Y0
	VMULPS 0(AX), Y4, Y1
	VMULPS 0(BX), Y4, Y2
	VMULPS 0(R9), Y4, Y3
	MOVQ $8, R8
gbd:
	CMPQ R8, hd+16(FP)
	JGE gbred
	VCVTPH2PS 0(DI)(R8*2), Y4
	VFMADD231PS 0(SI)(R8*4), Y4, Y0
	VFMADD231PS 0(AX)(R8*4), Y4, Y1
	VFMADD231PS 0(BX)(R8*4), Y4, Y2
	VFMADD231PS 0(R9)(R8*4), Y4, Y3
	ADDQ $8, R8
	JMP gbd
gbred:
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMULPS X15, X0, X0
	VMOVSS X0, 0(DX)
	VEXTRACTPS $1, X0, 0(DX)(R12*1)
	VEXTRACTPS $2, X0, 0(DX)(R12*2)
	VEXTRACTPS $3, X0, 0(DX)(R13*1)
	ADDQ R10, DI
	ADDQ $4, DX
	DECQ R11
	JNZ gbp
	MOVQ n+40(FP), R11
	SHLQ $2, R11
	SUBQ R11, DX
	LEAQ (DX)(R12*4), DX
	MOVQ hd+16(FP), R9
	SHLQ $4, R9
	ADDQ R9, SI
	SUBQ $4, CX
	JMP gb4
gbdone:
	VZEROUPPER
	RET

// func scoresF16x64x2AVX512(q *float32, nq int, keys *byte, stride, n int, scale float32, out *float32, ws int)
//
// ScoresF16 for hd == 64 and nq a positive multiple of 4, n > 0 on AVX-512:
// four query rows stay in Z16..Z31 while the key rows stream past, two at a
// time; each key row is converted once (Z8..Z11) for the four, each dot is
// one VMULPS and three FMAs over 16 lanes (Z0..Z3 key 0, Z4..Z7 key 1), and
// the eight 16-lane sums are reduced jointly by lane shuffles over whole zmm
// registers: 256-bit halves (a_i + a_{i+8}), adjacent pairs twice, then the
// 128-bit halves. An odd last key goes through the one-key loop (tx1),
// which reduces its four sums with the same pairings by VEXTRACTF64X4,
// two VHADDPS levels and VEXTRACTF128, so every score is bit-identical to
// the one-key loop's for that key alone (TestScoresF16Pair): the pair
// reduction takes about half the instructions per score. Per term:
// 4 + 1 + 2 + 1 = hd/16 + 4 roundings. Key rows 16 strides ahead are
// prefetched.
TEXT ·scoresF16x64x2AVX512(SB), NOSPLIT, $0-64
	MOVQ q+0(FP), SI
	MOVQ nq+8(FP), CX
	MOVQ stride+24(FP), R10
	VBROADCASTSS scale+40(FP), Z12
	MOVQ out+48(FP), DX
	MOVQ ws+56(FP), R12
	SHLQ $2, R12
	LEAQ (R12)(R12*2), R13
	MOVQ R10, R14
	SHLQ $4, R14              // prefetch distance: 16 key rows
	LEAQ (R10)(R10*1), R8     // two key rows
tx4:
	TESTQ CX, CX
	JZ txdone
	VMOVUPS 0(SI), Z16
	VMOVUPS 64(SI), Z17
	VMOVUPS 128(SI), Z18
	VMOVUPS 192(SI), Z19
	VMOVUPS 256(SI), Z20
	VMOVUPS 320(SI), Z21
	VMOVUPS 384(SI), Z22
	VMOVUPS 448(SI), Z23
	VMOVUPS 512(SI), Z24
	VMOVUPS 576(SI), Z25
	VMOVUPS 640(SI), Z26
	VMOVUPS 704(SI), Z27
	VMOVUPS 768(SI), Z28
	VMOVUPS 832(SI), Z29
	VMOVUPS 896(SI), Z30
	VMOVUPS 960(SI), Z31
	MOVQ keys+16(FP), DI
	MOVQ DX, BX
	MOVQ n+32(FP), R11
tx2:
	CMPQ R11, $2
	JLT tx1
	LEAQ (DI)(R10*1), AX
	PREFETCHT0 0(DI)(R14*1)
	PREFETCHT0 64(DI)(R14*1)
	PREFETCHT0 0(AX)(R14*1)
	PREFETCHT0 64(AX)(R14*1)
	VCVTPH2PS 0(DI), Z8
	VCVTPH2PS 32(DI), Z9
	VCVTPH2PS 64(DI), Z10
	VCVTPH2PS 96(DI), Z11
	VMULPS Z16, Z8, Z0
	VFMADD231PS Z17, Z9, Z0
	VFMADD231PS Z18, Z10, Z0
	VFMADD231PS Z19, Z11, Z0
	VMULPS Z20, Z8, Z1
	VFMADD231PS Z21, Z9, Z1
	VFMADD231PS Z22, Z10, Z1
	VFMADD231PS Z23, Z11, Z1
	VMULPS Z24, Z8, Z2
	VFMADD231PS Z25, Z9, Z2
	VFMADD231PS Z26, Z10, Z2
	VFMADD231PS Z27, Z11, Z2
	VMULPS Z28, Z8, Z3
	VFMADD231PS Z29, Z9, Z3
	VFMADD231PS Z30, Z10, Z3
	VFMADD231PS Z31, Z11, Z3
	VCVTPH2PS 0(AX), Z8
	VCVTPH2PS 32(AX), Z9
	VCVTPH2PS 64(AX), Z10
	VCVTPH2PS 96(AX), Z11
	VMULPS Z16, Z8, Z4
	VFMADD231PS Z17, Z9, Z4
	VFMADD231PS Z18, Z10, Z4
	VFMADD231PS Z19, Z11, Z4
	VMULPS Z20, Z8, Z5
	VFMADD231PS Z21, Z9, Z5
	VFMADD231PS Z22, Z10, Z5
	VFMADD231PS Z23, Z11, Z5
	VMULPS Z24, Z8, Z6
	VFMADD231PS Z25, Z9, Z6
	VFMADD231PS Z26, Z10, Z6
	VFMADD231PS Z27, Z11, Z6
	VMULPS Z28, Z8, Z7
	VFMADD231PS Z29, Z9, Z7
	VFMADD231PS Z30, Z10, Z7
	VFMADD231PS Z31, Z11, Z7
	SCORENET8 // rows 0..3 of key 0 in lanes 0..3, of key 1 in lanes 8..11
	VMULPS Z12, Z0, Z0
	VMOVUPS scorePairIdx<>(SB), Z11
	VPERMPS Z0, Z11, Z0
	VMOVLPS X0, 0(BX)
	VMOVHPS X0, 0(BX)(R12*1)
	VEXTRACTF128 $1, Y0, X1
	VMOVLPS X1, 0(BX)(R12*2)
	VMOVHPS X1, 0(BX)(R13*1)
	ADDQ R8, DI
	ADDQ $8, BX
	SUBQ $2, R11
	JMP tx2
tx1:
	TESTQ R11, R11
	JZ txnext
	VCVTPH2PS 0(DI), Z8
	VCVTPH2PS 32(DI), Z9
	VCVTPH2PS 64(DI), Z10
	VCVTPH2PS 96(DI), Z11
	VMULPS Z16, Z8, Z0
	VFMADD231PS Z17, Z9, Z0
	VFMADD231PS Z18, Z10, Z0
	VFMADD231PS Z19, Z11, Z0
	VMULPS Z20, Z8, Z1
	VFMADD231PS Z21, Z9, Z1
	VFMADD231PS Z22, Z10, Z1
	VFMADD231PS Z23, Z11, Z1
	VMULPS Z24, Z8, Z2
	VFMADD231PS Z25, Z9, Z2
	VFMADD231PS Z26, Z10, Z2
	VFMADD231PS Z27, Z11, Z2
	VMULPS Z28, Z8, Z3
	VFMADD231PS Z29, Z9, Z3
	VFMADD231PS Z30, Z10, Z3
	VFMADD231PS Z31, Z11, Z3
	SCORE4
	VMULPS X12, X0, X0
	VMOVSS X0, 0(BX)
	VEXTRACTPS $1, X0, 0(BX)(R12*1)
	VEXTRACTPS $2, X0, 0(BX)(R12*2)
	VEXTRACTPS $3, X0, 0(BX)(R13*1)
txnext:
	ADDQ $1024, SI
	LEAQ (DX)(R12*4), DX
	SUBQ $4, CX
	JMP tx4
txdone:
	VZEROUPPER
	RET
