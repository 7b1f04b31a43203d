// AVX-512 four-weight-row Q4_K routine (generation's MatVec on the avx512
// path; the Q5_K routine below is the same loop with the fifth bits): rows4k_amd64.s's dotRows4Q4_KQ8_KAVX2 with its integer loop on ZMM.
// One 64-byte load holds two 64-element chunks of a row; its low nibbles
// pair with the activations of sub-blocks 2j and 2j+2, its high nibbles
// with 2j+1 and 2j+3 (the activations are gathered into that order once per
// super-block for all four rows), VPMADDUBSW forms the pair sums and
// VPDPWSSD applies each 256-bit half's sub-block scale. Every per-row
// integer (Σ sc·Σq·a, Σ min·bsum) is exact as in the AVX2 and AVX-512 one-
// row dots (pair sums ≤ 2·15·128, scaled ≤ 63× that, int32 sums far from
// overflow), and the header decode, the four-row reduction and the float
// finish (KDMIN4, KFIN4_MIN) are the AVX2 routine's, so the result is bit-
// identical to dotQ4_KQ8_KAVX512 and dotQ4_KQ8_KAVX2.

#include "textflag.h"
#include "rows4_amd64.h"
#include "rows4k_amd64.h"
#include "kzacc_amd64.h"

DATA kz4<>+0(SB)/8, $0x8000800080008000
DATA kz4<>+8(SB)/8, $0x8000800080008000
DATA kz4<>+16(SB)/8, $0x8000800080008000
DATA kz4<>+24(SB)/8, $0x8000800080008000
DATA kz4<>+32(SB)/8, $0x8002800280028002
DATA kz4<>+40(SB)/8, $0x8002800280028002
DATA kz4<>+48(SB)/8, $0x8002800280028002
DATA kz4<>+56(SB)/8, $0x8002800280028002
DATA kz4<>+64(SB)/8, $0x8001800180018001
DATA kz4<>+72(SB)/8, $0x8001800180018001
DATA kz4<>+80(SB)/8, $0x8001800180018001
DATA kz4<>+88(SB)/8, $0x8001800180018001
DATA kz4<>+96(SB)/8, $0x8003800380038003
DATA kz4<>+104(SB)/8, $0x8003800380038003
DATA kz4<>+112(SB)/8, $0x8003800380038003
DATA kz4<>+120(SB)/8, $0x8003800380038003
DATA kz4<>+128(SB)/8, $0x8004800480048004
DATA kz4<>+136(SB)/8, $0x8004800480048004
DATA kz4<>+144(SB)/8, $0x8004800480048004
DATA kz4<>+152(SB)/8, $0x8004800480048004
DATA kz4<>+160(SB)/8, $0x8006800680068006
DATA kz4<>+168(SB)/8, $0x8006800680068006
DATA kz4<>+176(SB)/8, $0x8006800680068006
DATA kz4<>+184(SB)/8, $0x8006800680068006
DATA kz4<>+192(SB)/8, $0x8005800580058005
DATA kz4<>+200(SB)/8, $0x8005800580058005
DATA kz4<>+208(SB)/8, $0x8005800580058005
DATA kz4<>+216(SB)/8, $0x8005800580058005
DATA kz4<>+224(SB)/8, $0x8007800780078007
DATA kz4<>+232(SB)/8, $0x8007800780078007
DATA kz4<>+240(SB)/8, $0x8007800780078007
DATA kz4<>+248(SB)/8, $0x8007800780078007
GLOBL kz4<>(SB), RODATA|NOPTR, $256
DATA kz0f<>+0(SB)/4, $0x0f0f0f0f
GLOBL kz0f<>(SB), RODATA|NOPTR, $4

// dec = row r's decoded scales (bytes 0..7) and mins (8..15) in both lanes
// (K4DEC), and decz = the same in all four lanes.
#define K4DECZ(r, dec, decz) \
	K4DEC(r, dec); \
	VINSERTI64X4 $1, dec, decz, decz

// Chunks 2p and 2p+1 of weight row r (qs bytes 64p..64p+63) against Z0
// (their low nibbles' activations) and Z1 (high nibbles'), scales from decz.
#define Q4KZ_ROW(p, r, decz, acc) \
	VMOVDQU64 (16+64*p)(r), Z2; \
	VPSRLW $4, Z2, Z3; \
	VPANDD Z15, Z2, Z2; \
	VPANDD Z15, Z3, Z3; \
	VPMADDUBSW Z0, Z2, Z2; \
	VPMADDUBSW Z1, Z3, Z3; \
	VPSHUFB kz4<>+(128*p)(SB), decz, Z8; \
	VPSHUFB kz4<>+(128*p+64)(SB), decz, Z9; \
	VPDPWSSD Z8, Z2, acc; \
	VPDPWSSD Z9, Z3, acc

