#include "textflag.h"

// AVX2 packed IQ4_XS MatMul in the int16 layout of gemmiq4xs_amd64.go.
// Per element pair p and token t, VPMADDWD of the weights' (sc·v, sc·v)
// pairs (one dword per row) with the token's broadcast activation pair
// (a_2p, a_2p+1) as int16 adds sc·(v_2p·a_2p + v_2p+1·a_2p+1) to each row's
// int32 lane; the 128 pairs of a super-block sum exactly (|sum| < 2^27, see
// the layout), then f += fl(d_w·d_a)·float(sum) per super-block. Six
// tokens at a time (12 int32 accumulators: every weight vector loaded once
// serves six tokens), then four, two, one; the f32 sums of the tokens in
// flight live in the frame.

// iq4xsBits: dword lane r = 1<<r, to expand the row bitmask into lane masks.
DATA iq4xsBits<>+0(SB)/8, $0x0000000200000001
DATA iq4xsBits<>+8(SB)/8, $0x0000000800000004
DATA iq4xsBits<>+16(SB)/8, $0x0000002000000010
DATA iq4xsBits<>+24(SB)/8, $0x0000008000000040
DATA iq4xsBits<>+32(SB)/8, $0x0000020000000100
DATA iq4xsBits<>+40(SB)/8, $0x0000080000000400
DATA iq4xsBits<>+48(SB)/8, $0x0000200000001000
DATA iq4xsBits<>+56(SB)/8, $0x0000800000004000
GLOBL iq4xsBits<>(SB), RODATA|NOPTR, $64

// Y12, Y13 = lane masks (rows 0..7, 8..15) from the row bitmask argument.
#define XMASKS \
	VPBROADCASTD mask+72(FP), Y13; \
	VPAND iq4xsBits<>+0(SB), Y13, Y12; \
	VPCMPEQD iq4xsBits<>+0(SB), Y12, Y12; \
	VPAND iq4xsBits<>+32(SB), Y13, Y13; \
	VPCMPEQD iq4xsBits<>+32(SB), Y13, Y13

// One token's activation pair at addr against the weight pair vectors Y12
// (rows 0..7), Y13 (rows 8..15): lo, hi += the VPMADDWD products.
#define XACC(addr, lo, hi) \
	VPBROADCASTD addr, Y14; \
	VPMADDWD Y14, Y12, Y15; \
	VPADDD Y15, lo, lo; \
	VPMADDWD Y14, Y13, Y14; \
	VPADDD Y14, hi, hi

// Element pair k of the sub-block at SI for tokens 0..5 (DI + t·R9).
#define XPAIR6(k) \
	VMOVDQU (64*k)(SI), Y12; \
	VMOVDQU (64*k+32)(SI), Y13; \
	XACC((4*k)(DI), Y0, Y1); \
	XACC((4*k)(DI)(R9*1), Y2, Y3); \
	XACC((4*k)(DI)(R9*2), Y4, Y5); \
	XACC((4*k)(DI)(R10*1), Y6, Y7); \
	XACC((4*k)(DI)(R9*4), Y8, Y9); \
	XACC((4*k)(DI)(R11*1), Y10, Y11)

#define XSUB6 \
	XPAIR6(0); \
	XPAIR6(1); \
	XPAIR6(2); \
	XPAIR6(3); \
	XPAIR6(4); \
	XPAIR6(5); \
	XPAIR6(6); \
	XPAIR6(7); \
	XPAIR6(8); \
	XPAIR6(9); \
	XPAIR6(10); \
	XPAIR6(11); \
	XPAIR6(12); \
	XPAIR6(13); \
	XPAIR6(14); \
	XPAIR6(15)

