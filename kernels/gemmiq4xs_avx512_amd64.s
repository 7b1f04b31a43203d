#include "textflag.h"

// AVX-512 packed IQ4_XS MatMul in the int16 layout of gemmiq4xs_amd64.go
// (the AVX2 kernel's layout and prep, unchanged). A 64-byte pair vector
// holds the (sc·v, sc·v) int16 pairs of all 16 rows, one dword per row, so
// one VPDPWSSD of it with a token's activation pair (a_2p, a_2p+1)
// broadcast from the prep (embedded broadcast) adds sc·(v_2p·a_2p +
// v_2p+1·a_2p+1) to each of the 16 rows' int32 lanes: the AVX2 kernel's
// two VPMADDWD, two VPADDD and one VPBROADCASTD in one instruction. The
// int32 sums are the AVX2 kernel's exactly (same pair sums, |sum| < 2^27,
// see the layout; integer addition in any order), and each super-block
// ends with the AVX2 kernel's float steps (fl(d_w·d_a), then one FMA of
// float(sum) into the running f32 sum), so the outputs are the AVX2
// kernel's bit for bit (TestGemmIQ4XS16AVX512MatchesAVX2).
//
// Twelve tokens at a time (int32 sums Z0..Z11, f32 sums Z12..Z23, both in
// registers: every 64-byte weight vector loaded once serves twelve
// VPDPWSSDs, twelve independent chains hide their latency), then eight,
// four, two, one. Tokens 0..5 of a group are at DI + {0,1,2,3,4,5}·R9
// (R10 = 3·R9, R11 = 5·R9), tokens 6..11 at R13 = DI + 6·R9.

// Element pair k of the sub-block at SI for each token of a group:
// Z0..Z(T-1) += VPDPWSSD(pair vector, the token's pair broadcast).
#define ZPAIR12(k) \
	VMOVDQU32 (64*k)(SI), Z24; \
	VPDPWSSD.BCST (4*k)(DI), Z24, Z0; \
	VPDPWSSD.BCST (4*k)(DI)(R9*1), Z24, Z1; \
	VPDPWSSD.BCST (4*k)(DI)(R9*2), Z24, Z2; \
	VPDPWSSD.BCST (4*k)(DI)(R10*1), Z24, Z3; \
	VPDPWSSD.BCST (4*k)(DI)(R9*4), Z24, Z4; \
	VPDPWSSD.BCST (4*k)(DI)(R11*1), Z24, Z5; \
	VPDPWSSD.BCST (4*k)(R13), Z24, Z6; \
	VPDPWSSD.BCST (4*k)(R13)(R9*1), Z24, Z7; \
	VPDPWSSD.BCST (4*k)(R13)(R9*2), Z24, Z8; \
	VPDPWSSD.BCST (4*k)(R13)(R10*1), Z24, Z9; \
	VPDPWSSD.BCST (4*k)(R13)(R9*4), Z24, Z10; \
	VPDPWSSD.BCST (4*k)(R13)(R11*1), Z24, Z11

#define ZSUB12 \
	ZPAIR12(0); \
	ZPAIR12(1); \
	ZPAIR12(2); \
	ZPAIR12(3); \
	ZPAIR12(4); \
	ZPAIR12(5); \
	ZPAIR12(6); \
	ZPAIR12(7); \
	ZPAIR12(8); \
	ZPAIR12(9); \
	ZPAIR12(10); \
	ZPAIR12(11); \
	ZPAIR12(12); \
	ZPAIR12(13); \
	ZPAIR12(14); \
	ZPAIR12(15)