// Z0 = activations of elements [128p, 128p+32) and [128p+64, 128p+96),
// Z1 = [128p+32, 128p+64) and [128p+96, 128p+128): the sub-blocks that the
// low and high nibbles of a row's 64-byte load p pair with (Q4_K and Q5_K).
#define Q4KZ_ACT(p) \
	VMOVDQU (4+128*p)(DI), Y0; \
	VINSERTI64X4 $1, (68+128*p)(DI), Z0, Z0; \
	VMOVDQU (36+128*p)(DI), Y1; \
	VINSERTI64X4 $1, (100+128*p)(DI), Z1, Z1

#define Q4KZ_PAIR(p) \
	Q4KZ_ACT(p); \
	Q4KZ_ROW(p, SI, Z11, Z4); \
	Q4KZ_ROW(p, R10, Z12, Z5); \
	Q4KZ_ROW(p, R11, Z13, Z6); \
	Q4KZ_ROW(p, R12, Z14, Z7)

// acc (ZMM) folded into its low YMM.
#define FOLDZ(z, y) \
	VEXTRACTI64X4 $1, z, Y8; \
	VPADDD Y8, y, y

// z0..z3 = the four 64-byte rows of the table tab (permutes, shift counts).
#define LDTAB4Z(tab, z0, z1, z2, z3) \
	VMOVDQU64 tab<>+0(SB), z0; \
	VMOVDQU64 tab<>+64(SB), z1; \
	VMOVDQU64 tab<>+128(SB), z2; \
	VMOVDQU64 tab<>+192(SB), z3

// The four rows' ZMM int32 accumulators Z4..Z7: zeroed, and folded to Y4..Y7.
#define ZERO4Z \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7

#define FOLD4Z FOLD4ZR(Z7, Y7)

// FOLD4Z with the fourth row's accumulator in z (y its YMM): the Q2_K and
// Q3_K routines keep Z7 for quant bytes.
#define FOLD4ZR(z, y) \
	FOLDZ(Z4, Y4); \
	FOLDZ(Z5, Y5); \
	FOLDZ(Z6, Y6); \
	FOLDZ(z, y)

// func dotRows4Q4_KQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q4_KQ8_KAVX512(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD kz0f<>(SB), Z15
	VXORPS X10, X10, X10
	TESTQ CX, CX
	JZ z4q4kdone
z4q4kloop:
	K4DECZ(SI, Y11, Z11)
	K4DECZ(R10, Y12, Z12)
	K4DECZ(R11, Y13, Z13)
	K4DECZ(R12, Y14, Z14)
	ZERO4Z
	Q4KZ_PAIR(0)
	Q4KZ_PAIR(1)
	FOLD4Z
	K4FINISH
	ADVW4(144)
	ADDQ $292, DI
	DECQ CX
	JNZ z4q4kloop
z4q4kdone:
	VMOVUPS X10, (R9)
	VZEROUPPER
	RET

// AVX-512 four-weight-row Q5_K routine: dotRows4Q4_KQ8_KAVX512's loop with
// the fifth bits of dotQ5_KQ8_KAVX512 (Q5K_ZCHUNK), the rows finished as
// rows4k_amd64.s's dotRows4Q5_KQ8_KAVX2. qs sits at 48 and qh (32 bytes) at
// 16; load p (qs bytes 64p..64p+63) holds chunks 2p and 2p+1, so its low
// nibbles are sub-blocks 4p | 4p+2 and its high nibbles 4p+1 | 4p+3, whose
// fifth bits are qh bits 4p | 4p+2 and 4p+1 | 4p+3. qh is broadcast to both
// 256-bit halves of a register once per super-block and row, and one word
// shift by a per-half count (kz5sh) moves the bit wanted in each half to bit
// 4 (a byte's bit never leaves its byte for these counts), masked with 0x10
// and ORed in (VPTERNLOGD A | B&C). The 5-bit quants keep every VPMADDUBSW
// pair ≤ 2·31·128 and every per-row integer exact, as in both Q5_K dots, so
// the result is bit-identical to dotQ5_KQ8_KAVX512 and dotQ5_KQ8_KAVX2.