// f32 sums (frame) += fl(d_w·d_a)·float(int32 sums), tokens 0..5; d_w at SI, d_a at DI + t·R9.
#define XFIN6 \
	VBROADCASTSS (DI), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y0, Y0; \
	VCVTDQ2PS Y1, Y1; \
	VMOVUPS 0(SP), Y15; \
	VFMADD231PS Y12, Y0, Y15; \
	VMOVUPS Y15, 0(SP); \
	VMOVUPS 32(SP), Y15; \
	VFMADD231PS Y13, Y1, Y15; \
	VMOVUPS Y15, 32(SP); \
	VBROADCASTSS (DI)(R9*1), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y2, Y2; \
	VCVTDQ2PS Y3, Y3; \
	VMOVUPS 64(SP), Y15; \
	VFMADD231PS Y12, Y2, Y15; \
	VMOVUPS Y15, 64(SP); \
	VMOVUPS 96(SP), Y15; \
	VFMADD231PS Y13, Y3, Y15; \
	VMOVUPS Y15, 96(SP); \
	VBROADCASTSS (DI)(R9*2), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y4, Y4; \
	VCVTDQ2PS Y5, Y5; \
	VMOVUPS 128(SP), Y15; \
	VFMADD231PS Y12, Y4, Y15; \
	VMOVUPS Y15, 128(SP); \
	VMOVUPS 160(SP), Y15; \
	VFMADD231PS Y13, Y5, Y15; \
	VMOVUPS Y15, 160(SP); \
	VBROADCASTSS (DI)(R10*1), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y6, Y6; \
	VCVTDQ2PS Y7, Y7; \
	VMOVUPS 192(SP), Y15; \
	VFMADD231PS Y12, Y6, Y15; \
	VMOVUPS Y15, 192(SP); \
	VMOVUPS 224(SP), Y15; \
	VFMADD231PS Y13, Y7, Y15; \
	VMOVUPS Y15, 224(SP); \
	VBROADCASTSS (DI)(R9*4), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y8, Y8; \
	VCVTDQ2PS Y9, Y9; \
	VMOVUPS 256(SP), Y15; \
	VFMADD231PS Y12, Y8, Y15; \
	VMOVUPS Y15, 256(SP); \
	VMOVUPS 288(SP), Y15; \
	VFMADD231PS Y13, Y9, Y15; \
	VMOVUPS Y15, 288(SP); \
	VBROADCASTSS (DI)(R11*1), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y10, Y10; \
	VCVTDQ2PS Y11, Y11; \
	VMOVUPS 320(SP), Y15; \
	VFMADD231PS Y12, Y10, Y15; \
	VMOVUPS Y15, 320(SP); \
	VMOVUPS 352(SP), Y15; \
	VFMADD231PS Y13, Y11, Y15; \
	VMOVUPS Y15, 352(SP)

// Element pair k of the sub-block at SI for tokens 0..3 (DI + t·R9).
#define XPAIR4(k) \
	VMOVDQU (64*k)(SI), Y12; \
	VMOVDQU (64*k+32)(SI), Y13; \
	XACC((4*k)(DI), Y0, Y1); \
	XACC((4*k)(DI)(R9*1), Y2, Y3); \
	XACC((4*k)(DI)(R9*2), Y4, Y5); \
	XACC((4*k)(DI)(R10*1), Y6, Y7)

#define XSUB4 \
	XPAIR4(0); \
	XPAIR4(1); \
	XPAIR4(2); \
	XPAIR4(3); \
	XPAIR4(4); \
	XPAIR4(5); \
	XPAIR4(6); \
	XPAIR4(7); \
	XPAIR4(8); \
	XPAIR4(9); \
	XPAIR4(10); \
	XPAIR4(11); \
	XPAIR4(12); \
	XPAIR4(13); \
	XPAIR4(14); \
	XPAIR4(15)

