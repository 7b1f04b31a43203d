// Packed Q4_0/Q8_0 × Q8_0 matrix × matrix (prefill) for AVX-512 VNNI; see
// gemm.go for the tiling and the packed layout. Integer block sums are exact
// for every byte pattern: the packed weights are unsigned (q for Q4_0, w+128
// for Q8_0), VPDPBUSD multiplies them by the signed activation bytes, and the
// accumulator starts at the activation block's -off·Σa, so it ends at Σ w·a.

#include "textflag.h"

DATA gemm0f<>+0(SB)/4, $0x0f0f0f0f
GLOBL gemm0f<>(SB), RODATA|NOPTR, $4
DATA gemm80<>+0(SB)/4, $0x80808080
GLOBL gemm80<>(SB), RODATA|NOPTR, $4

// gemmIota: dword lane r = r (the gather's row index before ×ws).
DATA gemmIota<>+0(SB)/8, $0x0000000100000000
DATA gemmIota<>+8(SB)/8, $0x0000000300000002
DATA gemmIota<>+16(SB)/8, $0x0000000500000004
DATA gemmIota<>+24(SB)/8, $0x0000000700000006
DATA gemmIota<>+32(SB)/8, $0x0000000900000008
DATA gemmIota<>+40(SB)/8, $0x0000000b0000000a
DATA gemmIota<>+48(SB)/8, $0x0000000d0000000c
DATA gemmIota<>+56(SB)/8, $0x0000000f0000000e
GLOBL gemmIota<>(SB), RODATA|NOPTR, $64

// Q4_0 transpose, stage 1. Inputs hold four rows each, lane 4i+j = dword j
// of row i. q4A = [dword 0 of rows 0..7 | dword 1 of rows 0..7] of the pair
// (first, second); q4B the same for dwords 2 and 3.
DATA q4A<>+0(SB)/8, $0x0000000400000000
DATA q4A<>+8(SB)/8, $0x0000000c00000008
DATA q4A<>+16(SB)/8, $0x0000001400000010
DATA q4A<>+24(SB)/8, $0x0000001c00000018
DATA q4A<>+32(SB)/8, $0x0000000500000001
DATA q4A<>+40(SB)/8, $0x0000000d00000009
DATA q4A<>+48(SB)/8, $0x0000001500000011
DATA q4A<>+56(SB)/8, $0x0000001d00000019
GLOBL q4A<>(SB), RODATA|NOPTR, $64
DATA q4B<>+0(SB)/8, $0x0000000600000002
DATA q4B<>+8(SB)/8, $0x0000000e0000000a
DATA q4B<>+16(SB)/8, $0x0000001600000012
DATA q4B<>+24(SB)/8, $0x0000001e0000001a
DATA q4B<>+32(SB)/8, $0x0000000700000003
DATA q4B<>+40(SB)/8, $0x0000000f0000000b
DATA q4B<>+48(SB)/8, $0x0000001700000013
DATA q4B<>+56(SB)/8, $0x0000001f0000001b
GLOBL q4B<>(SB), RODATA|NOPTR, $64

// Q8_0 transpose. Inputs hold two rows each, lane 8i+j = dword j of row i.
// Stage 1, q8C: 128-bit lane j = dword j of the pair's four rows (j < 4);
// q8D the same for dwords 4..7. Stage 2, q8E: [lane 0 of first, lane 0 of
// second, lane 1 of first, lane 1 of second]; q8F the same for lanes 2, 3.
DATA q8C<>+0(SB)/8, $0x0000000800000000
DATA q8C<>+8(SB)/8, $0x0000001800000010
DATA q8C<>+16(SB)/8, $0x0000000900000001
DATA q8C<>+24(SB)/8, $0x0000001900000011
DATA q8C<>+32(SB)/8, $0x0000000a00000002
DATA q8C<>+40(SB)/8, $0x0000001a00000012
DATA q8C<>+48(SB)/8, $0x0000000b00000003
DATA q8C<>+56(SB)/8, $0x0000001b00000013
GLOBL q8C<>(SB), RODATA|NOPTR, $64
DATA q8D<>+0(SB)/8, $0x0000000c00000004
DATA q8D<>+8(SB)/8, $0x0000001c00000014
DATA q8D<>+16(SB)/8, $0x0000000d00000005
DATA q8D<>+24(SB)/8, $0x0000001d00000015
DATA q8D<>+32(SB)/8, $0x0000000e00000006
DATA q8D<>+40(SB)/8, $0x0000001e00000016
DATA q8D<>+48(SB)/8, $0x0000000f00000007
DATA q8D<>+56(SB)/8, $0x0000001f00000017
GLOBL q8D<>(SB), RODATA|NOPTR, $64
DATA q8E<>+0(SB)/8, $0x0000000100000000
DATA q8E<>+8(SB)/8, $0x0000000300000002
DATA q8E<>+16(SB)/8, $0x0000001100000010
DATA q8E<>+24(SB)/8, $0x0000001300000012
DATA q8E<>+32(SB)/8, $0x0000000500000004
DATA q8E<>+40(SB)/8, $0x0000000700000006
DATA q8E<>+48(SB)/8, $0x0000001500000014
DATA q8E<>+56(SB)/8, $0x0000001700000016
GLOBL q8E<>(SB), RODATA|NOPTR, $64
DATA q8F<>+0(SB)/8, $0x0000000900000008
DATA q8F<>+8(SB)/8, $0x0000000b0000000a
DATA q8F<>+16(SB)/8, $0x0000001900000018
DATA q8F<>+24(SB)/8, $0x0000001b0000001a
DATA q8F<>+32(SB)/8, $0x0000000d0000000c
DATA q8F<>+40(SB)/8, $0x0000000f0000000e
DATA q8F<>+48(SB)/8, $0x0000001d0000001c
DATA q8F<>+56(SB)/8, $0x0000001f0000001e
GLOBL q8F<>(SB), RODATA|NOPTR, $64

// Common prologue of the packers: SI, R8, R11, R12 = rows 0, 4, 8, 12;
// R9 = ws, R10 = 3·ws; DI = dst; CX = blocks; Z31 = gather offsets r·ws.
#define PACKARGS \
	MOVQ nblk+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ ws+16(FP), R9; \
	MOVQ dst+24(FP), DI; \
	LEAQ (R9)(R9*2), R10; \
	LEAQ (SI)(R9*4), R8; \
	LEAQ (R8)(R9*4), R11; \
	LEAQ (R11)(R9*4), R12; \
	VMOVDQU64 gemmIota<>(SB), Z31; \
	VPBROADCASTD R9, Z30; \
	VPMULLD Z30, Z31, Z31

// Z13 = the 16 rows' fp16 block scales (at offset 0 of each row's block at
// SI) as f32, stored at 512(DI).
#define PACKSCALES \
	KXNORW K1, K1, K1; \
	VPXORD Z13, Z13, Z13; \
	VPGATHERDD (SI)(Z31*1), K1, Z13; \
	VPMOVDW Z13, Y13; \
	VCVTPH2PS Y13, Z13; \
	VMOVDQU64 Z13, 512(DI)

// Xn..Zn = 16 bytes at off of rows base, base+ws, base+2ws, base+3ws.
#define LOAD4X(off, base, z, x) \
	VMOVDQU off(base), x; \
	VINSERTI32X4 $1, off(base)(R9*1), z, z; \
	VINSERTI32X4 $2, off(base)(R9*2), z, z; \
	VINSERTI32X4 $3, off(base)(R10*1), z, z

// Prefetch the 16 rows d bytes ahead: the rows are 16 concurrent streams
// from DRAM (mmap), more than the hardware prefetcher follows.
#define PREFETCH16(d) \
	PREFETCHT0 d(SI); \
	PREFETCHT0 d(SI)(R9*1); \
	PREFETCHT0 d(SI)(R9*2); \
	PREFETCHT0 d(SI)(R10*1); \
	PREFETCHT0 d(R8); \
	PREFETCHT0 d(R8)(R9*1); \
	PREFETCHT0 d(R8)(R9*2); \
	PREFETCHT0 d(R8)(R10*1); \
	PREFETCHT0 d(R11); \
	PREFETCHT0 d(R11)(R9*1); \
	PREFETCHT0 d(R11)(R9*2); \
	PREFETCHT0 d(R11)(R10*1); \
	PREFETCHT0 d(R12); \
	PREFETCHT0 d(R12)(R9*1); \
	PREFETCHT0 d(R12)(R9*2); \
	PREFETCHT0 d(R12)(R10*1)

// One block of the 16 rows at SI, R8, R11, R12 (PACKARGS) in gemmPackQ4_0's
// layout: the nibbles of dword group j in Z0..Z3 (j = 0..3, low nibbles)
// and Z8..Z11 (j = 4..7, high nibbles), dec (NODEC4 or NLDEC4) turning
// them into the packed bytes, stored with the scales at DI. Z28, Z29 = q4A,
// q4B, Z30 = 0x0f bytes.
#define PACKQ4BLK(dec) \
	PREFETCH16(512); \
	LOAD4X(2, SI, Z0, X0); \
	LOAD4X(2, R8, Z1, X1); \
	LOAD4X(2, R11, Z2, X2); \
	LOAD4X(2, R12, Z3, X3); \
	VMOVDQA64 Z28, Z4; \
	VPERMI2D Z1, Z0, Z4; \
	VMOVDQA64 Z29, Z5; \
	VPERMI2D Z1, Z0, Z5; \
	VMOVDQA64 Z28, Z6; \
	VPERMI2D Z3, Z2, Z6; \
	VMOVDQA64 Z29, Z7; \
	VPERMI2D Z3, Z2, Z7; \
	VSHUFI64X2 $0x44, Z6, Z4, Z8; \
	VSHUFI64X2 $0xEE, Z6, Z4, Z9; \
	VSHUFI64X2 $0x44, Z7, Z5, Z10; \
	VSHUFI64X2 $0xEE, Z7, Z5, Z11; \
	VPANDD Z30, Z8, Z0; \
	VPANDD Z30, Z9, Z1; \
	VPANDD Z30, Z10, Z2; \
	VPANDD Z30, Z11, Z3; \
	VPSRLD $4, Z8, Z8; \
	VPSRLD $4, Z9, Z9; \
	VPSRLD $4, Z10, Z10; \
	VPSRLD $4, Z11, Z11; \
	VPANDD Z30, Z8, Z8; \
	VPANDD Z30, Z9, Z9; \
	VPANDD Z30, Z10, Z10; \
	VPANDD Z30, Z11, Z11; \
	dec; \
	VMOVDQU64 Z0, 0(DI); \
	VMOVDQU64 Z1, 64(DI); \
	VMOVDQU64 Z2, 128(DI); \
	VMOVDQU64 Z3, 192(DI); \
	VMOVDQU64 Z8, 256(DI); \
	VMOVDQU64 Z9, 320(DI); \
	VMOVDQU64 Z10, 384(DI); \
	VMOVDQU64 Z11, 448(DI); \
	PACKSCALES; \
	ADDQ $18, SI; \
	ADDQ $18, R8; \
	ADDQ $18, R11; \
	ADDQ $18, R12; \
	ADDQ $576, DI

// Q4_0 packs the nibbles q themselves (off 8).
#define NODEC4

// IQ4_NL packs the codebook values of its nibbles + 128 (off 128; Z27 =
// the codebook + 128 in each 128-bit lane).
#define NLDEC4 \
	VPSHUFB Z0, Z27, Z0; \
	VPSHUFB Z1, Z27, Z1; \
	VPSHUFB Z2, Z27, Z2; \
	VPSHUFB Z3, Z27, Z3; \
	VPSHUFB Z8, Z27, Z8; \
	VPSHUFB Z9, Z27, Z9; \
	VPSHUFB Z10, Z27, Z10; \
	VPSHUFB Z11, Z27, Z11

#define PACKQ4SETUP \
	PACKARGS; \
	VMOVDQU64 q4A<>(SB), Z28; \
	VMOVDQU64 q4B<>(SB), Z29; \
	VPBROADCASTD gemm0f<>(SB), Z30

// func gemmPackQ4_0(nblk int, w *byte, ws int, dst *byte)
//
// Packs blocks [0, nblk) of the 16 rows w, w+ws, ..., w+15·ws: per block,
// eight zmm (dword group j = elements 4j..4j+3; lane r = row r's four
// nibbles as bytes 0..15) and one zmm of the rows' f32 scales.
TEXT ·gemmPackQ4_0(SB), NOSPLIT, $0-32
	PACKQ4SETUP
	TESTQ CX, CX
	JZ p4done
p4loop:
	PACKQ4BLK(NODEC4)
	DECQ CX
	JNZ p4loop
p4done:
	VZEROUPPER
	RET

// The IQ4_NL codebook (kvalues_iq4nl) + 128, as unsigned bytes.
DATA gemmIQ4U<>+0(SB)/8, $0x766a5d4f3f2d1801
DATA gemmIQ4U<>+8(SB)/8, $0xf1d9c5b5a6998d81
GLOBL gemmIQ4U<>(SB), RODATA|NOPTR, $16

// func gemmPackIQ4_NL(nblk int, w *byte, ws int, dst *byte)
//
// gemmPackQ4_0's layout for IQ4_NL weights (Q4_0's block layout), each
// element stored as its codebook value + 128: the Q8_0 packing's unsigned
// bytes, so gemmKernel runs it with off 128.
TEXT ·gemmPackIQ4_NL(SB), NOSPLIT, $0-32
	PACKQ4SETUP
	VBROADCASTI32X4 gemmIQ4U<>(SB), Z27
	TESTQ CX, CX
	JZ pnldone
pnlloop:
	PACKQ4BLK(NLDEC4)
	DECQ CX
	JNZ pnlloop
pnldone:
	VZEROUPPER
	RET

// Zdst = [row base (32 bytes at off) | row base+ws]; second form for rows
// base+2ws, base+3ws.
#define LOAD2Y01(off, base, z, y) \
	VMOVDQU off(base), y; \
	VINSERTI64X4 $1, off(base)(R9*1), z, z

#define LOAD2Y23(off, base, z, y) \
	VMOVDQU off(base)(R9*2), y; \
	VINSERTI64X4 $1, off(base)(R10*1), z, z

