// Argument loading and row stepping shared by the AVX2/AVX-512 four-weight-
// row routines (dot_amd64.s: Q4_0, Q8_0; rows4k_amd64.s: K-quants, IQ4):
// SI, R10, R11, R12 = the four weight rows (w + k·stride), DI = a, CX = nb,
// R8 = stride, R9 = y.

// The four-weight-row routines issue no software prefetches: MatVecRows
// hands them one row from each quarter of a chunk (stride = a quarter), so
// they read four long sequential streams that the hardware prefetchers
// follow; prefetching the next group of rows, as they once did for four
// adjacent rows, only fetched lines another quarter reads much later.
#define ARGSR4 \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ a+16(FP), DI; \
	MOVQ stride+24(FP), R8; \
	MOVQ y+32(FP), R9; \
	LEAQ (SI)(R8*1), R10; \
	LEAQ (SI)(R8*2), R11; \
	LEAQ (R10)(R8*2), R12

#define ADVW4(n) \
	ADDQ $n, SI; \
	ADDQ $n, R10; \
	ADDQ $n, R11; \
	ADDQ $n, R12

// Scalar gathers of fp16 scales (two to a dword, four or eight to a
// register pair) for one VCVTPH2PS, shared by the dots' scale products.

// dst = the fp16 halves at a (low) and b (high). Clobbers BX.
#define HPAIR(a, b, dst) \
	MOVWLZX a, dst; \
	MOVWLZX b, BX; \
	SHLL $16, BX; \
	ORL BX, dst

// AX = the fp16 halves at a, b, c, d (low to high). Clobbers BX, DX.
#define HQUAD(a, b, c, d) \
	HPAIR(a, b, AX); \
	HPAIR(c, d, DX); \
	SHLQ $32, DX; \
	ORQ DX, AX

// AX, DX = the eight fp16 halves a0, b0, a1, b1 | a2, b2, a3, b3 (low to
// high). Clobbers BX, R13.
#define HOCT(a0, b0, a1, b1, a2, b2, a3, b3) \
	HQUAD(a0, b0, a1, b1); \
	HPAIR(a2, b2, DX); \
	HPAIR(a3, b3, R13); \
	SHLQ $32, R13; \
	ORQ R13, DX

// X0 = the fp16 half at a converted and broadcast. Clobbers AX.
#define HBCAST(a) \
	MOVWLZX a, AX; \
	VMOVD AX, X0; \
	VCVTPH2PS X0, X0; \
	VBROADCASTSS X0, X0

// The four scale products of a block, gathered as four fp16 halves into one
// VCVTPH2PS (dot_amd64.s, rows4k_amd64.s, q40h_amd64.s); both clobber AX,
// BX, DX and X0.

// X1 = [d_w(row j)·d_a] for j = 0..3: weight scales at wo of each row,
// activation scale at ao(DI); w is the first operand, as in DPROD.
#define SCALESR4X(wo, ao) \
	HBCAST(ao(DI)); \
	HQUAD(wo(SI), wo(R10), wo(R11), wo(R12)); \
	VMOVQ AX, X1; \
	VCVTPH2PS X1, X1; \
	VMULPS X0, X1, X1

// X1 = [d_w·d_a(row j)] for j = 0..3: weight scale at wo(SI), activation
// scales at ao of each row; w is the first operand, as in DPROD.
#define SCALES4X(wo, ao) \
	HBCAST(wo(SI)); \
	HQUAD(ao(DI), ao(R10), ao(R11), ao(R12)); \
	VMOVQ AX, X1; \
	VCVTPH2PS X1, X1; \
	VMULPS X1, X0, X1
