// AVX2 four-weight-row routines for the K-quants and IQ4 types (generation's
// MatVec): four weight rows against one Q8_K (or Q8_0) activation row. Each
// activation chunk is loaded once for the four rows, the per-row block
// headers (scales, mins) are decoded with vector shuffles instead of the
// one-row routines' scalar bit twiddling, and the four rows' per-super-block
// integer sums are reduced together and finished in one 4-lane float step.
//
// Bit-identity with the one-row routines (dot_amd64.s): every per-block
// integer sum is exact (no VPMADDUBSW pair can saturate for the value ranges
// of these types, and int32 addition is associative), and the float part is
// the same operations in the same order with the same operand roles, lane j
// for row j: d = fp16(d_w)·d_a (VMULPS), acc = d·float(isum) + acc
// (VFMADD231), acc = -(dmin·float(msum)) + acc (VFNMADD231).

#include "textflag.h"
#include "rows4_amd64.h"
#include "rows4k_amd64.h"

// Q4_K chunk j (64 elements) of weight row r against activations Y0 (low
// nibbles' 32) and Y1 (high nibbles' 32), scales from dec.
#define Q4KR4_ROW(j, r, dec, acc) \
	VMOVDQU (16+32*j)(r), Y2; \
	VPSRLW $4, Y2, Y3; \
	VPAND Y15, Y2, Y2; \
	VPAND Y15, Y3, Y3; \
	VPMADDUBSW Y0, Y2, Y2; \
	VPMADDUBSW Y1, Y3, Y3; \
	VPSHUFB kbcast<>+(64*j)(SB), dec, Y8; \
	VPSHUFB kbcast<>+(64*j+32)(SB), dec, Y9; \
	VPMADDWD Y8, Y2, Y2; \
	VPMADDWD Y9, Y3, Y3; \
	VPADDD Y2, acc, acc; \
	VPADDD Y3, acc, acc

#define Q4KR4_CHUNK(j) \
	VMOVDQU (4+64*j)(DI), Y0; \
	VMOVDQU (36+64*j)(DI), Y1; \
	Q4KR4_ROW(j, SI, Y11, Y4); \
	Q4KR4_ROW(j, R10, Y12, Y5); \
	Q4KR4_ROW(j, R11, Y13, Y6); \
	Q4KR4_ROW(j, R12, Y14, Y7)

// func dotRows4Q4_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q4_KQ8_KAVX2(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD c0fk<>(SB), Y15
	VXORPS X10, X10, X10
	TESTQ CX, CX
	JZ r4q4kdone
r4q4kloop:
	K4DEC(SI, Y11)
	K4DEC(R10, Y12)
	K4DEC(R11, Y13)
	K4DEC(R12, Y14)
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	Q4KR4_CHUNK(0)
	Q4KR4_CHUNK(1)
	Q4KR4_CHUNK(2)
	Q4KR4_CHUNK(3)
	K4FINISH
	ADVW4(144)
	ADDQ $292, DI
	DECQ CX
	JNZ r4q4kloop
r4q4kdone:
	VMOVUPS X10, (R9)
	VZEROUPPER
	RET

DATA c0fk<>+0(SB)/4, $0x0f0f0f0f
GLOBL c0fk<>(SB), RODATA|NOPTR, $4

// kpair: entry k (32 bytes) broadcasts int16 word 2k over the low lane and
// word 2k+1 over the high lane (a 32-element chunk whose two halves have
// their own scale; shufPair in dot_amd64.s).
DATA kpair<>+0(SB)/8, $0x0100010001000100
DATA kpair<>+8(SB)/8, $0x0100010001000100
DATA kpair<>+16(SB)/8, $0x0302030203020302
DATA kpair<>+24(SB)/8, $0x0302030203020302
DATA kpair<>+32(SB)/8, $0x0504050405040504
DATA kpair<>+40(SB)/8, $0x0504050405040504
DATA kpair<>+48(SB)/8, $0x0706070607060706
DATA kpair<>+56(SB)/8, $0x0706070607060706
DATA kpair<>+64(SB)/8, $0x0908090809080908
DATA kpair<>+72(SB)/8, $0x0908090809080908
DATA kpair<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kpair<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kpair<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kpair<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kpair<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kpair<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL kpair<>(SB), RODATA|NOPTR, $128
DATA c30k<>+0(SB)/4, $0x30303030
GLOBL c30k<>(SB), RODATA|NOPTR, $4

