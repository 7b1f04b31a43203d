#include "textflag.h"
#include "scores512_amd64.h"

// AVX-512 score routines for any head size that is a multiple of 16 (the
// hd-64 ones, here and in ops_amd64.s, keep their query in registers;
// these load each 16-element query chunk once per key pair or key group).
// Per dot: a product of chunk 0 and FMAs of chunks 1..hd/16-1 over 16
// lanes, then the tree of scores512_amd64.h, × scale; so the four-row and
// one-row routines give a row bit-identical scores. The one-row routines
// replace padding a row to four copies (scores1_amd64.s says why). Also
// the one-row 128-column value accumulation.

// Index for the one-row routines' SCORENET8 output: keys 0..3 (lanes
// 0..3) and 4..7 (lanes 8..11) gathered into the low 256 bits.
DATA score8Idx<>+0(SB)/4, $0
DATA score8Idx<>+4(SB)/4, $1
DATA score8Idx<>+8(SB)/4, $2
DATA score8Idx<>+12(SB)/4, $3
DATA score8Idx<>+16(SB)/4, $8
DATA score8Idx<>+20(SB)/4, $9
DATA score8Idx<>+24(SB)/4, $10
DATA score8Idx<>+28(SB)/4, $11
DATA score8Idx<>+32(SB)/4, $0
DATA score8Idx<>+36(SB)/4, $0
DATA score8Idx<>+40(SB)/4, $0
DATA score8Idx<>+44(SB)/4, $0
DATA score8Idx<>+48(SB)/4, $0
DATA score8Idx<>+52(SB)/4, $0
DATA score8Idx<>+56(SB)/4, $0
DATA score8Idx<>+60(SB)/4, $0
GLOBL score8Idx<>(SB), RODATA|NOPTR, $64

// One 16-element chunk at element offset R8 of the four query rows (SI,
// AX, BX, R9) against the two keys' converted chunks in Z8, Z9: op is
// VMULPS for chunk 0 (then R8 is 0) and VFMADD231PS after.
#define CHUNK4X2(op) \
	VMOVUPS 0(SI)(R8*4), Z10; \
	op Z10, Z8, Z0; \
	op Z10, Z9, Z4; \
	VMOVUPS 0(AX)(R8*4), Z10; \
	op Z10, Z8, Z1; \
	op Z10, Z9, Z5; \
	VMOVUPS 0(BX)(R8*4), Z10; \
	op Z10, Z8, Z2; \
	op Z10, Z9, Z6; \
	VMOVUPS 0(R9)(R8*4), Z10; \
	op Z10, Z8, Z3; \
	op Z10, Z9, Z7

// Prefetches the first four lines (all of a 128-wide head) of the key 16
// strides (R14) past r; for narrower heads the extra lines are later keys'.
// With two lines, as the hd-64 routines take, a 128-wide head streamed at
// three quarters of the speed from DRAM.
#define PFKEY(r) \
	PREFETCHT0 0(r)(R14*1); \
	PREFETCHT0 64(r)(R14*1); \
	PREFETCHT0 128(r)(R14*1); \
	PREFETCHT0 192(r)(R14*1)

#define PF4(r0, r1, r2, r3) \
	PFKEY(r0); \
	PFKEY(r1); \
	PFKEY(r2); \
	PFKEY(r3)

// func scoresF16x4AVX512(q *float32, hd int, keys *byte, stride, n int, scale float32, out *float32, ws int)
//
// Four query rows (hd a positive multiple of 16, rows hd apart) against
// n > 0 keys, two keys at a time (key 0 in Z0..Z3, key 1 in Z4..Z7, each
// query chunk loaded once for both), reduced jointly by SCORENET8; an odd
// last key takes SCORE4. Output rows ws floats apart. Keys 16 strides
// ahead are prefetched (PFKEY).
TEXT ·scoresF16x4AVX512(SB), NOSPLIT, $0-64
	MOVQ q+0(FP), SI
	MOVQ hd+8(FP), R9
	SHLQ $2, R9
	LEAQ (SI)(R9*1), AX
	LEAQ (AX)(R9*1), BX
	ADDQ BX, R9
	MOVQ keys+16(FP), DI
	MOVQ stride+24(FP), R10
	MOVQ n+32(FP), R11
	VBROADCASTSS scale+40(FP), Z12
	MOVQ out+48(FP), DX
	MOVQ ws+56(FP), R12
	SHLQ $2, R12
	LEAQ (R12)(R12*2), R13
	MOVQ R10, R14
	SHLQ $4, R14              // prefetch distance: 16 key rows
	VMOVUPS scorePairIdx<>(SB), Z15
g4pair:
	CMPQ R11, $2
	JLT g4one
	LEAQ (DI)(R10*1), CX
	PFKEY(DI)
	PFKEY(CX)
	XORQ R8, R8
	VCVTPH2PS 0(DI), Z8
	VCVTPH2PS 0(CX), Z9
	CHUNK4X2(VMULPS)
	MOVQ $16, R8
g4chunk:
	CMPQ R8, hd+8(FP)
	JGE g4red
	VCVTPH2PS 0(DI)(R8*2), Z8
	VCVTPH2PS 0(CX)(R8*2), Z9
	CHUNK4X2(VFMADD231PS)
	ADDQ $16, R8
	JMP g4chunk
g4red:
	SCORENET8
	VMULPS Z12, Z0, Z0
	VPERMPS Z0, Z15, Z0
	VMOVLPS X0, 0(DX)
	VMOVHPS X0, 0(DX)(R12*1)
	VEXTRACTF128 $1, Y0, X1
	VMOVLPS X1, 0(DX)(R12*2)
	VMOVHPS X1, 0(DX)(R13*1)
	LEAQ (DI)(R10*2), DI
	ADDQ $8, DX
	SUBQ $2, R11
	JMP g4pair