// kz5sh: word shift counts, entry e (64 bytes) = c0 over the low 256 bits
// and c1 over the high: [4 | 2] and [3 | 1] left (load 0: qh bits 0 | 2,
// 1 | 3), [0 | 2] and [1 | 3] right (load 1: bits 4 | 6, 5 | 7).
DATA kz5sh<>+0(SB)/8, $0x0004000400040004
DATA kz5sh<>+8(SB)/8, $0x0004000400040004
DATA kz5sh<>+16(SB)/8, $0x0004000400040004
DATA kz5sh<>+24(SB)/8, $0x0004000400040004
DATA kz5sh<>+32(SB)/8, $0x0002000200020002
DATA kz5sh<>+40(SB)/8, $0x0002000200020002
DATA kz5sh<>+48(SB)/8, $0x0002000200020002
DATA kz5sh<>+56(SB)/8, $0x0002000200020002
DATA kz5sh<>+64(SB)/8, $0x0003000300030003
DATA kz5sh<>+72(SB)/8, $0x0003000300030003
DATA kz5sh<>+80(SB)/8, $0x0003000300030003
DATA kz5sh<>+88(SB)/8, $0x0003000300030003
DATA kz5sh<>+96(SB)/8, $0x0001000100010001
DATA kz5sh<>+104(SB)/8, $0x0001000100010001
DATA kz5sh<>+112(SB)/8, $0x0001000100010001
DATA kz5sh<>+120(SB)/8, $0x0001000100010001
DATA kz5sh<>+128(SB)/8, $0
DATA kz5sh<>+136(SB)/8, $0
DATA kz5sh<>+144(SB)/8, $0
DATA kz5sh<>+152(SB)/8, $0
DATA kz5sh<>+160(SB)/8, $0x0002000200020002
DATA kz5sh<>+168(SB)/8, $0x0002000200020002
DATA kz5sh<>+176(SB)/8, $0x0002000200020002
DATA kz5sh<>+184(SB)/8, $0x0002000200020002
DATA kz5sh<>+192(SB)/8, $0x0001000100010001
DATA kz5sh<>+200(SB)/8, $0x0001000100010001
DATA kz5sh<>+208(SB)/8, $0x0001000100010001
DATA kz5sh<>+216(SB)/8, $0x0001000100010001
DATA kz5sh<>+224(SB)/8, $0x0003000300030003
DATA kz5sh<>+232(SB)/8, $0x0003000300030003
DATA kz5sh<>+240(SB)/8, $0x0003000300030003
DATA kz5sh<>+248(SB)/8, $0x0003000300030003
GLOBL kz5sh<>(SB), RODATA|NOPTR, $256
DATA kz10<>+0(SB)/4, $0x10101010
GLOBL kz10<>(SB), RODATA|NOPTR, $4

// Load p of Q5_K weight row r against Z0/Z1 (Q4KZ_ROW plus the fifth
// bits): qhz = the row's qh in both halves, shifted by lop with the counts
// in lc (low nibbles) and hop with hc (high); Z16 = 0x10 bytes.
#define Q5KZ_ROW(p, r, decz, acc, qhz, lop, lc, hop, hc) \
	VMOVDQU64 (48+64*p)(r), Z2; \
	VPSRLW $4, Z2, Z3; \
	VPANDD Z15, Z2, Z2; \
	VPANDD Z15, Z3, Z3; \
	lop lc, qhz, Z8; \
	hop hc, qhz, Z9; \
	VPTERNLOGD $0xf8, Z16, Z8, Z2; \
	VPTERNLOGD $0xf8, Z16, Z9, Z3; \
	VPMADDUBSW Z0, Z2, Z2; \
	VPMADDUBSW Z1, Z3, Z3; \
	VPSHUFB kz4<>+(128*p)(SB), decz, Z8; \
	VPSHUFB kz4<>+(128*p+64)(SB), decz, Z9; \
	VPDPWSSD Z8, Z2, acc; \
	VPDPWSSD Z9, Z3, acc

#define Q5KZ_PAIR(p, lop, lc, hop, hc) \
	Q4KZ_ACT(p); \
	Q5KZ_ROW(p, SI, Z11, Z4, Z17, lop, lc, hop, hc); \
	Q5KZ_ROW(p, R10, Z12, Z5, Z18, lop, lc, hop, hc); \
	Q5KZ_ROW(p, R11, Z13, Z6, Z19, lop, lc, hop, hc); \
	Q5KZ_ROW(p, R12, Z14, Z7, Z20, lop, lc, hop, hc)

// func dotRows4Q5_KQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q5_KQ8_KAVX512(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD kz0f<>(SB), Z15
	VPBROADCASTD kz10<>(SB), Z16
	LDTAB4Z(kz5sh, Z21, Z22, Z23, Z24)
	VXORPS X10, X10, X10
	TESTQ CX, CX
	JZ z4q5kdone
