// AVX2 Q4_0·Q8_0 routines in the half-block float order (dot, four-
// activation-row dot4, four-weight-row rows4; wired in arch_amd64.go's
// avx2Rows). Each 32-element block is summed exactly as two int32 halves,
// S_lo = Σ(q-8)·a over elements 0..15 and S_hi over 16..31, and the float
// part is, for every row, four sequential FMA chains (block parity × half):
//
//	acc[b&1][h] = float(S_h(b))·(fp16(d_w(b))·fp16(d_a(b))) + acc[b&1][h]
//	result = (acc[0][lo] + acc[1][lo]) + (acc[0][hi] + acc[1][hi])
//
// The four-row routines keep one row per lane (rows in lanes 0..3 for the
// low halves and 4..7 for the high halves), so one VCVTDQ2PS and one FMA
// finish a block for four rows, where the previous order (one 8-lane
// convert and FMA per row and block) needed four of each. The four rows'
// int16 pair sums (VPMADDUBSW of the unsigned nibbles against the signed
// activations, minus VPMADDUBSW(8, a)) are folded into that layout by
// HTREE (every intermediate int16 holds at most 8 products, |sum| ≤
// 8·8·128 = 8192: no saturation or wrap). The one-row routines form the same
// integers and run the same chains, so all three are bit-identical.

#include "textflag.h"
#include "rows4_amd64.h"

DATA h08<>+0(SB)/4, $0x08080808
GLOBL h08<>(SB), RODATA|NOPTR, $4
DATA h0f<>+0(SB)/4, $0x0f0f0f0f
GLOBL h0f<>(SB), RODATA|NOPTR, $4
DATA hw1<>+0(SB)/4, $0x00010001
GLOBL hw1<>(SB), RODATA|NOPTR, $4

// hsrl: VPSRLVD counts 0 for the low lane's dwords, 4 for the high's.
DATA hsrl<>+0(SB)/8, $0
DATA hsrl<>+8(SB)/8, $0
DATA hsrl<>+16(SB)/8, $0x0000000400000004
DATA hsrl<>+24(SB)/8, $0x0000000400000004
GLOBL hsrl<>(SB), RODATA|NOPTR, $32

// hspread: VPERMPS indices spreading lanes 0 and 1 over four lanes each.
DATA hspread<>+0(SB)/8, $0
DATA hspread<>+8(SB)/8, $0
DATA hspread<>+16(SB)/8, $0x0000000100000001
DATA hspread<>+24(SB)/8, $0x0000000100000001
GLOBL hspread<>(SB), RODATA|NOPTR, $32

// Constant registers: Y6 = 1 words, Y7 = 8 bytes, Y14 = hsrl, Y15 = 0x0f bytes.
#define HCONST \
	VPBROADCASTD hw1<>(SB), Y6; \
	VPBROADCASTD h08<>(SB), Y7; \
	VMOVDQU hsrl<>(SB), Y14; \
	VPBROADCASTD h0f<>(SB), Y15

// dst = the 32 unsigned nibbles at off(r) as bytes, elements 0..15 in the
// low lane and 16..31 in the high lane.
#define HNIB(off, r, dst) \
	VBROADCASTI128 off(r), dst; \
	VPSRLVD Y14, dst, dst; \
	VPAND Y15, dst, dst

// p = (q-8)·a pair sums as int16 for unsigned nibbles q (register) and
// activations ya; yc = VPMADDUBSW(8, a).
#define HPROD(q, ya, yc, p) \
	VPMADDUBSW ya, q, p; \
	VPSUBW yc, p, p

// p0 = [S_lo(p0), S_lo(p1), S_lo(p2), S_lo(p3) | S_hi(p0), …, S_hi(p3)] as
// int32 from four int16 pair-sum vectors (p1, p2, p3 clobbered): VPMADDWD
// and VPACKSSDW for the first level (no saturation: 4 products, |sum| ≤
// 4096), one VPHADDW for the second (a VPHADDW first level was 4% slower
// from DRAM on Zen 5, a VPMADDWD/VPACKSSDW second level no faster).
#define HTREE(p0, p1, p2, p3) \
	VPMADDWD Y6, p0, p0; \
	VPMADDWD Y6, p1, p1; \
	VPMADDWD Y6, p2, p2; \
	VPMADDWD Y6, p3, p3; \
	VPACKSSDW p1, p0, p0; \
	VPACKSSDW p3, p2, p2; \
	VPHADDW p2, p0, p0; \
	VPMADDWD Y6, p0, p0