g4one:
	TESTQ R11, R11
	JZ g4done
	XORQ R8, R8
	VCVTPH2PS 0(DI), Z8
	VMOVAPS Z8, Z9
	CHUNK4X2(VMULPS)
	MOVQ $16, R8
g4onechunk:
	CMPQ R8, hd+8(FP)
	JGE g4onered
	VCVTPH2PS 0(DI)(R8*2), Z8
	VMOVAPS Z8, Z9
	CHUNK4X2(VFMADD231PS)
	ADDQ $16, R8
	JMP g4onechunk
g4onered:
	SCORE4
	VMULPS X12, X0, X0
	VMOVSS X0, 0(DX)
	VEXTRACTPS $1, X0, 0(DX)(R12*1)
	VEXTRACTPS $2, X0, 0(DX)(R12*2)
	VEXTRACTPS $3, X0, 0(DX)(R13*1)
g4done:
	VZEROUPPER
	RET

// Key k's dot with the query row at SI into acc, over hd (R12) elements:
// chunk 0 multiplied, then FMAs (R8 is left at hd). r is the key's row.
#define KEYN(r, acc, lbl, done) \
	VCVTPH2PS 0(r), Z8; \
	VMULPS 0(SI), Z8, acc; \
	MOVQ $16, R8; \
lbl: \
	CMPQ R8, R12; \
	JGE done; \
	VCVTPH2PS 0(r)(R8*2), Z8; \
	VFMADD231PS 0(SI)(R8*4), Z8, acc; \
	ADDQ $16, R8; \
	JMP lbl; \
done:

// Four keys at r0..r3 into Z(a)..Z(a+3) with each query chunk loaded once:
// chunk 0 multiplied, then FMAs.
#define KEYS4(r0, r1, r2, r3, z0, z1, z2, z3, lbl, done) \
	VMOVUPS 0(SI), Z16; \
	VCVTPH2PS 0(r0), Z8; \
	VCVTPH2PS 0(r1), Z9; \
	VCVTPH2PS 0(r2), Z10; \
	VCVTPH2PS 0(r3), Z11; \
	VMULPS Z16, Z8, z0; \
	VMULPS Z16, Z9, z1; \
	VMULPS Z16, Z10, z2; \
	VMULPS Z16, Z11, z3; \
	MOVQ $16, R8; \
lbl: \
	CMPQ R8, R12; \
	JGE done; \
	VMOVUPS 0(SI)(R8*4), Z16; \
	VCVTPH2PS 0(r0)(R8*2), Z8; \
	VCVTPH2PS 0(r1)(R8*2), Z9; \
	VCVTPH2PS 0(r2)(R8*2), Z10; \
	VCVTPH2PS 0(r3)(R8*2), Z11; \
	VFMADD231PS Z16, Z8, z0; \
	VFMADD231PS Z16, Z9, z1; \
	VFMADD231PS Z16, Z10, z2; \
	VFMADD231PS Z16, Z11, z3; \
	ADDQ $16, R8; \
	JMP lbl; \
done:


// func scoresF16x1AVX512(q *float32, hd int, keys *byte, stride, n int, scale float32, out *float32)
//
// One query row (hd a positive multiple of 16) against n > 0 keys, eight
// at a time (keys 0..3 into Z0..Z3, then 4..7 into Z4..Z7), reduced by
// SCORENET8 and stored together; leftover keys one at a time by SCORE1.
TEXT ·scoresF16x1AVX512(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ hd+8(FP), R12
	MOVQ keys+16(FP), DI
	MOVQ stride+24(FP), R10
	MOVQ n+32(FP), R11
	VBROADCASTSS scale+40(FP), Z12
	MOVQ out+48(FP), BX
	LEAQ (R10)(R10*2), R13    // three strides
	MOVQ R10, R14
	SHLQ $4, R14              // prefetch distance: 16 key rows
	VMOVUPS score8Idx<>(SB), Z15
n1k8:
	CMPQ R11, $8
	JLT n1k1
	LEAQ (DI)(R10*1), AX
	LEAQ (DI)(R10*2), DX
	LEAQ (DI)(R13*1), R9
	PF4(DI, AX, DX, R9)
	KEYS4(DI, AX, DX, R9, Z0, Z1, Z2, Z3, n1a, n1adone)
	LEAQ (DI)(R10*4), DI
	LEAQ (DI)(R10*1), AX
	LEAQ (DI)(R10*2), DX
	LEAQ (DI)(R13*1), R9
	PF4(DI, AX, DX, R9)
	KEYS4(DI, AX, DX, R9, Z4, Z5, Z6, Z7, n1b, n1bdone)
	SCORENET8 // keys 0..3 in lanes 0..3, 4..7 in lanes 8..11
	VMULPS Z12, Z0, Z0
	VPERMPS Z0, Z15, Z0
	VMOVUPS Y0, 0(BX)
	LEAQ (DI)(R10*4), DI
	ADDQ $32, BX
	SUBQ $8, R11
	JMP n1k8
n1k1:
	TESTQ R11, R11
	JZ n1done
	KEYN(DI, Z0, n1c, n1cdone)
	SCORE1
	VMULPS X12, X0, X0
	VMOVSS X0, 0(BX)
	ADDQ R10, DI
	ADDQ $4, BX
	DECQ R11
	JMP n1k1
n1done:
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