z4q5kloop:
	K4DECZ(SI, Y11, Z11)
	K4DECZ(R10, Y12, Z12)
	K4DECZ(R11, Y13, Z13)
	K4DECZ(R12, Y14, Z14)
	VBROADCASTI64X4 16(SI), Z17
	VBROADCASTI64X4 16(R10), Z18
	VBROADCASTI64X4 16(R11), Z19
	VBROADCASTI64X4 16(R12), Z20
	ZERO4Z
	Q5KZ_PAIR(0, VPSLLVW, Z21, VPSLLVW, Z22)
	Q5KZ_PAIR(1, VPSRLVW, Z23, VPSRLVW, Z24)
	FOLD4Z
	K4FINISH
	ADVW4(176)
	ADDQ $292, DI
	DECQ CX
	JNZ z4q5kloop
z4q5kdone:
	VMOVUPS X10, (R9)
	VZEROUPPER
	RET

// AVX-512 four-weight-row Q6_K routine: per row the integer loop of
// dotQ6_KQ8_KAVX512 (Q6K_ZHALF), the four rows' int32 sums then reduced
// together and finished in one 4-lane float step as rows4k_amd64.s's
// dotRows4Q6_KQ8_KAVX2 does (KFIN4_D: d = fp16(d_w)·d_a, acc = d·float(isum)
// + acc per row lane). The integers are exact in every routine, so the
// result is bit-identical to dotQ6_KQ8_KAVX512 and dotQ6_KQ8_KAVX2.

DATA kz6c0f<>+0(SB)/4, $0x0f0f0f0f
GLOBL kz6c0f<>(SB), RODATA|NOPTR, $4
DATA kz6c30<>+0(SB)/4, $0x30303030
GLOBL kz6c30<>(SB), RODATA|NOPTR, $4

DATA kz6perm<>+0(SB)/8, $0x0000000000000000
DATA kz6perm<>+8(SB)/8, $0x0000000000000000
DATA kz6perm<>+16(SB)/8, $0x0001000100010001
DATA kz6perm<>+24(SB)/8, $0x0001000100010001
DATA kz6perm<>+32(SB)/8, $0x0002000200020002
DATA kz6perm<>+40(SB)/8, $0x0002000200020002
DATA kz6perm<>+48(SB)/8, $0x0003000300030003
DATA kz6perm<>+56(SB)/8, $0x0003000300030003
DATA kz6perm<>+64(SB)/8, $0x0004000400040004
DATA kz6perm<>+72(SB)/8, $0x0004000400040004
DATA kz6perm<>+80(SB)/8, $0x0005000500050005
DATA kz6perm<>+88(SB)/8, $0x0005000500050005
DATA kz6perm<>+96(SB)/8, $0x0006000600060006
DATA kz6perm<>+104(SB)/8, $0x0006000600060006
DATA kz6perm<>+112(SB)/8, $0x0007000700070007
DATA kz6perm<>+120(SB)/8, $0x0007000700070007
DATA kz6perm<>+128(SB)/8, $0x0008000800080008
DATA kz6perm<>+136(SB)/8, $0x0008000800080008
DATA kz6perm<>+144(SB)/8, $0x0009000900090009
DATA kz6perm<>+152(SB)/8, $0x0009000900090009
DATA kz6perm<>+160(SB)/8, $0x000a000a000a000a
DATA kz6perm<>+168(SB)/8, $0x000a000a000a000a
DATA kz6perm<>+176(SB)/8, $0x000b000b000b000b
DATA kz6perm<>+184(SB)/8, $0x000b000b000b000b
DATA kz6perm<>+192(SB)/8, $0x000c000c000c000c
DATA kz6perm<>+200(SB)/8, $0x000c000c000c000c
DATA kz6perm<>+208(SB)/8, $0x000d000d000d000d
DATA kz6perm<>+216(SB)/8, $0x000d000d000d000d
DATA kz6perm<>+224(SB)/8, $0x000e000e000e000e
DATA kz6perm<>+232(SB)/8, $0x000e000e000e000e
DATA kz6perm<>+240(SB)/8, $0x000f000f000f000f
DATA kz6perm<>+248(SB)/8, $0x000f000f000f000f
GLOBL kz6perm<>(SB), RODATA|NOPTR, $256