// SCALESR4X (rows4_amd64.h: X1 = [d_w(row j)·d_a] for j = 0..3, weight scales
// at wo of SI, R10, R11, R12, activation scale at ao(DI)), copied into the
// high lane of Y1.
#define HSCALESR4(wo, ao) \
	SCALESR4X(wo, ao); \
	VINSERTF128 $1, X1, Y1, Y1

// One block of four weight rows (quants at wo+2 of SI, R10, R11, R12)
// against the activation block at ao(DI), into acc.
#define HBLKR4(wo, ao, acc) \
	HSCALESR4(wo, ao); \
	HBLKR4S(wo, ao, Y1, acc)

// Y1 = [d_w(row j, block e)·d_a(e) | d_w(row j, block o)·d_a(o)], j = 0..3,
// for a block pair (e at wo of SI, R10, R11, R12, o 18 bytes on; their
// activation blocks at ao and ao+34 of DI): one VCVTPH2PS for the eight
// weight scales and the two activation scales spread by VPERMPS (Y4 =
// hspread), where HSCALESR4 converts, broadcasts and duplicates per block.
// The products are HSCALESR4's, bit for bit. Clobbers AX, BX, DX, X0.
#define HSCALES8R4(wo, ao) \
	HQUAD(wo(SI), wo(R10), wo(R11), wo(R12)); \
	VMOVQ AX, X1; \
	HQUAD(wo+18(SI), wo+18(R10), wo+18(R11), wo+18(R12)); \
	VPINSRQ $1, AX, X1, X1; \
	HPAIR(ao(DI), ao+34(DI), AX); \
	VMOVD AX, X0; \
	VCVTPH2PS X0, X0; \
	VPERMPS Y0, Y4, Y0; \
	VCVTPH2PS X1, Y1; \
	VMULPS Y0, Y1, Y1

// HBLKR4 with the block's scale products given in both lanes of sc.
#define HBLKR4S(wo, ao, sc, acc) \
	VMOVDQU ao+2(DI), Y3; \
	VPMADDUBSW Y3, Y7, Y5; \
	HNIB(wo+2, SI, Y8); \
	HNIB(wo+2, R10, Y9); \
	HNIB(wo+2, R11, Y10); \
	HNIB(wo+2, R12, Y11); \
	HPROD(Y8, Y3, Y5, Y8); \
	HPROD(Y9, Y3, Y5, Y9); \
	HPROD(Y10, Y3, Y5, Y10); \
	HPROD(Y11, Y3, Y5, Y11); \
	HTREE(Y8, Y9, Y10, Y11); \
	VCVTDQ2PS Y8, Y8; \
	VFMADD231PS Y8, sc, acc

// Y12 + Y13, low lane + high lane: the four results, stored at (R9).
#define HFIN4 \
	VADDPS Y13, Y12, Y12; \
	VEXTRACTF128 $1, Y12, X0; \
	VADDPS X0, X12, X12; \
	VMOVUPS X12, (R9)

// func dotRows4Q4_0Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q4_0Q8_0AVX2(SB), NOSPLIT, $0-40
	ARGSR4
	HCONST
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VMOVDQU hspread<>(SB), Y4
h4loop:
	CMPQ CX, $2
	JLT h4tail
	HSCALES8R4(0, 0)
	VPERM2F128 $0x00, Y1, Y1, Y2
	HBLKR4S(0, 0, Y2, Y12)
	VPERM2F128 $0x11, Y1, Y1, Y2
	HBLKR4S(18, 34, Y2, Y13)
	ADVW4(36)
	ADDQ $68, DI
	SUBQ $2, CX
	JMP h4loop
h4tail:
	TESTQ CX, CX
	JZ h4done
	HBLKR4(0, 0, Y12)
h4done:
	HFIN4
	VZEROUPPER
	RET

// SCALES4X (rows4_amd64.h: X1 = [d_w·d_a(row j)] for j = 0..3, weight scale
// at wo(SI), activation scales at ao of DI, R10, R11, R12), copied into the
// high lane of Y1.
#define HSCALES4(wo, ao) \
	SCALES4X(wo, ao); \
	VINSERTF128 $1, X1, Y1, Y1

// Activation row r's products with the nibbles in Y2 into p.
#define HPRODA(ao, r, p) \
	VMOVDQU ao+2(r), Y3; \
	VPMADDUBSW Y3, Y7, Y5; \
	VPMADDUBSW Y3, Y2, p; \
	VPSUBW Y5, p, p

