// AVX2+FMA+F16C attention and f32 vector ops (see ops_amd64.go and the
// portable references in ops_dispatch.go). Element-wise updates use a
// separate VMULPS and VADDPS, never FMA, so they round exactly like the Go
// float32(s*x) + y they replace.

#include "textflag.h"

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

// func scoresF16AVX2(q *float32, nq, hd int, keys *byte, stride, n int, scale float32, out *float32, ws int)
//
// For each key row p (outer) and query row j (inner): two accumulators take
// the even and odd 8-element chunks by FMA (the products of F16-valued
// operands are exact), then HSUM2 and the scale. hd == 64 keeps the
// converted key row in Y4..Y11 with the same operation order.
TEXT ·scoresF16AVX2(SB), NOSPLIT, $0-72
	MOVQ q+0(FP), SI
	MOVQ hd+16(FP), R9
	MOVQ keys+24(FP), DI
	MOVQ stride+32(FP), R10
	MOVQ n+40(FP), R11
	VMOVSS scale+48(FP), X15
	MOVQ out+56(FP), DX
	MOVQ ws+64(FP), R12
	SHLQ $2, R12
	MOVQ R9, R13
	SHLQ $2, R13
scp:
	TESTQ R11, R11
	JZ scdone
	MOVQ nq+8(FP), CX
	MOVQ SI, AX
	MOVQ DX, BX
	CMPQ R9, $64
	JEQ sc64
scj:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	XORQ R8, R8
scd:
	VCVTPH2PS 0(DI)(R8*2), Y2
	VFMADD231PS 0(AX)(R8*4), Y2, Y0
	VCVTPH2PS 16(DI)(R8*2), Y3
	VFMADD231PS 32(AX)(R8*4), Y3, Y1
	ADDQ $16, R8
	CMPQ R8, R9
	JLT scd
	HSUM2(Y0, Y1, X0, X1)
	VMULSS X15, X0, X0
	VMOVSS X0, 0(BX)
	ADDQ R13, AX
	ADDQ R12, BX
	DECQ CX
	JNZ scj
	JMP scnext
sc64:
	VCVTPH2PS 0(DI), Y4
	VCVTPH2PS 16(DI), Y5
	VCVTPH2PS 32(DI), Y6
	VCVTPH2PS 48(DI), Y7
	VCVTPH2PS 64(DI), Y8
	VCVTPH2PS 80(DI), Y9
	VCVTPH2PS 96(DI), Y10
	VCVTPH2PS 112(DI), Y11
sc64j:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VFMADD231PS 0(AX), Y4, Y0
	VFMADD231PS 32(AX), Y5, Y1
	VFMADD231PS 64(AX), Y6, Y0
	VFMADD231PS 96(AX), Y7, Y1
	VFMADD231PS 128(AX), Y8, Y0
	VFMADD231PS 160(AX), Y9, Y1
	VFMADD231PS 192(AX), Y10, Y0
	VFMADD231PS 224(AX), Y11, Y1
	HSUM2(Y0, Y1, X0, X1)
	VMULSS X15, X0, X0
	VMOVSS X0, 0(BX)
	ADDQ $256, AX
	ADDQ R12, BX
	DECQ CX
	JNZ sc64j
scnext:
	ADDQ R10, DI
	ADDQ $4, DX
	DECQ R11
	JMP scp
scdone:
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
