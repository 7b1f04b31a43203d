#include "textflag.h"

// func accumF32x32AVX2(out *float32, nq, hd int, w *float32, ws int, v *float32, n int)
//
// out_j[c:c+32] += w[j*ws+p] * v[p*hd+c : p*hd+c+32] for p = 0..n-1 in
// order, per 32-column slab c of hd (a positive multiple of 32) and output
// row j < nq (nq, n > 0): VMULPS then VADDPS per element, exactly the
// operations of accumF16AVX2 in the same order, so bit-identical. Rows go
// two at a time with their slab in eight registers for the whole run of
// positions (a lone last row in four), so the output is loaded and stored
// once per call instead of once per position; v is already f32 (L1-resident
// scratch), one 32-column load per position shared by the two rows.
TEXT ·accumF32x32AVX2(SB), NOSPLIT, $0-56
	MOVQ hd+16(FP), R13
	SHLQ $2, R13              // row bytes
	MOVQ ws+32(FP), R12
	SHLQ $2, R12              // weight row bytes
	XORQ CX, CX               // slab byte offset
slab:
	MOVQ out+0(FP), DI
	ADDQ CX, DI               // &out[0][c]
	MOVQ w+24(FP), SI         // &w[0][0]
	MOVQ nq+8(FP), R8
pair:
	CMPQ R8, $2
	JLT single
	LEAQ (DI)(R13*1), BX      // row j+1
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 0(BX), Y4
	VMOVUPS 32(BX), Y5
	VMOVUPS 64(BX), Y6
	VMOVUPS 96(BX), Y7
	MOVQ SI, DX
	LEAQ (SI)(R12*1), R14
	MOVQ v+40(FP), R15
	ADDQ CX, R15
	MOVQ n+48(FP), R11
pairp:
	VBROADCASTSS 0(DX), Y8
	VBROADCASTSS 0(R14), Y9
	VMOVUPS 0(R15), Y10
	VMOVUPS 32(R15), Y11
	VMOVUPS 64(R15), Y12
	VMOVUPS 96(R15), Y13
	VMULPS Y10, Y8, Y14
	VADDPS Y14, Y0, Y0
	VMULPS Y11, Y8, Y15
	VADDPS Y15, Y1, Y1
	VMULPS Y12, Y8, Y14
	VADDPS Y14, Y2, Y2
	VMULPS Y13, Y8, Y15
	VADDPS Y15, Y3, Y3
	VMULPS Y10, Y9, Y14
	VADDPS Y14, Y4, Y4
	VMULPS Y11, Y9, Y15
	VADDPS Y15, Y5, Y5
	VMULPS Y12, Y9, Y14
	VADDPS Y14, Y6, Y6
	VMULPS Y13, Y9, Y15
	VADDPS Y15, Y7, Y7
	ADDQ $4, DX
	ADDQ $4, R14
	ADDQ R13, R15
	DECQ R11
	JNZ pairp
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 0(BX)
	VMOVUPS Y5, 32(BX)
	VMOVUPS Y6, 64(BX)
	VMOVUPS Y7, 96(BX)
	LEAQ (DI)(R13*2), DI
	LEAQ (SI)(R12*2), SI
	SUBQ $2, R8
	JMP pair
single:
	TESTQ R8, R8
	JZ nextslab
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	MOVQ SI, DX
	MOVQ v+40(FP), R15
	ADDQ CX, R15
	MOVQ n+48(FP), R11
singlep:
	VBROADCASTSS 0(DX), Y8
	VMULPS 0(R15), Y8, Y14
	VADDPS Y14, Y0, Y0
	VMULPS 32(R15), Y8, Y15
	VADDPS Y15, Y1, Y1
	VMULPS 64(R15), Y8, Y14
	VADDPS Y14, Y2, Y2
	VMULPS 96(R15), Y8, Y15
	VADDPS Y15, Y3, Y3
	ADDQ $4, DX
	ADDQ R13, R15
	DECQ R11
	JNZ singlep
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
nextslab:
	ADDQ $128, CX
	CMPQ CX, R13
	JLT slab
	VZEROUPPER
	RET

// func f16ToF32RowsAVX2(dst *float32, hd int, src *byte, stride, n int)
//
// Widens n F16 rows of hd elements (a positive multiple of 16), stride
// bytes apart, into dst (rows of hd floats, contiguous): VCVTPH2PS, exact.
TEXT ·f16ToF32RowsAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ hd+8(FP), R9
	MOVQ src+16(FP), SI
	MOVQ stride+24(FP), R10
	MOVQ n+32(FP), R11
	MOVQ R10, R8
	SHLQ $4, R8               // prefetch distance: 16 rows
row:
	LEAQ (SI)(R8*1), DX
	XORQ AX, AX
col:
	PREFETCHT0 0(DX)(AX*2)
	VCVTPH2PS 0(SI)(AX*2), Y0
	VCVTPH2PS 16(SI)(AX*2), Y1
	VMOVUPS Y0, 0(DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, R9
	JLT col
	LEAQ (DI)(R9*4), DI
	ADDQ R10, SI
	DECQ R11
	JNZ row
	VZEROUPPER
	RET