// f32 sums Z12.. += fl(d_w·d_a)·float(int32 sums Z0..), tokens 0..11; d_w at SI, d_a at the token's prep.
#define ZFIN12 \
	VMOVUPS (SI), Z24; \
	VCVTDQ2PS Z0, Z0; \
	VMULPS.BCST (DI), Z24, Z25; \
	VFMADD231PS Z25, Z0, Z12; \
	VCVTDQ2PS Z1, Z1; \
	VMULPS.BCST (DI)(R9*1), Z24, Z25; \
	VFMADD231PS Z25, Z1, Z13; \
	VCVTDQ2PS Z2, Z2; \
	VMULPS.BCST (DI)(R9*2), Z24, Z25; \
	VFMADD231PS Z25, Z2, Z14; \
	VCVTDQ2PS Z3, Z3; \
	VMULPS.BCST (DI)(R10*1), Z24, Z25; \
	VFMADD231PS Z25, Z3, Z15; \
	VCVTDQ2PS Z4, Z4; \
	VMULPS.BCST (DI)(R9*4), Z24, Z25; \
	VFMADD231PS Z25, Z4, Z16; \
	VCVTDQ2PS Z5, Z5; \
	VMULPS.BCST (DI)(R11*1), Z24, Z25; \
	VFMADD231PS Z25, Z5, Z17; \
	VCVTDQ2PS Z6, Z6; \
	VMULPS.BCST (R13), Z24, Z25; \
	VFMADD231PS Z25, Z6, Z18; \
	VCVTDQ2PS Z7, Z7; \
	VMULPS.BCST (R13)(R9*1), Z24, Z25; \
	VFMADD231PS Z25, Z7, Z19; \
	VCVTDQ2PS Z8, Z8; \
	VMULPS.BCST (R13)(R9*2), Z24, Z25; \
	VFMADD231PS Z25, Z8, Z20; \
	VCVTDQ2PS Z9, Z9; \
	VMULPS.BCST (R13)(R10*1), Z24, Z25; \
	VFMADD231PS Z25, Z9, Z21; \
	VCVTDQ2PS Z10, Z10; \
	VMULPS.BCST (R13)(R9*4), Z24, Z25; \
	VFMADD231PS Z25, Z10, Z22; \
	VCVTDQ2PS Z11, Z11; \
	VMULPS.BCST (R13)(R11*1), Z24, Z25; \
	VFMADD231PS Z25, Z11, Z23

#define ZPAIR8(k) \
	VMOVDQU32 (64*k)(SI), Z24; \
	VPDPWSSD.BCST (4*k)(DI), Z24, Z0; \
	VPDPWSSD.BCST (4*k)(DI)(R9*1), Z24, Z1; \
	VPDPWSSD.BCST (4*k)(DI)(R9*2), Z24, Z2; \
	VPDPWSSD.BCST (4*k)(DI)(R10*1), Z24, Z3; \
	VPDPWSSD.BCST (4*k)(DI)(R9*4), Z24, Z4; \
	VPDPWSSD.BCST (4*k)(DI)(R11*1), Z24, Z5; \
	VPDPWSSD.BCST (4*k)(R13), Z24, Z6; \
	VPDPWSSD.BCST (4*k)(R13)(R9*1), Z24, Z7

#define ZSUB8 \
	ZPAIR8(0); \
	ZPAIR8(1); \
	ZPAIR8(2); \
	ZPAIR8(3); \
	ZPAIR8(4); \
	ZPAIR8(5); \
	ZPAIR8(6); \
	ZPAIR8(7); \
	ZPAIR8(8); \
	ZPAIR8(9); \
	ZPAIR8(10); \
	ZPAIR8(11); \
	ZPAIR8(12); \
	ZPAIR8(13); \
	ZPAIR8(14); \
	ZPAIR8(15)

// f32 sums Z12.. += fl(d_w·d_a)·float(int32 sums Z0..), tokens 0..7; d_w at SI, d_a at the token's prep.
#define ZFIN8 \
	VMOVUPS (SI), Z24; \
	VCVTDQ2PS Z0, Z0; \
	VMULPS.BCST (DI), Z24, Z25; \
	VFMADD231PS Z25, Z0, Z12; \
	VCVTDQ2PS Z1, Z1; \
	VMULPS.BCST (DI)(R9*1), Z24, Z25; \
	VFMADD231PS Z25, Z1, Z13; \
	VCVTDQ2PS Z2, Z2; \
	VMULPS.BCST (DI)(R9*2), Z24, Z25; \
	VFMADD231PS Z25, Z2, Z14; \
	VCVTDQ2PS Z3, Z3; \
	VMULPS.BCST (DI)(R10*1), Z24, Z25; \
	VFMADD231PS Z25, Z3, Z15; \
	VCVTDQ2PS Z4, Z4; \
	VMULPS.BCST (DI)(R9*4), Z24, Z25; \
	VFMADD231PS Z25, Z4, Z16; \
	VCVTDQ2PS Z5, Z5; \
	VMULPS.BCST (DI)(R11*1), Z24, Z25; \
	VFMADD231PS Z25, Z5, Z17; \
	VCVTDQ2PS Z6, Z6; \
	VMULPS.BCST (R13), Z24, Z25; \
	VFMADD231PS Z25, Z6, Z18; \
	VCVTDQ2PS Z7, Z7; \
	VMULPS.BCST (R13)(R9*1), Z24, Z25; \
	VFMADD231PS Z25, Z7, Z19

#define ZPAIR4(k) \
	VMOVDQU32 (64*k)(SI), Z24; \
	VPDPWSSD.BCST (4*k)(DI), Z24, Z0; \
	VPDPWSSD.BCST (4*k)(DI)(R9*1), Z24, Z1; \
	VPDPWSSD.BCST (4*k)(DI)(R9*2), Z24, Z2; \
	VPDPWSSD.BCST (4*k)(DI)(R10*1), Z24, Z3

