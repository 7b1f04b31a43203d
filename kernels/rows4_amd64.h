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