// acc += Σ_pairs scale · (Y2 · a[ao:ao+32]), scales from kpair entry k of
// Y9 (PAIRACC in dot_amd64.s).
#define PAIRR4(ao, k, acc) \
	VPMADDUBSW ao(DI), Y2, Y2; \
	VPSHUFB kpair<>+(32*k)(SB), Y9, Y3; \
	VPMADDWD Y3, Y2, Y2; \
	VPADDD Y2, acc, acc

// Q6_K half h (128 elements) of weight row r, as Q6K_HALF: ql at 64h, qh
// at 128+32h (in Y0, Y1, Y14), 6-bit unsigned values (the -32 through
// the bsums); Y9 = the half's eight scales as words in both lanes.
#define Q6KR4_HALF(h, r, acc) \
	VPBROADCASTQ (192+8*h)(r), X9; \
	VPMOVSXBW X9, Y9; \
	VMOVDQU (64*h)(r), Y0; \
	VMOVDQU (64*h+32)(r), Y1; \
	VMOVDQU (128+32*h)(r), Y14; \
	VPAND Y15, Y0, Y2; \
	VPSLLW $4, Y14, Y3; \
	VPAND Y13, Y3, Y3; \
	VPOR Y3, Y2, Y2; \
	PAIRR4(4+128*h, 0, acc); \
	VPAND Y15, Y1, Y2; \
	VPSLLW $2, Y14, Y3; \
	VPAND Y13, Y3, Y3; \
	VPOR Y3, Y2, Y2; \
	PAIRR4(36+128*h, 1, acc); \
	VPSRLW $4, Y0, Y2; \
	VPAND Y15, Y2, Y2; \
	VPAND Y13, Y14, Y3; \
	VPOR Y3, Y2, Y2; \
	PAIRR4(68+128*h, 2, acc); \
	VPSRLW $4, Y1, Y2; \
	VPAND Y15, Y2, Y2; \
	VPSRLW $2, Y14, Y3; \
	VPAND Y13, Y3, Y3; \
	VPOR Y3, Y2, Y2; \
	PAIRR4(100+128*h, 3, acc)

// acc = -32·Σ scale_k·bsum_k for weight row r (the Q6_K offset).
#define Q6KR4_INIT(r, acc) \
	VPMOVSXBW 192(r), Y2; \
	VPMADDWD 260(DI), Y2, Y2; \
	VPSLLD $5, Y2, Y2; \
	VPXOR acc, acc, acc; \
	VPSUBD Y2, acc, acc

// func dotRows4Q6_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q6_KQ8_KAVX2(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD c0fk<>(SB), Y15
	VPBROADCASTD c30k<>(SB), Y13
	VXORPS X10, X10, X10
	TESTQ CX, CX
	JZ r4q6kdone
r4q6kloop:
	Q6KR4_INIT(SI, Y4)
	Q6KR4_INIT(R10, Y5)
	Q6KR4_INIT(R11, Y6)
	Q6KR4_INIT(R12, Y7)
	Q6KR4_HALF(0, SI, Y4)
	Q6KR4_HALF(0, R10, Y5)
	Q6KR4_HALF(0, R11, Y6)
	Q6KR4_HALF(0, R12, Y7)
	Q6KR4_HALF(1, SI, Y4)
	Q6KR4_HALF(1, R10, Y5)
	Q6KR4_HALF(1, R11, Y6)
	Q6KR4_HALF(1, R12, Y7)
	KFIN4_D(208, Y4, Y5, Y6, Y7, X4)
	ADVW4(210)
	ADDQ $292, DI
	DECQ CX
	JNZ r4q6kloop
r4q6kdone:
	VMOVUPS X10, (R9)
	VZEROUPPER
	RET

// One 64-element chunk j of Q5_K weight row r (Q5K_CHUNK): the high bit of
// sub-block 2j is bit 2j of qh (at 16), moved to bit 4 by lop $lc, and
// likewise for 2j+1 with hop $hc; activations in Y0/Y1, scales from dec.
#define Q5KR4_ROW(j, r, dec, acc, lop, lc, hop, hc) \
	VMOVDQU (48+32*j)(r), Y2; \
	VPSRLW $4, Y2, Y3; \
	VPAND Y15, Y2, Y2; \
	VPAND Y15, Y3, Y3; \
	VMOVDQU 16(r), Y9; \
	lop $lc, Y9, Y8; \
	VPAND c10k32<>(SB), Y8, Y8; \
	VPOR Y8, Y2, Y2; \
	hop $hc, Y9, Y9; \
	VPAND c10k32<>(SB), Y9, Y9; \
	VPOR Y9, Y3, Y3; \
	VPMADDUBSW Y0, Y2, Y2; \
	VPMADDUBSW Y1, Y3, Y3; \
	VPSHUFB kbcast<>+(64*j)(SB), dec, Y8; \
	VPSHUFB kbcast<>+(64*j+32)(SB), dec, Y9; \
	VPMADDWD Y8, Y2, Y2; \
	VPMADDWD Y9, Y3, Y3; \
	VPADDD Y2, acc, acc; \
	VPADDD Y3, acc, acc