// f32 sums (frame) += fl(d_w·d_a)·float(int32 sums), tokens 0..3; d_w at SI, d_a at DI + t·R9.
#define XFIN4 \
	VBROADCASTSS (DI), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y0, Y0; \
	VCVTDQ2PS Y1, Y1; \
	VMOVUPS 0(SP), Y15; \
	VFMADD231PS Y12, Y0, Y15; \
	VMOVUPS Y15, 0(SP); \
	VMOVUPS 32(SP), Y15; \
	VFMADD231PS Y13, Y1, Y15; \
	VMOVUPS Y15, 32(SP); \
	VBROADCASTSS (DI)(R9*1), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y2, Y2; \
	VCVTDQ2PS Y3, Y3; \
	VMOVUPS 64(SP), Y15; \
	VFMADD231PS Y12, Y2, Y15; \
	VMOVUPS Y15, 64(SP); \
	VMOVUPS 96(SP), Y15; \
	VFMADD231PS Y13, Y3, Y15; \
	VMOVUPS Y15, 96(SP); \
	VBROADCASTSS (DI)(R9*2), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y4, Y4; \
	VCVTDQ2PS Y5, Y5; \
	VMOVUPS 128(SP), Y15; \
	VFMADD231PS Y12, Y4, Y15; \
	VMOVUPS Y15, 128(SP); \
	VMOVUPS 160(SP), Y15; \
	VFMADD231PS Y13, Y5, Y15; \
	VMOVUPS Y15, 160(SP); \
	VBROADCASTSS (DI)(R10*1), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y6, Y6; \
	VCVTDQ2PS Y7, Y7; \
	VMOVUPS 192(SP), Y15; \
	VFMADD231PS Y12, Y6, Y15; \
	VMOVUPS Y15, 192(SP); \
	VMOVUPS 224(SP), Y15; \
	VFMADD231PS Y13, Y7, Y15; \
	VMOVUPS Y15, 224(SP)

// Element pair k of the sub-block at SI for tokens 0..1 (DI + t·R9).
#define XPAIR2(k) \
	VMOVDQU (64*k)(SI), Y12; \
	VMOVDQU (64*k+32)(SI), Y13; \
	XACC((4*k)(DI), Y0, Y1); \
	XACC((4*k)(DI)(R9*1), Y2, Y3)

#define XSUB2 \
	XPAIR2(0); \
	XPAIR2(1); \
	XPAIR2(2); \
	XPAIR2(3); \
	XPAIR2(4); \
	XPAIR2(5); \
	XPAIR2(6); \
	XPAIR2(7); \
	XPAIR2(8); \
	XPAIR2(9); \
	XPAIR2(10); \
	XPAIR2(11); \
	XPAIR2(12); \
	XPAIR2(13); \
	XPAIR2(14); \
	XPAIR2(15)

// f32 sums (frame) += fl(d_w·d_a)·float(int32 sums), tokens 0..1; d_w at SI, d_a at DI + t·R9.
#define XFIN2 \
	VBROADCASTSS (DI), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y0, Y0; \
	VCVTDQ2PS Y1, Y1; \
	VMOVUPS 0(SP), Y15; \
	VFMADD231PS Y12, Y0, Y15; \
	VMOVUPS Y15, 0(SP); \
	VMOVUPS 32(SP), Y15; \
	VFMADD231PS Y13, Y1, Y15; \
	VMOVUPS Y15, 32(SP); \
	VBROADCASTSS (DI)(R9*1), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y2, Y2; \
	VCVTDQ2PS Y3, Y3; \
	VMOVUPS 64(SP), Y15; \
	VFMADD231PS Y12, Y2, Y15; \
	VMOVUPS Y15, 64(SP); \
	VMOVUPS 96(SP), Y15; \
	VFMADD231PS Y13, Y3, Y15; \
	VMOVUPS Y15, 96(SP)

// Element pair k of the sub-block at SI for tokens 0..0 (DI + t·R9).
#define XPAIR1(k) \
	VMOVDQU (64*k)(SI), Y12; \
	VMOVDQU (64*k+32)(SI), Y13; \
	XACC((4*k)(DI), Y0, Y1)

#define XSUB1 \
	XPAIR1(0); \
	XPAIR1(1); \
	XPAIR1(2); \
	XPAIR1(3); \
	XPAIR1(4); \
	XPAIR1(5); \
	XPAIR1(6); \
	XPAIR1(7); \
	XPAIR1(8); \
	XPAIR1(9); \
	XPAIR1(10); \
	XPAIR1(11); \
	XPAIR1(12); \
	XPAIR1(13); \
	XPAIR1(14); \
	XPAIR1(15)

// f32 sums (frame) += fl(d_w·d_a)·float(int32 sums), tokens 0..0; d_w at SI, d_a at DI + t·R9.
#define XFIN1 \
	VBROADCASTSS (DI), Y14; \
	VMULPS (SI), Y14, Y12; \
	VMULPS 32(SI), Y14, Y13; \
	VCVTDQ2PS Y0, Y0; \
	VCVTDQ2PS Y1, Y1; \
	VMOVUPS 0(SP), Y15; \
	VFMADD231PS Y12, Y0, Y15; \
	VMOVUPS Y15, 0(SP); \
	VMOVUPS 32(SP), Y15; \
	VFMADD231PS Y13, Y1, Y15; \
	VMOVUPS Y15, 32(SP)

