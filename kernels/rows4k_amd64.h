// Constants and steps shared by the AVX2 and AVX-512 four-weight-row
// K-quant and IQ4_XS routines (rows4k_amd64.s, rows4k512_amd64.s): the
// Q4_K/Q5_K header decode, the four-row reduction and the float finishes
// (with mins: KDMIN4, KFIN4_MIN; without: KFIN4_D). The AVX-512
// routines are bit-identical to the AVX2 ones because they run these same
// steps around their own integer loops. The tables are file-local (<>), so
// each including file has its own copy.

// kbcast: entry k (32 bytes) = byte k of each 128-bit lane zero-extended
// into all eight int16 words (VPSHUFB with 0x80 zeroing the high byte).
// Entry 8 (offset 256) spreads bytes 8..15 (Q4_K/Q5_K mins) as words
// m0,m0,m1,m1,m2,m2,m3,m3 | m4,m4,…,m7,m7 to pair with the sixteen bsums.
DATA kbcast<>+0(SB)/8, $0x8000800080008000
DATA kbcast<>+8(SB)/8, $0x8000800080008000
DATA kbcast<>+16(SB)/8, $0x8000800080008000
DATA kbcast<>+24(SB)/8, $0x8000800080008000
DATA kbcast<>+32(SB)/8, $0x8001800180018001
DATA kbcast<>+40(SB)/8, $0x8001800180018001
DATA kbcast<>+48(SB)/8, $0x8001800180018001
DATA kbcast<>+56(SB)/8, $0x8001800180018001
DATA kbcast<>+64(SB)/8, $0x8002800280028002
DATA kbcast<>+72(SB)/8, $0x8002800280028002
DATA kbcast<>+80(SB)/8, $0x8002800280028002
DATA kbcast<>+88(SB)/8, $0x8002800280028002
DATA kbcast<>+96(SB)/8, $0x8003800380038003
DATA kbcast<>+104(SB)/8, $0x8003800380038003
DATA kbcast<>+112(SB)/8, $0x8003800380038003
DATA kbcast<>+120(SB)/8, $0x8003800380038003
DATA kbcast<>+128(SB)/8, $0x8004800480048004
DATA kbcast<>+136(SB)/8, $0x8004800480048004
DATA kbcast<>+144(SB)/8, $0x8004800480048004
DATA kbcast<>+152(SB)/8, $0x8004800480048004
DATA kbcast<>+160(SB)/8, $0x8005800580058005
DATA kbcast<>+168(SB)/8, $0x8005800580058005
DATA kbcast<>+176(SB)/8, $0x8005800580058005
DATA kbcast<>+184(SB)/8, $0x8005800580058005
DATA kbcast<>+192(SB)/8, $0x8006800680068006
DATA kbcast<>+200(SB)/8, $0x8006800680068006
DATA kbcast<>+208(SB)/8, $0x8006800680068006
DATA kbcast<>+216(SB)/8, $0x8006800680068006
DATA kbcast<>+224(SB)/8, $0x8007800780078007
DATA kbcast<>+232(SB)/8, $0x8007800780078007
DATA kbcast<>+240(SB)/8, $0x8007800780078007
DATA kbcast<>+248(SB)/8, $0x8007800780078007
DATA kbcast<>+256(SB)/8, $0x8009800980088008
DATA kbcast<>+264(SB)/8, $0x800b800b800a800a
DATA kbcast<>+272(SB)/8, $0x800d800d800c800c
DATA kbcast<>+280(SB)/8, $0x800f800f800e800e
GLOBL kbcast<>(SB), RODATA|NOPTR, $288

