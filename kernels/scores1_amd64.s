#include "textflag.h"
#include "scores512_amd64.h"

// One-query-row score routines: generation with one query row per kv head
// (multi-head attention, or the rows left over when a group is not a
// multiple of four) once padded that row to four copies and ran a four-row
// routine, doing four times the multiplies. These take the row alone and
// put several keys in flight instead, each key's dot reduced by exactly
// the tree of the four-row routine the row would otherwise go through, so
// a row's scores stay bit-identical whatever nq is and wherever the row
// sits in it (TestScoresOneRowMatchesFourRow).

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

// Key k's 64 halves at off(r), converted and dotted with the query in
// Z16..Z19 into acc: a product of chunk 0 and FMAs of chunks 1..3, as
// scoresF16x64x2AVX512 per row and key.
#define KEY64(r, acc) \
	VCVTPH2PS 0(r), Z8; \
	VCVTPH2PS 32(r), Z9; \
	VCVTPH2PS 64(r), Z10; \
	VCVTPH2PS 96(r), Z11; \
	VMULPS Z16, Z8, acc; \
	VFMADD231PS Z17, Z9, acc; \
	VFMADD231PS Z18, Z10, acc; \
	VFMADD231PS Z19, Z11, acc

// Keys DI, DI+stride, +2, +3 strides into a, b, c, d by KEY64 (AX, DX, R12
// = the other three keys; R13 = three strides), their lines 16 strides
// (R14) ahead prefetched.
#define KEYS64X4(a, b, c, d) \
	LEAQ (DI)(R10*1), AX; \
	LEAQ (DI)(R10*2), DX; \
	LEAQ (DI)(R13*1), R12; \
	PREFETCHT0 0(DI)(R14*1); \
	PREFETCHT0 64(DI)(R14*1); \
	PREFETCHT0 0(AX)(R14*1); \
	PREFETCHT0 64(AX)(R14*1); \
	PREFETCHT0 0(DX)(R14*1); \
	PREFETCHT0 64(DX)(R14*1); \
	PREFETCHT0 0(R12)(R14*1); \
	PREFETCHT0 64(R12)(R14*1); \
	KEY64(DI, a); \
	KEY64(AX, b); \
	KEY64(DX, c); \
	KEY64(R12, d)