#define ZSUB4 \
	ZPAIR4(0); \
	ZPAIR4(1); \
	ZPAIR4(2); \
	ZPAIR4(3); \
	ZPAIR4(4); \
	ZPAIR4(5); \
	ZPAIR4(6); \
	ZPAIR4(7); \
	ZPAIR4(8); \
	ZPAIR4(9); \
	ZPAIR4(10); \
	ZPAIR4(11); \
	ZPAIR4(12); \
	ZPAIR4(13); \
	ZPAIR4(14); \
	ZPAIR4(15)

// f32 sums Z12.. += fl(d_w·d_a)·float(int32 sums Z0..), tokens 0..3; d_w at SI, d_a at the token's prep.
#define ZFIN4 \
	VMOVUPS (SI), Z24; \
	VCVTDQ2PS Z0, Z0; \
	VMULPS.BCST (DI), Z24, Z25; \
	VFMADD231PS Z25, Z0, Z12; \
	VCVTDQ2PS Z1, Z1; \
	VMULPS.BCST (DI)(R9*1), Z24, Z25; \
	VFMADD231PS Z25, Z1, Z13; \
	VCVTDQ2PS Z2, Z2; \
	VMULPS.BCST (DI)(R9*2), Z24, Z25; \
	VFMADD231PS Z25, Z2, Z14; \
	VCVTDQ2PS Z3, Z3; \
	VMULPS.BCST (DI)(R10*1), Z24, Z25; \
	VFMADD231PS Z25, Z3, Z15

#define ZPAIR2(k) \
	VMOVDQU32 (64*k)(SI), Z24; \
	VPDPWSSD.BCST (4*k)(DI), Z24, Z0; \
	VPDPWSSD.BCST (4*k)(DI)(R9*1), Z24, Z1

#define ZSUB2 \
	ZPAIR2(0); \
	ZPAIR2(1); \
	ZPAIR2(2); \
	ZPAIR2(3); \
	ZPAIR2(4); \
	ZPAIR2(5); \
	ZPAIR2(6); \
	ZPAIR2(7); \
	ZPAIR2(8); \
	ZPAIR2(9); \
	ZPAIR2(10); \
	ZPAIR2(11); \
	ZPAIR2(12); \
	ZPAIR2(13); \
	ZPAIR2(14); \
	ZPAIR2(15)

// f32 sums Z12.. += fl(d_w·d_a)·float(int32 sums Z0..), tokens 0..1; d_w at SI, d_a at the token's prep.
#define ZFIN2 \
	VMOVUPS (SI), Z24; \
	VCVTDQ2PS Z0, Z0; \
	VMULPS.BCST (DI), Z24, Z25; \
	VFMADD231PS Z25, Z0, Z12; \
	VCVTDQ2PS Z1, Z1; \
	VMULPS.BCST (DI)(R9*1), Z24, Z25; \
	VFMADD231PS Z25, Z1, Z13

#define ZPAIR1(k) \
	VMOVDQU32 (64*k)(SI), Z24; \
	VPDPWSSD.BCST (4*k)(DI), Z24, Z0

#define ZSUB1 \
	ZPAIR1(0); \
	ZPAIR1(1); \
	ZPAIR1(2); \
	ZPAIR1(3); \
	ZPAIR1(4); \
	ZPAIR1(5); \
	ZPAIR1(6); \
	ZPAIR1(7); \
	ZPAIR1(8); \
	ZPAIR1(9); \
	ZPAIR1(10); \
	ZPAIR1(11); \
	ZPAIR1(12); \
	ZPAIR1(13); \
	ZPAIR1(14); \
	ZPAIR1(15)

// f32 sums Z12.. += fl(d_w·d_a)·float(int32 sums Z0..), tokens 0..0; d_w at SI, d_a at the token's prep.
#define ZFIN1 \
	VMOVUPS (SI), Z24; \
	VCVTDQ2PS Z0, Z0; \
	VMULPS.BCST (DI), Z24, Z25; \
	VFMADD231PS Z25, Z0, Z12

// func gemmKernelIQ4XS16AVX512(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
//
// gemmKernelIQ4XS16AVX2's contract: token t's block i at prep + t·pstride
// + 520·i (a unused), outputs at y + t·ys (ys in bytes), rows selected by
// the 16-bit mask, from zero if first. nblk ≥ 1 (gemmKCall).
TEXT ·gemmKernelIQ4XS16AVX512(SB), NOSPLIT, $0-88
	MOVQ prep+32(FP), R12
	MOVQ pstride+40(FP), R9
	LEAQ (R9)(R9*2), R10
	LEAQ (R9)(R9*4), R11
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
	MOVQ mask+72(FP), DX
	KMOVW DX, K1