#define Q5KR4_CHUNK(j, lop, lc, hop, hc) \
	VMOVDQU (4+64*j)(DI), Y0; \
	VMOVDQU (36+64*j)(DI), Y1; \
	Q5KR4_ROW(j, SI, Y11, Y4, lop, lc, hop, hc); \
	Q5KR4_ROW(j, R10, Y12, Y5, lop, lc, hop, hc); \
	Q5KR4_ROW(j, R11, Y13, Y6, lop, lc, hop, hc); \
	Q5KR4_ROW(j, R12, Y14, Y7, lop, lc, hop, hc)

DATA c10k32<>+0(SB)/8, $0x1010101010101010
DATA c10k32<>+8(SB)/8, $0x1010101010101010
DATA c10k32<>+16(SB)/8, $0x1010101010101010
DATA c10k32<>+24(SB)/8, $0x1010101010101010
GLOBL c10k32<>(SB), RODATA|NOPTR, $32

// func dotRows4Q5_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q5_KQ8_KAVX2(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD c0fk<>(SB), Y15
	VXORPS X10, X10, X10
	TESTQ CX, CX
	JZ r4q5kdone
r4q5kloop:
	K4DEC(SI, Y11)
	K4DEC(R10, Y12)
	K4DEC(R11, Y13)
	K4DEC(R12, Y14)
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	Q5KR4_CHUNK(0, VPSLLW, 4, VPSLLW, 3)
	Q5KR4_CHUNK(1, VPSLLW, 2, VPSLLW, 1)
	Q5KR4_CHUNK(2, VPSRLW, 0, VPSRLW, 1)
	Q5KR4_CHUNK(3, VPSRLW, 2, VPSRLW, 3)
	K4FINISH
	ADVW4(176)
	ADDQ $292, DI
	DECQ CX
	JNZ r4q5kloop
r4q5kdone:
	VMOVUPS X10, (R9)
	VZEROUPPER
	RET

// ---- IQ4_XS: two sub-blocks (64 elements) per step. The 32 index bytes of
// sub-blocks ib, ib+1 load as one YMM, so low nibbles are [ib 0..15 |
// ib+1 0..15] and high nibbles [ib 16..31 | ib+1 16..31]; the activations
// are rearranged to match once for the four rows (Y0/Y1 signed, Y12/Y14
// absolute). Products and pair sums are IQ4_PAIRS' (|a| times the value
// with a's sign), so every int16 pair is exact; the kpair entry gives the
// low lane sub-block ib's multiplier and the high lane ib+1's.

DATA iq4kvk<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA iq4kvk<>+8(SB)/8, $0x7159453526190d01
GLOBL iq4kvk<>(SB), RODATA|NOPTR, $16
DATA iq4shlk<>+0(SB)/8, $0x0000000400000000
DATA iq4shlk<>+8(SB)/8, $0x0000000c00000008
DATA iq4shlk<>+16(SB)/8, $0x0000001400000010
DATA iq4shlk<>+24(SB)/8, $0x0000001c00000018
GLOBL iq4shlk<>(SB), RODATA|NOPTR, $32
DATA iq4shhk<>+0(SB)/8, $0x0000000200000000
DATA iq4shhk<>+8(SB)/8, $0x0000000600000004
DATA iq4shhk<>+16(SB)/8, $0x0000000a00000008
DATA iq4shhk<>+24(SB)/8, $0x0000000e0000000c
GLOBL iq4shhk<>(SB), RODATA|NOPTR, $32
DATA cd0fk<>+0(SB)/4, $0x0000000f
GLOBL cd0fk<>(SB), RODATA|NOPTR, $4
DATA cd30k<>+0(SB)/4, $0x00000030
GLOBL cd30k<>(SB), RODATA|NOPTR, $4
DATA cd20k<>+0(SB)/4, $0x00000020
GLOBL cd20k<>(SB), RODATA|NOPTR, $4