// func scoresF16x64x1AVX512(q *float32, keys *byte, stride, n int, scale float32, out *float32)
//
// One query row of 64 (Z16..Z19) against n > 0 keys on AVX-512, eight keys
// at a time (Z0..Z7), reduced jointly by scoresF16x64x2AVX512's network
// (256-bit halves, adjacent pairs twice, 128-bit halves) with keys 0..3 in
// the places of its key-0 rows and keys 4..7 in those of its key-1 rows,
// so each score has that routine's tree: the eight stored together.
// Leftover keys take its one-key reduction (VEXTRACTF64X4, two VHADDPS
// levels, VEXTRACTF128), the same tree. Keys 16 strides ahead are
// prefetched.
TEXT ·scoresF16x64x1AVX512(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ keys+8(FP), DI
	MOVQ stride+16(FP), R10
	MOVQ n+24(FP), R11
	VBROADCASTSS scale+32(FP), Z12
	MOVQ out+40(FP), BX
	VMOVUPS 0(SI), Z16
	VMOVUPS 64(SI), Z17
	VMOVUPS 128(SI), Z18
	VMOVUPS 192(SI), Z19
	VMOVUPS score8Idx<>(SB), Z15
	LEAQ (R10)(R10*2), R13    // three strides
	MOVQ R10, R14
	SHLQ $4, R14              // prefetch distance: 16 key rows
x1k8:
	CMPQ R11, $8
	JLT x1k1
	KEYS64X4(Z0, Z1, Z2, Z3)
	LEAQ (DI)(R10*4), DI
	KEYS64X4(Z4, Z5, Z6, Z7)
	SCORENET8 // keys 0..3 in lanes 0..3, 4..7 in lanes 8..11
	VMULPS Z12, Z0, Z0
	VPERMPS Z0, Z15, Z0
	VMOVUPS Y0, 0(BX)
	LEAQ (DI)(R10*4), DI
	ADDQ $32, BX
	SUBQ $8, R11
	JMP x1k8
x1k1:
	TESTQ R11, R11
	JZ x1done
	KEY64(DI, Z0)
	SCORE1
	VMULPS X12, X0, X0
	VMOVSS X0, 0(BX)
	ADDQ R10, DI
	ADDQ $4, BX
	DECQ R11
	JMP x1k1
x1done:
	VZEROUPPER
	RET

// func accumF16x128x1AVX512(out *float32, w *float32, vals *byte, stride, n int)
//
// One output row's AccumF16 over a 128-column slab on AVX-512, n > 0: the
// row (Z0..Z7) stays in registers while the value rows stream past, each
// converted once and accumulated as out + w_p·v_p (VMULPS, VADDPS),
// positions in order, as accumF16x64AVX512; a one-row call there takes a
// 64-column slab per pass, so a 128-wide head read its value rows twice,
// half a row each time. Value rows 16 strides ahead are prefetched.
TEXT ·accumF16x128x1AVX512(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), AX
	MOVQ w+8(FP), BX
	MOVQ vals+16(FP), DI
	MOVQ stride+24(FP), R10
	MOVQ n+32(FP), R11
	MOVQ R10, R14
	SHLQ $4, R14              // prefetch distance: 16 value rows
	VMOVUPS 0(AX), Z0
	VMOVUPS 64(AX), Z1
	VMOVUPS 128(AX), Z2
	VMOVUPS 192(AX), Z3
	VMOVUPS 256(AX), Z4
	VMOVUPS 320(AX), Z5
	VMOVUPS 384(AX), Z6
	VMOVUPS 448(AX), Z7
a128:
	PREFETCHT0 0(DI)(R14*1)
	PREFETCHT0 64(DI)(R14*1)
	PREFETCHT0 128(DI)(R14*1)
	PREFETCHT0 192(DI)(R14*1)
	VBROADCASTSS (BX), Z24
	VCVTPH2PS 0(DI), Z16
	VCVTPH2PS 32(DI), Z17
	VCVTPH2PS 64(DI), Z18
	VCVTPH2PS 96(DI), Z19
	VCVTPH2PS 128(DI), Z20
	VCVTPH2PS 160(DI), Z21
	VCVTPH2PS 192(DI), Z22
	VCVTPH2PS 224(DI), Z23
	VMULPS Z24, Z16, Z16
	VADDPS Z16, Z0, Z0
	VMULPS Z24, Z17, Z17
	VADDPS Z17, Z1, Z1
	VMULPS Z24, Z18, Z18
	VADDPS Z18, Z2, Z2
	VMULPS Z24, Z19, Z19
	VADDPS Z19, Z3, Z3
	VMULPS Z24, Z20, Z20
	VADDPS Z20, Z4, Z4
	VMULPS Z24, Z21, Z21
	VADDPS Z21, Z5, Z5
	VMULPS Z24, Z22, Z22
	VADDPS Z22, Z6, Z6
	VMULPS Z24, Z23, Z23
	VADDPS Z23, Z7, Z7
	ADDQ R10, DI
	ADDQ $4, BX
	DECQ R11
	JNZ a128
	VMOVUPS Z0, 0(AX)
	VMOVUPS Z1, 64(AX)
	VMOVUPS Z2, 128(AX)
	VMOVUPS Z3, 192(AX)
	VMOVUPS Z4, 256(AX)
	VMOVUPS Z5, 320(AX)
	VMOVUPS Z6, 384(AX)
	VMOVUPS Z7, 448(AX)
	VZEROUPPER
	RET