// Q4_K/Q5_K header decode constants (per 128-bit lane, both lanes alike).
// The 16 header bytes are d,dmin (0..3), A (4..7), B (8..11), D (12..15).
// k4idx1 gathers [A, D, B, D]; k4srl shifts the last dword right by 4;
// k4m1 masks [0x3f, 0x0f, 0x3f, 0x0f] per dword: [sc0-3, lo sc4-7, mn0-3,
// lo mn4-7]. k4idx2 gathers [0, A, 0, B], whose top two bits (>>2 & 0x30)
// are the high bits of sc4-7 and mn4-7.
DATA k4idx1<>+0(SB)/8, $0x0f0e0d0c07060504
DATA k4idx1<>+8(SB)/8, $0x0f0e0d0c0b0a0908
DATA k4idx1<>+16(SB)/8, $0x0f0e0d0c07060504
DATA k4idx1<>+24(SB)/8, $0x0f0e0d0c0b0a0908
GLOBL k4idx1<>(SB), RODATA|NOPTR, $32
DATA k4srl<>+0(SB)/8, $0
DATA k4srl<>+8(SB)/8, $0x0000000400000000
DATA k4srl<>+16(SB)/8, $0
DATA k4srl<>+24(SB)/8, $0x0000000400000000
GLOBL k4srl<>(SB), RODATA|NOPTR, $32
DATA k4m1<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA k4m1<>+8(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA k4m1<>+16(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA k4m1<>+24(SB)/8, $0x0f0f0f0f3f3f3f3f
GLOBL k4m1<>(SB), RODATA|NOPTR, $32
DATA k4idx2<>+0(SB)/8, $0x0706050480808080
DATA k4idx2<>+8(SB)/8, $0x0b0a090880808080
DATA k4idx2<>+16(SB)/8, $0x0706050480808080
DATA k4idx2<>+24(SB)/8, $0x0b0a090880808080
GLOBL k4idx2<>(SB), RODATA|NOPTR, $32
DATA k4c30<>+0(SB)/8, $0x3030303030303030
DATA k4c30<>+8(SB)/8, $0x3030303030303030
DATA k4c30<>+16(SB)/8, $0x3030303030303030
DATA k4c30<>+24(SB)/8, $0x3030303030303030
GLOBL k4c30<>(SB), RODATA|NOPTR, $32
// kdeint: VPERMPS index taking [x0,y0,x1,y1,x2,y2,x3,y3] to [x0..x3 | y0..y3].
DATA kdeint<>+0(SB)/8, $0x0000000200000000
DATA kdeint<>+8(SB)/8, $0x0000000600000004
DATA kdeint<>+16(SB)/8, $0x0000000300000001
DATA kdeint<>+24(SB)/8, $0x0000000700000005
GLOBL kdeint<>(SB), RODATA|NOPTR, $32

// dec = row r's decoded Q4_K/Q5_K scales in both lanes: bytes 0..7 the
// eight sub-block scales, 8..15 the eight mins (as K4SCALES computes them).
// Clobbers Y2, Y3.
#define K4DEC(r, dec) \
	VBROADCASTI128 0(r), Y2; \
	VPSHUFB k4idx1<>(SB), Y2, Y3; \
	VPSRLVD k4srl<>(SB), Y3, Y3; \
	VPAND k4m1<>(SB), Y3, Y3; \
	VPSHUFB k4idx2<>(SB), Y2, Y2; \
	VPSRLW $2, Y2, Y2; \
	VPAND k4c30<>(SB), Y2, Y2; \
	VPOR Y3, Y2, dec

// Reduce the four rows' int32 vectors i0..i3 (clobbered) to i0 = [the
// low-lane sums of rows 0..3 | the high-lane sums of rows 0..3].
#define RED4(i0, i1, i2, i3) \
	VPHADDD i1, i0, i0; \
	VPHADDD i3, i2, i2; \
	VPHADDD i2, i0, i0

// Y2 = float [Σi0..Σi3 | Σm0..Σm3] from RED4 results in i0 and m0.
#define RED8F(i0, m0) \
	VPERM2I128 $0x20, m0, i0, Y2; \
	VPERM2I128 $0x31, m0, i0, Y3; \
	VPADDD Y3, Y2, Y2; \
	VCVTDQ2PS Y2, Y2

// Y3 = [d_w·d_a for rows 0..3 | dmin_w·d_a for rows 0..3], (d, dmin) the
// fp16 pair at wo of each row, d_a the f32 at 0(DI); w is the first
// operand of the product, as in KDMIN.
#define KDMIN4(wo) \
	VMOVD wo(SI), X3; \
	VPINSRD $1, wo(R10), X3, X3; \
	VPINSRD $2, wo(R11), X3, X3; \
	VPINSRD $3, wo(R12), X3, X3; \
	VCVTPH2PS X3, Y3; \
	VBROADCASTSS 0(DI), Y8; \
	VMULPS Y8, Y3, Y3; \
	VPERMPS Y3, Y9, Y3

// acc = d·isum + acc, then acc = -(dmin·msum) + acc, per row lane;
// Y2 = [isum | msum] floats, Y3 = [d | dmin]. KFIN4_MIN: acc = X10.
#define KFIN4_MINR(acc) \
	VFMADD231PS X2, X3, acc; \
	VEXTRACTF128 $1, Y2, X2; \
	VEXTRACTF128 $1, Y3, X3; \
	VFNMADD231PS X2, X3, acc

#define KFIN4_MIN KFIN4_MINR(X10)

// Σ min_j·(bsum_2j + bsum_2j+1) per row as 8 int32 in dec (replaced).
#define K4MINS(dec) \
	VPSHUFB kbcast<>+256(SB), dec, dec; \
	VPMADDWD 260(DI), dec, dec

// Finish a super-block whose rows have no mins: acc += d·isum per row
// lane, with the four rows' int32 sums in i0..i3 (x0 = i0's X register)
// and the fp16 d at wo of each row (the one-row routines' KD +
// VFMADD231SS, four lanes at once). KFIN4_D: acc = X10.
#define KFIN4_DR(wo, i0, i1, i2, i3, x0, acc) \
	RED4(i0, i1, i2, i3); \
	VEXTRACTI128 $1, i0, X2; \
	VPADDD X2, x0, x0; \
	VCVTDQ2PS x0, x0; \
	MOVWLZX wo(SI), AX; \
	VMOVD AX, X3; \
	VPINSRW $1, wo(R10), X3, X3; \
	VPINSRW $2, wo(R11), X3, X3; \
	VPINSRW $3, wo(R12), X3, X3; \
	VCVTPH2PS X3, X3; \
	VBROADCASTSS 0(DI), X8; \
	VMULPS X8, X3, X3; \
	VFMADD231PS x0, X3, acc

#define KFIN4_D(wo, i0, i1, i2, i3, x0) KFIN4_DR(wo, i0, i1, i2, i3, x0, X10)

// ---- Q2_K and Q3_K headers (the AVX2 routines' Q2KR4_ROW, Q3KR4_ROW and
// the AVX-512 ones in rows4k512_amd64.s).

DATA c0fk32<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0fk32<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0fk32<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0fk32<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL c0fk32<>(SB), RODATA|NOPTR, $32
DATA c03k32<>+0(SB)/8, $0x0303030303030303
DATA c03k32<>+8(SB)/8, $0x0303030303030303
DATA c03k32<>+16(SB)/8, $0x0303030303030303
DATA c03k32<>+24(SB)/8, $0x0303030303030303
GLOBL c03k32<>(SB), RODATA|NOPTR, $32

// Q2_K row r: m = its mins (high nibbles of the 16 scale bytes) times the
// bsum pairs as 8 int32, sc = its 16 scales (low nibbles) as words.
// Clobbers X2, X3.
#define Q2KR4_HDR(r, m, sc) \
	VMOVDQU 0(r), X2; \
	VPSRLW $4, X2, X3; \
	VPAND c0fk32<>(SB), X3, X3; \
	VPAND c0fk32<>(SB), X2, X2; \
	VPMOVZXBW X3, m; \
	VPMADDWD 260(DI), m, m; \
	VPMOVZXBW X2, sc

// Q3_K scale decode, vectorised: the 16 bytes at 94 of the block end with
// the 12 scale bytes at 2..13 as A (2..5), B (6..9), C (10..13) (the load
// stays inside the 110-byte block). q3idxAB gathers [A, B, A, B] and q3srlAB
// shifts the last two dwords by 4 (low nibbles of sc0-7, high of sc8-15);
// q3idxC gathers C four times and q3srlC shifts dword k by 2k (the two high
// bits of sc4k..4k+3).
DATA q3idxAB<>+0(SB)/8, $0x0908070605040302
DATA q3idxAB<>+8(SB)/8, $0x0908070605040302
GLOBL q3idxAB<>(SB), RODATA|NOPTR, $16
DATA q3srlAB<>+0(SB)/8, $0
DATA q3srlAB<>+8(SB)/8, $0x0000000400000004
GLOBL q3srlAB<>(SB), RODATA|NOPTR, $16
DATA q3idxC<>+0(SB)/8, $0x0d0c0b0a0d0c0b0a
DATA q3idxC<>+8(SB)/8, $0x0d0c0b0a0d0c0b0a
GLOBL q3idxC<>(SB), RODATA|NOPTR, $16
DATA q3srlC<>+0(SB)/8, $0x0000000200000000
DATA q3srlC<>+8(SB)/8, $0x0000000600000004
GLOBL q3srlC<>(SB), RODATA|NOPTR, $16
DATA c20k32<>+0(SB)/8, $0x2020202020202020
DATA c20k32<>+8(SB)/8, $0x2020202020202020
GLOBL c20k32<>(SB), RODATA|NOPTR, $16

// X1 = row r's sixteen Q3_K scales minus 32 as bytes (the one-row
// routine's scalar decode then VPSUBB). Clobbers X2.
#define Q3KR4_SCALES(r) \
	VMOVDQU 94(r), X2; \
	VPSHUFB q3idxAB<>(SB), X2, X1; \
	VPSRLVD q3srlAB<>(SB), X1, X1; \
	VPAND c0fk32<>(SB), X1, X1; \
	VPSHUFB q3idxC<>(SB), X2, X2; \
	VPSRLVD q3srlC<>(SB), X2, X2; \
	VPAND c03k32<>(SB), X2, X2; \
	VPSLLW $4, X2, X2; \
	VPOR X2, X1, X1; \
	VPSUBB c20k32<>(SB), X1, X1

// Q3_K row r: sc = its sixteen scales (minus 32) as words, acc (a YMM of
// Y0..Y15) = -4·Σ scale·bsum: the quants enter the products as the unsigned
// bytes value+4, the 4 taken back through the bsums as in the one-row
// routines. Clobbers X1, X2.
#define Q3KR4_INIT(r, sc, acc) \
	Q3KR4_SCALES(r); \
	VPMOVSXBW X1, sc; \
	VPMADDWD 260(DI), sc, Y2; \
	VPSLLD $2, Y2, Y2; \
	VPXOR acc, acc, acc; \
	VPSUBD Y2, acc, acc

// The end of a super-block of a K-quant with mins (Q4_K, Q5_K), four rows:
// the rows' int32 quant sums in Y4..Y7 and decoded headers in Y11..Y14
// become the mins' products, are reduced together and finished into X10
// (AVX2 and AVX-512 routines alike, so their float steps are the same).
#define K4FINISH \
	K4MINS(Y11); \
	K4MINS(Y12); \
	K4MINS(Y13); \
	K4MINS(Y14); \
	RED4(Y4, Y5, Y6, Y7); \
	RED4(Y11, Y12, Y13, Y14); \
	RED8F(Y4, Y11); \
	VMOVDQU kdeint<>(SB), Y9; \
	KDMIN4(0); \
	KFIN4_MIN