// m = row r's eight multipliers (code-32) as words [m0..m7] in both lanes
// (IQ4XS_SCALES). Clobbers Y2, Y3, Y8.
#define IQ4XSR4_SCALES(r, m) \
	VPBROADCASTD 4(r), m; \
	VPSRLVD iq4shlk<>(SB), m, m; \
	VPBROADCASTD cd0fk<>(SB), Y8; \
	VPAND Y8, m, m; \
	VPBROADCASTD 2(r), Y2; \
	VPSRLVD iq4shhk<>(SB), Y2, Y2; \
	VPSLLD $4, Y2, Y2; \
	VPBROADCASTD cd30k<>(SB), Y8; \
	VPAND Y8, Y2, Y2; \
	VPOR Y2, m, m; \
	VPBROADCASTD cd20k<>(SB), Y8; \
	VPSUBD Y8, m, m; \
	VPACKSSDW m, m, m; \
	VPERMQ $0x88, m, m

// Sub-blocks 2p, 2p+1 of weight row r with multipliers m.
#define IQ4XSR4_ROW(p, r, m, acc) \
	VMOVDQU (8+32*p)(r), Y2; \
	VPSRLW $4, Y2, Y3; \
	VPAND c0fk32<>(SB), Y2, Y2; \
	VPAND c0fk32<>(SB), Y3, Y3; \
	VPSHUFB Y2, Y13, Y2; \
	VPSHUFB Y3, Y13, Y3; \
	VPSIGNB Y0, Y2, Y2; \
	VPSIGNB Y1, Y3, Y3; \
	VPMADDUBSW Y2, Y12, Y2; \
	VPMADDUBSW Y3, Y14, Y3; \
	VPSHUFB kpair<>+(32*p)(SB), m, Y8; \
	VPMADDWD Y8, Y2, Y2; \
	VPMADDWD Y8, Y3, Y3; \
	VPADDD Y2, acc, acc; \
	VPADDD Y3, acc, acc

#define IQ4XSR4_PAIR(p) \
	VMOVDQU (4+64*p)(DI), X0; \
	VINSERTI128 $1, (36+64*p)(DI), Y0, Y0; \
	VMOVDQU (20+64*p)(DI), X1; \
	VINSERTI128 $1, (52+64*p)(DI), Y1, Y1; \
	VPABSB Y0, Y12; \
	VPABSB Y1, Y14; \
	IQ4XSR4_ROW(p, SI, Y9, Y4); \
	IQ4XSR4_ROW(p, R10, Y10, Y5); \
	IQ4XSR4_ROW(p, R11, Y11, Y6); \
	IQ4XSR4_ROW(p, R12, Y15, Y7)

// func dotRows4IQ4_XSQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ4_XSQ8_KAVX2(SB), NOSPLIT, $0-40
	ARGSR4
	VBROADCASTI128 iq4kvk<>(SB), Y13
	VXORPS X10, X10, X10
	VMOVUPS X10, (R9)
	TESTQ CX, CX
	JZ r4iq4xsdone
r4iq4xsloop:
	IQ4XSR4_SCALES(SI, Y9)
	IQ4XSR4_SCALES(R10, Y10)
	IQ4XSR4_SCALES(R11, Y11)
	IQ4XSR4_SCALES(R12, Y15)
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	IQ4XSR4_PAIR(0)
	IQ4XSR4_PAIR(1)
	IQ4XSR4_PAIR(2)
	IQ4XSR4_PAIR(3)
	VMOVUPS (R9), X10
	KFIN4_D(0, Y4, Y5, Y6, Y7, X4)
	VMOVUPS X10, (R9)
	ADVW4(136)
	ADDQ $292, DI
	DECQ CX
	JNZ r4iq4xsloop
r4iq4xsdone:
	VZEROUPPER
	RET

// ---- IQ4_NL against Q8_0: one 32-element block per step as the one-row
// routine does (even blocks into Y8..Y11, odd into Y12..Y15 for rows
// 0..3, added and summed at the end as there), the activation block and
// its absolute value loaded once for the four rows.

// Horizontal sum of the 8 floats of y into lane 0 of x (HSUMPS).
#define HSUMPSK(y, x, t) \
	VEXTRACTF128 $1, y, t; \
	VADDPS t, x, x; \
	VPERMILPS $0x4E, x, t; \
	VADDPS t, x, x; \
	VMOVSHDUP x, t; \
	VADDSS t, x, x