// func gemmKernelIQ4XS16AVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
//
// The gemmKernel contract for the int16 IQ4_XS layout with a token-major
// prep: token t's block i at prep + t·pstride + 520·i (a unused).
TEXT ·gemmKernelIQ4XS16AVX2(SB), NOSPLIT, $384-88
	MOVQ prep+32(FP), R12
	MOVQ pstride+40(FP), R9
	LEAQ (R9)(R9*2), R10
	LEAQ (R9)(R9*4), R11
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
x6group:
	CMPQ AX, $6
	JLT x4group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ x6zero
	XMASKS
	MOVQ R14, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 0(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 32(SP)
	ADDQ BX, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 64(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 96(SP)
	ADDQ BX, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 128(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 160(SP)
	ADDQ BX, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 192(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 224(SP)
	ADDQ BX, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 256(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 288(SP)
	ADDQ BX, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 320(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 352(SP)
	JMP x6start
x6zero:
	VPXOR Y15, Y15, Y15
	VMOVUPS Y15, 0(SP)
	VMOVUPS Y15, 32(SP)
	VMOVUPS Y15, 64(SP)
	VMOVUPS Y15, 96(SP)
	VMOVUPS Y15, 128(SP)
	VMOVUPS Y15, 160(SP)
	VMOVUPS Y15, 192(SP)
	VMOVUPS Y15, 224(SP)
	VMOVUPS Y15, 256(SP)
	VMOVUPS Y15, 288(SP)
	VMOVUPS Y15, 320(SP)
	VMOVUPS Y15, 352(SP)
x6start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
x6block:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	MOVQ $8, DX
x6sub:
	XSUB6
	ADDQ $1024, SI
	ADDQ $64, DI
	DECQ DX
	JNZ x6sub
	XFIN6
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ x6block
	XMASKS
	MOVQ R14, R8
	VMOVUPS 0(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 32(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	VMOVUPS 64(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 96(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	VMOVUPS 128(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 160(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	VMOVUPS 192(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 224(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	VMOVUPS 256(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 288(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	VMOVUPS 320(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 352(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	MOVQ R8, R14
	LEAQ (R12)(R10*2), R12
	SUBQ $6, AX
	JMP x6group
x4group:
	CMPQ AX, $4
	JLT x2group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ x4zero
	XMASKS
	MOVQ R14, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 0(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 32(SP)
	ADDQ BX, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 64(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 96(SP)
	ADDQ BX, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 128(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 160(SP)
	ADDQ BX, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 192(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 224(SP)
	JMP x4start
x4zero:
	VPXOR Y15, Y15, Y15
	VMOVUPS Y15, 0(SP)
	VMOVUPS Y15, 32(SP)
	VMOVUPS Y15, 64(SP)
	VMOVUPS Y15, 96(SP)
	VMOVUPS Y15, 128(SP)
	VMOVUPS Y15, 160(SP)
	VMOVUPS Y15, 192(SP)
	VMOVUPS Y15, 224(SP)
x4start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
x4block:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	MOVQ $8, DX
x4sub:
	XSUB4
	ADDQ $1024, SI
	ADDQ $64, DI
	DECQ DX
	JNZ x4sub
	XFIN4
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ x4block
	XMASKS
	MOVQ R14, R8
	VMOVUPS 0(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 32(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	VMOVUPS 64(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 96(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	VMOVUPS 128(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 160(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	VMOVUPS 192(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 224(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	MOVQ R8, R14
	LEAQ (R12)(R9*4), R12
	SUBQ $4, AX
	JMP x4group
x2group:
	CMPQ AX, $2
	JLT x1group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ x2zero
	XMASKS
	MOVQ R14, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 0(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 32(SP)
	ADDQ BX, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 64(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 96(SP)
	JMP x2start
x2zero:
	VPXOR Y15, Y15, Y15
	VMOVUPS Y15, 0(SP)
	VMOVUPS Y15, 32(SP)
	VMOVUPS Y15, 64(SP)
	VMOVUPS Y15, 96(SP)
x2start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
x2block:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	MOVQ $8, DX
x2sub:
	XSUB2
	ADDQ $1024, SI
	ADDQ $64, DI
	DECQ DX
	JNZ x2sub
	XFIN2
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ x2block
	XMASKS
	MOVQ R14, R8
	VMOVUPS 0(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 32(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	VMOVUPS 64(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 96(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	MOVQ R8, R14
	LEAQ (R12)(R9*2), R12
	SUBQ $2, AX
	JMP x2group
x1group:
	TESTQ AX, AX
	JZ xdone
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ x1zero
	XMASKS
	MOVQ R14, R8
	VMASKMOVPS (R8), Y12, Y14
	VMOVUPS Y14, 0(SP)
	VMASKMOVPS 32(R8), Y13, Y14
	VMOVUPS Y14, 32(SP)
	JMP x1start
x1zero:
	VPXOR Y15, Y15, Y15
	VMOVUPS Y15, 0(SP)
	VMOVUPS Y15, 32(SP)
x1start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
x1block:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	MOVQ $8, DX
x1sub:
	XSUB1
	ADDQ $1024, SI
	ADDQ $64, DI
	DECQ DX
	JNZ x1sub
	XFIN1
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ x1block
	XMASKS
	MOVQ R14, R8
	VMOVUPS 0(SP), Y14
	VMASKMOVPS Y14, Y12, (R8)
	VMOVUPS 32(SP), Y14
	VMASKMOVPS Y14, Y13, 32(R8)
	ADDQ BX, R8
	MOVQ R8, R14
	ADDQ R9, R12
	SUBQ $1, AX
	JMP x1group
xdone:
	VZEROUPPER
	RET

// func gemmPrepQ8KI16AVX2(nblk int, a *byte, dst *byte, stride int)
//
// For each of nblk consecutive Q8_K blocks at a: its 256 quants as int16
// at dst, its f32 scale at dst+512, then dst += stride.
TEXT ·gemmPrepQ8KI16AVX2(SB), NOSPLIT, $0-32
	MOVQ nblk+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ dst+16(FP), DI
	MOVQ stride+24(FP), DX
	TESTQ CX, CX
	JZ prepdone
preploop:
	MOVL (SI), AX
	MOVL AX, 512(DI)
	VPMOVSXBW 4(SI), Y0
	VMOVDQU Y0, 0(DI)
	VPMOVSXBW 20(SI), Y1
	VMOVDQU Y1, 32(DI)
	VPMOVSXBW 36(SI), Y2
	VMOVDQU Y2, 64(DI)
	VPMOVSXBW 52(SI), Y3
	VMOVDQU Y3, 96(DI)
	VPMOVSXBW 68(SI), Y0
	VMOVDQU Y0, 128(DI)
	VPMOVSXBW 84(SI), Y1
	VMOVDQU Y1, 160(DI)
	VPMOVSXBW 100(SI), Y2
	VMOVDQU Y2, 192(DI)
	VPMOVSXBW 116(SI), Y3
	VMOVDQU Y3, 224(DI)
	VPMOVSXBW 132(SI), Y0
	VMOVDQU Y0, 256(DI)
	VPMOVSXBW 148(SI), Y1
	VMOVDQU Y1, 288(DI)
	VPMOVSXBW 164(SI), Y2
	VMOVDQU Y2, 320(DI)
	VPMOVSXBW 180(SI), Y3
	VMOVDQU Y3, 352(DI)
	VPMOVSXBW 196(SI), Y0
	VMOVDQU Y0, 384(DI)
	VPMOVSXBW 212(SI), Y1
	VMOVDQU Y1, 416(DI)
	VPMOVSXBW 228(SI), Y2
	VMOVDQU Y2, 448(DI)
	VPMOVSXBW 244(SI), Y3
	VMOVDQU Y3, 480(DI)
	ADDQ $292, SI
	ADDQ DX, DI
	DECQ CX
	JNZ preploop
prepdone:
	VZEROUPPER
	RET

// Row i (0..3 of the group at R10) of sub-block s: its 32 values times the
// sub-block scale as int16, elements 0..15 (pairs 0..7) in lo, 16..31
// (pairs 8..15) in hi. X15 = 0x0f bytes, X14 = the codebook.
#define XPROW(s, q, sb, sh, shs, lo, hi) \
	MOVBLZX sb, AX; \
	SHRL shs, AX; \
	ANDL $15, AX; \
	MOVWLZX sh, DX; \
	SHRL $(2*s), DX; \
	ANDL $3, DX; \
	SHLL $4, DX; \
	ORL DX, AX; \
	SUBL $32, AX; \
	VMOVD AX, X10; \
	VPBROADCASTW X10, Y10; \
	VMOVDQU q, X8; \
	VPSRLW $4, X8, X9; \
	VPAND X15, X8, X8; \
	VPAND X15, X9, X9; \
	VPSHUFB X8, X14, X8; \
	VPSHUFB X9, X14, X9; \
	VPMOVSXBW X8, lo; \
	VPMOVSXBW X9, hi; \
	VPMULLW Y10, lo, lo; \
	VPMULLW Y10, hi, hi

// Four rows' pair dwords in Ya..Yd (pairs 0..7 each) transposed and
// stored: pair k's four rows (16 bytes) at o + 64k, pair k+4's at
// o + 256 + 64k (R9-relative). Clobbers Ya..Yd, Y11..Y13.
#define XPT4(ya, yb, yc, yd, xb, xc, xd, o) \
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

// Sub-block s of the four rows at R10: values at 8+16s, scale bits at
// 4+s/2 (nibble s%2) and 2 (bits 2s, 2s+1).
#define XPSUB(s) \
	XPROW(s, (8+16*s)(R10), (4+s/2)(R10), 2(R10), $(4*(s%2)), Y0, Y4); \
	XPROW(s, (8+16*s)(R10)(R8*1), (4+s/2)(R10)(R8*1), 2(R10)(R8*1), $(4*(s%2)), Y1, Y5); \
	XPROW(s, (8+16*s)(R10)(R8*2), (4+s/2)(R10)(R8*2), 2(R10)(R8*2), $(4*(s%2)), Y2, Y6); \
	XPROW(s, (8+16*s)(R10)(R11*1), (4+s/2)(R10)(R11*1), 2(R10)(R11*1), $(4*(s%2)), Y3, Y7); \
	XPT4(Y0, Y1, Y2, Y3, X1, X2, X3, (1024*s)); \
	XPT4(Y4, Y5, Y6, Y7, X5, X6, X7, (1024*s+512))

DATA iq4xsNib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA iq4xsNib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL iq4xsNib<>(SB), RODATA|NOPTR, $16
// kvalues_iq4nl as int8.
DATA iq4xsVal<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA iq4xsVal<>+8(SB)/8, $0x7159453526190d01
GLOBL iq4xsVal<>(SB), RODATA|NOPTR, $16

// func gemmPackIQ4XS16AVX2(nblk int, w *byte, ws int, dst *byte)
//
// The values of packIQ4XS16's layout (not the d's): super-blocks [0, nblk)
// of the 16 rows w, w+ws, ..., w+15·ws, four rows at a time.
TEXT ·gemmPackIQ4XS16AVX2(SB), NOSPLIT, $0-32
	MOVQ nblk+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ ws+16(FP), R8
	MOVQ dst+24(FP), DI
	LEAQ (R8)(R8*2), R11
	VMOVDQU iq4xsNib<>(SB), X15
	VMOVDQU iq4xsVal<>(SB), X14
	TESTQ CX, CX
	JZ xpdone
xpblock:
	MOVQ SI, R10
	MOVQ DI, R9
	MOVQ $4, BX
xpgroup:
	XPSUB(0)
	XPSUB(1)
	XPSUB(2)
	XPSUB(3)
	XPSUB(4)
	XPSUB(5)
	XPSUB(6)
	XPSUB(7)
	LEAQ (R10)(R8*4), R10
	ADDQ $16, R9
	DECQ BX
	JNZ xpgroup
	ADDQ $136, SI
	ADDQ $8256, DI
	DECQ CX
	JNZ xpblock
xpdone:
	VZEROUPPER
	RET
