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

// The four scale products of a block, gathered as four fp16 halves into one
// VCVTPH2PS (dot_amd64.s, rows4k_amd64.s, q40h_amd64.s); both clobber AX,
// BX, DX and X0.

// X1 = [d_w(row j)·d_a] for j = 0..3: weight scales at wo of each row,
// activation scale at ao(DI); w is the first operand, as in DPROD.
#define SCALESR4X(wo, ao) \
	MOVWLZX ao(DI), AX; \
	VMOVD AX, X0; \
	VCVTPH2PS X0, X0; \
	VBROADCASTSS X0, X0; \
	MOVWLZX wo(SI), AX; \
	MOVWLZX wo(R10), BX; \
	SHLL $16, BX; \
	ORL BX, AX; \
	MOVWLZX wo(R11), DX; \
	MOVWLZX wo(R12), BX; \
	SHLL $16, BX; \
	ORL BX, DX; \
	SHLQ $32, DX; \
	ORQ DX, AX; \
	VMOVQ AX, X1; \
	VCVTPH2PS X1, X1; \
	VMULPS X0, X1, X1

// X1 = [d_w·d_a(row j)] for j = 0..3: weight scale at wo(SI), activation
// scales at ao of each row; w is the first operand, as in DPROD.
#define SCALES4X(wo, ao) \
	MOVWLZX wo(SI), AX; \
	VMOVD AX, X0; \
	VCVTPH2PS X0, X0; \
	VBROADCASTSS X0, X0; \
	MOVWLZX ao(DI), AX; \
	MOVWLZX ao(R10), BX; \
	SHLL $16, BX; \
	ORL BX, AX; \
	MOVWLZX ao(R11), DX; \
	MOVWLZX ao(R12), BX; \
	SHLL $16, BX; \
	ORL BX, DX; \
	SHLQ $32, DX; \
	ORQ DX, AX; \
	VMOVQ AX, X1; \
	VCVTPH2PS X1, X1; \
	VMULPS X1, X0, X1