z12group:
	CMPQ AX, $12
	JLT z8group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ z12zero
	MOVQ R14, R8
	VMOVUPS.Z (R8), K1, Z12
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z13
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z14
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z15
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z16
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z17
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z18
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z19
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z20
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z21
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z22
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z23
	JMP z12start
z12zero:
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
z12start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	LEAQ (R12)(R10*2), R13
z12block:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	MOVQ $8, DX
z12sub:
	ZSUB12
	ADDQ $1024, SI
	ADDQ $64, DI
	ADDQ $64, R13
	DECQ DX
	JNZ z12sub
	ZFIN12
	ADDQ $64, SI
	ADDQ $8, DI
	ADDQ $8, R13
	DECQ CX
	JNZ z12block
	MOVQ R14, R8
	VMOVUPS Z12, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z13, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z14, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z15, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z16, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z17, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z18, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z19, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z20, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z21, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z22, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z23, K1, (R8)
	ADDQ BX, R8
	MOVQ R8, R14
	LEAQ (R12)(R10*4), R12
	SUBQ $12, AX
	JMP z12group
z8group:
	CMPQ AX, $8
	JLT z4group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ z8zero
	MOVQ R14, R8
	VMOVUPS.Z (R8), K1, Z12
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z13
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z14
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z15
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z16
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z17
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z18
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z19
	JMP z8start
z8zero:
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
z8start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	LEAQ (R12)(R10*2), R13
z8block:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ $8, DX
z8sub:
	ZSUB8
	ADDQ $1024, SI
	ADDQ $64, DI
	ADDQ $64, R13
	DECQ DX
	JNZ z8sub
	ZFIN8
	ADDQ $64, SI
	ADDQ $8, DI
	ADDQ $8, R13
	DECQ CX
	JNZ z8block
	MOVQ R14, R8
	VMOVUPS Z12, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z13, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z14, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z15, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z16, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z17, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z18, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z19, K1, (R8)
	ADDQ BX, R8
	MOVQ R8, R14
	LEAQ (R12)(R9*8), R12
	SUBQ $8, AX
	JMP z8group
z4group:
	CMPQ AX, $4
	JLT z2group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ z4zero
	MOVQ R14, R8
	VMOVUPS.Z (R8), K1, Z12
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z13
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z14
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z15
	JMP z4start
z4zero:
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
z4start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
z4block:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ $8, DX
z4sub:
	ZSUB4
	ADDQ $1024, SI
	ADDQ $64, DI
	DECQ DX
	JNZ z4sub
	ZFIN4
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ z4block
	MOVQ R14, R8
	VMOVUPS Z12, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z13, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z14, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z15, K1, (R8)
	ADDQ BX, R8
	MOVQ R8, R14
	LEAQ (R12)(R9*4), R12
	SUBQ $4, AX
	JMP z4group
z2group:
	CMPQ AX, $2
	JLT z1group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ z2zero
	MOVQ R14, R8
	VMOVUPS.Z (R8), K1, Z12
	ADDQ BX, R8
	VMOVUPS.Z (R8), K1, Z13
	JMP z2start
z2zero:
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
z2start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
z2block:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	MOVQ $8, DX
z2sub:
	ZSUB2
	ADDQ $1024, SI
	ADDQ $64, DI
	DECQ DX
	JNZ z2sub
	ZFIN2
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ z2block
	MOVQ R14, R8
	VMOVUPS Z12, K1, (R8)
	ADDQ BX, R8
	VMOVUPS Z13, K1, (R8)
	ADDQ BX, R8
	MOVQ R8, R14
	LEAQ (R12)(R9*2), R12
	SUBQ $2, AX
	JMP z2group
z1group:
	CMPQ AX, $1
	JLT zendgroup
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ z1zero
	MOVQ R14, R8
	VMOVUPS.Z (R8), K1, Z12
	JMP z1start
z1zero:
	VPXORD Z12, Z12, Z12
z1start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
z1block:
	VPXORD Z0, Z0, Z0
	MOVQ $8, DX
z1sub:
	ZSUB1
	ADDQ $1024, SI
	ADDQ $64, DI
	DECQ DX
	JNZ z1sub
	ZFIN1
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ z1block
	MOVQ R14, R8
	VMOVUPS Z12, K1, (R8)
	ADDQ BX, R8
	MOVQ R8, R14
	ADDQ R9, R12
	SUBQ $1, AX
	JMP z1group
zendgroup:
	VZEROUPPER
	RET