// Weight row r's block as IQ4_NL_BLK computes it: Y3 = activations, Y5 =
// their absolute values, Y6 = 1 words, Y7 = the codebook. The 16 index
// bytes are broadcast to both lanes and the high lane shifted right by 4
// (ksrl04), giving IQ4_VALUES' [low nibbles | high nibbles] without the
// lane insert.
#define IQNLR4_ROW(wo, r, sel, acc) \
	VPERMILPS sel, X1, X0; \
	VBROADCASTSS X0, Y0; \
	VBROADCASTI128 wo+2(r), Y2; \
	VPSRLVD ksrl04<>(SB), Y2, Y2; \
	VPAND c0fk32<>(SB), Y2, Y2; \
	VPSHUFB Y2, Y7, Y2; \
	VPSIGNB Y3, Y2, Y2; \
	VPMADDUBSW Y2, Y5, Y4; \
	VPMADDWD Y6, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	VFMADD231PS Y4, Y0, acc

#define IQNLR4_BLK(wo, ao, a0, a1, a2, a3) \
	SCALESR4X(wo, ao); \
	VMOVDQU ao+2(DI), Y3; \
	VPABSB Y3, Y5; \
	IQNLR4_ROW(wo, SI, $0x00, a0); \
	IQNLR4_ROW(wo, R10, $0x01, a1); \
	IQNLR4_ROW(wo, R11, $0x02, a2); \
	IQNLR4_ROW(wo, R12, $0x03, a3)

// Row end as in the one-row routine: even + odd, horizontal sum, store.
#define FINK(e, o, off) \
	VADDPS o, e, Y0; \
	HSUMPSK(Y0, X0, X1); \
	MOVSS X0, off(R9)

// ksrl04: VPSRLVD counts 0 for the low lane's dwords, 4 for the high's.
DATA ksrl04<>+0(SB)/8, $0
DATA ksrl04<>+8(SB)/8, $0
DATA ksrl04<>+16(SB)/8, $0x0000000400000004
DATA ksrl04<>+24(SB)/8, $0x0000000400000004
GLOBL ksrl04<>(SB), RODATA|NOPTR, $32

DATA cw1k<>+0(SB)/4, $0x00010001
GLOBL cw1k<>(SB), RODATA|NOPTR, $4

// func dotRows4IQ4_NLQ8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ4_NLQ8_0AVX2(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD cw1k<>(SB), Y6
	VBROADCASTI128 iq4kvk<>(SB), Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
r4iqnlloop:
	CMPQ CX, $2
	JLT r4iqnltail
	IQNLR4_BLK(0, 0, Y8, Y9, Y10, Y11)
	IQNLR4_BLK(18, 34, Y12, Y13, Y14, Y15)
	ADVW4(36)
	ADDQ $68, DI
	SUBQ $2, CX
	JMP r4iqnlloop
r4iqnltail:
	TESTQ CX, CX
	JZ r4iqnldone
	IQNLR4_BLK(0, 0, Y8, Y9, Y10, Y11)
r4iqnldone:
	FINK(Y8, Y12, 0)
	FINK(Y9, Y13, 4)
	FINK(Y10, Y14, 8)
	FINK(Y11, Y15, 12)
	VZEROUPPER
	RET

// ---- Q2_K and Q3_K: row by row within a super-block as the one-row
// routines compute it (PAIRR4 with the activations from memory), the four
// rows' sums reduced and finished together.

// Q2_K row r: mins (high nibbles of the 16 scale bytes) times the bsum
// pairs as 8 int32 in m; acc = Σ_pairs scale·(q·a) over the 256 values
// (Q2K_HALF ×2 with the low nibbles as scales). Y15 = 0x03 bytes.
#define Q2KR4_ROW(r, acc, m) \
	Q2KR4_HDR(r, m, Y1); \
	VPXOR acc, acc, acc; \
	VPERMQ $0x44, Y1, Y9; \
	VMOVDQU 16(r), Y0; \
	VPAND Y15, Y0, Y2; \
	PAIRR4(4, 0, acc); \
	VPSRLW $2, Y0, Y2; \
	VPAND Y15, Y2, Y2; \
	PAIRR4(36, 1, acc); \
	VPSRLW $4, Y0, Y2; \
	VPAND Y15, Y2, Y2; \
	PAIRR4(68, 2, acc); \
	VPSRLW $6, Y0, Y2; \
	VPAND Y15, Y2, Y2; \
	PAIRR4(100, 3, acc); \
	VPERMQ $0xEE, Y1, Y9; \
	VMOVDQU 48(r), Y0; \
	VPAND Y15, Y0, Y2; \
	PAIRR4(132, 0, acc); \
	VPSRLW $2, Y0, Y2; \
	VPAND Y15, Y2, Y2; \
	PAIRR4(164, 1, acc); \
	VPSRLW $4, Y0, Y2; \
	VPAND Y15, Y2, Y2; \
	PAIRR4(196, 2, acc); \
	VPSRLW $6, Y0, Y2; \
	VPAND Y15, Y2, Y2; \
	PAIRR4(228, 3, acc)