// Half h of Q6_K weight row r (Q6K_ZHALF with the row register, its scales
// in sc and its accumulator acc).
#define Q6KZR_HALF(h, r, sc, acc, ilo, ihi) \
	VMOVDQU64 (64*h)(r), Z7; \
	VBROADCASTI64X4 (128+32*h)(r), Z8; \
	VPSLLW $4, Y8, Y9; \
	VPSLLW $2, Y8, Y10; \
	VINSERTI64X4 $1, Y10, Z9, Z9; \
	VPANDD Z13, Z9, Z9; \
	VPANDD Z15, Z7, Z10; \
	VPORD Z9, Z10, Z10; \
	VPSRLW $2, Y8, Y11; \
	VINSERTI64X4 $1, Y11, Z8, Z11; \
	VPANDD Z13, Z11, Z11; \
	VPSRLW $4, Z7, Z12; \
	VPANDD Z15, Z12, Z12; \
	VPORD Z11, Z12, Z12; \
	VPMADDUBSW (4+128*h)(DI), Z10, Z10; \
	VPMADDUBSW (68+128*h)(DI), Z12, Z12; \
	VPERMW sc, ilo, Z9; \
	VPERMW sc, ihi, Z11; \
	VPDPWSSD Z9, Z10, acc; \
	VPDPWSSD Z11, Z12, acc

// acc = -32·Σ scale_k·bsum_k for weight row r, sc = its 16 scales as int16.
#define Q6KZR_INIT(r, sc, acc) \
	VPMOVSXBW 192(r), sc; \
	VPMADDWD 260(DI), sc, Y2; \
	VPSLLD $5, Y2, Y2; \
	VPXORD acc, acc, acc; \
	VPSUBD Y2, acc, acc

#define Q6KZR_FOLD(z, y, yd) \
	VEXTRACTI64X4 $1, z, Y2; \
	VPADDD Y2, y, yd

// func dotRows4Q6_KQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q6_KQ8_KAVX512(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD kz6c0f<>(SB), Z15
	VPBROADCASTD kz6c30<>(SB), Z13
	LDTAB4Z(kz6perm, Z16, Z17, Z18, Z19)
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ z4q6kdone
z4q6kloop:
	Q6KZR_INIT(SI, Y20, Y24)
	Q6KZR_INIT(R10, Y21, Y25)
	Q6KZR_INIT(R11, Y22, Y26)
	Q6KZR_INIT(R12, Y23, Y27)
	Q6KZR_HALF(0, SI, Z20, Z24, Z16, Z17)
	Q6KZR_HALF(0, R10, Z21, Z25, Z16, Z17)
	Q6KZR_HALF(0, R11, Z22, Z26, Z16, Z17)
	Q6KZR_HALF(0, R12, Z23, Z27, Z16, Z17)
	Q6KZR_HALF(1, SI, Z20, Z24, Z18, Z19)
	Q6KZR_HALF(1, R10, Z21, Z25, Z18, Z19)
	Q6KZR_HALF(1, R11, Z22, Z26, Z18, Z19)
	Q6KZR_HALF(1, R12, Z23, Z27, Z18, Z19)
	Q6KZR_FOLD(Z24, Y24, Y4)
	Q6KZR_FOLD(Z25, Y25, Y5)
	Q6KZR_FOLD(Z26, Y26, Y6)
	Q6KZR_FOLD(Z27, Y27, Y7)
	RED4(Y4, Y5, Y6, Y7)
	VEXTRACTI128 $1, Y4, X2
	VPADDD X2, X4, X4
	VCVTDQ2PS X4, X4
	MOVWLZX 208(SI), AX
	VMOVD AX, X3
	VPINSRW $1, 208(R10), X3, X3
	VPINSRW $2, 208(R11), X3, X3
	VPINSRW $3, 208(R12), X3, X3
	VCVTPH2PS X3, X3
	VBROADCASTSS 0(DI), X1
	VMULPS X1, X3, X3
	VFMADD231PS X4, X3, X0
	ADVW4(210)
	ADDQ $292, DI
	DECQ CX
	JNZ z4q6kloop
z4q6kdone:
	VMOVUPS X0, (R9)
	VZEROUPPER
	RET

// AVX-512 four-weight-row IQ4_XS routine (generation's MatVec on the avx512
// path, whose one-row dot stays dotIQ4_XSQ8_KAVX2). One 64-byte load holds
// four sub-blocks of a row, one per 128-bit lane: its low nibbles pair with
// the sub-blocks' first 16 activations, its high nibbles with their last 16
// (the activations are gathered into that order once per super-block for
// all four rows, VSHUFI64X2). VPSHUFB looks the nibbles up in the codebook
// biased to unsigned (value+128, 1..241), VPDPBUSD multiplies them by the
// signed activations into dwords that start at -128·Σa over the same
// activations (formed once per super-block from the activations themselves,
// not the bsums), so each dword is an exact Σ value·a over eight elements
// (|Σ| ≤ 8·241·128); VPMULLD by the lane's sub-block multiplier (scale-32)
// and the adds give each row's Σ_s mult_s·Σ value·a, the exact int32
// dotIQ4_XSQ8_KAVX2 and dotRows4IQ4_XSQ8_KAVX2 form with VPSIGNB/VPMADDUBSW/
// VPMADDWD. The four rows are then reduced and finished by KFIN4_D, as in
// dotRows4IQ4_XSQ8_KAVX2, so the result is bit-identical to both.

