#include "textflag.h"

// The AVX2 one-query-row score routine (the AVX-512 ones are in
// scores512_amd64.s). Generation with one query row per kv head
// (multi-head attention, or the rows left over when a group is not a
// multiple of four) once padded that row to four copies and ran a four-row
// routine, doing four times the multiplies. The one-row routines take the
// row alone and put several keys in flight instead, each key's dot reduced
// by exactly the tree of the four-row routine the row would otherwise go
// through, so a row's scores stay bit-identical whatever nq is and wherever
// the row sits in it (TestScoresF16RowInvariant).

// func scoresF16x1AVX2(q *float32, hd int, keys *byte, stride, n int, scale float32, out *float32)
//
// One query row of hd (a positive multiple of 8) against n > 0 keys, four
// keys at a time (Y0..Y3), the order of scoresF16x4AVX2 and
// scoresF16x64x2AVX2 per key: 8-lane product of chunk 0, FMAs of chunks
// 1..hd/8-1, two VHADDPS levels (the four keys in place of the four rows),
// the 128-bit halves, × scale; the four scores stored together. Leftover
// keys take the same network one at a time (a lane of VHADDPS depends only
// on its own key's accumulator). Keys 16 strides ahead are prefetched.
TEXT ·scoresF16x1AVX2(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ hd+8(FP), R9
	MOVQ keys+16(FP), DI
	MOVQ stride+24(FP), R10
	MOVQ n+32(FP), R11
	VBROADCASTSS scale+40(FP), X15
	MOVQ out+48(FP), BX
	LEAQ (R10)(R10*2), R13    // three strides
	MOVQ R10, R14
	SHLQ $4, R14              // prefetch distance: 16 key rows
s1k4:
	CMPQ R11, $4
	JLT s1k1
	LEAQ (DI)(R10*1), AX
	LEAQ (DI)(R10*2), DX
	LEAQ (DI)(R13*1), R12
	PREFETCHT0 0(DI)(R14*1)
	PREFETCHT0 0(AX)(R14*1)
	PREFETCHT0 0(DX)(R14*1)
	PREFETCHT0 0(R12)(R14*1)
	CMPQ R9, $32              // rows of more than 64 bytes: one more line
	JLE s1k4pf
	PREFETCHT0 64(DI)(R14*1)
	PREFETCHT0 64(AX)(R14*1)
	PREFETCHT0 64(DX)(R14*1)
	PREFETCHT0 64(R12)(R14*1)
	CMPQ R9, $64              // more than 128 bytes: two more
	JLE s1k4pf
	PREFETCHT0 128(DI)(R14*1)
	PREFETCHT0 128(AX)(R14*1)
	PREFETCHT0 128(DX)(R14*1)
	PREFETCHT0 128(R12)(R14*1)
	PREFETCHT0 192(DI)(R14*1)
	PREFETCHT0 192(AX)(R14*1)
	PREFETCHT0 192(DX)(R14*1)
	PREFETCHT0 192(R12)(R14*1)
s1k4pf:
	VMOVUPS 0(SI), Y8
	VCVTPH2PS 0(DI), Y4
	VCVTPH2PS 0(AX), Y5
	VCVTPH2PS 0(DX), Y6
	VCVTPH2PS 0(R12), Y7
	VMULPS Y8, Y4, Y0
	VMULPS Y8, Y5, Y1
	VMULPS Y8, Y6, Y2
	VMULPS Y8, Y7, Y3
	MOVQ $8, R8
s1k4c:
	CMPQ R8, R9
	JGE s1k4red
	VMOVUPS 0(SI)(R8*4), Y8
	VCVTPH2PS 0(DI)(R8*2), Y4
	VCVTPH2PS 0(AX)(R8*2), Y5
	VCVTPH2PS 0(DX)(R8*2), Y6
	VCVTPH2PS 0(R12)(R8*2), Y7
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y8, Y5, Y1
	VFMADD231PS Y8, Y6, Y2
	VFMADD231PS Y8, Y7, Y3
	ADDQ $8, R8
	JMP s1k4c
s1k4red:
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMULPS X15, X0, X0
	VMOVUPS X0, 0(BX)
	LEAQ (DI)(R10*4), DI
	ADDQ $16, BX
	SUBQ $4, R11
	JMP s1k4
s1k1:
	TESTQ R11, R11
	JZ s1done
	VCVTPH2PS 0(DI), Y4
	VMULPS 0(SI), Y4, Y0
	MOVQ $8, R8
s1k1c:
	CMPQ R8, R9
	JGE s1k1red
	VCVTPH2PS 0(DI)(R8*2), Y4
	VFMADD231PS 0(SI)(R8*4), Y4, Y0
	ADDQ $8, R8
	JMP s1k1c
s1k1red:
	VHADDPS Y0, Y0, Y0
	VHADDPS Y0, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMULPS X15, X0, X0
	VMOVSS X0, 0(BX)
	ADDQ R10, DI
	ADDQ $4, BX
	DECQ R11
	JMP s1k1
s1done:
	VZEROUPPER
	RET
