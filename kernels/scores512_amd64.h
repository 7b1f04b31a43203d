// Reductions shared by the AVX-512 score routines (ops_amd64.s,
// scores512_amd64.s). Each dot's 16 lane sums x_0..x_15 are reduced by one
// tree, whichever routine and however many dots at once:
//
//	((y0+y1)+(y2+y3)) + ((y4+y5)+(y6+y7)),  y_i = x_i + x_{i+8}
//
// so a row's scores are bit-identical whether it is one of four query rows
// or alone, and whether its key came in a pair, an eight or alone.

// SCORENET8 reduces the eight dots in Z0..Z7 jointly by lane shuffles over
// whole registers: 256-bit halves (Zj with Zj+4 side by side), adjacent
// pairs twice, then the 128-bit halves; the sums of Z0..Z3 end in lanes
// 0..3 of Z0 and those of Z4..Z7 in lanes 8..11. Clobbers Z8..Z11, Z13, Z14.
#define SCORENET8 \
	VSHUFF64X2 $0x44, Z4, Z0, Z8; \
	VSHUFF64X2 $0xEE, Z4, Z0, Z9; \
	VADDPS Z9, Z8, Z0; \
	VSHUFF64X2 $0x44, Z5, Z1, Z10; \
	VSHUFF64X2 $0xEE, Z5, Z1, Z11; \
	VADDPS Z11, Z10, Z1; \
	VSHUFF64X2 $0x44, Z6, Z2, Z13; \
	VSHUFF64X2 $0xEE, Z6, Z2, Z14; \
	VADDPS Z14, Z13, Z2; \
	VSHUFF64X2 $0x44, Z7, Z3, Z8; \
	VSHUFF64X2 $0xEE, Z7, Z3, Z9; \
	VADDPS Z9, Z8, Z3; \
	VSHUFPS $0x88, Z1, Z0, Z10; \
	VSHUFPS $0xDD, Z1, Z0, Z11; \
	VADDPS Z11, Z10, Z0; \
	VSHUFPS $0x88, Z3, Z2, Z13; \
	VSHUFPS $0xDD, Z3, Z2, Z14; \
	VADDPS Z14, Z13, Z2; \
	VSHUFPS $0x88, Z2, Z0, Z8; \
	VSHUFPS $0xDD, Z2, Z0, Z9; \
	VADDPS Z9, Z8, Z0; \
	VSHUFF32X4 $0xB1, Z0, Z0, Z10; \
	VADDPS Z10, Z0, Z0

// SCORE1 reduces the one dot in Z0 into lane 0 of X0 (VEXTRACTF64X4, two
// VHADDPS levels, VEXTRACTF128). Clobbers Y1 and Y4.
#define SCORE1 \
	VEXTRACTF64X4 $1, Z0, Y4; \
	VADDPS Y4, Y0, Y0; \
	VHADDPS Y0, Y0, Y0; \
	VHADDPS Y0, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0

// SCORE4 reduces one key's dots with four query rows in Z0..Z3 into lanes
// 0..3 of X0 (per row as SCORE1). Clobbers Y1..Y7.
#define SCORE4 \
	VEXTRACTF64X4 $1, Z0, Y4; \
	VADDPS Y4, Y0, Y0; \
	VEXTRACTF64X4 $1, Z1, Y5; \
	VADDPS Y5, Y1, Y1; \
	VEXTRACTF64X4 $1, Z2, Y6; \
	VADDPS Y6, Y2, Y2; \
	VEXTRACTF64X4 $1, Z3, Y7; \
	VADDPS Y7, Y3, Y3; \
	VHADDPS Y1, Y0, Y0; \
	VHADDPS Y3, Y2, Y2; \
	VHADDPS Y2, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0

// Index for the four-row routines' SCORENET8 output (rows 0..3 of key 0 in
// lanes 0..3, of key 1 in lanes 8..11): the two keys' scores interleaved
// per row, r0k0 r0k1 r1k0 r1k1 ... (a static symbol: each including file
// has its own copy; both use it).
DATA scorePairIdx<>+0(SB)/4, $0
DATA scorePairIdx<>+4(SB)/4, $8
DATA scorePairIdx<>+8(SB)/4, $1
DATA scorePairIdx<>+12(SB)/4, $9
DATA scorePairIdx<>+16(SB)/4, $2
DATA scorePairIdx<>+20(SB)/4, $10
DATA scorePairIdx<>+24(SB)/4, $3
DATA scorePairIdx<>+28(SB)/4, $11
DATA scorePairIdx<>+32(SB)/4, $0
DATA scorePairIdx<>+36(SB)/4, $0
DATA scorePairIdx<>+40(SB)/4, $0
DATA scorePairIdx<>+44(SB)/4, $0
DATA scorePairIdx<>+48(SB)/4, $0
DATA scorePairIdx<>+52(SB)/4, $0
DATA scorePairIdx<>+56(SB)/4, $0
DATA scorePairIdx<>+60(SB)/4, $0
GLOBL scorePairIdx<>(SB), RODATA|NOPTR, $64