// func dotRows4Q2_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q2_KQ8_KAVX2(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD c03k<>(SB), Y15
	VXORPS X10, X10, X10
	TESTQ CX, CX
	JZ r4q2kdone
r4q2kloop:
	Q2KR4_ROW(SI, Y4, Y11)
	Q2KR4_ROW(R10, Y5, Y12)
	Q2KR4_ROW(R11, Y6, Y13)
	Q2KR4_ROW(R12, Y7, Y14)
	RED4(Y4, Y5, Y6, Y7)
	RED4(Y11, Y12, Y13, Y14)
	RED8F(Y4, Y11)
	VMOVDQU kdeint<>(SB), Y9
	KDMIN4(80)
	KFIN4_MIN
	ADVW4(84)
	ADDQ $292, DI
	DECQ CX
	JNZ r4q2kloop
r4q2kdone:
	VMOVUPS X10, (R9)
	VZEROUPPER
	RET

DATA c03k<>+0(SB)/4, $0x03030303
GLOBL c03k<>(SB), RODATA|NOPTR, $4
DATA c04k<>+0(SB)/4, $0x04040404
GLOBL c04k<>(SB), RODATA|NOPTR, $4

// One 32-element chunk of Q3_K (Q3K_CHUNK): 2 low bits at shift qs of Y0,
// hmask (Y11) bit moved to bit 2 by hop $hc; Y13 = 0x03, Y15 = 0x04.
#define Q3KR4_CHUNK(qs, hop, hc, ao, k, acc) \
	VPSRLW $qs, Y0, Y2; \
	VPAND Y13, Y2, Y2; \
	hop $hc, Y11, Y8; \
	VPAND Y15, Y8, Y8; \
	VPOR Y8, Y2, Y2; \
	PAIRR4(ao, k, acc)

#define Q3KR4_ROW(r, acc) \
	Q3KR4_INIT(r, Y1, acc); \
	VMOVDQU 0(r), Y11; \
	VPERMQ $0x44, Y1, Y9; \
	VMOVDQU 32(r), Y0; \
	Q3KR4_CHUNK(0, VPSLLW, 2, 4, 0, acc); \
	Q3KR4_CHUNK(2, VPSLLW, 1, 36, 1, acc); \
	Q3KR4_CHUNK(4, VPSRLW, 0, 68, 2, acc); \
	Q3KR4_CHUNK(6, VPSRLW, 1, 100, 3, acc); \
	VPERMQ $0xEE, Y1, Y9; \
	VMOVDQU 64(r), Y0; \
	Q3KR4_CHUNK(0, VPSRLW, 2, 132, 0, acc); \
	Q3KR4_CHUNK(2, VPSRLW, 3, 164, 1, acc); \
	Q3KR4_CHUNK(4, VPSRLW, 4, 196, 2, acc); \
	Q3KR4_CHUNK(6, VPSRLW, 5, 228, 3, acc)

// func dotRows4Q3_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q3_KQ8_KAVX2(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD c04k<>(SB), Y15
	VPBROADCASTD c03k<>(SB), Y13
	VXORPS X10, X10, X10
	TESTQ CX, CX
	JZ r4q3kdone
r4q3kloop:
	Q3KR4_ROW(SI, Y4)
	Q3KR4_ROW(R10, Y5)
	Q3KR4_ROW(R11, Y6)
	Q3KR4_ROW(R12, Y7)
	KFIN4_D(108, Y4, Y5, Y6, Y7, X4)
	ADVW4(110)
	ADDQ $292, DI
	DECQ CX
	JNZ r4q3kloop
r4q3kdone:
	VMOVUPS X10, (R9)
	VZEROUPPER
	RET