// func gemmPackQ8_0(nblk int, w *byte, ws int, dst *byte)
//
// gemmPackQ4_0's layout for Q8_0 weights, each byte stored as w+128.
TEXT ·gemmPackQ8_0(SB), NOSPLIT, $0-32
	PACKARGS
	VMOVDQU64 q8C<>(SB), Z24
	VMOVDQU64 q8D<>(SB), Z25
	VMOVDQU64 q8E<>(SB), Z26
	VMOVDQU64 q8F<>(SB), Z27
	VPBROADCASTD gemm80<>(SB), Z28
	TESTQ CX, CX
	JZ p8done
p8loop:
	PREFETCH16(512)
	LOAD2Y01(2, SI, Z0, Y0)
	LOAD2Y23(2, SI, Z1, Y1)
	LOAD2Y01(2, R8, Z2, Y2)
	LOAD2Y23(2, R8, Z3, Y3)
	LOAD2Y01(2, R11, Z4, Y4)
	LOAD2Y23(2, R11, Z5, Y5)
	LOAD2Y01(2, R12, Z6, Y6)
	LOAD2Y23(2, R12, Z7, Y7)
	// Stage 1: C_p (Z8..Z11) dwords 0..3, D_p (Z12..Z15) dwords 4..7 of rows 4p..4p+3.
	VMOVDQA64 Z24, Z8
	VPERMI2D Z1, Z0, Z8
	VMOVDQA64 Z25, Z12
	VPERMI2D Z1, Z0, Z12
	VMOVDQA64 Z24, Z9
	VPERMI2D Z3, Z2, Z9
	VMOVDQA64 Z25, Z13
	VPERMI2D Z3, Z2, Z13
	VMOVDQA64 Z24, Z10
	VPERMI2D Z5, Z4, Z10
	VMOVDQA64 Z25, Z14
	VPERMI2D Z5, Z4, Z14
	VMOVDQA64 Z24, Z11
	VPERMI2D Z7, Z6, Z11
	VMOVDQA64 Z25, Z15
	VPERMI2D Z7, Z6, Z15
	// Stage 2: dword pairs of rows 0..7 (Z16..Z19) and 8..15 (Z20..Z23).
	VMOVDQA64 Z26, Z16
	VPERMI2D Z9, Z8, Z16
	VMOVDQA64 Z27, Z17
	VPERMI2D Z9, Z8, Z17
	VMOVDQA64 Z26, Z18
	VPERMI2D Z13, Z12, Z18
	VMOVDQA64 Z27, Z19
	VPERMI2D Z13, Z12, Z19
	VMOVDQA64 Z26, Z20
	VPERMI2D Z11, Z10, Z20
	VMOVDQA64 Z27, Z21
	VPERMI2D Z11, Z10, Z21
	VMOVDQA64 Z26, Z22
	VPERMI2D Z15, Z14, Z22
	VMOVDQA64 Z27, Z23
	VPERMI2D Z15, Z14, Z23
	// Stage 3: dword j of rows 0..15.
	VSHUFI64X2 $0x44, Z20, Z16, Z0
	VSHUFI64X2 $0xEE, Z20, Z16, Z1
	VSHUFI64X2 $0x44, Z21, Z17, Z2
	VSHUFI64X2 $0xEE, Z21, Z17, Z3
	VSHUFI64X2 $0x44, Z22, Z18, Z4
	VSHUFI64X2 $0xEE, Z22, Z18, Z5
	VSHUFI64X2 $0x44, Z23, Z19, Z6
	VSHUFI64X2 $0xEE, Z23, Z19, Z7
	VPXORD Z28, Z0, Z0
	VPXORD Z28, Z1, Z1
	VPXORD Z28, Z2, Z2
	VPXORD Z28, Z3, Z3
	VPXORD Z28, Z4, Z4
	VPXORD Z28, Z5, Z5
	VPXORD Z28, Z6, Z6
	VPXORD Z28, Z7, Z7
	VMOVDQU64 Z0, 0(DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z2, 128(DI)
	VMOVDQU64 Z3, 192(DI)
	VMOVDQU64 Z4, 256(DI)
	VMOVDQU64 Z5, 320(DI)
	VMOVDQU64 Z6, 384(DI)
	VMOVDQU64 Z7, 448(DI)
	PACKSCALES
	ADDQ $34, SI
	ADDQ $34, R8
	ADDQ $34, R11
	ADDQ $34, R12
	ADDQ $576, DI
	DECQ CX
	JNZ p8loop
p8done:
	VZEROUPPER
	RET

// func gemmPrepQ8_0(nblk int, a *byte, off int, dst *byte, stride int)
//
// For each of nblk consecutive Q8_0 activation blocks at a: int32 -off·Σq at
// dst and the f32 scale at dst+4, then dst += stride. Σq = Σ(q^0x80) - 4096,
// with VPSADBW summing the unsigned bytes.
TEXT ·gemmPrepQ8_0(SB), NOSPLIT, $0-40
	MOVQ nblk+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ off+16(FP), R8
	MOVQ dst+24(FP), DI
	MOVQ stride+32(FP), R9
	VPBROADCASTD gemm80<>(SB), Y3
	VPXOR Y4, Y4, Y4
	TESTQ CX, CX
	JZ prepdone
preploop:
	VMOVDQU 2(SI), Y0
	VPXOR Y3, Y0, Y0
	VPSADBW Y4, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDQ X1, X0, X0
	VMOVQ X0, AX
	SUBQ $4096, AX
	IMULQ R8, AX
	NEGQ AX
	MOVL AX, 0(DI)
	MOVWLZX 0(SI), AX
	VMOVD AX, X2
	VCVTPH2PS X2, X2
	VMOVSS X2, 4(DI)
	ADDQ $34, SI
	ADDQ R9, DI
	DECQ CX
	JNZ preploop
prepdone:
	VZEROUPPER
	RET

// One token's block against the packed weights Z0..Z7 (scales at 512(SI)):
// iacc = -off·Σa (prep at poff(R11)), += Σ_j VPDPBUSD(W_j, a dword j
// broadcast), then facc += d_a · (d_w · float(iacc)).
#define TOK(base, idx, poff, iacc, facc) \
	VPBROADCASTD poff(R11), iacc; \
	VPDPBUSD.BCST 2(base)(idx), Z0, iacc; \
	VPDPBUSD.BCST 6(base)(idx), Z1, iacc; \
	VPDPBUSD.BCST 10(base)(idx), Z2, iacc; \
	VPDPBUSD.BCST 14(base)(idx), Z3, iacc; \
	VPDPBUSD.BCST 18(base)(idx), Z4, iacc; \
	VPDPBUSD.BCST 22(base)(idx), Z5, iacc; \
	VPDPBUSD.BCST 26(base)(idx), Z6, iacc; \
	VPDPBUSD.BCST 30(base)(idx), Z7, iacc; \
	VCVTDQ2PS iacc, iacc; \
	VMULPS 512(SI), iacc, iacc; \
	VFMADD231PS.BCST poff+4(R11), iacc, facc

// TOKB is TOK for a token at base itself (no index register).
#define TOKB(base, poff, iacc, facc) \
	VPBROADCASTD poff(R11), iacc; \
	VPDPBUSD.BCST 2(base), Z0, iacc; \
	VPDPBUSD.BCST 6(base), Z1, iacc; \
	VPDPBUSD.BCST 10(base), Z2, iacc; \
	VPDPBUSD.BCST 14(base), Z3, iacc; \
	VPDPBUSD.BCST 18(base), Z4, iacc; \
	VPDPBUSD.BCST 22(base), Z5, iacc; \
	VPDPBUSD.BCST 26(base), Z6, iacc; \
	VPDPBUSD.BCST 30(base), Z7, iacc; \
	VCVTDQ2PS iacc, iacc; \
	VMULPS 512(SI), iacc, iacc; \
	VFMADD231PS.BCST poff+4(R11), iacc, facc

#define LOADW \
	VMOVDQU64 0(SI), Z0; \
	VMOVDQU64 64(SI), Z1; \
	VMOVDQU64 128(SI), Z2; \
	VMOVDQU64 192(SI), Z3; \
	VMOVDQU64 256(SI), Z4; \
	VMOVDQU64 320(SI), Z5; \
	VMOVDQU64 384(SI), Z6; \
	VMOVDQU64 448(SI), Z7

// func gemmKernel(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
//
// For ntok tokens t (activation row a+t·as, prep entries prep+8t with
// blocks pstride apart, outputs y+t·ys), accumulates the nblk packed blocks
// at pw into the 16 lanes y[t][0..15] selected by mask: from zero if first,
// else onto y's values, blocks in order. Eight tokens at a time
// (Z16..Z23), then four, then one at a time.
TEXT ·gemmKernel(SB), NOSPLIT, $0-88
	MOVQ a+16(FP), R12
	MOVQ as+24(FP), R9
	MOVQ prep+32(FP), R13
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
	MOVQ mask+72(FP), DX
	KMOVW DX, K1
	LEAQ (R9)(R9*2), R10
g8group:
	CMPQ AX, $8
	JLT g4group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ g8zero
	VMOVUPS.Z (R14), K1, Z16
	VMOVUPS.Z (R14)(BX*1), K1, Z17
	VMOVUPS.Z (R14)(BX*2), K1, Z18
	LEAQ (R14)(BX*2), DX
	VMOVUPS.Z (DX)(BX*1), K1, Z19
	VMOVUPS.Z (R14)(BX*4), K1, Z20
	LEAQ (R14)(BX*4), DX
	VMOVUPS.Z (DX)(BX*1), K1, Z21
	VMOVUPS.Z (DX)(BX*2), K1, Z22
	LEAQ (DX)(BX*2), DX
	VMOVUPS.Z (DX)(BX*1), K1, Z23
	JMP g8start
g8zero:
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
g8start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	LEAQ (R12)(R9*4), R8
	MOVQ R13, R11
	TESTQ CX, CX
	JZ g8store
g8loop:
	LOADW
	TOKB(DI, 0, Z8, Z16)
	TOK(DI, R9*1, 8, Z9, Z17)
	TOK(DI, R9*2, 16, Z10, Z18)
	TOK(DI, R10*1, 24, Z11, Z19)
	TOKB(R8, 32, Z12, Z20)
	TOK(R8, R9*1, 40, Z13, Z21)
	TOK(R8, R9*2, 48, Z14, Z22)
	TOK(R8, R10*1, 56, Z15, Z23)
	ADDQ $576, SI
	ADDQ $34, DI
	ADDQ $34, R8
	ADDQ pstride+40(FP), R11
	DECQ CX
	JNZ g8loop
g8store:
	VMOVUPS Z16, K1, (R14)
	VMOVUPS Z17, K1, (R14)(BX*1)
	VMOVUPS Z18, K1, (R14)(BX*2)
	LEAQ (R14)(BX*2), DX
	VMOVUPS Z19, K1, (DX)(BX*1)
	VMOVUPS Z20, K1, (R14)(BX*4)
	LEAQ (R14)(BX*4), DX
	VMOVUPS Z21, K1, (DX)(BX*1)
	VMOVUPS Z22, K1, (DX)(BX*2)
	LEAQ (DX)(BX*2), DX
	VMOVUPS Z23, K1, (DX)(BX*1)
	LEAQ (R12)(R9*8), R12
	ADDQ $64, R13
	LEAQ (R14)(BX*8), R14
	SUBQ $8, AX
	JMP g8group
g4group:
	CMPQ AX, $4
	JLT g1group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ g4zero
	VMOVUPS.Z (R14), K1, Z16
	VMOVUPS.Z (R14)(BX*1), K1, Z17
	VMOVUPS.Z (R14)(BX*2), K1, Z18
	LEAQ (R14)(BX*2), DX
	VMOVUPS.Z (DX)(BX*1), K1, Z19
	JMP g4start
g4zero:
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
g4start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	MOVQ R13, R11
	TESTQ CX, CX
	JZ g4store
g4loop:
	LOADW
	TOKB(DI, 0, Z8, Z16)
	TOK(DI, R9*1, 8, Z9, Z17)
	TOK(DI, R9*2, 16, Z10, Z18)
	TOK(DI, R10*1, 24, Z11, Z19)
	ADDQ $576, SI
	ADDQ $34, DI
	ADDQ pstride+40(FP), R11
	DECQ CX
	JNZ g4loop
g4store:
	VMOVUPS Z16, K1, (R14)
	VMOVUPS Z17, K1, (R14)(BX*1)
	VMOVUPS Z18, K1, (R14)(BX*2)
	LEAQ (R14)(BX*2), DX
	VMOVUPS Z19, K1, (DX)(BX*1)
	LEAQ (R12)(R9*4), R12
	ADDQ $32, R13
	LEAQ (R14)(BX*4), R14
	SUBQ $4, AX
g1group:
	TESTQ AX, AX
	JZ gdone
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ g1zero
	VMOVUPS.Z (R14), K1, Z16
	JMP g1start
g1zero:
	VPXORD Z16, Z16, Z16
g1start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	MOVQ R13, R11
	TESTQ CX, CX
	JZ g1store
g1loop:
	LOADW
	TOKB(DI, 0, Z8, Z16)
	ADDQ $576, SI
	ADDQ $34, DI
	ADDQ pstride+40(FP), R11
	DECQ CX
	JNZ g1loop
g1store:
	VMOVUPS Z16, K1, (R14)
	ADDQ R9, R12
	ADDQ $8, R13
	ADDQ BX, R14
	DECQ AX
	JMP g1group
gdone:
	VZEROUPPER
	RET

// ---- AVX2: Q4_0 only, same packed layout (each 64-byte vector is rows 0..7
// then rows 8..15). VPMADDUBSW of the unsigned nibbles (≤ 15) against the
// signed activations gives pair sums |·| ≤ 3840, and the eight dword groups
// of a block add up in int16 to at most 8·3840 = 30720 < 2^15, so nothing
// saturates; VPMADDWD with ones then gives each row's int32 block sum. (Q8_0
// would need w+128 ≤ 255 and saturate, so it keeps the Dot4 path on AVX2.)

// gemmBits: dword lane r = 1<<r, to expand the row bitmask into lane masks.
DATA gemmBits<>+0(SB)/8, $0x0000000200000001
DATA gemmBits<>+8(SB)/8, $0x0000000800000004
DATA gemmBits<>+16(SB)/8, $0x0000002000000010
DATA gemmBits<>+24(SB)/8, $0x0000008000000040
DATA gemmBits<>+32(SB)/8, $0x0000020000000100
DATA gemmBits<>+40(SB)/8, $0x0000080000000400
DATA gemmBits<>+48(SB)/8, $0x0000200000001000
DATA gemmBits<>+56(SB)/8, $0x0000800000004000
GLOBL gemmBits<>(SB), RODATA|NOPTR, $64
DATA gemmW1<>+0(SB)/4, $0x00010001
GLOBL gemmW1<>(SB), RODATA|NOPTR, $4

// Y4..Y7 = dword 0..3 of rows [base0, +ws, +2ws, +3ws | base1, ...] from
// 16 bytes at off of each row (two 4×4 transposes, one per 128-bit lane).
#define TRANS8(off, base0, base1) \
	VMOVDQU off(base0), X0; \
	VINSERTI128 $1, off(base1), Y0, Y0; \
	VMOVDQU off(base0)(R9*1), X1; \
	VINSERTI128 $1, off(base1)(R9*1), Y1, Y1; \
	VMOVDQU off(base0)(R9*2), X2; \
	VINSERTI128 $1, off(base1)(R9*2), Y2, Y2; \
	VMOVDQU off(base0)(R10*1), X3; \
	VINSERTI128 $1, off(base1)(R10*1), Y3, Y3; \
	VPUNPCKLDQ Y1, Y0, Y8; \
	VPUNPCKHDQ Y1, Y0, Y9; \
	VPUNPCKLDQ Y3, Y2, Y10; \
	VPUNPCKHDQ Y3, Y2, Y11; \
	VPUNPCKLQDQ Y10, Y8, Y4; \
	VPUNPCKHQDQ Y10, Y8, Y5; \
	VPUNPCKLQDQ Y11, Y9, Y6; \
	VPUNPCKHQDQ Y11, Y9, Y7

// Low nibbles of y to off(DI) (group j), high nibbles to off+256 (j+4).
#define NIB(y, off) \
	VPAND Y15, y, Y12; \
	VMOVDQU Y12, off(DI); \
	VPSRLD $4, y, y; \
	VPAND Y15, y, y; \
	VMOVDQU y, off+256(DI)

// The 16 rows' f16 scales (the first word of each row's block at SI, R8,
// R11, R12 + 0/ws/2ws/3ws) as f32 to off(DI). Gathered in registers: 16
// word stores reloaded as one vector would defeat store forwarding and
// double the stores per block.
#define SCALES16(off) \
	VMOVD 0(SI), X0; \
	VPINSRW $1, 0(SI)(R9*1), X0, X0; \
	VPINSRW $2, 0(SI)(R9*2), X0, X0; \
	VPINSRW $3, 0(SI)(R10*1), X0, X0; \
	VPINSRW $4, 0(R8), X0, X0; \
	VPINSRW $5, 0(R8)(R9*1), X0, X0; \
	VPINSRW $6, 0(R8)(R9*2), X0, X0; \
	VPINSRW $7, 0(R8)(R10*1), X0, X0; \
	VMOVD 0(R11), X1; \
	VPINSRW $1, 0(R11)(R9*1), X1, X1; \
	VPINSRW $2, 0(R11)(R9*2), X1, X1; \
	VPINSRW $3, 0(R11)(R10*1), X1, X1; \
	VPINSRW $4, 0(R12), X1, X1; \
	VPINSRW $5, 0(R12)(R9*1), X1, X1; \
	VPINSRW $6, 0(R12)(R9*2), X1, X1; \
	VPINSRW $7, 0(R12)(R10*1), X1, X1; \
	VCVTPH2PS X0, Y0; \
	VCVTPH2PS X1, Y1; \
	VMOVUPS Y0, off(DI); \
	VMOVUPS Y1, off+32(DI)

// func gemmPackQ4_0AVX2(nblk int, w *byte, ws int, dst *byte)
TEXT ·gemmPackQ4_0AVX2(SB), NOSPLIT, $0-32
	MOVQ nblk+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ ws+16(FP), R9
	MOVQ dst+24(FP), DI
	LEAQ (R9)(R9*2), R10
	LEAQ (SI)(R9*4), R8
	LEAQ (R8)(R9*4), R11
	LEAQ (R11)(R9*4), R12
	VPBROADCASTD gemm0f<>(SB), Y15
	TESTQ CX, CX
	JZ q2done
q2loop:
	TRANS8(2, SI, R8)
	NIB(Y4, 0)
	NIB(Y5, 64)
	NIB(Y6, 128)
	NIB(Y7, 192)
	TRANS8(2, R11, R12)
	NIB(Y4, 32)
	NIB(Y5, 96)
	NIB(Y6, 160)
	NIB(Y7, 224)
	SCALES16(512)
	ADDQ $18, SI
	ADDQ $18, R8
	ADDQ $18, R11
	ADDQ $18, R12
	ADDQ $576, DI
	DECQ CX
	JNZ q2loop
q2done:
	VZEROUPPER
	RET

// Dword group j (weights at wo(SI), activation dword at ao) for tokens 0
// (DI; int16 sums Y0, Y1 for rows 0..7, 8..15) and 1 (DI+R9; Y2, Y3).
#define J2FIRST(wo, ao) \
	VMOVDQU wo(SI), Y8; \
	VMOVDQU wo+32(SI), Y9; \
	VPBROADCASTD ao(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y0; \
	VPMADDUBSW Y10, Y9, Y1; \
	VPBROADCASTD ao(DI)(R9*1), Y10; \
	VPMADDUBSW Y10, Y8, Y2; \
	VPMADDUBSW Y10, Y9, Y3

#define J2(wo, ao) \
	VMOVDQU wo(SI), Y8; \
	VMOVDQU wo+32(SI), Y9; \
	VPBROADCASTD ao(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y11; \
	VPADDW Y11, Y0, Y0; \
	VPMADDUBSW Y10, Y9, Y12; \
	VPADDW Y12, Y1, Y1; \
	VPBROADCASTD ao(DI)(R9*1), Y10; \
	VPMADDUBSW Y10, Y8, Y11; \
	VPADDW Y11, Y2, Y2; \
	VPMADDUBSW Y10, Y9, Y12; \
	VPADDW Y12, Y3, Y3

#define J1FIRST(wo, ao) \
	VMOVDQU wo(SI), Y8; \
	VMOVDQU wo+32(SI), Y9; \
	VPBROADCASTD ao(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y0; \
	VPMADDUBSW Y10, Y9, Y1

#define J1(wo, ao) \
	VMOVDQU wo(SI), Y8; \
	VMOVDQU wo+32(SI), Y9; \
	VPBROADCASTD ao(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y11; \
	VPADDW Y11, Y0, Y0; \
	VPMADDUBSW Y10, Y9, Y12; \
	VPADDW Y12, Y1, Y1

// int16 sums → int32 block sums + prep bias, then f += d_a·(d_w·float).
#define FIN2(ilo, ihi, flo, fhi, poff) \
	VPMADDWD Y15, ilo, ilo; \
	VPMADDWD Y15, ihi, ihi; \
	VPBROADCASTD poff(R11), Y10; \
	VPADDD Y10, ilo, ilo; \
	VPADDD Y10, ihi, ihi; \
	VCVTDQ2PS ilo, ilo; \
	VCVTDQ2PS ihi, ihi; \
	VMULPS 512(SI), ilo, ilo; \
	VMULPS 544(SI), ihi, ihi; \
	VBROADCASTSS poff+4(R11), Y10; \
	VFMADD231PS Y10, ilo, flo; \
	VFMADD231PS Y10, ihi, fhi

// Software prefetch of the next tile's weight rows while this one
// computes (PREFETCHT0 at R8, R8+64, R8+128, then R8 += R10): three lines
// per block and token pair; none when R10 is zero.
#define PF3 \
	TESTQ R10, R10; \
	JZ 4(PC); \
	PREFETCHT0 (R8); \
	PREFETCHT0 64(R8); \
	PREFETCHT0 128(R8); \
	ADDQ R10, R8

// func gemmKernelQ4PFAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int, pf *byte, pfstep int)
//
// gemmKernel for AVX2 and the Q4_0 packing: two tokens at a time, then one.
// In every block iteration it also prefetches three cache lines from pf on,
// advancing pf by pfstep (0: no prefetch). The caller points pf at the
// weight rows it packs next, so that their DRAM reads overlap this tile's
// arithmetic instead of stalling the next pack (a prefetch never faults and
// changes no result).
TEXT ·gemmKernelQ4PFAVX2(SB), NOSPLIT, $0-104
	MOVQ pf+88(FP), R8
	MOVQ pfstep+96(FP), R10
	MOVQ a+16(FP), R12
	MOVQ as+24(FP), R9
	MOVQ prep+32(FP), R13
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
	VPBROADCASTD mask+72(FP), Y13
	VMOVDQU gemmBits<>+0(SB), Y14
	VPAND Y14, Y13, Y12
	VPCMPEQD Y14, Y12, Y12
	VMOVDQU gemmBits<>+32(SB), Y14
	VPAND Y14, Y13, Y13
	VPCMPEQD Y14, Y13, Y14
	VMOVDQA Y12, Y13
	VPBROADCASTD gemmW1<>(SB), Y15
a2group:
	CMPQ AX, $2
	JLT a1group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ a2zero
	VMASKMOVPS (R14), Y13, Y4
	VMASKMOVPS 32(R14), Y14, Y5
	VMASKMOVPS (R14)(BX*1), Y13, Y6
	VMASKMOVPS 32(R14)(BX*1), Y14, Y7
	JMP a2start
a2zero:
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
a2start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	MOVQ R13, R11
	TESTQ CX, CX
	JZ a2store
a2loop:
	PF3
	J2FIRST(0, 2)
	J2(64, 6)
	J2(128, 10)
	J2(192, 14)
	J2(256, 18)
	J2(320, 22)
	J2(384, 26)
	J2(448, 30)
	FIN2(Y0, Y1, Y4, Y5, 0)
	FIN2(Y2, Y3, Y6, Y7, 8)
	ADDQ $576, SI
	ADDQ $34, DI
	ADDQ pstride+40(FP), R11
	DECQ CX
	JNZ a2loop
a2store:
	VMASKMOVPS Y4, Y13, (R14)
	VMASKMOVPS Y5, Y14, 32(R14)
	VMASKMOVPS Y6, Y13, (R14)(BX*1)
	VMASKMOVPS Y7, Y14, 32(R14)(BX*1)
	LEAQ (R12)(R9*2), R12
	ADDQ $16, R13
	LEAQ (R14)(BX*2), R14
	SUBQ $2, AX
	JMP a2group
a1group:
	TESTQ AX, AX
	JZ a2done
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ a1zero
	VMASKMOVPS (R14), Y13, Y4
	VMASKMOVPS 32(R14), Y14, Y5
	JMP a1start
a1zero:
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
a1start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	MOVQ R13, R11
	TESTQ CX, CX
	JZ a1store
a1loop:
	PF3
	J1FIRST(0, 2)
	J1(64, 6)
	J1(128, 10)
	J1(192, 14)
	J1(256, 18)
	J1(320, 22)
	J1(384, 26)
	J1(448, 30)
	FIN2(Y0, Y1, Y4, Y5, 0)
	ADDQ $576, SI
	ADDQ $34, DI
	ADDQ pstride+40(FP), R11
	DECQ CX
	JNZ a1loop
a1store:
	VMASKMOVPS Y4, Y13, (R14)
	VMASKMOVPS Y5, Y14, 32(R14)
a2done:
	VZEROUPPER
	RET

// ---- AVX2 Q4_K against Q8_K, the super-block layout of gemmk.go (5248
// bytes per super-block of a 16-row tile). Per sub-block of 32: the eight
// dword groups go through VPMADDUBSW (unsigned nibbles ≤ 15 × signed
// activations: pair sums ≤ 3840, eight of them ≤ 30720 in int16, no
// saturation), then VPMADDWD with the (sc, sc) pairs gives each row's
// sc·Σq·a in int32, summed over the eight sub-blocks (≤ 8·2·30720·63 < 2^25).
// The mins: VPMADDWD of (m, m) with the activation's (bsum_2s, bsum_2s+1).
// Both integers equal dotQ4_K's isum and summs exactly.

// Y8, Y9 = lane masks (rows 0..7, 8..15) from the row bitmask argument.
#define KMASKS \
	VPBROADCASTD mask+72(FP), Y9; \
	VPAND gemmBits<>+0(SB), Y9, Y8; \
	VPCMPEQD gemmBits<>+0(SB), Y8, Y8; \
	VPAND gemmBits<>+32(SB), Y9, Y9; \
	VPCMPEQD gemmBits<>+32(SB), Y9, Y9

// Dword group j of sub-block s for tokens 0 (DI) and 1 (DI+R9): int16 sums
// Y0, Y1 (rows 0..7, 8..15) and Y2, Y3.
#define KG2FIRST(s, j) \
	VMOVDQU (64*(8*s+j))(SI), Y8; \
	VMOVDQU (64*(8*s+j)+32)(SI), Y9; \
	VPBROADCASTD (4+32*s+4*j)(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y0; \
	VPMADDUBSW Y10, Y9, Y1; \
	VPBROADCASTD (4+32*s+4*j)(DI)(R9*1), Y10; \
	VPMADDUBSW Y10, Y8, Y2; \
	VPMADDUBSW Y10, Y9, Y3

#define KG2(s, j) \
	VMOVDQU (64*(8*s+j))(SI), Y8; \
	VMOVDQU (64*(8*s+j)+32)(SI), Y9; \
	VPBROADCASTD (4+32*s+4*j)(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y11; \
	VPADDW Y11, Y0, Y0; \
	VPMADDUBSW Y10, Y9, Y11; \
	VPADDW Y11, Y1, Y1; \
	VPBROADCASTD (4+32*s+4*j)(DI)(R9*1), Y10; \
	VPMADDUBSW Y10, Y8, Y11; \
	VPADDW Y11, Y2, Y2; \
	VPMADDUBSW Y10, Y9, Y11; \
	VPADDW Y11, Y3, Y3

#define KSUB2(s) \
	KG2FIRST(s, 0); \
	KG2(s, 1); \
	KG2(s, 2); \
	KG2(s, 3); \
	KG2(s, 4); \
	KG2(s, 5); \
	KG2(s, 6); \
	KG2(s, 7)

// isum: Y4, Y5 (token 0), Y6, Y7 (token 1) += scale(s) · the int16 sums.
#define KSC2FIRST(s) \
	VMOVDQU (4096+64*s)(SI), Y8; \
	VMOVDQU (4096+64*s+32)(SI), Y9; \
	VPMADDWD Y8, Y0, Y4; \
	VPMADDWD Y9, Y1, Y5; \
	VPMADDWD Y8, Y2, Y6; \
	VPMADDWD Y9, Y3, Y7

#define KSC2(s) \
	VMOVDQU (4096+64*s)(SI), Y8; \
	VMOVDQU (4096+64*s+32)(SI), Y9; \
	VPMADDWD Y8, Y0, Y0; \
	VPADDD Y0, Y4, Y4; \
	VPMADDWD Y9, Y1, Y1; \
	VPADDD Y1, Y5, Y5; \
	VPMADDWD Y8, Y2, Y2; \
	VPADDD Y2, Y6, Y6; \
	VPMADDWD Y9, Y3, Y3; \
	VPADDD Y3, Y7, Y7

// summs: Y0, Y1 (token 0), Y2, Y3 (token 1) += min(s) · (bsum_2s, bsum_2s+1).
#define KMN2FIRST \
	VMOVDQU 4608(SI), Y8; \
	VMOVDQU 4640(SI), Y9; \
	VPBROADCASTD 260(DI), Y10; \
	VPMADDWD Y10, Y8, Y0; \
	VPMADDWD Y10, Y9, Y1; \
	VPBROADCASTD 260(DI)(R9*1), Y10; \
	VPMADDWD Y10, Y8, Y2; \
	VPMADDWD Y10, Y9, Y3

#define KMN2(s) \
	VMOVDQU (4608+64*s)(SI), Y8; \
	VMOVDQU (4608+64*s+32)(SI), Y9; \
	VPBROADCASTD (260+4*s)(DI), Y10; \
	VPMADDWD Y10, Y8, Y11; \
	VPADDD Y11, Y0, Y0; \
	VPMADDWD Y10, Y9, Y11; \
	VPADDD Y11, Y1, Y1; \
	VPBROADCASTD (260+4*s)(DI)(R9*1), Y10; \
	VPMADDWD Y10, Y8, Y11; \
	VPADDD Y11, Y2, Y2; \
	VPMADDWD Y10, Y9, Y11; \
	VPADDD Y11, Y3, Y3

// f (flo, fhi) += fl(d_w·d_a)·isum − fl(dmin·d_a)·summs for the token whose
// activation block is at ao(DI).
#define KFIN(ao, ilo, ihi, mlo, mhi, flo, fhi) \
	VBROADCASTSS ao(DI), Y10; \
	VMULPS 5120(SI), Y10, Y8; \
	VMULPS 5152(SI), Y10, Y9; \
	VCVTDQ2PS ilo, ilo; \
	VCVTDQ2PS ihi, ihi; \
	VFMADD231PS Y8, ilo, flo; \
	VFMADD231PS Y9, ihi, fhi; \
	VMULPS 5184(SI), Y10, Y8; \
	VMULPS 5216(SI), Y10, Y9; \
	VCVTDQ2PS mlo, mlo; \
	VCVTDQ2PS mhi, mhi; \
	VFNMADD231PS Y8, mlo, flo; \
	VFNMADD231PS Y9, mhi, fhi

// One-token forms (token 0 only: Y0, Y1, Y4, Y5).
#define KG1FIRST(s, j) \
	VMOVDQU (64*(8*s+j))(SI), Y8; \
	VMOVDQU (64*(8*s+j)+32)(SI), Y9; \
	VPBROADCASTD (4+32*s+4*j)(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y0; \
	VPMADDUBSW Y10, Y9, Y1

#define KG1(s, j) \
	VMOVDQU (64*(8*s+j))(SI), Y8; \
	VMOVDQU (64*(8*s+j)+32)(SI), Y9; \
	VPBROADCASTD (4+32*s+4*j)(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y11; \
	VPADDW Y11, Y0, Y0; \
	VPMADDUBSW Y10, Y9, Y11; \
	VPADDW Y11, Y1, Y1

#define KSUB1(s) \
	KG1FIRST(s, 0); \
	KG1(s, 1); \
	KG1(s, 2); \
	KG1(s, 3); \
	KG1(s, 4); \
	KG1(s, 5); \
	KG1(s, 6); \
	KG1(s, 7)

#define KSC1FIRST(s) \
	VPMADDWD (4096+64*s)(SI), Y0, Y4; \
	VPMADDWD (4096+64*s+32)(SI), Y1, Y5

#define KSC1(s) \
	VPMADDWD (4096+64*s)(SI), Y0, Y0; \
	VPADDD Y0, Y4, Y4; \
	VPMADDWD (4096+64*s+32)(SI), Y1, Y1; \
	VPADDD Y1, Y5, Y5

#define KMN1FIRST \
	VPBROADCASTD 260(DI), Y10; \
	VPMADDWD 4608(SI), Y10, Y0; \
	VPMADDWD 4640(SI), Y10, Y1

#define KMN1(s) \
	VPBROADCASTD (260+4*s)(DI), Y10; \
	VPMADDWD (4608+64*s)(SI), Y10, Y11; \
	VPADDD Y11, Y0, Y0; \
	VPMADDWD (4608+64*s+32)(SI), Y10, Y11; \
	VPADDD Y11, Y1, Y1

// func gemmKernelQ4KAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
//
// The gemmKernel contract for the Q4_K super-block layout (prep unused):
// two tokens at a time, then one.
TEXT ·gemmKernelQ4KAVX2(SB), NOSPLIT, $0-88
	MOVQ a+16(FP), R12
	MOVQ as+24(FP), R9
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
k2group:
	CMPQ AX, $2
	JLT k1group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ k2zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y12
	VMASKMOVPS 32(R14), Y9, Y13
	VMASKMOVPS (R14)(BX*1), Y8, Y14
	VMASKMOVPS 32(R14)(BX*1), Y9, Y15
	JMP k2start
k2zero:
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
k2start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	TESTQ CX, CX
	JZ k2store
k2loop:
	KSUB2(0)
	KSC2FIRST(0)
	KSUB2(1)
	KSC2(1)
	KSUB2(2)
	KSC2(2)
	KSUB2(3)
	KSC2(3)
	KSUB2(4)
	KSC2(4)
	KSUB2(5)
	KSC2(5)
	KSUB2(6)
	KSC2(6)
	KSUB2(7)
	KSC2(7)
	KMN2FIRST
	KMN2(1)
	KMN2(2)
	KMN2(3)
	KMN2(4)
	KMN2(5)
	KMN2(6)
	KMN2(7)
	KFIN(0, Y4, Y5, Y0, Y1, Y12, Y13)
	ADDQ R9, DI
	KFIN(0, Y6, Y7, Y2, Y3, Y14, Y15)
	SUBQ R9, DI
	ADDQ $5248, SI
	ADDQ $292, DI
	DECQ CX
	JNZ k2loop
k2store:
	KMASKS
	VMASKMOVPS Y12, Y8, (R14)
	VMASKMOVPS Y13, Y9, 32(R14)
	VMASKMOVPS Y14, Y8, (R14)(BX*1)
	VMASKMOVPS Y15, Y9, 32(R14)(BX*1)
	LEAQ (R12)(R9*2), R12
	LEAQ (R14)(BX*2), R14
	SUBQ $2, AX
	JMP k2group
k1group:
	TESTQ AX, AX
	JZ kdone
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ k1zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y12
	VMASKMOVPS 32(R14), Y9, Y13
	JMP k1start
k1zero:
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
k1start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	TESTQ CX, CX
	JZ k1store
k1loop:
	KSUB1(0)
	KSC1FIRST(0)
	KSUB1(1)
	KSC1(1)
	KSUB1(2)
	KSC1(2)
	KSUB1(3)
	KSC1(3)
	KSUB1(4)
	KSC1(4)
	KSUB1(5)
	KSC1(5)
	KSUB1(6)
	KSC1(6)
	KSUB1(7)
	KSC1(7)
	KMN1FIRST
	KMN1(1)
	KMN1(2)
	KMN1(3)
	KMN1(4)
	KMN1(5)
	KMN1(6)
	KMN1(7)
	KFIN(0, Y4, Y5, Y0, Y1, Y12, Y13)
	ADDQ $5248, SI
	ADDQ $292, DI
	DECQ CX
	JNZ k1loop
k1store:
	KMASKS
	VMASKMOVPS Y12, Y8, (R14)
	VMASKMOVPS Y13, Y9, 32(R14)
kdone:
	VZEROUPPER
	RET

// ---- AVX2 Q6_K against Q8_K, the super-block layout of gemmk.go (5696
// bytes). The dword groups run in element order as for Q4_K (vector 8s+j is
// elements 32s+4j.., so KG2/KG1 serve), but the quants are 6-bit: two
// VPMADDUBSW pair sums (≤ 2·2·63·128 = 32256) fit an int16 lane, so each
// group of 16 is scaled in two halves by VPMADDWD with (sc, sc), and the −32
// offset is −32·Σ sc·bsum from VPMADDWD of (sc_2k, sc_2k+1) with
// (bsum_2k, bsum_2k+1). |Σ sc·q·a| ≤ 256·128·63·128 < 2^29.

// isum (Y4..Y7) += scale(g) · the int16 sums, for both tokens.
#define QSC2FIRST(g) \
	VPMADDWD (4096+64*g)(SI), Y0, Y4; \
	VPMADDWD (4096+64*g+32)(SI), Y1, Y5; \
	VPMADDWD (4096+64*g)(SI), Y2, Y6; \
	VPMADDWD (4096+64*g+32)(SI), Y3, Y7

#define QSC2(g) \
	VPMADDWD (4096+64*g)(SI), Y0, Y0; \
	VPADDD Y0, Y4, Y4; \
	VPMADDWD (4096+64*g+32)(SI), Y1, Y1; \
	VPADDD Y1, Y5, Y5; \
	VPMADDWD (4096+64*g)(SI), Y2, Y2; \
	VPADDD Y2, Y6, Y6; \
	VPMADDWD (4096+64*g+32)(SI), Y3, Y3; \
	VPADDD Y3, Y7, Y7

#define QSC1FIRST(g) \
	VPMADDWD (4096+64*g)(SI), Y0, Y4; \
	VPMADDWD (4096+64*g+32)(SI), Y1, Y5

#define QSC1(g) \
	VPMADDWD (4096+64*g)(SI), Y0, Y0; \
	VPADDD Y0, Y4, Y4; \
	VPMADDWD (4096+64*g+32)(SI), Y1, Y1; \
	VPADDD Y1, Y5, Y5

// off (Y0..Y3) = Σ_k (sc_2k, sc_2k+1)·(bsum_2k, bsum_2k+1) for both tokens.
#define QOFF2FIRST \
	VMOVDQU 5120(SI), Y8; \
	VMOVDQU 5152(SI), Y9; \
	VPBROADCASTD 260(DI), Y10; \
	VPMADDWD Y10, Y8, Y0; \
	VPMADDWD Y10, Y9, Y1; \
	VPBROADCASTD 260(DI)(R9*1), Y10; \
	VPMADDWD Y10, Y8, Y2; \
	VPMADDWD Y10, Y9, Y3

#define QOFF2(k) \
	VMOVDQU (5120+64*k)(SI), Y8; \
	VMOVDQU (5120+64*k+32)(SI), Y9; \
	VPBROADCASTD (260+4*k)(DI), Y10; \
	VPMADDWD Y10, Y8, Y11; \
	VPADDD Y11, Y0, Y0; \
	VPMADDWD Y10, Y9, Y11; \
	VPADDD Y11, Y1, Y1; \
	VPBROADCASTD (260+4*k)(DI)(R9*1), Y10; \
	VPMADDWD Y10, Y8, Y11; \
	VPADDD Y11, Y2, Y2; \
	VPMADDWD Y10, Y9, Y11; \
	VPADDD Y11, Y3, Y3

#define QOFF1FIRST \
	VPBROADCASTD 260(DI), Y10; \
	VPMADDWD 5120(SI), Y10, Y0; \
	VPMADDWD 5152(SI), Y10, Y1

#define QOFF1(k) \
	VPBROADCASTD (260+4*k)(DI), Y10; \
	VPMADDWD (5120+64*k)(SI), Y10, Y11; \
	VPADDD Y11, Y0, Y0; \
	VPMADDWD (5120+64*k+32)(SI), Y10, Y11; \
	VPADDD Y11, Y1, Y1

// isum −= 32·off.
#define QSUBOFF(off, isum) \
	VPSLLD $5, off, off; \
	VPSUBD off, isum, isum

// f (flo, fhi) += fl(d_w·d_a)·isum for the token whose block is at ao(DI).
#define QFIN(ao, ilo, ihi, flo, fhi) \
	VBROADCASTSS ao(DI), Y10; \
	VMULPS 5632(SI), Y10, Y8; \
	VMULPS 5664(SI), Y10, Y9; \
	VCVTDQ2PS ilo, ilo; \
	VCVTDQ2PS ihi, ihi; \
	VFMADD231PS Y8, ilo, flo; \
	VFMADD231PS Y9, ihi, fhi

// func gemmKernelQ6KAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
//
// The gemmKernel contract for the Q6_K super-block layout (prep unused):
// two tokens at a time, then one.
TEXT ·gemmKernelQ6KAVX2(SB), NOSPLIT, $0-88
	MOVQ a+16(FP), R12
	MOVQ as+24(FP), R9
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
q6k2group:
	CMPQ AX, $2
	JLT q6k1group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ q6k2zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y12
	VMASKMOVPS 32(R14), Y9, Y13
	VMASKMOVPS (R14)(BX*1), Y8, Y14
	VMASKMOVPS 32(R14)(BX*1), Y9, Y15
	JMP q6k2start
q6k2zero:
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
q6k2start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	TESTQ CX, CX
	JZ q6k2store
q6k2loop:
	KG2FIRST(0, 0)
	KG2(0, 1)
	QSC2FIRST(0)
	KG2FIRST(0, 2)
	KG2(0, 3)
	QSC2(0)
	KG2FIRST(0, 4)
	KG2(0, 5)
	QSC2(1)
	KG2FIRST(0, 6)
	KG2(0, 7)
	QSC2(1)
	KG2FIRST(1, 0)
	KG2(1, 1)
	QSC2(2)
	KG2FIRST(1, 2)
	KG2(1, 3)
	QSC2(2)
	KG2FIRST(1, 4)
	KG2(1, 5)
	QSC2(3)
	KG2FIRST(1, 6)
	KG2(1, 7)
	QSC2(3)
	KG2FIRST(2, 0)
	KG2(2, 1)
	QSC2(4)
	KG2FIRST(2, 2)
	KG2(2, 3)
	QSC2(4)
	KG2FIRST(2, 4)
	KG2(2, 5)
	QSC2(5)
	KG2FIRST(2, 6)
	KG2(2, 7)
	QSC2(5)
	KG2FIRST(3, 0)
	KG2(3, 1)
	QSC2(6)
	KG2FIRST(3, 2)
	KG2(3, 3)
	QSC2(6)
	KG2FIRST(3, 4)
	KG2(3, 5)
	QSC2(7)
	KG2FIRST(3, 6)
	KG2(3, 7)
	QSC2(7)
	KG2FIRST(4, 0)
	KG2(4, 1)
	QSC2(8)
	KG2FIRST(4, 2)
	KG2(4, 3)
	QSC2(8)
	KG2FIRST(4, 4)
	KG2(4, 5)
	QSC2(9)
	KG2FIRST(4, 6)
	KG2(4, 7)
	QSC2(9)
	KG2FIRST(5, 0)
	KG2(5, 1)
	QSC2(10)
	KG2FIRST(5, 2)
	KG2(5, 3)
	QSC2(10)
	KG2FIRST(5, 4)
	KG2(5, 5)
	QSC2(11)
	KG2FIRST(5, 6)
	KG2(5, 7)
	QSC2(11)
	KG2FIRST(6, 0)
	KG2(6, 1)
	QSC2(12)
	KG2FIRST(6, 2)
	KG2(6, 3)
	QSC2(12)
	KG2FIRST(6, 4)
	KG2(6, 5)
	QSC2(13)
	KG2FIRST(6, 6)
	KG2(6, 7)
	QSC2(13)
	KG2FIRST(7, 0)
	KG2(7, 1)
	QSC2(14)
	KG2FIRST(7, 2)
	KG2(7, 3)
	QSC2(14)
	KG2FIRST(7, 4)
	KG2(7, 5)
	QSC2(15)
	KG2FIRST(7, 6)
	KG2(7, 7)
	QSC2(15)
	QOFF2FIRST
	QOFF2(1)
	QOFF2(2)
	QOFF2(3)
	QOFF2(4)
	QOFF2(5)
	QOFF2(6)
	QOFF2(7)
	QSUBOFF(Y0, Y4)
	QSUBOFF(Y1, Y5)
	QSUBOFF(Y2, Y6)
	QSUBOFF(Y3, Y7)
	QFIN(0, Y4, Y5, Y12, Y13)
	ADDQ R9, DI
	QFIN(0, Y6, Y7, Y14, Y15)
	SUBQ R9, DI
	ADDQ $5696, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q6k2loop
q6k2store:
	KMASKS
	VMASKMOVPS Y12, Y8, (R14)
	VMASKMOVPS Y13, Y9, 32(R14)
	VMASKMOVPS Y14, Y8, (R14)(BX*1)
	VMASKMOVPS Y15, Y9, 32(R14)(BX*1)
	LEAQ (R12)(R9*2), R12
	LEAQ (R14)(BX*2), R14
	SUBQ $2, AX
	JMP q6k2group
q6k1group:
	TESTQ AX, AX
	JZ q6kdone
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ q6k1zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y12
	VMASKMOVPS 32(R14), Y9, Y13
	JMP q6k1start
q6k1zero:
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
q6k1start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	TESTQ CX, CX
	JZ q6k1store
q6k1loop:
	KG1FIRST(0, 0)
	KG1(0, 1)
	QSC1FIRST(0)
	KG1FIRST(0, 2)
	KG1(0, 3)
	QSC1(0)
	KG1FIRST(0, 4)
	KG1(0, 5)
	QSC1(1)
	KG1FIRST(0, 6)
	KG1(0, 7)
	QSC1(1)
	KG1FIRST(1, 0)
	KG1(1, 1)
	QSC1(2)
	KG1FIRST(1, 2)
	KG1(1, 3)
	QSC1(2)
	KG1FIRST(1, 4)
	KG1(1, 5)
	QSC1(3)
	KG1FIRST(1, 6)
	KG1(1, 7)
	QSC1(3)
	KG1FIRST(2, 0)
	KG1(2, 1)
	QSC1(4)
	KG1FIRST(2, 2)
	KG1(2, 3)
	QSC1(4)
	KG1FIRST(2, 4)
	KG1(2, 5)
	QSC1(5)
	KG1FIRST(2, 6)
	KG1(2, 7)
	QSC1(5)
	KG1FIRST(3, 0)
	KG1(3, 1)
	QSC1(6)
	KG1FIRST(3, 2)
	KG1(3, 3)
	QSC1(6)
	KG1FIRST(3, 4)
	KG1(3, 5)
	QSC1(7)
	KG1FIRST(3, 6)
	KG1(3, 7)
	QSC1(7)
	KG1FIRST(4, 0)
	KG1(4, 1)
	QSC1(8)
	KG1FIRST(4, 2)
	KG1(4, 3)
	QSC1(8)
	KG1FIRST(4, 4)
	KG1(4, 5)
	QSC1(9)
	KG1FIRST(4, 6)
	KG1(4, 7)
	QSC1(9)
	KG1FIRST(5, 0)
	KG1(5, 1)
	QSC1(10)
	KG1FIRST(5, 2)
	KG1(5, 3)
	QSC1(10)
	KG1FIRST(5, 4)
	KG1(5, 5)
	QSC1(11)
	KG1FIRST(5, 6)
	KG1(5, 7)
	QSC1(11)
	KG1FIRST(6, 0)
	KG1(6, 1)
	QSC1(12)
	KG1FIRST(6, 2)
	KG1(6, 3)
	QSC1(12)
	KG1FIRST(6, 4)
	KG1(6, 5)
	QSC1(13)
	KG1FIRST(6, 6)
	KG1(6, 7)
	QSC1(13)
	KG1FIRST(7, 0)
	KG1(7, 1)
	QSC1(14)
	KG1FIRST(7, 2)
	KG1(7, 3)
	QSC1(14)
	KG1FIRST(7, 4)
	KG1(7, 5)
	QSC1(15)
	KG1FIRST(7, 6)
	KG1(7, 7)
	QSC1(15)
	QOFF1FIRST
	QOFF1(1)
	QOFF1(2)
	QOFF1(3)
	QOFF1(4)
	QOFF1(5)
	QOFF1(6)
	QOFF1(7)
	QSUBOFF(Y0, Y4)
	QSUBOFF(Y1, Y5)
	QFIN(0, Y4, Y5, Y12, Y13)
	ADDQ $5696, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q6k1loop
q6k1store:
	KMASKS
	VMASKMOVPS Y12, Y8, (R14)
	VMASKMOVPS Y13, Y9, 32(R14)
q6kdone:
	VZEROUPPER
	RET

// ---- AVX2 nibble-split kernel over gemmsplit.go's layout (1088 bytes per
// block): the high and low nibbles of w+128 each go through VPMADDUBSW as
// Q4_0's nibbles do (pair sums ≤ 3840, eight groups ≤ 30720 in int16), then
// VPMADDWD with 16 and with 1 and the prep's −128·Σa give Σ w·a exactly
// (|16·Σh·a| ≤ 983040). The float part is FIN2's: f += d_a·(d_w·float(Σ)).

DATA gemmW16<>+0(SB)/8, $0x0010001000100010
DATA gemmW16<>+8(SB)/8, $0x0010001000100010
DATA gemmW16<>+16(SB)/8, $0x0010001000100010
DATA gemmW16<>+24(SB)/8, $0x0010001000100010
GLOBL gemmW16<>(SB), RODATA|NOPTR, $32
DATA gemmW1x<>+0(SB)/8, $0x0001000100010001
DATA gemmW1x<>+8(SB)/8, $0x0001000100010001
DATA gemmW1x<>+16(SB)/8, $0x0001000100010001
DATA gemmW1x<>+24(SB)/8, $0x0001000100010001
GLOBL gemmW1x<>(SB), RODATA|NOPTR, $32

// Plane vectors at wo(SI) against activation dword ao of tokens 0 (DI) and
// 1 (DI+R9): int16 sums in a0, a1 (token 0) and a2, a3 (token 1).
#define S8G2FIRST(wo, ao, a0, a1, a2, a3) \
	VMOVDQU wo(SI), Y8; \
	VMOVDQU wo+32(SI), Y9; \
	VPBROADCASTD ao(DI), Y10; \
	VPMADDUBSW Y10, Y8, a0; \
	VPMADDUBSW Y10, Y9, a1; \
	VPBROADCASTD ao(DI)(R9*1), Y10; \
	VPMADDUBSW Y10, Y8, a2; \
	VPMADDUBSW Y10, Y9, a3

#define S8G2(wo, ao, a0, a1, a2, a3) \
	VMOVDQU wo(SI), Y8; \
	VMOVDQU wo+32(SI), Y9; \
	VPBROADCASTD ao(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y11; \
	VPADDW Y11, a0, a0; \
	VPMADDUBSW Y10, Y9, Y11; \
	VPADDW Y11, a1, a1; \
	VPBROADCASTD ao(DI)(R9*1), Y10; \
	VPMADDUBSW Y10, Y8, Y11; \
	VPADDW Y11, a2, a2; \
	VPMADDUBSW Y10, Y9, Y11; \
	VPADDW Y11, a3, a3

#define S8G1FIRST(wo, ao, a0, a1) \
	VMOVDQU wo(SI), Y8; \
	VMOVDQU wo+32(SI), Y9; \
	VPBROADCASTD ao(DI), Y10; \
	VPMADDUBSW Y10, Y8, a0; \
	VPMADDUBSW Y10, Y9, a1

#define S8G1(wo, ao, a0, a1) \
	VMOVDQU wo(SI), Y8; \
	VMOVDQU wo+32(SI), Y9; \
	VPBROADCASTD ao(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y11; \
	VPADDW Y11, a0, a0; \
	VPMADDUBSW Y10, Y9, Y11; \
	VPADDW Y11, a1, a1

// hi (int16 high-nibble sums) = 16·hi + lo as int32, + prep bias, then
// f += d_a·(d_w·float(hi)), for the token whose prep is at poff(R11).
#define S8FIN(hi, lo, dwo, poff, f) \
	VPMADDWD gemmW16<>(SB), hi, hi; \
	VPMADDWD gemmW1x<>(SB), lo, lo; \
	VPADDD lo, hi, hi; \
	VPBROADCASTD poff(R11), Y10; \
	VPADDD Y10, hi, hi; \
	VCVTDQ2PS hi, hi; \
	VMULPS dwo(SI), hi, hi; \
	VBROADCASTSS poff+4(R11), Y10; \
	VFMADD231PS Y10, hi, f

// func gemmKernelSplitAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
//
// gemmKernel for AVX2 and the nibble-split Q8_0 packing: two tokens at a
// time, then one.
TEXT ·gemmKernelSplitAVX2(SB), NOSPLIT, $0-88
	MOVQ a+16(FP), R12
	MOVQ as+24(FP), R9
	MOVQ prep+32(FP), R13
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
s82group:
	CMPQ AX, $2
	JLT s81group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ s82zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y4
	VMASKMOVPS 32(R14), Y9, Y5
	VMASKMOVPS (R14)(BX*1), Y8, Y6
	VMASKMOVPS 32(R14)(BX*1), Y9, Y7
	JMP s82start
s82zero:
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
s82start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	MOVQ R13, R11
	TESTQ CX, CX
	JZ s82store
s82loop:
	S8G2FIRST(0, 2, Y0, Y1, Y2, Y3)
	S8G2(64, 6, Y0, Y1, Y2, Y3)
	S8G2(128, 10, Y0, Y1, Y2, Y3)
	S8G2(192, 14, Y0, Y1, Y2, Y3)
	S8G2(256, 18, Y0, Y1, Y2, Y3)
	S8G2(320, 22, Y0, Y1, Y2, Y3)
	S8G2(384, 26, Y0, Y1, Y2, Y3)
	S8G2(448, 30, Y0, Y1, Y2, Y3)
	S8G2FIRST(512, 2, Y12, Y13, Y14, Y15)
	S8G2(576, 6, Y12, Y13, Y14, Y15)
	S8G2(640, 10, Y12, Y13, Y14, Y15)
	S8G2(704, 14, Y12, Y13, Y14, Y15)
	S8G2(768, 18, Y12, Y13, Y14, Y15)
	S8G2(832, 22, Y12, Y13, Y14, Y15)
	S8G2(896, 26, Y12, Y13, Y14, Y15)
	S8G2(960, 30, Y12, Y13, Y14, Y15)
	S8FIN(Y0, Y12, 1024, 0, Y4)
	S8FIN(Y1, Y13, 1056, 0, Y5)
	S8FIN(Y2, Y14, 1024, 8, Y6)
	S8FIN(Y3, Y15, 1056, 8, Y7)
	ADDQ $1088, SI
	ADDQ $34, DI
	ADDQ pstride+40(FP), R11
	DECQ CX
	JNZ s82loop
s82store:
	KMASKS
	VMASKMOVPS Y4, Y8, (R14)
	VMASKMOVPS Y5, Y9, 32(R14)
	VMASKMOVPS Y6, Y8, (R14)(BX*1)
	VMASKMOVPS Y7, Y9, 32(R14)(BX*1)
	LEAQ (R12)(R9*2), R12
	ADDQ $16, R13
	LEAQ (R14)(BX*2), R14
	SUBQ $2, AX
	JMP s82group
s81group:
	TESTQ AX, AX
	JZ s8done
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ s81zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y4
	VMASKMOVPS 32(R14), Y9, Y5
	JMP s81start
s81zero:
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
s81start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	MOVQ R13, R11
	TESTQ CX, CX
	JZ s81store
s81loop:
	S8G1FIRST(0, 2, Y0, Y1)
	S8G1(64, 6, Y0, Y1)
	S8G1(128, 10, Y0, Y1)
	S8G1(192, 14, Y0, Y1)
	S8G1(256, 18, Y0, Y1)
	S8G1(320, 22, Y0, Y1)
	S8G1(384, 26, Y0, Y1)
	S8G1(448, 30, Y0, Y1)
	S8G1FIRST(512, 2, Y12, Y13)
	S8G1(576, 6, Y12, Y13)
	S8G1(640, 10, Y12, Y13)
	S8G1(704, 14, Y12, Y13)
	S8G1(768, 18, Y12, Y13)
	S8G1(832, 22, Y12, Y13)
	S8G1(896, 26, Y12, Y13)
	S8G1(960, 30, Y12, Y13)
	S8FIN(Y0, Y12, 1024, 0, Y4)
	S8FIN(Y1, Y13, 1056, 0, Y5)
	ADDQ $1088, SI
	ADDQ $34, DI
	ADDQ pstride+40(FP), R11
	DECQ CX
	JNZ s81loop
s81store:
	KMASKS
	VMASKMOVPS Y4, Y8, (R14)
	VMASKMOVPS Y5, Y9, 32(R14)
s8done:
	VZEROUPPER
	RET

// func gemmKernelQ5KAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
//
// Q5_K in the Q4_K layout with 5-bit quants (packQ5K): a VPMADDUBSW pair
// sum is at most 2·31·128 = 7936, so four dword groups (31744) share an
// int16 lane and each sub-block is scaled in two halves; scales, mins and
// the float part are Q4_K's (KSC*, KMN*, KFIN).
TEXT ·gemmKernelQ5KAVX2(SB), NOSPLIT, $0-88
	MOVQ a+16(FP), R12
	MOVQ as+24(FP), R9
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
q5k2group:
	CMPQ AX, $2
	JLT q5k1group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ q5k2zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y12
	VMASKMOVPS 32(R14), Y9, Y13
	VMASKMOVPS (R14)(BX*1), Y8, Y14
	VMASKMOVPS 32(R14)(BX*1), Y9, Y15
	JMP q5k2start
q5k2zero:
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
q5k2start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	TESTQ CX, CX
	JZ q5k2store
q5k2loop:
	KG2FIRST(0, 0)
	KG2(0, 1)
	KG2(0, 2)
	KG2(0, 3)
	KSC2FIRST(0)
	KG2FIRST(0, 4)
	KG2(0, 5)
	KG2(0, 6)
	KG2(0, 7)
	KSC2(0)
	KG2FIRST(1, 0)
	KG2(1, 1)
	KG2(1, 2)
	KG2(1, 3)
	KSC2(1)
	KG2FIRST(1, 4)
	KG2(1, 5)
	KG2(1, 6)
	KG2(1, 7)
	KSC2(1)
	KG2FIRST(2, 0)
	KG2(2, 1)
	KG2(2, 2)
	KG2(2, 3)
	KSC2(2)
	KG2FIRST(2, 4)
	KG2(2, 5)
	KG2(2, 6)
	KG2(2, 7)
	KSC2(2)
	KG2FIRST(3, 0)
	KG2(3, 1)
	KG2(3, 2)
	KG2(3, 3)
	KSC2(3)
	KG2FIRST(3, 4)
	KG2(3, 5)
	KG2(3, 6)
	KG2(3, 7)
	KSC2(3)
	KG2FIRST(4, 0)
	KG2(4, 1)
	KG2(4, 2)
	KG2(4, 3)
	KSC2(4)
	KG2FIRST(4, 4)
	KG2(4, 5)
	KG2(4, 6)
	KG2(4, 7)
	KSC2(4)
	KG2FIRST(5, 0)
	KG2(5, 1)
	KG2(5, 2)
	KG2(5, 3)
	KSC2(5)
	KG2FIRST(5, 4)
	KG2(5, 5)
	KG2(5, 6)
	KG2(5, 7)
	KSC2(5)
	KG2FIRST(6, 0)
	KG2(6, 1)
	KG2(6, 2)
	KG2(6, 3)
	KSC2(6)
	KG2FIRST(6, 4)
	KG2(6, 5)
	KG2(6, 6)
	KG2(6, 7)
	KSC2(6)
	KG2FIRST(7, 0)
	KG2(7, 1)
	KG2(7, 2)
	KG2(7, 3)
	KSC2(7)
	KG2FIRST(7, 4)
	KG2(7, 5)
	KG2(7, 6)
	KG2(7, 7)
	KSC2(7)
	KMN2FIRST
	KMN2(1)
	KMN2(2)
	KMN2(3)
	KMN2(4)
	KMN2(5)
	KMN2(6)
	KMN2(7)
	KFIN(0, Y4, Y5, Y0, Y1, Y12, Y13)
	ADDQ R9, DI
	KFIN(0, Y6, Y7, Y2, Y3, Y14, Y15)
	SUBQ R9, DI
	ADDQ $5248, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q5k2loop
q5k2store:
	KMASKS
	VMASKMOVPS Y12, Y8, (R14)
	VMASKMOVPS Y13, Y9, 32(R14)
	VMASKMOVPS Y14, Y8, (R14)(BX*1)
	VMASKMOVPS Y15, Y9, 32(R14)(BX*1)
	LEAQ (R12)(R9*2), R12
	LEAQ (R14)(BX*2), R14
	SUBQ $2, AX
	JMP q5k2group
q5k1group:
	TESTQ AX, AX
	JZ q5kdone
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ q5k1zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y12
	VMASKMOVPS 32(R14), Y9, Y13
	JMP q5k1start
q5k1zero:
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
q5k1start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	TESTQ CX, CX
	JZ q5k1store
q5k1loop:
	KG1FIRST(0, 0)
	KG1(0, 1)
	KG1(0, 2)
	KG1(0, 3)
	KSC1FIRST(0)
	KG1FIRST(0, 4)
	KG1(0, 5)
	KG1(0, 6)
	KG1(0, 7)
	KSC1(0)
	KG1FIRST(1, 0)
	KG1(1, 1)
	KG1(1, 2)
	KG1(1, 3)
	KSC1(1)
	KG1FIRST(1, 4)
	KG1(1, 5)
	KG1(1, 6)
	KG1(1, 7)
	KSC1(1)
	KG1FIRST(2, 0)
	KG1(2, 1)
	KG1(2, 2)
	KG1(2, 3)
	KSC1(2)
	KG1FIRST(2, 4)
	KG1(2, 5)
	KG1(2, 6)
	KG1(2, 7)
	KSC1(2)
	KG1FIRST(3, 0)
	KG1(3, 1)
	KG1(3, 2)
	KG1(3, 3)
	KSC1(3)
	KG1FIRST(3, 4)
	KG1(3, 5)
	KG1(3, 6)
	KG1(3, 7)
	KSC1(3)
	KG1FIRST(4, 0)
	KG1(4, 1)
	KG1(4, 2)
	KG1(4, 3)
	KSC1(4)
	KG1FIRST(4, 4)
	KG1(4, 5)
	KG1(4, 6)
	KG1(4, 7)
	KSC1(4)
	KG1FIRST(5, 0)
	KG1(5, 1)
	KG1(5, 2)
	KG1(5, 3)
	KSC1(5)
	KG1FIRST(5, 4)
	KG1(5, 5)
	KG1(5, 6)
	KG1(5, 7)
	KSC1(5)
	KG1FIRST(6, 0)
	KG1(6, 1)
	KG1(6, 2)
	KG1(6, 3)
	KSC1(6)
	KG1FIRST(6, 4)
	KG1(6, 5)
	KG1(6, 6)
	KG1(6, 7)
	KSC1(6)
	KG1FIRST(7, 0)
	KG1(7, 1)
	KG1(7, 2)
	KG1(7, 3)
	KSC1(7)
	KG1FIRST(7, 4)
	KG1(7, 5)
	KG1(7, 6)
	KG1(7, 7)
	KSC1(7)
	KMN1FIRST
	KMN1(1)
	KMN1(2)
	KMN1(3)
	KMN1(4)
	KMN1(5)
	KMN1(6)
	KMN1(7)
	KFIN(0, Y4, Y5, Y0, Y1, Y12, Y13)
	ADDQ $5248, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q5k1loop
q5k1store:
	KMASKS
	VMASKMOVPS Y12, Y8, (R14)
	VMASKMOVPS Y13, Y9, 32(R14)
q5kdone:
	VZEROUPPER
	RET

// ---- AVX2 IQ4_XS against Q8_K, the index layout of gemmk.go (5696 bytes
// per super-block). The avx2 path now takes the int16 kernel of
// gemmiq4xs_amd64.s; this one stays as BenchmarkGemmIQ4XSAlt's baseline. The indices are looked up (VPSHUFB of the packed vector
// as the control) in the high- and low-nibble tables of value+128, and each
// virtual sub-block then goes through VPMADDUBSW as Q4_K's (int16 ≤ 30720),
// VPMADDWD with its (16·sc) or (sc) pairs, and the −128·Σ sc·Σa offset
// through the activation's sums of 16. |integer| < 2^29 for true sums. One
// token at a time: the two tables take the registers a second token's sums
// would need.

DATA iq4hi<>+0(SB)/8, $0x0706050403020100
DATA iq4hi<>+8(SB)/8, $0x0f0d0c0b0a090808
GLOBL iq4hi<>(SB), RODATA|NOPTR, $16
DATA iq4lo<>+0(SB)/8, $0x060a0d0f0f0d0801
DATA iq4lo<>+8(SB)/8, $0x0109050506090d01
GLOBL iq4lo<>(SB), RODATA|NOPTR, $16

// Virtual sub-block values of dword group j of sub-block s (table tab) for
// the token at DI: int16 sums in Y0, Y1.
#define XG1FIRST(s, j, tab) \
	VPSHUFB (64*(8*s+j))(SI), tab, Y8; \
	VPSHUFB (64*(8*s+j)+32)(SI), tab, Y9; \
	VPBROADCASTD (4+32*s+4*j)(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y0; \
	VPMADDUBSW Y10, Y9, Y1

#define XG1(s, j, tab) \
	VPSHUFB (64*(8*s+j))(SI), tab, Y8; \
	VPSHUFB (64*(8*s+j)+32)(SI), tab, Y9; \
	VPBROADCASTD (4+32*s+4*j)(DI), Y10; \
	VPMADDUBSW Y10, Y8, Y11; \
	VPADDW Y11, Y0, Y0; \
	VPMADDUBSW Y10, Y9, Y11; \
	VPADDW Y11, Y1, Y1

#define XSC1FIRST(so) \
	VPMADDWD so(SI), Y0, Y4; \
	VPMADDWD so+32(SI), Y1, Y5

#define XSC1(so) \
	VPMADDWD so(SI), Y0, Y0; \
	VPADDD Y0, Y4, Y4; \
	VPMADDWD so+32(SI), Y1, Y1; \
	VPADDD Y1, Y5, Y5

#define XOFF1FIRST(oo, ao) \
	VPBROADCASTD ao(DI), Y10; \
	VPMADDWD oo(SI), Y10, Y0; \
	VPMADDWD oo+32(SI), Y10, Y1

#define XOFF1(oo, ao) \
	VPBROADCASTD ao(DI), Y10; \
	VPMADDWD oo(SI), Y10, Y11; \
	VPADDD Y11, Y0, Y0; \
	VPMADDWD oo+32(SI), Y10, Y11; \
	VPADDD Y11, Y1, Y1

// func gemmKernelIQ4XSAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
//
// The gemmKernel contract for the IQ4_XS index layout (prep unused).
TEXT ·gemmKernelIQ4XSAVX2(SB), NOSPLIT, $0-88
	MOVQ a+16(FP), R12
	MOVQ as+24(FP), R9
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
	VBROADCASTI128 iq4hi<>(SB), Y14
	VBROADCASTI128 iq4lo<>(SB), Y15
x1group:
	TESTQ AX, AX
	JZ xdone
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ x1zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y12
	VMASKMOVPS 32(R14), Y9, Y13
	JMP x1start
x1zero:
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
x1start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	TESTQ CX, CX
	JZ x1store
x1loop:
	XG1FIRST(0, 0, Y14)
	XG1(0, 1, Y14)
	XG1(0, 2, Y14)
	XG1(0, 3, Y14)
	XG1(0, 4, Y14)
	XG1(0, 5, Y14)
	XG1(0, 6, Y14)
	XG1(0, 7, Y14)
	XSC1FIRST(4096)
	XG1FIRST(0, 0, Y15)
	XG1(0, 1, Y15)
	XG1(0, 2, Y15)
	XG1(0, 3, Y15)
	XG1(0, 4, Y15)
	XG1(0, 5, Y15)
	XG1(0, 6, Y15)
	XG1(0, 7, Y15)
	XSC1(4160)
	XG1FIRST(1, 0, Y14)
	XG1(1, 1, Y14)
	XG1(1, 2, Y14)
	XG1(1, 3, Y14)
	XG1(1, 4, Y14)
	XG1(1, 5, Y14)
	XG1(1, 6, Y14)
	XG1(1, 7, Y14)
	XSC1(4224)
	XG1FIRST(1, 0, Y15)
	XG1(1, 1, Y15)
	XG1(1, 2, Y15)
	XG1(1, 3, Y15)
	XG1(1, 4, Y15)
	XG1(1, 5, Y15)
	XG1(1, 6, Y15)
	XG1(1, 7, Y15)
	XSC1(4288)
	XG1FIRST(2, 0, Y14)
	XG1(2, 1, Y14)
	XG1(2, 2, Y14)
	XG1(2, 3, Y14)
	XG1(2, 4, Y14)
	XG1(2, 5, Y14)
	XG1(2, 6, Y14)
	XG1(2, 7, Y14)
	XSC1(4352)
	XG1FIRST(2, 0, Y15)
	XG1(2, 1, Y15)
	XG1(2, 2, Y15)
	XG1(2, 3, Y15)
	XG1(2, 4, Y15)
	XG1(2, 5, Y15)
	XG1(2, 6, Y15)
	XG1(2, 7, Y15)
	XSC1(4416)
	XG1FIRST(3, 0, Y14)
	XG1(3, 1, Y14)
	XG1(3, 2, Y14)
	XG1(3, 3, Y14)
	XG1(3, 4, Y14)
	XG1(3, 5, Y14)
	XG1(3, 6, Y14)
	XG1(3, 7, Y14)
	XSC1(4480)
	XG1FIRST(3, 0, Y15)
	XG1(3, 1, Y15)
	XG1(3, 2, Y15)
	XG1(3, 3, Y15)
	XG1(3, 4, Y15)
	XG1(3, 5, Y15)
	XG1(3, 6, Y15)
	XG1(3, 7, Y15)
	XSC1(4544)
	XG1FIRST(4, 0, Y14)
	XG1(4, 1, Y14)
	XG1(4, 2, Y14)
	XG1(4, 3, Y14)
	XG1(4, 4, Y14)
	XG1(4, 5, Y14)
	XG1(4, 6, Y14)
	XG1(4, 7, Y14)
	XSC1(4608)
	XG1FIRST(4, 0, Y15)
	XG1(4, 1, Y15)
	XG1(4, 2, Y15)
	XG1(4, 3, Y15)
	XG1(4, 4, Y15)
	XG1(4, 5, Y15)
	XG1(4, 6, Y15)
	XG1(4, 7, Y15)
	XSC1(4672)
	XG1FIRST(5, 0, Y14)
	XG1(5, 1, Y14)
	XG1(5, 2, Y14)
	XG1(5, 3, Y14)
	XG1(5, 4, Y14)
	XG1(5, 5, Y14)
	XG1(5, 6, Y14)
	XG1(5, 7, Y14)
	XSC1(4736)
	XG1FIRST(5, 0, Y15)
	XG1(5, 1, Y15)
	XG1(5, 2, Y15)
	XG1(5, 3, Y15)
	XG1(5, 4, Y15)
	XG1(5, 5, Y15)
	XG1(5, 6, Y15)
	XG1(5, 7, Y15)
	XSC1(4800)
	XG1FIRST(6, 0, Y14)
	XG1(6, 1, Y14)
	XG1(6, 2, Y14)
	XG1(6, 3, Y14)
	XG1(6, 4, Y14)
	XG1(6, 5, Y14)
	XG1(6, 6, Y14)
	XG1(6, 7, Y14)
	XSC1(4864)
	XG1FIRST(6, 0, Y15)
	XG1(6, 1, Y15)
	XG1(6, 2, Y15)
	XG1(6, 3, Y15)
	XG1(6, 4, Y15)
	XG1(6, 5, Y15)
	XG1(6, 6, Y15)
	XG1(6, 7, Y15)
	XSC1(4928)
	XG1FIRST(7, 0, Y14)
	XG1(7, 1, Y14)
	XG1(7, 2, Y14)
	XG1(7, 3, Y14)
	XG1(7, 4, Y14)
	XG1(7, 5, Y14)
	XG1(7, 6, Y14)
	XG1(7, 7, Y14)
	XSC1(4992)
	XG1FIRST(7, 0, Y15)
	XG1(7, 1, Y15)
	XG1(7, 2, Y15)
	XG1(7, 3, Y15)
	XG1(7, 4, Y15)
	XG1(7, 5, Y15)
	XG1(7, 6, Y15)
	XG1(7, 7, Y15)
	XSC1(5056)
	XOFF1FIRST(5120, 260)
	XOFF1(5184, 264)
	XOFF1(5248, 268)
	XOFF1(5312, 272)
	XOFF1(5376, 276)
	XOFF1(5440, 280)
	XOFF1(5504, 284)
	XOFF1(5568, 288)
	VPSLLD $7, Y0, Y0
	VPSUBD Y0, Y4, Y4
	VPSLLD $7, Y1, Y1
	VPSUBD Y1, Y5, Y5
	VBROADCASTSS 0(DI), Y10
	VMULPS 5632(SI), Y10, Y8
	VMULPS 5664(SI), Y10, Y9
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VFMADD231PS Y8, Y4, Y12
	VFMADD231PS Y9, Y5, Y13
	ADDQ $5696, SI
	ADDQ $292, DI
	DECQ CX
	JNZ x1loop
x1store:
	KMASKS
	VMASKMOVPS Y12, Y8, (R14)
	VMASKMOVPS Y13, Y9, 32(R14)
	ADDQ R9, R12
	ADDQ BX, R14
	DECQ AX
	JMP x1group
xdone:
	VZEROUPPER
	RET

// ---- AVX2 IQ4_NL in the nibble-split Q8_0 layout (gemmsplit.go): each index
// is looked up as value+128 = 16h + l (VPSHUFB of two 16-byte tables) and
// stored as the two planes, so gemmKernelSplitAVX2 with the prep's
// −128·Σa computes Σ value·a exactly.

DATA iq4nlhi<>+0(SB)/8, $0x0706050403020100
DATA iq4nlhi<>+8(SB)/8, $0x0f0d0c0b0a090808
GLOBL iq4nlhi<>(SB), RODATA|NOPTR, $16
DATA iq4nllo<>+0(SB)/8, $0x060a0d0f0f0d0801
DATA iq4nllo<>+8(SB)/8, $0x0109050506090d01
GLOBL iq4nllo<>(SB), RODATA|NOPTR, $16

// Indices of y (low nibbles: group j at off, high nibbles: group j+4 at
// off+256) looked up and stored as the high plane (off) and low plane
// (off+512); Y15 = 0x0f, Y13/Y14 = the high/low tables.
#define NLSPLIT(y, off) \
	VPAND Y15, y, Y12; \
	VPSHUFB Y12, Y13, Y11; \
	VMOVDQU Y11, off(DI); \
	VPSHUFB Y12, Y14, Y11; \
	VMOVDQU Y11, off+512(DI); \
	VPSRLD $4, y, y; \
	VPAND Y15, y, y; \
	VPSHUFB y, Y13, Y11; \
	VMOVDQU Y11, off+256(DI); \
	VPSHUFB y, Y14, Y11; \
	VMOVDQU Y11, off+768(DI)

// func gemmPackIQ4_NLSplitAVX2(nblk int, w *byte, ws int, dst *byte)
TEXT ·gemmPackIQ4_NLSplitAVX2(SB), NOSPLIT, $0-32
	MOVQ nblk+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ ws+16(FP), R9
	MOVQ dst+24(FP), DI
	LEAQ (R9)(R9*2), R10
	LEAQ (SI)(R9*4), R8
	LEAQ (R8)(R9*4), R11
	LEAQ (R11)(R9*4), R12
	VPBROADCASTD gemm0f<>(SB), Y15
	VBROADCASTI128 iq4nlhi<>(SB), Y13
	VBROADCASTI128 iq4nllo<>(SB), Y14
	TESTQ CX, CX
	JZ nlpdone
nlploop:
	TRANS8(2, SI, R8)
	NLSPLIT(Y4, 0)
	NLSPLIT(Y5, 64)
	NLSPLIT(Y6, 128)
	NLSPLIT(Y7, 192)
	TRANS8(2, R11, R12)
	NLSPLIT(Y4, 32)
	NLSPLIT(Y5, 96)
	NLSPLIT(Y6, 160)
	NLSPLIT(Y7, 224)
	SCALES16(1024)
	ADDQ $18, SI
	ADDQ $18, R8
	ADDQ $18, R11
	ADDQ $18, R12
	ADDQ $1088, DI
	DECQ CX
	JNZ nlploop
nlpdone:
	VZEROUPPER
	RET

// ---- AVX2 Q2_K against Q8_K, in the Q6_K layout extended by dmin (5760
// bytes per super-block, gemmkq2q3.go): quants 0..3, so the four VPMADDUBSW
// pair sums of a group of 16 (≤ 4·2·3·128 = 3072) stay in int16 and each
// group takes one VPMADDWD with (sc, sc); the mins pairs (m_2k, m_2k+1)
// sit where Q6_K keeps its offset pairs and give summs against the bsum
// pairs (QOFF2/QOFF1), finished as Q4_K's KFIN does with d at 5632 and
// dmin at 5696.

// f (flo, fhi) += fl(d_w·d_a)·isum − fl(dmin·d_a)·summs for the token whose
// activation block is at ao(DI).
#define Q2FIN(ao, ilo, ihi, mlo, mhi, flo, fhi) \
	VBROADCASTSS ao(DI), Y10; \
	VMULPS 5632(SI), Y10, Y8; \
	VMULPS 5664(SI), Y10, Y9; \
	VCVTDQ2PS ilo, ilo; \
	VCVTDQ2PS ihi, ihi; \
	VFMADD231PS Y8, ilo, flo; \
	VFMADD231PS Y9, ihi, fhi; \
	VMULPS 5696(SI), Y10, Y8; \
	VMULPS 5728(SI), Y10, Y9; \
	VCVTDQ2PS mlo, mlo; \
	VCVTDQ2PS mhi, mhi; \
	VFNMADD231PS Y8, mlo, flo; \
	VFNMADD231PS Y9, mhi, fhi

// func gemmKernelQ2KAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
//
// The gemmKernel contract for the Q2_K super-block layout (prep unused):
// two tokens at a time, then one.
TEXT ·gemmKernelQ2KAVX2(SB), NOSPLIT, $0-88
	MOVQ a+16(FP), R12
	MOVQ as+24(FP), R9
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
q2k2group:
	CMPQ AX, $2
	JLT q2k1group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ q2k2zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y12
	VMASKMOVPS 32(R14), Y9, Y13
	VMASKMOVPS (R14)(BX*1), Y8, Y14
	VMASKMOVPS 32(R14)(BX*1), Y9, Y15
	JMP q2k2start
q2k2zero:
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
q2k2start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	TESTQ CX, CX
	JZ q2k2store
q2k2loop:
	KG2FIRST(0, 0)
	KG2(0, 1)
	KG2(0, 2)
	KG2(0, 3)
	QSC2FIRST(0)
	KG2FIRST(0, 4)
	KG2(0, 5)
	KG2(0, 6)
	KG2(0, 7)
	QSC2(1)
	KG2FIRST(1, 0)
	KG2(1, 1)
	KG2(1, 2)
	KG2(1, 3)
	QSC2(2)
	KG2FIRST(1, 4)
	KG2(1, 5)
	KG2(1, 6)
	KG2(1, 7)
	QSC2(3)
	KG2FIRST(2, 0)
	KG2(2, 1)
	KG2(2, 2)
	KG2(2, 3)
	QSC2(4)
	KG2FIRST(2, 4)
	KG2(2, 5)
	KG2(2, 6)
	KG2(2, 7)
	QSC2(5)
	KG2FIRST(3, 0)
	KG2(3, 1)
	KG2(3, 2)
	KG2(3, 3)
	QSC2(6)
	KG2FIRST(3, 4)
	KG2(3, 5)
	KG2(3, 6)
	KG2(3, 7)
	QSC2(7)
	KG2FIRST(4, 0)
	KG2(4, 1)
	KG2(4, 2)
	KG2(4, 3)
	QSC2(8)
	KG2FIRST(4, 4)
	KG2(4, 5)
	KG2(4, 6)
	KG2(4, 7)
	QSC2(9)
	KG2FIRST(5, 0)
	KG2(5, 1)
	KG2(5, 2)
	KG2(5, 3)
	QSC2(10)
	KG2FIRST(5, 4)
	KG2(5, 5)
	KG2(5, 6)
	KG2(5, 7)
	QSC2(11)
	KG2FIRST(6, 0)
	KG2(6, 1)
	KG2(6, 2)
	KG2(6, 3)
	QSC2(12)
	KG2FIRST(6, 4)
	KG2(6, 5)
	KG2(6, 6)
	KG2(6, 7)
	QSC2(13)
	KG2FIRST(7, 0)
	KG2(7, 1)
	KG2(7, 2)
	KG2(7, 3)
	QSC2(14)
	KG2FIRST(7, 4)
	KG2(7, 5)
	KG2(7, 6)
	KG2(7, 7)
	QSC2(15)
	QOFF2FIRST
	QOFF2(1)
	QOFF2(2)
	QOFF2(3)
	QOFF2(4)
	QOFF2(5)
	QOFF2(6)
	QOFF2(7)
	Q2FIN(0, Y4, Y5, Y0, Y1, Y12, Y13)
	ADDQ R9, DI
	Q2FIN(0, Y6, Y7, Y2, Y3, Y14, Y15)
	SUBQ R9, DI
	ADDQ $5760, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q2k2loop
q2k2store:
	KMASKS
	VMASKMOVPS Y12, Y8, (R14)
	VMASKMOVPS Y13, Y9, 32(R14)
	VMASKMOVPS Y14, Y8, (R14)(BX*1)
	VMASKMOVPS Y15, Y9, 32(R14)(BX*1)
	LEAQ (R12)(R9*2), R12
	LEAQ (R14)(BX*2), R14
	SUBQ $2, AX
	JMP q2k2group
q2k1group:
	TESTQ AX, AX
	JZ q2kdone
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ q2k1zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y12
	VMASKMOVPS 32(R14), Y9, Y13
	JMP q2k1start
q2k1zero:
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
q2k1start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	TESTQ CX, CX
	JZ q2k1store
q2k1loop:
	KG1FIRST(0, 0)
	KG1(0, 1)
	KG1(0, 2)
	KG1(0, 3)
	QSC1FIRST(0)
	KG1FIRST(0, 4)
	KG1(0, 5)
	KG1(0, 6)
	KG1(0, 7)
	QSC1(1)
	KG1FIRST(1, 0)
	KG1(1, 1)
	KG1(1, 2)
	KG1(1, 3)
	QSC1(2)
	KG1FIRST(1, 4)
	KG1(1, 5)
	KG1(1, 6)
	KG1(1, 7)
	QSC1(3)
	KG1FIRST(2, 0)
	KG1(2, 1)
	KG1(2, 2)
	KG1(2, 3)
	QSC1(4)
	KG1FIRST(2, 4)
	KG1(2, 5)
	KG1(2, 6)
	KG1(2, 7)
	QSC1(5)
	KG1FIRST(3, 0)
	KG1(3, 1)
	KG1(3, 2)
	KG1(3, 3)
	QSC1(6)
	KG1FIRST(3, 4)
	KG1(3, 5)
	KG1(3, 6)
	KG1(3, 7)
	QSC1(7)
	KG1FIRST(4, 0)
	KG1(4, 1)
	KG1(4, 2)
	KG1(4, 3)
	QSC1(8)
	KG1FIRST(4, 4)
	KG1(4, 5)
	KG1(4, 6)
	KG1(4, 7)
	QSC1(9)
	KG1FIRST(5, 0)
	KG1(5, 1)
	KG1(5, 2)
	KG1(5, 3)
	QSC1(10)
	KG1FIRST(5, 4)
	KG1(5, 5)
	KG1(5, 6)
	KG1(5, 7)
	QSC1(11)
	KG1FIRST(6, 0)
	KG1(6, 1)
	KG1(6, 2)
	KG1(6, 3)
	QSC1(12)
	KG1FIRST(6, 4)
	KG1(6, 5)
	KG1(6, 6)
	KG1(6, 7)
	QSC1(13)
	KG1FIRST(7, 0)
	KG1(7, 1)
	KG1(7, 2)
	KG1(7, 3)
	QSC1(14)
	KG1FIRST(7, 4)
	KG1(7, 5)
	KG1(7, 6)
	KG1(7, 7)
	QSC1(15)
	QOFF1FIRST
	QOFF1(1)
	QOFF1(2)
	QOFF1(3)
	QOFF1(4)
	QOFF1(5)
	QOFF1(6)
	QOFF1(7)
	Q2FIN(0, Y4, Y5, Y0, Y1, Y12, Y13)
	ADDQ $5760, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q2k1loop
q2k1store:
	KMASKS
	VMASKMOVPS Y12, Y8, (R14)
	VMASKMOVPS Y13, Y9, 32(R14)
q2kdone:
	VZEROUPPER
	RET

// ---- AVX2 Q8_0 in gemm.go's 32-element layout with the quants stored
// signed (offset 0), multiplied as llama.cpp's AVX2 dot does:
// VPMADDUBSW(|w|, sign(a, w)) = w·a per pair. |w| ≤ 128 is exact as an
// unsigned byte (w = -128 included) and the activation quants are in
// [-127, 127] (QuantizeAct's range: gemm.go), so a pair sum is at most
// 2·128·127 = 32512 and never saturates; VPMADDWD with ones widens each
// dword group to int32 (a row's block sum ≤ 32·128·127 < 2^20). Against the
// nibble-split kernel this needs one VPMADDUBSW per 32 byte products
// instead of two and no offset correction (the prep's integer is 0).
//
// Scheduling (measured on Zen 3 with process CPU time, where VPSIGNB and
// VPABSB share the FMA pipes and VPMADDUBSW/VPMADDWD the two multiply
// pipes): |w| comes from VPABSB with a memory source one dword group
// ahead, w is VPSIGNB's memory operand; a token pair alternates two sets
// of int32 block sums (Y0..Y3, Y4..Y7) block by block and folds the
// finished set into its f32 outputs (kept on the stack) while the next
// block's products run, rather than at the end of each block where the
// float tail stalled the integer chains (~59 → ~54 cycles per block and
// token pair); and the activation rows are prefetched 8 blocks ahead
// (streaming them from L2/L3 had cost up to ~20%).

// Activation prefetch: the two tokens' bytes 8 blocks on, while that is
// still inside their rows (CX blocks left).
#define APF2 \
	CMPQ CX, $8; \
	JLE 3(PC); \
	PREFETCHT0 272(DI); \
	PREFETCHT0 272(DI)(R9*1)

#define APF1 \
	CMPQ CX, $8; \
	JLE 2(PC); \
	PREFETCHT0 272(DI)



// Y8, Y9 (or the pair given) = |w| of dword group at wo(SI).
#define Q8SA(wo, r0, r1) \
	VPABSB wo(SI), r0; \
	VPABSB wo+32(SI), r1

// i0, i1 (int32 rows 0..7, 8..15) = (first) or += the four products of
// dword group wo with the activation dword at ao: |w| (u0, u1) times a
// with w's sign (VPSIGNB, w from memory), pair sums widened by VPMADDWD.
#define Q8STFIRST(wo, ao, u0, u1, i0, i1) \
	VPBROADCASTD ao, Y12; \
	VPSIGNB wo(SI), Y12, Y13; \
	VPSIGNB wo+32(SI), Y12, Y14; \
	VPMADDUBSW Y13, u0, Y13; \
	VPMADDUBSW Y14, u1, Y14; \
	VPMADDWD Y15, Y13, i0; \
	VPMADDWD Y15, Y14, i1

#define Q8ST(wo, ao, u0, u1, i0, i1) \
	VPBROADCASTD ao, Y12; \
	VPSIGNB wo(SI), Y12, Y13; \
	VPSIGNB wo+32(SI), Y12, Y14; \
	VPMADDUBSW Y13, u0, Y13; \
	VPMADDUBSW Y14, u1, Y14; \
	VPMADDWD Y15, Y13, Y13; \
	VPMADDWD Y15, Y14, Y14; \
	VPADDD Y13, i0, i0; \
	VPADDD Y14, i1, i1

// Dword group j of a block for tokens 0 (DI) and 1 (DI+R9) into the set
// a0..a3, loading group j+1's |w| (at nwo) into n0, n1 first.
#define Q8SJFIRST(wo, ao, u0, u1, nwo, n0, n1, a0, a1, a2, a3) \
	Q8SA(nwo, n0, n1); \
	Q8STFIRST(wo, ao(DI), u0, u1, a0, a1); \
	Q8STFIRST(wo, ao(DI)(R9*1), u0, u1, a2, a3)

#define Q8SJ(wo, ao, u0, u1, nwo, n0, n1, a0, a1, a2, a3) \
	Q8SA(nwo, n0, n1); \
	Q8ST(wo, ao(DI), u0, u1, a0, a1); \
	Q8ST(wo, ao(DI)(R9*1), u0, u1, a2, a3)

#define Q8SJLAST(wo, ao, u0, u1, a0, a1, a2, a3) \
	Q8ST(wo, ao(DI), u0, u1, a0, a1); \
	Q8ST(wo, ao(DI)(R9*1), u0, u1, a2, a3)

// Folds one token's finished block sums (lo, hi) of the previous block
// (scales at -64(SI), prep at poff(DX)) into its f32 outputs at fo(SP):
// f = fl(d_a·fl(d_w·float(i)) + f), the rounding of gemmKernel's chain.
#define Q8SFIN(lo, hi, poff, fo) \
	VCVTDQ2PS lo, lo; \
	VCVTDQ2PS hi, hi; \
	VMULPS -64(SI), lo, lo; \
	VMULPS -32(SI), hi, hi; \
	VBROADCASTSS poff+4(DX), Y13; \
	VFMADD213PS fo(SP), Y13, lo; \
	VFMADD213PS fo+32(SP), Y13, hi; \
	VMOVUPS lo, fo(SP); \
	VMOVUPS hi, fo+32(SP)

// One block for the token pair into the set a0..a3; Q8SBLOCKFIN also
// folds the other set b0..b3 (the previous block's) in between.
#define Q8SBLOCK(a0, a1, a2, a3) \
	Q8SA(0, Y8, Y9); \
	Q8SJFIRST(0, 2, Y8, Y9, 64, Y10, Y11, a0, a1, a2, a3); \
	Q8SJ(64, 6, Y10, Y11, 128, Y8, Y9, a0, a1, a2, a3); \
	Q8SJ(128, 10, Y8, Y9, 192, Y10, Y11, a0, a1, a2, a3); \
	Q8SJ(192, 14, Y10, Y11, 256, Y8, Y9, a0, a1, a2, a3); \
	Q8SJ(256, 18, Y8, Y9, 320, Y10, Y11, a0, a1, a2, a3); \
	Q8SJ(320, 22, Y10, Y11, 384, Y8, Y9, a0, a1, a2, a3); \
	Q8SJ(384, 26, Y8, Y9, 448, Y10, Y11, a0, a1, a2, a3); \
	Q8SJLAST(448, 30, Y10, Y11, a0, a1, a2, a3)

#define Q8SBLOCKFIN(a0, a1, a2, a3, b0, b1, b2, b3) \
	Q8SA(0, Y8, Y9); \
	Q8SJFIRST(0, 2, Y8, Y9, 64, Y10, Y11, a0, a1, a2, a3); \
	Q8SJ(64, 6, Y10, Y11, 128, Y8, Y9, a0, a1, a2, a3); \
	Q8SFIN(b0, b1, 0, 0); \
	Q8SJ(128, 10, Y8, Y9, 192, Y10, Y11, a0, a1, a2, a3); \
	Q8SJ(192, 14, Y10, Y11, 256, Y8, Y9, a0, a1, a2, a3); \
	Q8SFIN(b2, b3, 8, 64); \
	Q8SJ(256, 18, Y8, Y9, 320, Y10, Y11, a0, a1, a2, a3); \
	Q8SJ(320, 22, Y10, Y11, 384, Y8, Y9, a0, a1, a2, a3); \
	Q8SJ(384, 26, Y8, Y9, 448, Y10, Y11, a0, a1, a2, a3); \
	Q8SJLAST(448, 30, Y10, Y11, a0, a1, a2, a3)

// Next block: DX = this block's prep, then SI, DI, R11 step on.
#define Q8SNEXT \
	MOVQ R11, DX; \
	ADDQ $576, SI; \
	ADDQ $34, DI; \
	ADDQ pstride+40(FP), R11

// One token (DI), one block, f32 outputs in Y4, Y5.
#define Q8SONE(wo, ao) \
	Q8SA(wo, Y8, Y9); \
	Q8ST(wo, ao(DI), Y8, Y9, Y0, Y1)

// func gemmKernelQ8PFAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int, pf *byte, pfstep int)
//
// gemmKernelQ4PFAVX2's contract (two tokens at a time, then one; three
// prefetched lines from pf per block iteration) for gemmPackQ8_0AVX2's
// layout. A pair's f32 outputs live on the stack (0..127(SP)) between
// its masked load and store; each block adds fl(d_a·fl(d_w·float(s)) + f)
// as gemmKernel does, so results match the unpipelined order bit for bit.
TEXT ·gemmKernelQ8PFAVX2(SB), NOSPLIT, $128-104
	MOVQ pf+88(FP), R8
	MOVQ pfstep+96(FP), R10
	MOVQ a+16(FP), R12
	MOVQ as+24(FP), R9
	MOVQ prep+32(FP), R13
	MOVQ y+48(FP), R14
	MOVQ ys+56(FP), BX
	MOVQ ntok+64(FP), AX
	VPBROADCASTD gemmW1<>(SB), Y15
q82group:
	CMPQ AX, $2
	JLT q81group
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ q82zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y0
	VMASKMOVPS 32(R14), Y9, Y1
	VMASKMOVPS (R14)(BX*1), Y8, Y2
	VMASKMOVPS 32(R14)(BX*1), Y9, Y3
	JMP q82init
q82zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
q82init:
	VMOVUPS Y0, 0(SP)
	VMOVUPS Y1, 32(SP)
	VMOVUPS Y2, 64(SP)
	VMOVUPS Y3, 96(SP)
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	MOVQ R13, R11
	TESTQ CX, CX
	JZ q82store
	PF3
	APF2
	Q8SBLOCK(Y0, Y1, Y2, Y3)
	Q8SNEXT
	DECQ CX
	JZ q82finA
q82loop:
	PF3
	APF2
	Q8SBLOCKFIN(Y4, Y5, Y6, Y7, Y0, Y1, Y2, Y3)
	Q8SNEXT
	DECQ CX
	JZ q82finB
	PF3
	APF2
	Q8SBLOCKFIN(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	Q8SNEXT
	DECQ CX
	JNZ q82loop
q82finA:
	Q8SFIN(Y0, Y1, 0, 0)
	Q8SFIN(Y2, Y3, 8, 64)
	JMP q82store
q82finB:
	Q8SFIN(Y4, Y5, 0, 0)
	Q8SFIN(Y6, Y7, 8, 64)
q82store:
	KMASKS
	VMOVUPS 0(SP), Y0
	VMOVUPS 32(SP), Y1
	VMOVUPS 64(SP), Y2
	VMOVUPS 96(SP), Y3
	VMASKMOVPS Y0, Y8, (R14)
	VMASKMOVPS Y1, Y9, 32(R14)
	VMASKMOVPS Y2, Y8, (R14)(BX*1)
	VMASKMOVPS Y3, Y9, 32(R14)(BX*1)
	LEAQ (R12)(R9*2), R12
	ADDQ $16, R13
	LEAQ (R14)(BX*2), R14
	SUBQ $2, AX
	JMP q82group
q81group:
	TESTQ AX, AX
	JZ q8done
	MOVQ first+80(FP), DX
	TESTQ DX, DX
	JNZ q81zero
	KMASKS
	VMASKMOVPS (R14), Y8, Y4
	VMASKMOVPS 32(R14), Y9, Y5
	JMP q81start
q81zero:
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
q81start:
	MOVQ nblk+0(FP), CX
	MOVQ pw+8(FP), SI
	MOVQ R12, DI
	MOVQ R13, R11
	TESTQ CX, CX
	JZ q81store
q81loop:
	PF3
	APF1
	Q8SA(0, Y8, Y9)
	Q8STFIRST(0, 2(DI), Y8, Y9, Y0, Y1)
	Q8SONE(64, 6)
	Q8SONE(128, 10)
	Q8SONE(192, 14)
	Q8SONE(256, 18)
	Q8SONE(320, 22)
	Q8SONE(384, 26)
	Q8SONE(448, 30)
	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VMULPS 512(SI), Y0, Y0
	VMULPS 544(SI), Y1, Y1
	VBROADCASTSS 4(R11), Y12
	VFMADD231PS Y12, Y0, Y4
	VFMADD231PS Y12, Y1, Y5
	ADDQ $576, SI
	ADDQ $34, DI
	ADDQ pstride+40(FP), R11
	DECQ CX
	JNZ q81loop
q81store:
	KMASKS
	VMASKMOVPS Y4, Y8, (R14)
	VMASKMOVPS Y5, Y9, 32(R14)
q8done:
	VZEROUPPER
	RET

// func gemmPackQ8_0AVX2(nblk int, w *byte, ws int, dst *byte)
//
// Packs blocks [0, nblk) of the 16 rows w, w+ws, ..., w+15·ws: per block
// eight 64-byte vectors (vector j: elements 4j..4j+3 of row r at lane r,
// the quants as they are) and the 16 scales as f32 (refPack's bytes, off 0).
TEXT ·gemmPackQ8_0AVX2(SB), NOSPLIT, $0-32
	MOVQ nblk+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ ws+16(FP), R9
	MOVQ dst+24(FP), DI
	LEAQ (R9)(R9*2), R10
	LEAQ (SI)(R9*4), R8
	LEAQ (R8)(R9*4), R11
	LEAQ (R11)(R9*4), R12
	TESTQ CX, CX
	JZ sq8pdone
sq8ploop:
	TRANS8(2, SI, R8)
	VMOVDQU Y4, 0(DI)
	VMOVDQU Y5, 64(DI)
	VMOVDQU Y6, 128(DI)
	VMOVDQU Y7, 192(DI)
	TRANS8(18, SI, R8)
	VMOVDQU Y4, 256(DI)
	VMOVDQU Y5, 320(DI)
	VMOVDQU Y6, 384(DI)
	VMOVDQU Y7, 448(DI)
	TRANS8(2, R11, R12)
	VMOVDQU Y4, 32(DI)
	VMOVDQU Y5, 96(DI)
	VMOVDQU Y6, 160(DI)
	VMOVDQU Y7, 224(DI)
	TRANS8(18, R11, R12)
	VMOVDQU Y4, 288(DI)
	VMOVDQU Y5, 352(DI)
	VMOVDQU Y6, 416(DI)
	VMOVDQU Y7, 480(DI)
	SCALES16(512)
	ADDQ $34, SI
	ADDQ $34, R8
	ADDQ $34, R11
	ADDQ $34, R12
	ADDQ $576, DI
	DECQ CX
	JNZ sq8ploop
sq8pdone:
	VZEROUPPER
	RET
