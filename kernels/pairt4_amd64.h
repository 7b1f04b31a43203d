// The packers' four-row dword transpose (gemmiq4xs_amd64.s,
// gemmq8i16_amd64.s from gengemmq8i16.go, and the AVX-512 IQ4_XS byte
// packer in gemmiq4xs8_amd64.s): each layout keeps, per 16-row tile,
// one dword (an int16 pair, or four bytes) per row and pair index.

// Four rows' pair dwords in Ya..Yd (pairs 0..7 each) transposed and
// stored: pair k's four rows (16 bytes) at o + 64k, pair k+4's at
// o + 256 + 64k (R9-relative). Clobbers Ya..Yd, Y11..Y13.
#define PAIRT4(ya, yb, yc, yd, xb, xc, xd, o) \
	VPUNPCKLDQ yb, ya, Y11; \
	VPUNPCKHDQ yb, ya, Y12; \
	VPUNPCKLDQ yd, yc, Y13; \
	VPUNPCKHDQ yd, yc, ya; \
	VPUNPCKLQDQ Y13, Y11, yb; \
	VPUNPCKHQDQ Y13, Y11, yc; \
	VPUNPCKLQDQ ya, Y12, yd; \
	VPUNPCKHQDQ ya, Y12, Y13; \
	VMOVDQU xb, o(R9); \
	VEXTRACTI128 $1, yb, (o+256)(R9); \
	VMOVDQU xc, (o+64)(R9); \
	VEXTRACTI128 $1, yc, (o+320)(R9); \
	VMOVDQU xd, (o+128)(R9); \
	VEXTRACTI128 $1, yd, (o+384)(R9); \
	VMOVDQU X13, (o+192)(R9); \
	VEXTRACTI128 $1, Y13, (o+448)(R9)