// kziq: bytes 0..31 the VPERMD indices (as bytes, VPMOVZXBD) spreading
// multipliers 0..3 and 4..7 over the four lanes, four dwords each; 32..39
// the scales_l shifts 4i; 40..47 the scales_h shifts 30-2i; 48..63 the
// codebook + 128.
DATA kziq<>+0(SB)/8, $0x0101010100000000
DATA kziq<>+8(SB)/8, $0x0303030302020202
DATA kziq<>+16(SB)/8, $0x0505050504040404
DATA kziq<>+24(SB)/8, $0x0707070706060606
DATA kziq<>+32(SB)/8, $0x1c1814100c080400
DATA kziq<>+40(SB)/8, $0x10121416181a1c1e
DATA kziq<>+48(SB)/8, $0x766a5d4f3f2d1801
DATA kziq<>+56(SB)/8, $0xf1d9c5b5a6998d81
GLOBL kziq<>(SB), RODATA|NOPTR, $64

// Sub-blocks 4c..4c+3 of weight row r (qs bytes 64c..64c+63) against the
// gathered activations lo, hi with the bias nb: t = each lane's four exact
// dword sums of value·a. Clobbers Z20, Z21.
#define IQ4XSZ_CHUNK(c, r, lo, hi, nb, t) \
	VMOVDQU64 (8+64*c)(r), Z20; \
	VPSRLW $4, Z20, Z21; \
	VPANDD Z31, Z20, Z20; \
	VPANDD Z31, Z21, Z21; \
	VPSHUFB Z20, Z30, Z20; \
	VPSHUFB Z21, Z30, Z21; \
	VMOVDQA64 nb, t; \
	VPDPBUSD lo, Z20, t; \
	VPDPBUSD hi, Z21, t

// acc = weight row r's super-block sum Σ_s mult_s·Σ value·a spread over 16
// dwords. The multipliers decode as IQ4XSR4_SCALES's (dword i: scales_l
// >> 4i & 15 | (scales_h >> 2i & 3) << 4, minus 32), scales_h's two bits
// isolated by shifting them to the top and back to bits 4..5 and merged by
// VPTERNLOGD (Y26 = 15: low nibble from the first). Clobbers Z16..Z22.
#define IQ4XSZ_ROW(r, acc) \
	VPBROADCASTD 4(r), Y16; \
	VPSRLVD Y28, Y16, Y16; \
	VPBROADCASTD 2(r), Y17; \
	VPSLLVD Y27, Y17, Y17; \
	VPSRLD $26, Y17, Y17; \
	VPTERNLOGD $0xe4, Y26, Y17, Y16; \
	VPSUBD Y25, Y16, Y16; \
	VPERMD Z16, Z24, Z18; \
	VPERMD Z16, Z23, Z19; \
	IQ4XSZ_CHUNK(0, r, Z12, Z13, Z9, Z22); \
	VPMULLD Z18, Z22, acc; \
	IQ4XSZ_CHUNK(1, r, Z14, Z15, Z11, Z22); \
	VPMULLD Z19, Z22, Z22; \
	VPADDD Z22, acc, acc

// func dotRows4IQ4_XSQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ4_XSQ8_KAVX512(SB), NOSPLIT, $0-40
	ARGSR4
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	VBROADCASTI32X4 kziq<>+48(SB), Z30
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z29
	VPMOVZXBD kziq<>+32(SB), Y28
	VPMOVZXBD kziq<>+40(SB), Y27
	MOVL $15, AX
	VPBROADCASTD AX, Y26
	MOVL $32, AX
	VPBROADCASTD AX, Y25
	VPMOVZXBD kziq<>+0(SB), Z24
	VPMOVZXBD kziq<>+16(SB), Z23
	VXORPS X10, X10, X10
	TESTQ CX, CX
	JZ z4iq4xsdone