// One weight block at wo(SI) against the four activation rows' blocks at
// ao of DI, R10, R11, R12, into acc.
#define HBLK4(wo, ao, acc) \
	HSCALES4(wo, ao); \
	HNIB(wo+2, SI, Y2); \
	HPRODA(ao, DI, Y8); \
	HPRODA(ao, R10, Y9); \
	HPRODA(ao, R11, Y10); \
	HPRODA(ao, R12, Y11); \
	HTREE(Y8, Y9, Y10, Y11); \
	VCVTDQ2PS Y8, Y8; \
	VFMADD231PS Y8, Y1, acc

// Activation rows at a + k·stride (k = 0..3), as ARGS4 in dot_amd64.s.
#define HARGS4 \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ a+16(FP), DI; \
	MOVQ stride+24(FP), R8; \
	MOVQ y+32(FP), R9; \
	LEAQ (DI)(R8*1), R10; \
	LEAQ (DI)(R8*2), R11; \
	LEAQ (R10)(R8*2), R12

// func dot4Q4_0Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q4_0Q8_0AVX2(SB), NOSPLIT, $0-40
	HARGS4
	HCONST
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
g4loop:
	CMPQ CX, $2
	JLT g4tail
	HBLK4(0, 0, Y12)
	HBLK4(18, 34, Y13)
	ADDQ $36, SI
	ADDQ $68, DI
	ADDQ $68, R10
	ADDQ $68, R11
	ADDQ $68, R12
	SUBQ $2, CX
	JMP g4loop
g4tail:
	TESTQ CX, CX
	JZ g4done
	HBLK4(0, 0, Y12)
g4done:
	HFIN4
	VZEROUPPER
	RET

// One-row routine: an even block (wo, ao) and the odd block after it
// (wo+18, ao+34) at once. Y8 = the even block's pair sums, Y9 the odd's;
// VPHADDW twice and VPMADDWD give [e_lo, o_lo, e_lo, o_lo | e_hi, o_hi,
// e_hi, o_hi], so lanes 0, 1, 4, 5 of the accumulator Y12 are the chains
// acc[0][lo], acc[1][lo], acc[0][hi], acc[1][hi] (lanes 2, 3, 6, 7 repeat
// them and are not read). Y1 = [s_e, s_o] repeated.
#define HPAIR1 \
	VPHADDW Y9, Y8, Y8; \
	VPHADDW Y8, Y8, Y8; \
	VPMADDWD Y6, Y8, Y8; \
	VCVTDQ2PS Y8, Y8; \
	VFMADD231PS Y8, Y1, Y12

// X0 = fp16(w[wo])·fp16(a[ao]) in lane 0.
#define HPROD1(wo, ao) \
	HPAIR(wo(SI), ao(DI), AX); \
	VMOVD AX, X0; \
	VCVTPH2PS X0, X0; \
	VMOVSHDUP X0, X2; \
	VMULSS X2, X0, X0

// func dotQ4_0Q8_0AVX2(nb int, w, a *byte) float32
TEXT ·dotQ4_0Q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	HCONST
	VXORPS Y12, Y12, Y12
h1loop:
	CMPQ CX, $2
	JLT h1tail
	HPROD1(0, 0)
	VMOVAPS X0, X1
	HPROD1(18, 34)
	VUNPCKLPS X0, X1, X1
	VBROADCASTSD X1, Y1
	VMOVDQU 2(DI), Y3
	VPMADDUBSW Y3, Y7, Y5
	HNIB(2, SI, Y8)
	HPROD(Y8, Y3, Y5, Y8)
	VMOVDQU 36(DI), Y3
	VPMADDUBSW Y3, Y7, Y5
	HNIB(20, SI, Y9)
	HPROD(Y9, Y3, Y5, Y9)
	HPAIR1
	ADDQ $36, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP h1loop
h1tail:
	TESTQ CX, CX
	JZ h1done
	// The last (even) block; the odd chains get 0·0, which leaves them
	// unchanged (they are never -0: they start at +0, and a round-to-
	// nearest sum is -0 only if both addends are).
	HPROD1(0, 0)
	VXORPS X1, X1, X1
	VUNPCKLPS X1, X0, X1
	VBROADCASTSD X1, Y1
	VMOVDQU 2(DI), Y3
	VPMADDUBSW Y3, Y7, Y5
	HNIB(2, SI, Y8)
	HPROD(Y8, Y3, Y5, Y8)
	VPXOR Y9, Y9, Y9
	HPAIR1
h1done:
	// (acc[0][lo] + acc[1][lo]) + (acc[0][hi] + acc[1][hi])
	VEXTRACTF128 $1, Y12, X0
	VMOVSHDUP X12, X1
	VADDSS X1, X12, X12
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VADDSS X0, X12, X12
	VZEROUPPER
	MOVSS X12, ret+24(FP)
	RET