z4iq4xsloop:
	// Z12/Z13 = the low/high-nibble activations of sub-blocks 0..3,
	// Z14/Z15 of 4..7; Z9, Z11 = -128·Σa per dword of each pair.
	VMOVDQU64 4(DI), Z0
	VSHUFI64X2 $0x88, 68(DI), Z0, Z12
	VSHUFI64X2 $0xdd, 68(DI), Z0, Z13
	VMOVDQU64 132(DI), Z1
	VSHUFI64X2 $0x88, 196(DI), Z1, Z14
	VSHUFI64X2 $0xdd, 196(DI), Z1, Z15
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPDPBUSD Z12, Z29, Z0
	VPDPBUSD Z13, Z29, Z0
	VPDPBUSD Z14, Z29, Z1
	VPDPBUSD Z15, Z29, Z1
	VPXORD Z9, Z9, Z9
	VPSUBD Z0, Z9, Z9
	VPXORD Z11, Z11, Z11
	VPSUBD Z1, Z11, Z11
	IQ4XSZ_ROW(SI, Z4)
	IQ4XSZ_ROW(R10, Z5)
	IQ4XSZ_ROW(R11, Z6)
	IQ4XSZ_ROW(R12, Z7)
	FOLD4Z
	KFIN4_D(0, Y4, Y5, Y6, Y7, X4)
	ADVW4(136)
	ADDQ $292, DI
	DECQ CX
	JNZ z4iq4xsloop
z4iq4xsdone:
	VMOVUPS X10, (R9)
	VZEROUPPER
	RET

// AVX-512 four-weight-row Q2_K and Q3_K routines. Per row the integer
// loop of dotQ2_KQ8_KAVX512 / dotQ3_KQ8_KAVX512: 64 unsigned quant bytes
// per ZMM lined up with 64 activations, VPMADDUBSW, the sixteen sub-block
// scales spread by VPERMW and applied by VPDPWSSD (KZACC, kzacc_amd64.h),
// with the 256 activations loaded into Z28..Z31 once per super-block for
// all four rows. The quant bytes are built with fewer instructions than the
// one-row dots' Q2BITS_Z / Q3HB_Z (which run 0.90-0.93× the one-row dot from
// DRAM as a Q3_K four-row loop, bound by integer work): a row's 32 qs bytes
// of a 128-element half are broadcast to both 256-bit halves of Z7, so one
// word shift by per-half counts and an AND with 0x03 give the two 32-element
// chunks a ZMM pairs with; Q3_K's hmask (32 bytes) is broadcast the same
// way, one word shift by per-half counts moves the chunks' bit to bit 2
// (a byte's bit never leaves its byte for these counts) and VPTERNLOGD
// A | B&0x04 ORs it in, giving the same unsigned byte value+4 as both Q3_K
// dots. Header decode, four-row reduction and float finish are
// rows4k_amd64.s's dotRows4Q2_KQ8_KAVX2 (Q2KR4_HDR, RED4, RED8F, KDMIN4,
// KFIN4_MINR) and dotRows4Q3_KQ8_KAVX2 (Q3KR4_INIT, KFIN4_DR). Every
// per-row integer is exact in all these routines (VPMADDUBSW pairs ≤
// 2·7·128, scales ≤ 32 in magnitude, int32 sums far from overflow), so the
// results are bit-identical to both one-row dots of each type. Z4, Z5, Z6,
// Z0 are the rows' integer accumulators (folded into their YMMs for RED4),
// X26 the float accumulator.

DATA kz03<>+0(SB)/4, $0x03030303
GLOBL kz03<>(SB), RODATA|NOPTR, $4
DATA kz04<>+0(SB)/4, $0x04040404
GLOBL kz04<>(SB), RODATA|NOPTR, $4

// Activations [0, 256) of the super-block at DI into Z28..Z31, and the
// word permutations of the scales into Z16..Z19.
#define KZ23_ACT \
	VMOVDQU64 4(DI), Z28; \
	VMOVDQU64 68(DI), Z29; \
	VMOVDQU64 132(DI), Z30; \
	VMOVDQU64 196(DI), Z31

#define KZ23_PERM LDTAB4Z(kz6perm, Z16, Z17, Z18, Z19)

// kz3c: word shift counts [low half, high half] per register: qs right
// [0, 2] (chunks 0 | 1 of a half) and [4, 6] (2 | 3); Q3_K hmask left
// [2, 1] (half 0, chunks 0 | 1), right [0, 1] (chunks 2 | 3), [2, 3] and
// [4, 5] (half 1).
DATA kz3c<>+0(SB)/8, $0x0006000400020000
DATA kz3c<>+8(SB)/8, $0x0001000000010002
DATA kz3c<>+16(SB)/8, $0x0005000400030002
GLOBL kz3c<>(SB), RODATA|NOPTR, $24

// z = the word count kz3c[2i] over its low 256 bits and kz3c[2i+1] over
// its high (y = z's YMM). Clobbers Y8.
#define KZ3CNT(i, y, z) \
	VPBROADCASTW kz3c<>+(4*i)(SB), y; \
	VPBROADCASTW kz3c<>+(4*i+2)(SB), Y8; \
	VINSERTI64X4 $1, Y8, z, z

// zv = the 2-bit quants of one ZMM: qs (Z7) >> the counts in qc, & 0x03.
#define Q2KZ_VALS(zv, qc) \
	VPSRLVW qc, Z7, zv; \
	VPANDD Z13, zv, zv

// Q2_K row r: m = its mins·bsums (8 int32), acc (ZMM) = its Σ scale·q·a.
#define Q2KZ_ROW(r, m, acc) \
	Q2KR4_HDR(r, m, Y3); \
	VPXORD acc, acc, acc; \
	VBROADCASTI64X4 16(r), Z7; \
	Q2KZ_VALS(Z9, Z20); \
	Q2KZ_VALS(Z10, Z21); \
	KZACC(Z28, Z29, Z3, acc, Z16, Z17); \
	VBROADCASTI64X4 48(r), Z7; \
	Q2KZ_VALS(Z9, Z20); \
	Q2KZ_VALS(Z10, Z21); \
	KZACC(Z30, Z31, Z3, acc, Z18, Z19)

// func dotRows4Q2_KQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q2_KQ8_KAVX512(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD kz03<>(SB), Z13
	KZ23_PERM
	KZ3CNT(0, Y20, Z20)
	KZ3CNT(1, Y21, Z21)
	VXORPS X26, X26, X26
	TESTQ CX, CX
	JZ z4q2kdone
z4q2kloop:
	KZ23_ACT
	Q2KZ_ROW(SI, Y1, Z4)
	Q2KZ_ROW(R10, Y11, Z5)
	Q2KZ_ROW(R11, Y12, Z6)
	Q2KZ_ROW(R12, Y15, Z0)
	FOLD4ZR(Z0, Y0)
	RED4(Y4, Y5, Y6, Y0)
	RED4(Y1, Y11, Y12, Y15)
	RED8F(Y4, Y1)
	VMOVDQU kdeint<>(SB), Y9
	KDMIN4(80)
	KFIN4_MINR(X26)
	ADVW4(84)
	ADDQ $292, DI
	DECQ CX
	JNZ z4q2kloop
z4q2kdone:
	VMOVUPS X26, (R9)
	VZEROUPPER
	RET

// zv = value+4 of the 64 quants of one ZMM: qs (Z7) >> the counts in qc,
// & 0x03, | bit 2 of hmask (Z11) moved by hop with the counts in hc.
#define Q3KZ_VALS(zv, qc, hop, hc) \
	Q2KZ_VALS(zv, qc); \
	hop hc, Z11, Z12; \
	VPTERNLOGD $0xf8, Z15, Z12, zv

// Q3_K row r: acc (ZMM; yacc its YMM) = Σ scale·value·a.
#define Q3KZ_ROW(r, yacc, acc) \
	Q3KR4_INIT(r, Y3, yacc); \
	VBROADCASTI64X4 0(r), Z11; \
	VBROADCASTI64X4 32(r), Z7; \
	Q3KZ_VALS(Z9, Z20, VPSLLVW, Z22); \
	Q3KZ_VALS(Z10, Z21, VPSRLVW, Z23); \
	KZACC(Z28, Z29, Z3, acc, Z16, Z17); \
	VBROADCASTI64X4 64(r), Z7; \
	Q3KZ_VALS(Z9, Z20, VPSRLVW, Z24); \
	Q3KZ_VALS(Z10, Z21, VPSRLVW, Z25); \
	KZACC(Z30, Z31, Z3, acc, Z18, Z19)

// func dotRows4Q3_KQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q3_KQ8_KAVX512(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD kz03<>(SB), Z13
	VPBROADCASTD kz04<>(SB), Z15
	KZ23_PERM
	KZ3CNT(0, Y20, Z20)
	KZ3CNT(1, Y21, Z21)
	KZ3CNT(2, Y22, Z22)
	KZ3CNT(3, Y23, Z23)
	KZ3CNT(4, Y24, Z24)
	KZ3CNT(5, Y25, Z25)
	VXORPS X26, X26, X26
	TESTQ CX, CX
	JZ z4q3kdone
z4q3kloop:
	KZ23_ACT
	Q3KZ_ROW(SI, Y4, Z4)
	Q3KZ_ROW(R10, Y5, Z5)
	Q3KZ_ROW(R11, Y6, Z6)
	Q3KZ_ROW(R12, Y0, Z0)
	FOLD4ZR(Z0, Y0)
	KFIN4_DR(108, Y4, Y5, Y6, Y0, X4, X26)
	ADVW4(110)
	ADDQ $292, DI
	DECQ CX
	JNZ z4q3kloop
z4q3kdone:
	VMOVUPS X26, (R9)
	VZEROUPPER
	RET
