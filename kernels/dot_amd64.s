// AVX2+FMA+F16C dot products, one weight row against one activation row
// (ggml vec_dot semantics). Integer sums inside a block are exact for every
// byte pattern: unsigned nibble values go through VPMADDUBSW against the
// signed activations and the zero-point offset is subtracted as a second
// VPMADDUBSW of the offset constant (no VPSIGNB trick, which is wrong for an
// activation byte of -128), and int8×int8 goes through VPMOVSXBW+VPMADDWD.
// Only the float accumulation order differs from the scalar reference.

#include "textflag.h"
#include "rows4_amd64.h"
#include "kzacc_amd64.h"

DATA c0f<>+0(SB)/4, $0x0f0f0f0f
GLOBL c0f<>(SB), RODATA|NOPTR, $4
DATA c08<>+0(SB)/4, $0x08080808
GLOBL c08<>(SB), RODATA|NOPTR, $4
DATA c10<>+0(SB)/4, $0x10101010
GLOBL c10<>(SB), RODATA|NOPTR, $4
DATA c03<>+0(SB)/4, $0x03030303
GLOBL c03<>(SB), RODATA|NOPTR, $4
DATA c04<>+0(SB)/4, $0x04040404
GLOBL c04<>(SB), RODATA|NOPTR, $4
DATA c20<>+0(SB)/4, $0x20202020
GLOBL c20<>(SB), RODATA|NOPTR, $4
DATA c30<>+0(SB)/4, $0x30303030
GLOBL c30<>(SB), RODATA|NOPTR, $4
DATA c80<>+0(SB)/4, $0x80808080
GLOBL c80<>(SB), RODATA|NOPTR, $4
DATA cw1<>+0(SB)/4, $0x00010001
GLOBL cw1<>(SB), RODATA|NOPTR, $4
DATA cff<>+0(SB)/4, $0xffffffff
GLOBL cff<>(SB), RODATA|NOPTR, $4

// shufK4: entry k (32 bytes) broadcasts int16 word k of each 128-bit lane.
// shufPair: entry k broadcasts word 2k in the low lane and 2k+1 in the high
// lane (a 32-element chunk whose two halves have their own scale).
// shufQh/bitQh expand 32 packed high bits into 32 bytes (byte j <- bit j).
DATA shufK4<>+0(SB)/8, $0x0100010001000100
DATA shufK4<>+8(SB)/8, $0x0100010001000100
DATA shufK4<>+16(SB)/8, $0x0100010001000100
DATA shufK4<>+24(SB)/8, $0x0100010001000100
DATA shufK4<>+32(SB)/8, $0x0302030203020302
DATA shufK4<>+40(SB)/8, $0x0302030203020302
DATA shufK4<>+48(SB)/8, $0x0302030203020302
DATA shufK4<>+56(SB)/8, $0x0302030203020302
DATA shufK4<>+64(SB)/8, $0x0504050405040504
DATA shufK4<>+72(SB)/8, $0x0504050405040504
DATA shufK4<>+80(SB)/8, $0x0504050405040504
DATA shufK4<>+88(SB)/8, $0x0504050405040504
DATA shufK4<>+96(SB)/8, $0x0706070607060706
DATA shufK4<>+104(SB)/8, $0x0706070607060706
DATA shufK4<>+112(SB)/8, $0x0706070607060706
DATA shufK4<>+120(SB)/8, $0x0706070607060706
DATA shufK4<>+128(SB)/8, $0x0908090809080908
DATA shufK4<>+136(SB)/8, $0x0908090809080908
DATA shufK4<>+144(SB)/8, $0x0908090809080908
DATA shufK4<>+152(SB)/8, $0x0908090809080908
DATA shufK4<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufK4<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufK4<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufK4<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL shufK4<>(SB), RODATA|NOPTR, $256
DATA shufPair<>+0(SB)/8, $0x0100010001000100
DATA shufPair<>+8(SB)/8, $0x0100010001000100
DATA shufPair<>+16(SB)/8, $0x0302030203020302
DATA shufPair<>+24(SB)/8, $0x0302030203020302
DATA shufPair<>+32(SB)/8, $0x0504050405040504
DATA shufPair<>+40(SB)/8, $0x0504050405040504
DATA shufPair<>+48(SB)/8, $0x0706070607060706
DATA shufPair<>+56(SB)/8, $0x0706070607060706
DATA shufPair<>+64(SB)/8, $0x0908090809080908
DATA shufPair<>+72(SB)/8, $0x0908090809080908
DATA shufPair<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufPair<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufPair<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufPair<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufPair<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufPair<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL shufPair<>(SB), RODATA|NOPTR, $128
DATA shufQh<>+0(SB)/8, $0x0000000000000000
DATA shufQh<>+8(SB)/8, $0x0101010101010101
DATA shufQh<>+16(SB)/8, $0x0202020202020202
DATA shufQh<>+24(SB)/8, $0x0303030303030303
GLOBL shufQh<>(SB), RODATA|NOPTR, $32
DATA bitQh<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitQh<>+8(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitQh<>+16(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitQh<>+24(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL bitQh<>(SB), RODATA|NOPTR, $32

// Horizontal sum of the 8 floats of y into lane 0 of x (x is y's low half).
#define HSUMPS(y, x, t) \
	VEXTRACTF128 $1, y, t; \
	VADDPS t, x, x; \
	VPERMILPS $0x4E, x, t; \
	VADDPS t, x, x; \
	VMOVSHDUP x, t; \
	VADDSS t, x, x

// Horizontal sum of the 8 int32 of y into lane 0 of x.
#define HSUMD(y, x, t) \
	VEXTRACTI128 $1, y, t; \
	VPADDD t, x, x; \
	VPSHUFD $0x4E, x, t; \
	VPADDD t, x, x; \
	VPSHUFD $0xB1, x, t; \
	VPADDD t, x, x

// Y1 = broadcast(fp16(w[wo]) * fp16(a[ao])).
#define DPROD(wo, ao) \
	HPAIR(wo(SI), ao(DI), AX); \
	VMOVD AX, X1; \
	VCVTPH2PS X1, X1; \
	VMOVSHDUP X1, X2; \
	VMULSS X2, X1, X1; \
	VBROADCASTSS X1, Y1

// Y1 = broadcast(d_w*d_a), accm[0] += m_w*s_a for the (d, m)·(d, s) types.
#define DMPROD(wo, ao, accm) \
	MOVL wo(SI), AX; \
	VMOVD AX, X1; \
	MOVL ao(DI), AX; \
	VPINSRD $1, AX, X1, X1; \
	VCVTPH2PS X1, X1; \
	VMOVHLPS X1, X1, X2; \
	VMULPS X2, X1, X1; \
	VMOVSHDUP X1, X2; \
	VADDSS X2, accm, accm; \
	VBROADCASTSS X1, Y1

// Y2 = the 32 nibbles at qo(SI) as bytes: low nibbles then high nibbles.
#define NIBBLES(qo) \
	VMOVDQU qo(SI), X2; \
	VPSRLW $4, X2, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	VPAND Y15, Y2, Y2

// Y5 = 0x10 in byte j where bit j of the uint32 at ho(SI) is set.
#define HIGHBITS(ho) \
	VPBROADCASTD ho(SI), Y5; \
	VPSHUFB Y12, Y5, Y5; \
	VPOR Y11, Y5, Y5; \
	VPCMPEQB Y10, Y5, Y5; \
	VPAND Y9, Y5, Y5

// acc += Y1 * float(Σ pairs of (Y2 - off)·a[ao:ao+32]), off given as bytes in yoff.
#define DOTOFF(ao, yoff, acc) \
	VMOVDQU ao(DI), Y3; \
	VPMADDUBSW Y3, Y2, Y4; \
	VPMADDUBSW Y3, yoff, Y5; \
	VPSUBW Y5, Y4, Y4; \
	VPMADDWD Y14, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	VFMADD231PS Y4, Y1, acc

// acc += Y1 * float(Σ pairs of Y2·a[ao:ao+32]) for unsigned Y2.
#define DOTU(ao, acc) \
	VPMADDUBSW ao(DI), Y2, Y4; \
	VPMADDWD Y14, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	VFMADD231PS Y4, Y1, acc

#define Q4_0_BLK(wo, ao, acc) \
	DPROD(wo, ao); \
	NIBBLES(wo+2); \
	DOTOFF(ao+2, Y13, acc)


#define Q8_0_BLK(wo, ao, acc) \
	DPROD(wo, ao); \
	VPMOVSXBW wo+2(SI), Y2; \
	VPMOVSXBW ao+2(DI), Y3; \
	VPMADDWD Y3, Y2, Y2; \
	VPMOVSXBW wo+18(SI), Y4; \
	VPMOVSXBW ao+18(DI), Y5; \
	VPMADDWD Y5, Y4, Y4; \
	VPADDD Y4, Y2, Y2; \
	VCVTDQ2PS Y2, Y2; \
	VFMADD231PS Y2, Y1, acc

// func dotQ8_0Q8_0AVX2(nb int, w, a *byte) float32
TEXT ·dotQ8_0Q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y6, Y6, Y6
q80loop:
	CMPQ CX, $2
	JLT q80tail
	Q8_0_BLK(0, 0, Y0)
	Q8_0_BLK(34, 34, Y6)
	ADDQ $68, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP q80loop
q80tail:
	TESTQ CX, CX
	JZ q80done
	Q8_0_BLK(0, 0, Y0)
q80done:
	VADDPS Y6, Y0, Y0
	HSUMPS(Y0, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

#define Q4_1_BLK(wo, ao, acc, accm) \
	DMPROD(wo, ao, accm); \
	NIBBLES(wo+4); \
	DOTU(ao+4, acc)

// func dotQ4_1Q8_1AVX2(nb int, w, a *byte) float32
TEXT ·dotQ4_1Q8_1AVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Y15
	VPBROADCASTD cw1<>(SB), Y14
	VXORPS Y0, Y0, Y0
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
q41loop:
	CMPQ CX, $2
	JLT q41tail
	Q4_1_BLK(0, 0, Y0, X7)
	Q4_1_BLK(20, 36, Y6, X8)
	ADDQ $40, SI
	ADDQ $72, DI
	SUBQ $2, CX
	JMP q41loop
q41tail:
	TESTQ CX, CX
	JZ q41done
	Q4_1_BLK(0, 0, Y0, X7)
q41done:
	VADDPS Y6, Y0, Y0
	HSUMPS(Y0, X0, X1)
	VADDSS X8, X7, X7
	VADDSS X7, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

#define Q5_0_BLK(wo, ao, acc) \
	DPROD(wo, ao); \
	HIGHBITS(wo+2); \
	NIBBLES(wo+6); \
	VPOR Y5, Y2, Y2; \
	DOTOFF(ao+2, Y9, acc)

#define Q5_SETUP \
	VPBROADCASTD c0f<>(SB), Y15; \
	VPBROADCASTD cw1<>(SB), Y14; \
	VMOVDQU shufQh<>(SB), Y12; \
	VMOVDQU bitQh<>(SB), Y11; \
	VPBROADCASTD cff<>(SB), Y10; \
	VPBROADCASTD c10<>(SB), Y9

// func dotQ5_0Q8_0AVX2(nb int, w, a *byte) float32
TEXT ·dotQ5_0Q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	Q5_SETUP
	VXORPS Y0, Y0, Y0
	VXORPS Y6, Y6, Y6
q50loop:
	CMPQ CX, $2
	JLT q50tail
	Q5_0_BLK(0, 0, Y0)
	Q5_0_BLK(22, 34, Y6)
	ADDQ $44, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP q50loop
q50tail:
	TESTQ CX, CX
	JZ q50done
	Q5_0_BLK(0, 0, Y0)
q50done:
	VADDPS Y6, Y0, Y0
	HSUMPS(Y0, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

#define Q5_1_BLK(wo, ao, acc, accm) \
	DMPROD(wo, ao, accm); \
	HIGHBITS(wo+4); \
	NIBBLES(wo+8); \
	VPOR Y5, Y2, Y2; \
	DOTU(ao+4, acc)

// func dotQ5_1Q8_1AVX2(nb int, w, a *byte) float32
TEXT ·dotQ5_1Q8_1AVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	Q5_SETUP
	VXORPS Y0, Y0, Y0
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
q51loop:
	CMPQ CX, $2
	JLT q51tail
	Q5_1_BLK(0, 0, Y0, X7)
	Q5_1_BLK(24, 36, Y6, X8)
	ADDQ $48, SI
	ADDQ $72, DI
	SUBQ $2, CX
	JMP q51loop
q51tail:
	TESTQ CX, CX
	JZ q51done
	Q5_1_BLK(0, 0, Y0, X7)
q51done:
	VADDPS Y6, Y0, Y0
	HSUMPS(Y0, X0, X1)
	VADDSS X8, X7, X7
	VADDSS X7, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ---- K-quants against Q8_K (f32 d at 0, 256 int8 at 4, 16 int16 bsums at 260).
// Each super-block's integer sums are reduced to one exact int32 before the
// float scale is applied, as the scalar reference does.

// Y6 += Σ_pairs scale(k) · (Y10 · a[ao:ao+32]) with per-lane scales from
// shufPair entry k applied to the duplicated 8-word scale vector s.
#define PAIRACC(ao, k, s) \
	VPMADDUBSW ao(DI), Y10, Y10; \
	VPSHUFB shufPair<>+(32*k)(SB), s, Y9; \
	VPMADDWD Y9, Y10, Y10; \
	VPADDD Y10, Y6, Y6

// X0[0] += X1[0]*float(int X6[0]) - X2[0]*float(int X4[0]).
#define KFINISH_MIN \
	HSUMD(Y6, X6, X5); \
	VCVTDQ2PS X6, X6; \
	VCVTDQ2PS X4, X4; \
	VMOVSHDUP X1, X2; \
	VFMADD231SS X6, X1, X0; \
	VFNMADD231SS X4, X2, X0

// X1 = [fp16(w[0])*a.d, fp16(w[2])*a.d] for (d, dmin) at wo(SI).
#define KDMIN(wo) \
	MOVL wo(SI), AX; \
	VMOVD AX, X1; \
	VCVTPH2PS X1, X1; \
	VBROADCASTSS 0(DI), X2; \
	VMULPS X2, X1, X1

// X1 = fp16(w[wo]) * a.d
#define KD(wo) \
	MOVWLZX wo(SI), AX; \
	VMOVD AX, X1; \
	VCVTPH2PS X1, X1; \
	VMULSS 0(DI), X1, X1

// Q4_K/Q5_K 6-bit scales and mins: X3 = 8 int16 scales duplicated in both
// lanes (Y3), X4 = Σ min_j·(bsum_2j+bsum_2j+1) as int32 in lane 0.
#define K4SCALES \
	MOVL 4(SI), AX; \
	MOVL 8(SI), BX; \
	MOVL 12(SI), DX; \
	MOVL AX, R8; \
	ANDL $0x3f3f3f3f, R8; \
	MOVL BX, R9; \
	ANDL $0x3f3f3f3f, R9; \
	MOVL DX, R10; \
	ANDL $0x0f0f0f0f, R10; \
	MOVL AX, R11; \
	SHRL $6, R11; \
	ANDL $0x03030303, R11; \
	SHLL $4, R11; \
	ORL R11, R10; \
	SHRL $4, DX; \
	ANDL $0x0f0f0f0f, DX; \
	SHRL $6, BX; \
	ANDL $0x03030303, BX; \
	SHLL $4, BX; \
	ORL BX, DX; \
	VMOVD R8, X3; \
	VPINSRD $1, R10, X3, X3; \
	VMOVD R9, X4; \
	VPINSRD $1, DX, X4, X4; \
	VPMOVZXBW X3, X3; \
	VINSERTI128 $1, X3, Y3, Y3; \
	VPUNPCKLBW X4, X4, X4; \
	VPMOVZXBW X4, Y4; \
	VPMADDWD 260(DI), Y4, Y4; \
	HSUMD(Y4, X4, X5)

// One 64-element chunk j of Q4_K: low nibbles are sub-block 2j, high 2j+1.
#define Q4K_CHUNK(j) \
	VMOVDQU (16+32*j)(SI), Y7; \
	VPSRLW $4, Y7, Y8; \
	VPAND Y15, Y7, Y7; \
	VPAND Y15, Y8, Y8; \
	VPMADDUBSW (4+64*j)(DI), Y7, Y7; \
	VPMADDUBSW (36+64*j)(DI), Y8, Y8; \
	VPSHUFB shufK4<>+(64*j)(SB), Y3, Y9; \
	VPSHUFB shufK4<>+(64*j+32)(SB), Y3, Y10; \
	VPMADDWD Y9, Y7, Y7; \
	VPMADDWD Y10, Y8, Y8; \
	VPADDD Y7, Y6, Y6; \
	VPADDD Y8, Y6, Y6

// func dotQ4_KQ8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotQ4_KQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Y15
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ q4kdone
q4kloop:
	K4SCALES
	VPXOR Y6, Y6, Y6
	Q4K_CHUNK(0)
	Q4K_CHUNK(1)
	Q4K_CHUNK(2)
	Q4K_CHUNK(3)
	KDMIN(0)
	KFINISH_MIN
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q4kloop
q4kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// One 64-element chunk j of Q5_K; the high bit of sub-block 2j is bit 2j of
// qh (Y11), moved to bit 4 by lop $lc, and likewise for 2j+1 with hop $hc.
#define Q5K_CHUNK(j, lop, lc, hop, hc) \
	VMOVDQU (48+32*j)(SI), Y7; \
	VPSRLW $4, Y7, Y8; \
	VPAND Y15, Y7, Y7; \
	VPAND Y15, Y8, Y8; \
	lop $lc, Y11, Y9; \
	VPAND Y13, Y9, Y9; \
	VPOR Y9, Y7, Y7; \
	hop $hc, Y11, Y10; \
	VPAND Y13, Y10, Y10; \
	VPOR Y10, Y8, Y8; \
	VPMADDUBSW (4+64*j)(DI), Y7, Y7; \
	VPMADDUBSW (36+64*j)(DI), Y8, Y8; \
	VPSHUFB shufK4<>+(64*j)(SB), Y3, Y9; \
	VPSHUFB shufK4<>+(64*j+32)(SB), Y3, Y10; \
	VPMADDWD Y9, Y7, Y7; \
	VPMADDWD Y10, Y8, Y8; \
	VPADDD Y7, Y6, Y6; \
	VPADDD Y8, Y6, Y6

// func dotQ5_KQ8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotQ5_KQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Y15
	VPBROADCASTD c10<>(SB), Y13
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ q5kdone
q5kloop:
	K4SCALES
	VMOVDQU 16(SI), Y11
	VPXOR Y6, Y6, Y6
	Q5K_CHUNK(0, VPSLLW, 4, VPSLLW, 3)
	Q5K_CHUNK(1, VPSLLW, 2, VPSLLW, 1)
	Q5K_CHUNK(2, VPSRLW, 0, VPSRLW, 1)
	Q5K_CHUNK(3, VPSRLW, 2, VPSRLW, 3)
	KDMIN(0)
	KFINISH_MIN
	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q5kloop
q5kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q6_K half h (128 elements): ql at 64h, qh at 128+32h; values are 6-bit
// unsigned here and the -32 offset is applied through the bsums.
#define Q6K_HALF(h, s) \
	VMOVDQU (64*h)(SI), Y7; \
	VMOVDQU (64*h+32)(SI), Y8; \
	VMOVDQU (128+32*h)(SI), Y12; \
	VPAND Y15, Y7, Y10; \
	VPSLLW $4, Y12, Y11; \
	VPAND Y13, Y11, Y11; \
	VPOR Y11, Y10, Y10; \
	PAIRACC(4+128*h, 0, s); \
	VPAND Y15, Y8, Y10; \
	VPSLLW $2, Y12, Y11; \
	VPAND Y13, Y11, Y11; \
	VPOR Y11, Y10, Y10; \
	PAIRACC(36+128*h, 1, s); \
	VPSRLW $4, Y7, Y10; \
	VPAND Y15, Y10, Y10; \
	VPAND Y13, Y12, Y11; \
	VPOR Y11, Y10, Y10; \
	PAIRACC(68+128*h, 2, s); \
	VPSRLW $4, Y8, Y10; \
	VPAND Y15, Y10, Y10; \
	VPSRLW $2, Y12, Y11; \
	VPAND Y13, Y11, Y11; \
	VPOR Y11, Y10, Y10; \
	PAIRACC(100+128*h, 3, s)

// func dotQ6_KQ8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotQ6_KQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Y15
	VPBROADCASTD c30<>(SB), Y13
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ q6kdone
q6kloop:
	VPMOVSXBW 192(SI), Y3
	VPMADDWD 260(DI), Y3, Y4
	VPSLLD $5, Y4, Y4
	VPXOR Y6, Y6, Y6
	VPSUBD Y4, Y6, Y6
	VPERMQ $0x44, Y3, Y14
	Q6K_HALF(0, Y14)
	VPERMQ $0xEE, Y3, Y14
	Q6K_HALF(1, Y14)
	HSUMD(Y6, X6, X5)
	VCVTDQ2PS X6, X6
	KD(208)
	VFMADD231SS X6, X1, X0
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q6kloop
q6kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q2_K half h: 32 bytes of 2-bit quants at 16+32h, four shifts.
#define Q2K_HALF(h, s) \
	VMOVDQU (16+32*h)(SI), Y7; \
	VPAND Y13, Y7, Y10; \
	PAIRACC(4+128*h, 0, s); \
	VPSRLW $2, Y7, Y10; \
	VPAND Y13, Y10, Y10; \
	PAIRACC(36+128*h, 1, s); \
	VPSRLW $4, Y7, Y10; \
	VPAND Y13, Y10, Y10; \
	PAIRACC(68+128*h, 2, s); \
	VPSRLW $6, Y7, Y10; \
	VPAND Y13, Y10, Y10; \
	PAIRACC(100+128*h, 3, s)

// func dotQ2_KQ8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotQ2_KQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Y15
	VPBROADCASTD c03<>(SB), Y13
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ q2kdone
q2kloop:
	VMOVDQU 0(SI), X3
	VPSRLW $4, X3, X4
	VPAND X15, X4, X4
	VPAND X15, X3, X3
	VPMOVZXBW X4, Y4
	VPMADDWD 260(DI), Y4, Y4
	HSUMD(Y4, X4, X5)
	VPMOVZXBW X3, Y3
	VPXOR Y6, Y6, Y6
	VPERMQ $0x44, Y3, Y14
	Q2K_HALF(0, Y14)
	VPERMQ $0xEE, Y3, Y14
	Q2K_HALF(1, Y14)
	KDMIN(80)
	KFINISH_MIN
	ADDQ $84, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q2kloop
q2kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// One 32-element chunk of Q3_K: 2 low bits at shift qs of Y7, high bit m of
// hmask (Y11) moved to bit 2 by hop $hc; value+4 is the unsigned byte.
#define Q3K_CHUNK(qs, hop, hc, ao, k, s) \
	VPSRLW $qs, Y7, Y10; \
	VPAND Y13, Y10, Y10; \
	hop $hc, Y11, Y9; \
	VPAND Y15, Y9, Y9; \
	VPOR Y9, Y10, Y10; \
	PAIRACC(ao, k, s)

// func dotQ3_KQ8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotQ3_KQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c04<>(SB), Y15
	VPBROADCASTD c03<>(SB), Y13
	VPBROADCASTD c20<>(SB), Y12
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ q3kdone
q3kloop:
	MOVL 96(SI), AX
	MOVL 100(SI), BX
	MOVL 104(SI), DX
	MOVL AX, R8
	ANDL $0x0f0f0f0f, R8
	MOVL DX, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL R12, R8
	MOVL BX, R9
	ANDL $0x0f0f0f0f, R9
	MOVL DX, R12
	SHRL $2, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL R12, R9
	MOVL AX, R10
	SHRL $4, R10
	ANDL $0x0f0f0f0f, R10
	MOVL DX, R12
	SHRL $4, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL R12, R10
	MOVL BX, R11
	SHRL $4, R11
	ANDL $0x0f0f0f0f, R11
	MOVL DX, R12
	SHRL $6, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL R12, R11
	VMOVD R8, X3
	VPINSRD $1, R9, X3, X3
	VPINSRD $2, R10, X3, X3
	VPINSRD $3, R11, X3, X3
	VPSUBB X12, X3, X3
	VPMOVSXBW X3, Y3
	VPMADDWD 260(DI), Y3, Y4
	VPSLLD $2, Y4, Y4
	VPXOR Y6, Y6, Y6
	VPSUBD Y4, Y6, Y6
	VMOVDQU 0(SI), Y11
	VPERMQ $0x44, Y3, Y14
	VMOVDQU 32(SI), Y7
	Q3K_CHUNK(0, VPSLLW, 2, 4, 0, Y14)
	Q3K_CHUNK(2, VPSLLW, 1, 36, 1, Y14)
	Q3K_CHUNK(4, VPSRLW, 0, 68, 2, Y14)
	Q3K_CHUNK(6, VPSRLW, 1, 100, 3, Y14)
	VPERMQ $0xEE, Y3, Y14
	VMOVDQU 64(SI), Y7
	Q3K_CHUNK(0, VPSRLW, 2, 132, 0, Y14)
	Q3K_CHUNK(2, VPSRLW, 3, 164, 1, Y14)
	Q3K_CHUNK(4, VPSRLW, 4, 196, 2, Y14)
	Q3K_CHUNK(6, VPSRLW, 5, 228, 3, Y14)
	HSUMD(Y6, X6, X5)
	VCVTDQ2PS X6, X6
	KD(108)
	VFMADD231SS X6, X1, X0
	ADDQ $110, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q3kloop
q3kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ---- IQ4_NL (against Q8_0) and IQ4_XS (against Q8_K): 4-bit indices into
// the non-linear codebook kvalues_iq4nl, looked up with VPSHUFB. The looked-up
// values are signed, so the products use the sign-moving form: |a| (VPABSB;
// -128 becomes the unsigned byte 128) times the codebook value with a's sign
// moved onto it (VPSIGNB; -value stays within int8 because the codebook lies
// in [-127, 113]). Each product is a·value exactly and a VPMADDUBSW pair is at
// most 2·128·127 = 32512 in magnitude, so nothing saturates for any byte
// pattern of either operand.

// The 16 codebook values as bytes (ggml-common.h kvalues_iq4nl).
DATA iq4kv<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA iq4kv<>+8(SB)/8, $0x7159453526190d01
GLOBL iq4kv<>(SB), RODATA|NOPTR, $16
// Per-dword shift counts that bring IQ4_XS sub-block ib's scale bits to bit
// 0: 4·ib for scales_l (as one uint32), 2·ib for scales_h.
DATA iq4shl<>+0(SB)/8, $0x0000000400000000
DATA iq4shl<>+8(SB)/8, $0x0000000c00000008
DATA iq4shl<>+16(SB)/8, $0x0000001400000010
DATA iq4shl<>+24(SB)/8, $0x0000001c00000018
GLOBL iq4shl<>(SB), RODATA|NOPTR, $32
DATA iq4shh<>+0(SB)/8, $0x0000000200000000
DATA iq4shh<>+8(SB)/8, $0x0000000600000004
DATA iq4shh<>+16(SB)/8, $0x0000000a00000008
DATA iq4shh<>+24(SB)/8, $0x0000000e0000000c
GLOBL iq4shh<>(SB), RODATA|NOPTR, $32
DATA cd0f<>+0(SB)/4, $0x0000000f
GLOBL cd0f<>(SB), RODATA|NOPTR, $4
DATA cd30<>+0(SB)/4, $0x00000030
GLOBL cd30<>(SB), RODATA|NOPTR, $4
DATA cd20<>+0(SB)/4, $0x00000020
GLOBL cd20<>(SB), RODATA|NOPTR, $4

// Y2 = codebook values of the 32 indices at qo(SI) in element order (low
// nibbles then high nibbles); Y15 = 0x0f bytes, Y13 = the codebook.
#define IQ4_VALUES(qo) \
	VMOVDQU qo(SI), X2; \
	VPSRLW $4, X2, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	VPAND Y15, Y2, Y2; \
	VPSHUFB Y2, Y13, Y2

// Y4 = the 16 int16 pair sums of Y2·a[ao:ao+32] (both signed), exact.
#define IQ4_PAIRS(ao) \
	VMOVDQU ao(DI), Y3; \
	VPSIGNB Y3, Y2, Y2; \
	VPABSB Y3, Y3; \
	VPMADDUBSW Y2, Y3, Y4

#define IQ4_NL_BLK(wo, ao, acc) \
	DPROD(wo, ao); \
	IQ4_VALUES(wo+2); \
	IQ4_PAIRS(ao+2); \
	VPMADDWD Y14, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	VFMADD231PS Y4, Y1, acc

// func dotIQ4_NLQ8_0AVX2(nb int, w, a *byte) float32
TEXT ·dotIQ4_NLQ8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Y15
	VPBROADCASTD cw1<>(SB), Y14
	VBROADCASTI128 iq4kv<>(SB), Y13
	VXORPS Y0, Y0, Y0
	VXORPS Y6, Y6, Y6
iq4nlloop:
	CMPQ CX, $2
	JLT iq4nltail
	IQ4_NL_BLK(0, 0, Y0)
	IQ4_NL_BLK(18, 34, Y6)
	ADDQ $36, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP iq4nlloop
iq4nltail:
	TESTQ CX, CX
	JZ iq4nldone
	IQ4_NL_BLK(0, 0, Y0)
iq4nldone:
	VADDPS Y6, Y0, Y0
	HSUMPS(Y0, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// IQ4_XS scales: Y9 = the eight int16 sub-block multipliers code-32 in word
// order, duplicated in both lanes (for the shufK4 broadcasts). Dword ib
// takes scales_l (uint32 at 4) >> 4ib & 15 and scales_h (at 2) >> 2ib & 3
// as bits 4..5; Y11 = 15, Y12 = 0x30, Y8 = 32 (dwords).
#define IQ4XS_SCALES \
	VPBROADCASTD 4(SI), Y9; \
	VPSRLVD iq4shl<>(SB), Y9, Y9; \
	VPAND Y11, Y9, Y9; \
	VPBROADCASTD 2(SI), Y10; \
	VPSRLVD iq4shh<>(SB), Y10, Y10; \
	VPSLLD $4, Y10, Y10; \
	VPAND Y12, Y10, Y10; \
	VPOR Y10, Y9, Y9; \
	VPSUBD Y8, Y9, Y9; \
	VPACKSSDW Y9, Y9, Y9; \
	VPERMQ $0x88, Y9, Y9

// Sub-block ib: acc += multiplier(ib) · (pairs of values · activations).
#define IQ4XS_SUB(ib, acc) \
	IQ4_VALUES(8+16*ib); \
	IQ4_PAIRS(4+32*ib); \
	VPSHUFB shufK4<>+(32*ib)(SB), Y9, Y5; \
	VPMADDWD Y5, Y4, Y4; \
	VPADDD Y4, acc, acc

// func dotIQ4_XSQ8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotIQ4_XSQ8_KAVX2(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Y15
	VBROADCASTI128 iq4kv<>(SB), Y13
	VPBROADCASTD cd0f<>(SB), Y11
	VPBROADCASTD cd30<>(SB), Y12
	VPBROADCASTD cd20<>(SB), Y8
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ iq4xsdone
iq4xsloop:
	IQ4XS_SCALES
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	IQ4XS_SUB(0, Y6)
	IQ4XS_SUB(1, Y7)
	IQ4XS_SUB(2, Y6)
	IQ4XS_SUB(3, Y7)
	IQ4XS_SUB(4, Y6)
	IQ4XS_SUB(5, Y7)
	IQ4XS_SUB(6, Y6)
	IQ4XS_SUB(7, Y7)
	VPADDD Y7, Y6, Y6
	KD(0)
	HSUMD(Y6, X6, X5)
	VCVTDQ2PS X6, X6
	VFMADD231SS X6, X1, X0
	ADDQ $136, SI
	ADDQ $292, DI
	DECQ CX
	JNZ iq4xsloop
iq4xsdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ---- float types: n elements, four independent accumulators.

// func dotF32AVX2(n int, w, a *byte) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
f32loop32:
	CMPQ CX, $32
	JLT f32loop8
	VMOVUPS 0(SI), Y4
	VFMADD231PS 0(DI), Y4, Y0
	VMOVUPS 32(SI), Y5
	VFMADD231PS 32(DI), Y5, Y1
	VMOVUPS 64(SI), Y6
	VFMADD231PS 64(DI), Y6, Y2
	VMOVUPS 96(SI), Y7
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP f32loop32
f32loop8:
	CMPQ CX, $8
	JLT f32tail
	VMOVUPS 0(SI), Y4
	VFMADD231PS 0(DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP f32loop8
f32tail:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUMPS(Y0, X0, X1)
f32tl:
	TESTQ CX, CX
	JZ f32done
	VMOVSS 0(SI), X4
	VFMADD231SS 0(DI), X4, X0
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP f32tl
f32done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotF16AVX2(n int, w, a *byte) float32
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
f16loop32:
	CMPQ CX, $32
	JLT f16loop8
	VCVTPH2PS 0(SI), Y4
	VCVTPH2PS 0(DI), Y8
	VFMADD231PS Y8, Y4, Y0
	VCVTPH2PS 16(SI), Y5
	VCVTPH2PS 16(DI), Y9
	VFMADD231PS Y9, Y5, Y1
	VCVTPH2PS 32(SI), Y6
	VCVTPH2PS 32(DI), Y10
	VFMADD231PS Y10, Y6, Y2
	VCVTPH2PS 48(SI), Y7
	VCVTPH2PS 48(DI), Y11
	VFMADD231PS Y11, Y7, Y3
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $32, CX
	JMP f16loop32
f16loop8:
	CMPQ CX, $8
	JLT f16tail
	VCVTPH2PS 0(SI), Y4
	VCVTPH2PS 0(DI), Y8
	VFMADD231PS Y8, Y4, Y0
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $8, CX
	JMP f16loop8
f16tail:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUMPS(Y0, X0, X1)
f16tl:
	TESTQ CX, CX
	JZ f16done
	MOVWLZX 0(SI), AX
	VMOVD AX, X4
	VCVTPH2PS X4, X4
	MOVWLZX 0(DI), AX
	VMOVD AX, X5
	VCVTPH2PS X5, X5
	VFMADD231SS X5, X4, X0
	ADDQ $2, SI
	ADDQ $2, DI
	DECQ CX
	JMP f16tl
f16done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotBF16AVX2(n int, w, a *byte) float32
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
bf16loop32:
	CMPQ CX, $32
	JLT bf16loop8
	VPMOVZXWD 0(SI), Y4
	VPSLLD $16, Y4, Y4
	VPMOVZXWD 0(DI), Y8
	VPSLLD $16, Y8, Y8
	VFMADD231PS Y8, Y4, Y0
	VPMOVZXWD 16(SI), Y5
	VPSLLD $16, Y5, Y5
	VPMOVZXWD 16(DI), Y9
	VPSLLD $16, Y9, Y9
	VFMADD231PS Y9, Y5, Y1
	VPMOVZXWD 32(SI), Y6
	VPSLLD $16, Y6, Y6
	VPMOVZXWD 32(DI), Y10
	VPSLLD $16, Y10, Y10
	VFMADD231PS Y10, Y6, Y2
	VPMOVZXWD 48(SI), Y7
	VPSLLD $16, Y7, Y7
	VPMOVZXWD 48(DI), Y11
	VPSLLD $16, Y11, Y11
	VFMADD231PS Y11, Y7, Y3
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $32, CX
	JMP bf16loop32
bf16loop8:
	CMPQ CX, $8
	JLT bf16tail
	VPMOVZXWD 0(SI), Y4
	VPSLLD $16, Y4, Y4
	VPMOVZXWD 0(DI), Y8
	VPSLLD $16, Y8, Y8
	VFMADD231PS Y8, Y4, Y0
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $8, CX
	JMP bf16loop8
bf16tail:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUMPS(Y0, X0, X1)
bf16tl:
	TESTQ CX, CX
	JZ bf16done
	MOVWLZX 0(SI), AX
	SHLL $16, AX
	VMOVD AX, X4
	MOVWLZX 0(DI), AX
	SHLL $16, AX
	VMOVD AX, X5
	VFMADD231SS X5, X4, X0
	ADDQ $2, SI
	ADDQ $2, DI
	DECQ CX
	JMP bf16tl
bf16done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// ---- AVX-512 (F, BW, VL, VNNI): two 32-element blocks per ZMM register.

DATA perm02<>+0(SB)/8, $0
DATA perm02<>+8(SB)/8, $0
DATA perm02<>+16(SB)/8, $0
DATA perm02<>+24(SB)/8, $0
DATA perm02<>+32(SB)/8, $0x0000000200000002
DATA perm02<>+40(SB)/8, $0x0000000200000002
DATA perm02<>+48(SB)/8, $0x0000000200000002
DATA perm02<>+56(SB)/8, $0x0000000200000002
GLOBL perm02<>(SB), RODATA|NOPTR, $64

// Z1 = [fp16 w[wo0]*a[ao0] ×8 | fp16 w[wo1]*a[ao1] ×8]; Z16 holds perm02.
#define DPROD2(wo0, ao0, wo1, ao1) \
	HPAIR(wo0(SI), ao0(DI), AX); \
	HPAIR(wo1(SI), ao1(DI), DX); \
	VMOVD AX, X1; \
	VPINSRD $1, DX, X1, X1; \
	VCVTPH2PS X1, X1; \
	VMOVSHDUP X1, X2; \
	VMULPS X2, X1, X1; \
	VPERMPS Z1, Z16, Z1

// Fold the ZMM accumulator Z0 into Y0 so VEX tail code may use it.
#define FOLDZ0 \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VADDPS Y1, Y0, Y0

// Two Q4_0 blocks: nibbles laid out [lo0 hi0 lo1 hi1] to match the two
// activation blocks; Σ(q-8)·a = VPDPBUSD(q, a) - VPDPBUSD(8, a).
#define Q4_0_PAIR(wo, ao, acc) \
	DPROD2(wo, ao, wo+18, ao+34); \
	VMOVDQU wo+2(SI), X2; \
	VINSERTI128 $1, wo+20(SI), Y2, Y2; \
	VPSRLW $4, Y2, Y3; \
	VINSERTI64X4 $1, Y3, Z2, Z2; \
	VPANDD Z15, Z2, Z2; \
	VSHUFI64X2 $0xD8, Z2, Z2, Z2; \
	VMOVDQU ao+2(DI), Y3; \
	VINSERTI64X4 $1, ao+36(DI), Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPDPBUSD Z3, Z2, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPDPBUSD Z3, Z13, Z5; \
	VPSUBD Z5, Z4, Z4; \
	VCVTDQ2PS Z4, Z4; \
	VFMADD231PS Z4, Z1, acc

// func dotQ4_0Q8_0AVX512(nb int, w, a *byte) float32
TEXT ·dotQ4_0Q8_0AVX512(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Z15
	VPBROADCASTD cw1<>(SB), Y14
	VPBROADCASTD c08<>(SB), Z13
	VMOVDQU64 perm02<>(SB), Z16
	VPXORD Z0, Z0, Z0
	VPXORD Z6, Z6, Z6
z40loop4:
	CMPQ CX, $4
	JLT z40loop2
	Q4_0_PAIR(0, 0, Z0)
	Q4_0_PAIR(36, 68, Z6)
	ADDQ $72, SI
	ADDQ $136, DI
	SUBQ $4, CX
	JMP z40loop4
z40loop2:
	VADDPS Z6, Z0, Z0
	CMPQ CX, $2
	JLT z40tail
	Q4_0_PAIR(0, 0, Z0)
	ADDQ $36, SI
	ADDQ $68, DI
	SUBQ $2, CX
z40tail:
	FOLDZ0
	TESTQ CX, CX
	JZ z40done
	Q4_0_BLK(0, 0, Y0)
z40done:
	HSUMPS(Y0, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Two Q8_0 blocks: Σ w·a = VPDPBUSD(a^0x80, w) - VPDPBUSD(0x80, w), exact
// for every byte (a^0x80 is a+128 as an unsigned byte).
#define Q8_0_PAIR(wo, ao, acc) \
	DPROD2(wo, ao, wo+34, ao+34); \
	VMOVDQU wo+2(SI), Y2; \
	VINSERTI64X4 $1, wo+36(SI), Z2, Z2; \
	VMOVDQU ao+2(DI), Y3; \
	VINSERTI64X4 $1, ao+36(DI), Z3, Z3; \
	VPXORD Z14, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPDPBUSD Z2, Z3, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPDPBUSD Z2, Z14, Z5; \
	VPSUBD Z5, Z4, Z4; \
	VCVTDQ2PS Z4, Z4; \
	VFMADD231PS Z4, Z1, acc

// func dotQ8_0Q8_0AVX512(nb int, w, a *byte) float32
TEXT ·dotQ8_0Q8_0AVX512(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c80<>(SB), Z14
	VMOVDQU64 perm02<>(SB), Z16
	VPXORD Z0, Z0, Z0
	VPXORD Z6, Z6, Z6
z80loop4:
	CMPQ CX, $4
	JLT z80loop2
	Q8_0_PAIR(0, 0, Z0)
	Q8_0_PAIR(68, 68, Z6)
	ADDQ $136, SI
	ADDQ $136, DI
	SUBQ $4, CX
	JMP z80loop4
z80loop2:
	VADDPS Z6, Z0, Z0
	CMPQ CX, $2
	JLT z80tail
	Q8_0_PAIR(0, 0, Z0)
	ADDQ $68, SI
	ADDQ $68, DI
	SUBQ $2, CX
z80tail:
	FOLDZ0
	TESTQ CX, CX
	JZ z80done
	Q8_0_BLK(0, 0, Y0)
z80done:
	HSUMPS(Y0, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotF16AVX512(n int, w, a *byte) float32
TEXT ·dotF16AVX512(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
zf16loop64:
	CMPQ CX, $64
	JLT zf16loop16
	VCVTPH2PS 0(SI), Z4
	VCVTPH2PS 0(DI), Z8
	VFMADD231PS Z8, Z4, Z0
	VCVTPH2PS 32(SI), Z5
	VCVTPH2PS 32(DI), Z9
	VFMADD231PS Z9, Z5, Z1
	VCVTPH2PS 64(SI), Z6
	VCVTPH2PS 64(DI), Z10
	VFMADD231PS Z10, Z6, Z2
	VCVTPH2PS 96(SI), Z7
	VCVTPH2PS 96(DI), Z11
	VFMADD231PS Z11, Z7, Z3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $64, CX
	JMP zf16loop64
zf16loop16:
	CMPQ CX, $16
	JLT zf16fold
	VCVTPH2PS 0(SI), Z4
	VCVTPH2PS 0(DI), Z8
	VFMADD231PS Z8, Z4, Z0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JMP zf16loop16
zf16fold:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	FOLDZ0
	CMPQ CX, $8
	JLT zf16hsum
	VCVTPH2PS 0(SI), Y4
	VCVTPH2PS 0(DI), Y8
	VFMADD231PS Y8, Y4, Y0
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $8, CX
zf16hsum:
	HSUMPS(Y0, X0, X1)
zf16tl:
	TESTQ CX, CX
	JZ zf16done
	MOVWLZX 0(SI), AX
	VMOVD AX, X4
	VCVTPH2PS X4, X4
	MOVWLZX 0(DI), AX
	VMOVD AX, X5
	VCVTPH2PS X5, X5
	VFMADD231SS X5, X4, X0
	ADDQ $2, SI
	ADDQ $2, DI
	DECQ CX
	JMP zf16tl
zf16done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// shufK4Z: entry j (64 bytes) broadcasts scale word 2j over the low 256 bits
// and 2j+1 over the high 256 bits of a ZMM holding 4 copies of the scales.
DATA shufK4Z<>+0(SB)/8, $0x0100010001000100
DATA shufK4Z<>+8(SB)/8, $0x0100010001000100
DATA shufK4Z<>+16(SB)/8, $0x0100010001000100
DATA shufK4Z<>+24(SB)/8, $0x0100010001000100
DATA shufK4Z<>+32(SB)/8, $0x0302030203020302
DATA shufK4Z<>+40(SB)/8, $0x0302030203020302
DATA shufK4Z<>+48(SB)/8, $0x0302030203020302
DATA shufK4Z<>+56(SB)/8, $0x0302030203020302
DATA shufK4Z<>+64(SB)/8, $0x0504050405040504
DATA shufK4Z<>+72(SB)/8, $0x0504050405040504
DATA shufK4Z<>+80(SB)/8, $0x0504050405040504
DATA shufK4Z<>+88(SB)/8, $0x0504050405040504
DATA shufK4Z<>+96(SB)/8, $0x0706070607060706
DATA shufK4Z<>+104(SB)/8, $0x0706070607060706
DATA shufK4Z<>+112(SB)/8, $0x0706070607060706
DATA shufK4Z<>+120(SB)/8, $0x0706070607060706
DATA shufK4Z<>+128(SB)/8, $0x0908090809080908
DATA shufK4Z<>+136(SB)/8, $0x0908090809080908
DATA shufK4Z<>+144(SB)/8, $0x0908090809080908
DATA shufK4Z<>+152(SB)/8, $0x0908090809080908
DATA shufK4Z<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4Z<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4Z<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4Z<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4Z<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4Z<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4Z<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4Z<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4Z<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufK4Z<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufK4Z<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufK4Z<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL shufK4Z<>(SB), RODATA|NOPTR, $256

// Q4_K chunk j on ZMM: [low nibbles | high nibbles] of 32 qs bytes line up
// with 64 contiguous activations; VPDPWSSD applies the two sub-block scales.
#define Q4K_ZCHUNK(j) \
	VMOVDQU (16+32*j)(SI), Y7; \
	VPSRLW $4, Y7, Y8; \
	VINSERTI64X4 $1, Y8, Z7, Z7; \
	VPANDD Z15, Z7, Z7; \
	VPMADDUBSW (4+64*j)(DI), Z7, Z7; \
	VPSHUFB shufK4Z<>+(64*j)(SB), Z3, Z9; \
	VPDPWSSD Z9, Z7, Z6

// func dotQ4_KQ8_KAVX512(nb int, w, a *byte) float32
TEXT ·dotQ4_KQ8_KAVX512(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Z15
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ zq4kdone
zq4kloop:
	K4SCALES
	VINSERTI64X4 $1, Y3, Z3, Z3
	VPXORD Z6, Z6, Z6
	Q4K_ZCHUNK(0)
	Q4K_ZCHUNK(1)
	Q4K_ZCHUNK(2)
	Q4K_ZCHUNK(3)
	VEXTRACTI64X4 $1, Z6, Y7
	VPADDD Y7, Y6, Y6
	KDMIN(0)
	KFINISH_MIN
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ zq4kloop
zq4kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// permQ6: entry e (64 bytes) = word index 4e+k repeated 8 times in lane k:
// spreads 4 consecutive Q6_K scales over the four 128-bit lanes.
DATA permQ6<>+0(SB)/8, $0x0000000000000000
DATA permQ6<>+8(SB)/8, $0x0000000000000000
DATA permQ6<>+16(SB)/8, $0x0001000100010001
DATA permQ6<>+24(SB)/8, $0x0001000100010001
DATA permQ6<>+32(SB)/8, $0x0002000200020002
DATA permQ6<>+40(SB)/8, $0x0002000200020002
DATA permQ6<>+48(SB)/8, $0x0003000300030003
DATA permQ6<>+56(SB)/8, $0x0003000300030003
DATA permQ6<>+64(SB)/8, $0x0004000400040004
DATA permQ6<>+72(SB)/8, $0x0004000400040004
DATA permQ6<>+80(SB)/8, $0x0005000500050005
DATA permQ6<>+88(SB)/8, $0x0005000500050005
DATA permQ6<>+96(SB)/8, $0x0006000600060006
DATA permQ6<>+104(SB)/8, $0x0006000600060006
DATA permQ6<>+112(SB)/8, $0x0007000700070007
DATA permQ6<>+120(SB)/8, $0x0007000700070007
DATA permQ6<>+128(SB)/8, $0x0008000800080008
DATA permQ6<>+136(SB)/8, $0x0008000800080008
DATA permQ6<>+144(SB)/8, $0x0009000900090009
DATA permQ6<>+152(SB)/8, $0x0009000900090009
DATA permQ6<>+160(SB)/8, $0x000a000a000a000a
DATA permQ6<>+168(SB)/8, $0x000a000a000a000a
DATA permQ6<>+176(SB)/8, $0x000b000b000b000b
DATA permQ6<>+184(SB)/8, $0x000b000b000b000b
DATA permQ6<>+192(SB)/8, $0x000c000c000c000c
DATA permQ6<>+200(SB)/8, $0x000c000c000c000c
DATA permQ6<>+208(SB)/8, $0x000d000d000d000d
DATA permQ6<>+216(SB)/8, $0x000d000d000d000d
DATA permQ6<>+224(SB)/8, $0x000e000e000e000e
DATA permQ6<>+232(SB)/8, $0x000e000e000e000e
DATA permQ6<>+240(SB)/8, $0x000f000f000f000f
DATA permQ6<>+248(SB)/8, $0x000f000f000f000f
GLOBL permQ6<>(SB), RODATA|NOPTR, $256

// Q6_K half h on ZMM: ql[64h:64h+64] in one register; the two 64-element
// groups it yields line up with contiguous activations. qh is broadcast to
// both halves and shifted per half into bits 4..5.
#define Q6K_ZHALF(h, ilo, ihi) \
	VMOVDQU64 (64*h)(SI), Z7; \
	VBROADCASTI64X4 (128+32*h)(SI), Z8; \
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
	VPERMW Z3, ilo, Z9; \
	VPERMW Z3, ihi, Z11; \
	VPDPWSSD Z9, Z10, Z6; \
	VPDPWSSD Z11, Z12, Z6

// func dotQ6_KQ8_KAVX512(nb int, w, a *byte) float32
TEXT ·dotQ6_KQ8_KAVX512(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Z15
	VPBROADCASTD c30<>(SB), Z13
	VMOVDQU64 permQ6<>+0(SB), Z16
	VMOVDQU64 permQ6<>+64(SB), Z17
	VMOVDQU64 permQ6<>+128(SB), Z18
	VMOVDQU64 permQ6<>+192(SB), Z19
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ zq6kdone
zq6kloop:
	VPMOVSXBW 192(SI), Y3
	VPMADDWD 260(DI), Y3, Y4
	VPSLLD $5, Y4, Y4
	VPXOR Y6, Y6, Y6
	VPSUBD Y4, Y6, Y6
	Q6K_ZHALF(0, Z16, Z17)
	Q6K_ZHALF(1, Z18, Z19)
	VEXTRACTI64X4 $1, Z6, Y7
	VPADDD Y7, Y6, Y6
	HSUMD(Y6, X6, X5)
	VCVTDQ2PS X6, X6
	KD(208)
	VFMADD231SS X6, X1, X0
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ zq6kloop
zq6kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q5_K chunk j on ZMM: Q4K_ZCHUNK plus bit 2j / 2j+1 of qh (Y11) moved to
// bit 4 of the low / high nibble halves.
#define Q5K_ZCHUNK(j, lop, lc, hop, hc) \
	VMOVDQU (48+32*j)(SI), Y7; \
	VPSRLW $4, Y7, Y8; \
	VINSERTI64X4 $1, Y8, Z7, Z7; \
	VPANDD Z15, Z7, Z7; \
	lop $lc, Y11, Y9; \
	hop $hc, Y11, Y10; \
	VINSERTI64X4 $1, Y10, Z9, Z9; \
	VPANDD Z13, Z9, Z9; \
	VPORD Z9, Z7, Z7; \
	VPMADDUBSW (4+64*j)(DI), Z7, Z7; \
	VPSHUFB shufK4Z<>+(64*j)(SB), Z3, Z9; \
	VPDPWSSD Z9, Z7, Z6

// func dotQ5_KQ8_KAVX512(nb int, w, a *byte) float32
TEXT ·dotQ5_KQ8_KAVX512(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Z15
	VPBROADCASTD c10<>(SB), Z13
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ zq5kdone
zq5kloop:
	K4SCALES
	VINSERTI64X4 $1, Y3, Z3, Z3
	VMOVDQU 16(SI), Y11
	VPXORD Z6, Z6, Z6
	Q5K_ZCHUNK(0, VPSLLW, 4, VPSLLW, 3)
	Q5K_ZCHUNK(1, VPSLLW, 2, VPSLLW, 1)
	Q5K_ZCHUNK(2, VPSRLW, 0, VPSRLW, 1)
	Q5K_ZCHUNK(3, VPSRLW, 2, VPSRLW, 3)
	VEXTRACTI64X4 $1, Z6, Y7
	VPADDD Y7, Y6, Y6
	KDMIN(0)
	KFINISH_MIN
	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ zq5kloop
zq5kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// 2-bit quants of a 128-element half (Y7) as two ZMMs lined up with
// activations: Z9 = [q&3 | q>>2&3], Z10 = [q>>4&3 | q>>6]; Z13 = 0x03.
#define Q2BITS_Z \
	VPSRLW $2, Y7, Y8; \
	VINSERTI64X4 $1, Y8, Z7, Z9; \
	VPANDD Z13, Z9, Z9; \
	VPSRLW $4, Y7, Y10; \
	VPSRLW $6, Y7, Y8; \
	VINSERTI64X4 $1, Y8, Z10, Z10; \
	VPANDD Z13, Z10, Z10

#define PERMQ6_LOAD \
	VMOVDQU64 permQ6<>+0(SB), Z16; \
	VMOVDQU64 permQ6<>+64(SB), Z17; \
	VMOVDQU64 permQ6<>+128(SB), Z18; \
	VMOVDQU64 permQ6<>+192(SB), Z19

// func dotQ2_KQ8_KAVX512(nb int, w, a *byte) float32
TEXT ·dotQ2_KQ8_KAVX512(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Y15
	VPBROADCASTD c03<>(SB), Z13
	PERMQ6_LOAD
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ zq2kdone
zq2kloop:
	VMOVDQU 0(SI), X3
	VPSRLW $4, X3, X4
	VPAND X15, X4, X4
	VPAND X15, X3, X3
	VPMOVZXBW X4, Y4
	VPMADDWD 260(DI), Y4, Y4
	HSUMD(Y4, X4, X5)
	VPMOVZXBW X3, Y3
	VPXORD Z6, Z6, Z6
	VMOVDQU 16(SI), Y7
	Q2BITS_Z
	KZACC(4(DI), 68(DI), Z3, Z6, Z16, Z17)
	VMOVDQU 48(SI), Y7
	Q2BITS_Z
	KZACC(132(DI), 196(DI), Z3, Z6, Z18, Z19)
	VEXTRACTI64X4 $1, Z6, Y7
	VPADDD Y7, Y6, Y6
	KDMIN(80)
	KFINISH_MIN
	ADDQ $84, SI
	ADDQ $292, DI
	DECQ CX
	JNZ zq2kloop
zq2kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q3_K high bits for two chunks: bit m0 / m1 of hmask (Y11) to bit 2 of the
// low / high ZMM half, OR-ed into zv; Z15 = 0x04.
#define Q3HB_Z(zv, op0, c0, op1, c1) \
	op0 $c0, Y11, Y8; \
	op1 $c1, Y11, Y12; \
	VINSERTI64X4 $1, Y12, Z8, Z8; \
	VPANDD Z15, Z8, Z8; \
	VPORD Z8, zv, zv

// func dotQ3_KQ8_KAVX512(nb int, w, a *byte) float32
TEXT ·dotQ3_KQ8_KAVX512(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c04<>(SB), Z15
	VPBROADCASTD c03<>(SB), Z13
	VPBROADCASTD c20<>(SB), X2
	PERMQ6_LOAD
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ zq3kdone
zq3kloop:
	MOVL 96(SI), AX
	MOVL 100(SI), BX
	MOVL 104(SI), DX
	MOVL AX, R8
	ANDL $0x0f0f0f0f, R8
	MOVL DX, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL R12, R8
	MOVL BX, R9
	ANDL $0x0f0f0f0f, R9
	MOVL DX, R12
	SHRL $2, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL R12, R9
	MOVL AX, R10
	SHRL $4, R10
	ANDL $0x0f0f0f0f, R10
	MOVL DX, R12
	SHRL $4, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL R12, R10
	MOVL BX, R11
	SHRL $4, R11
	ANDL $0x0f0f0f0f, R11
	MOVL DX, R12
	SHRL $6, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL R12, R11
	VMOVD R8, X3
	VPINSRD $1, R9, X3, X3
	VPINSRD $2, R10, X3, X3
	VPINSRD $3, R11, X3, X3
	VPSUBB X2, X3, X3
	VPMOVSXBW X3, Y3
	VPMADDWD 260(DI), Y3, Y4
	VPSLLD $2, Y4, Y4
	VPXORD Z6, Z6, Z6
	VPSUBD Y4, Y6, Y6
	VMOVDQU 0(SI), Y11
	VMOVDQU 32(SI), Y7
	Q2BITS_Z
	Q3HB_Z(Z9, VPSLLW, 2, VPSLLW, 1)
	Q3HB_Z(Z10, VPSRLW, 0, VPSRLW, 1)
	KZACC(4(DI), 68(DI), Z3, Z6, Z16, Z17)
	VMOVDQU 64(SI), Y7
	Q2BITS_Z
	Q3HB_Z(Z9, VPSRLW, 2, VPSRLW, 3)
	Q3HB_Z(Z10, VPSRLW, 4, VPSRLW, 5)
	KZACC(132(DI), 196(DI), Z3, Z6, Z18, Z19)
	VEXTRACTI64X4 $1, Z6, Y7
	VPADDD Y7, Y6, Y6
	HSUMD(Y6, X6, X5)
	VCVTDQ2PS X6, X6
	KD(108)
	VFMADD231SS X6, X1, X0
	ADDQ $110, SI
	ADDQ $292, DI
	DECQ CX
	JNZ zq3kloop
zq3kdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Two blocks' nibbles at wo+qo / wo+qo+ws of SI in element order
// [lo0 hi0 lo1 hi1] (Z2).
#define NIBBLES2(qo0, qo1) \
	VMOVDQU qo0(SI), X2; \
	VINSERTI128 $1, qo1(SI), Y2, Y2; \
	VPSRLW $4, Y2, Y3; \
	VINSERTI64X4 $1, Y3, Z2, Z2; \
	VPANDD Z15, Z2, Z2; \
	VSHUFI64X2 $0xD8, Z2, Z2, Z2

// Z2 |= 0x10 in byte j where bit j of the 64-bit value qh0 | qh1<<32 is set
// (the 5th bit of element j of the two blocks); Z9 = 0x10 bytes.
#define HIGHBITS2(ho0, ho1) \
	MOVL ho0(SI), AX; \
	MOVL ho1(SI), BX; \
	SHLQ $32, BX; \
	ORQ BX, AX; \
	KMOVQ AX, K1; \
	VPADDB Z9, Z2, K1, Z2

// Two activation blocks (qs at ao+qo, ao+qo+as) in Z3.
#define ACTS2(q0, q1) \
	VMOVDQU q0(DI), Y3; \
	VINSERTI64X4 $1, q1(DI), Z3, Z3

// Z1 = [d_w0·d_a0 ×8 | d_w1·d_a1 ×8] and X7 += [., m_w0·s_a0, ., m_w1·s_a1]
// for the (d, m)·(d, s) types; Z16 = perm02.
#define DMPROD2(wo0, ao0, wo1, ao1) \
	VMOVD wo0(SI), X1; \
	VPINSRD $1, wo1(SI), X1, X1; \
	VMOVD ao0(DI), X2; \
	VPINSRD $1, ao1(DI), X2, X2; \
	VCVTPH2PS X1, X1; \
	VCVTPH2PS X2, X2; \
	VMULPS X2, X1, X1; \
	VADDPS X1, X7, X7; \
	VPERMPS Z1, Z16, Z1

// acc += Z1 · float(VPDPBUSD(Z2, Z3) [- VPDPBUSD(off, Z3)]).
#define VNNI_U(acc) \
	VPXORD Z4, Z4, Z4; \
	VPDPBUSD Z3, Z2, Z4; \
	VCVTDQ2PS Z4, Z4; \
	VFMADD231PS Z4, Z1, acc

#define VNNI_OFF(off, acc) \
	VPXORD Z4, Z4, Z4; \
	VPDPBUSD Z3, Z2, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPDPBUSD Z3, off, Z5; \
	VPSUBD Z5, Z4, Z4; \
	VCVTDQ2PS Z4, Z4; \
	VFMADD231PS Z4, Z1, acc

#define Q4_1_PAIR \
	DMPROD2(0, 0, 20, 36); \
	NIBBLES2(4, 24); \
	ACTS2(4, 40); \
	VNNI_U(Z0)

#define Q5_0_PAIR \
	DPROD2(0, 0, 22, 34); \
	NIBBLES2(6, 28); \
	HIGHBITS2(2, 24); \
	ACTS2(2, 36); \
	VNNI_OFF(Z9, Z0)

#define Q5_1_PAIR \
	DMPROD2(0, 0, 24, 36); \
	NIBBLES2(8, 32); \
	HIGHBITS2(4, 28); \
	ACTS2(4, 40); \
	VNNI_U(Z0)

// X0 += lanes 1 and 3 of X7 (the m·s terms DMPROD2 collected).
#define ADD_MS \
	VMOVSHDUP X7, X7; \
	VMOVHLPS X7, X7, X8; \
	VADDSS X8, X7, X7; \
	VADDSS X7, X0, X0

// func dotQ4_1Q8_1AVX512(nb int, w, a *byte) float32
TEXT ·dotQ4_1Q8_1AVX512(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPBROADCASTD c0f<>(SB), Z15
	VPBROADCASTD cw1<>(SB), Y14
	VMOVDQU64 perm02<>(SB), Z16
	VPXORD Z0, Z0, Z0
	VXORPS X7, X7, X7
z41loop2:
	CMPQ CX, $2
	JLT z41tail
	Q4_1_PAIR
	ADDQ $40, SI
	ADDQ $72, DI
	SUBQ $2, CX
	JMP z41loop2
z41tail:
	FOLDZ0
	VXORPS X8, X8, X8
	TESTQ CX, CX
	JZ z41done
	Q4_1_BLK(0, 0, Y0, X8)
z41done:
	HSUMPS(Y0, X0, X1)
	VADDSS X8, X0, X0
	ADD_MS
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ5_0Q8_0AVX512(nb int, w, a *byte) float32
TEXT ·dotQ5_0Q8_0AVX512(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	Q5_SETUP
	VPBROADCASTD c10<>(SB), Z9
	VPBROADCASTD c0f<>(SB), Z15
	VMOVDQU64 perm02<>(SB), Z16
	VPXORD Z0, Z0, Z0
z50loop2:
	CMPQ CX, $2
	JLT z50tail
	Q5_0_PAIR
	ADDQ $44, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP z50loop2
z50tail:
	FOLDZ0
	TESTQ CX, CX
	JZ z50done
	Q5_0_BLK(0, 0, Y0)
z50done:
	HSUMPS(Y0, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ5_1Q8_1AVX512(nb int, w, a *byte) float32
TEXT ·dotQ5_1Q8_1AVX512(SB), NOSPLIT, $0-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	Q5_SETUP
	VPBROADCASTD c10<>(SB), Z9
	VPBROADCASTD c0f<>(SB), Z15
	VMOVDQU64 perm02<>(SB), Z16
	VPXORD Z0, Z0, Z0
	VXORPS X7, X7, X7
z51loop2:
	CMPQ CX, $2
	JLT z51tail
	Q5_1_PAIR
	ADDQ $48, SI
	ADDQ $72, DI
	SUBQ $2, CX
	JMP z51loop2
z51tail:
	FOLDZ0
	VXORPS X8, X8, X8
	TESTQ CX, CX
	JZ z51done
	Q5_1_BLK(0, 0, Y0, X8)
z51done:
	HSUMPS(Y0, X0, X1)
	VADDSS X8, X0, X0
	ADD_MS
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotBF16AVX512(n int, w, a *byte) float32
TEXT ·dotBF16AVX512(SB), NOSPLIT, $0-28
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
zbf16loop64:
	CMPQ CX, $64
	JLT zbf16loop16
	VPMOVZXWD 0(SI), Z4
	VPSLLD $16, Z4, Z4
	VPMOVZXWD 0(DI), Z8
	VPSLLD $16, Z8, Z8
	VFMADD231PS Z8, Z4, Z0
	VPMOVZXWD 32(SI), Z5
	VPSLLD $16, Z5, Z5
	VPMOVZXWD 32(DI), Z9
	VPSLLD $16, Z9, Z9
	VFMADD231PS Z9, Z5, Z1
	VPMOVZXWD 64(SI), Z6
	VPSLLD $16, Z6, Z6
	VPMOVZXWD 64(DI), Z10
	VPSLLD $16, Z10, Z10
	VFMADD231PS Z10, Z6, Z2
	VPMOVZXWD 96(SI), Z7
	VPSLLD $16, Z7, Z7
	VPMOVZXWD 96(DI), Z11
	VPSLLD $16, Z11, Z11
	VFMADD231PS Z11, Z7, Z3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $64, CX
	JMP zbf16loop64
zbf16loop16:
	CMPQ CX, $16
	JLT zbf16fold
	VPMOVZXWD 0(SI), Z4
	VPSLLD $16, Z4, Z4
	VPMOVZXWD 0(DI), Z8
	VPSLLD $16, Z8, Z8
	VFMADD231PS Z8, Z4, Z0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JMP zbf16loop16
zbf16fold:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	FOLDZ0
	HSUMPS(Y0, X0, X1)
zbf16tl:
	TESTQ CX, CX
	JZ zbf16done
	MOVWLZX 0(SI), AX
	SHLL $16, AX
	VMOVD AX, X4
	MOVWLZX 0(DI), AX
	SHLL $16, AX
	VMOVD AX, X5
	VFMADD231SS X5, X4, X0
	ADDQ $2, SI
	ADDQ $2, DI
	DECQ CX
	JMP zbf16tl
zbf16done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func readSumAVX2(n int, p *byte) uint64
// Reads n bytes (n a multiple of 128; the rest is ignored) and returns a
// checksum, so BenchmarkArchReadBW measures the memory-read ceiling that a
// matvec over the same bytes can at best reach.
TEXT ·readSumAVX2(SB), NOSPLIT, $0-24
	MOVQ n+0(FP), CX
	MOVQ p+8(FP), SI
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	SHRQ $7, CX
	JZ rsdone
rsloop:
	VPADDQ 0(SI), Y0, Y0
	VPADDQ 32(SI), Y1, Y1
	VPADDQ 64(SI), Y2, Y2
	VPADDQ 96(SI), Y3, Y3
	ADDQ $128, SI
	DECQ CX
	JNZ rsloop
rsdone:
	VPADDQ Y1, Y0, Y0
	VPADDQ Y3, Y2, Y2
	VPADDQ Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDQ X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDQ X1, X0, X0
	VMOVQ X0, AX
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET

// ---- Four activation rows per weight row (prefill). Each weight block is
// unpacked once and dotted with the four activation rows at DI, R10, R11,
// R12 (a + j*stride). Per output, every integer lane and every float
// operation (operands in the same positions, so even NaN payloads agree)
// is the one-row routine's, so y[j] equals that routine on row j bit for
// bit. The integer sums are rearranged exactly: with q the signed weight
// value, Σq·a = VPDPBUSD(a^0x80, q) - VPDPBUSD(0x80, q), and the second
// term depends on the weight only, so it is computed once per block.

// permK4: entry j (64 bytes) = dword 2j ×8 then 2j+1 ×8: spreads row j's two
// block scale products (lanes 2j, 2j+1 of SCALES4's Y1) over a ZMM pair.
// Entries 4..7 (+256) do the same for lanes 8+2j, 9+2j (SCALESR4Z's Z1).
DATA permK4<>+0(SB)/8, $0x0000000000000000
DATA permK4<>+8(SB)/8, $0x0000000000000000
DATA permK4<>+16(SB)/8, $0x0000000000000000
DATA permK4<>+24(SB)/8, $0x0000000000000000
DATA permK4<>+32(SB)/8, $0x0000000100000001
DATA permK4<>+40(SB)/8, $0x0000000100000001
DATA permK4<>+48(SB)/8, $0x0000000100000001
DATA permK4<>+56(SB)/8, $0x0000000100000001
DATA permK4<>+64(SB)/8, $0x0000000200000002
DATA permK4<>+72(SB)/8, $0x0000000200000002
DATA permK4<>+80(SB)/8, $0x0000000200000002
DATA permK4<>+88(SB)/8, $0x0000000200000002
DATA permK4<>+96(SB)/8, $0x0000000300000003
DATA permK4<>+104(SB)/8, $0x0000000300000003
DATA permK4<>+112(SB)/8, $0x0000000300000003
DATA permK4<>+120(SB)/8, $0x0000000300000003
DATA permK4<>+128(SB)/8, $0x0000000400000004
DATA permK4<>+136(SB)/8, $0x0000000400000004
DATA permK4<>+144(SB)/8, $0x0000000400000004
DATA permK4<>+152(SB)/8, $0x0000000400000004
DATA permK4<>+160(SB)/8, $0x0000000500000005
DATA permK4<>+168(SB)/8, $0x0000000500000005
DATA permK4<>+176(SB)/8, $0x0000000500000005
DATA permK4<>+184(SB)/8, $0x0000000500000005
DATA permK4<>+192(SB)/8, $0x0000000600000006
DATA permK4<>+200(SB)/8, $0x0000000600000006
DATA permK4<>+208(SB)/8, $0x0000000600000006
DATA permK4<>+216(SB)/8, $0x0000000600000006
DATA permK4<>+224(SB)/8, $0x0000000700000007
DATA permK4<>+232(SB)/8, $0x0000000700000007
DATA permK4<>+240(SB)/8, $0x0000000700000007
DATA permK4<>+248(SB)/8, $0x0000000700000007
DATA permK4<>+256(SB)/8, $0x0000000800000008
DATA permK4<>+264(SB)/8, $0x0000000800000008
DATA permK4<>+272(SB)/8, $0x0000000800000008
DATA permK4<>+280(SB)/8, $0x0000000800000008
DATA permK4<>+288(SB)/8, $0x0000000900000009
DATA permK4<>+296(SB)/8, $0x0000000900000009
DATA permK4<>+304(SB)/8, $0x0000000900000009
DATA permK4<>+312(SB)/8, $0x0000000900000009
DATA permK4<>+320(SB)/8, $0x0000000a0000000a
DATA permK4<>+328(SB)/8, $0x0000000a0000000a
DATA permK4<>+336(SB)/8, $0x0000000a0000000a
DATA permK4<>+344(SB)/8, $0x0000000a0000000a
DATA permK4<>+352(SB)/8, $0x0000000b0000000b
DATA permK4<>+360(SB)/8, $0x0000000b0000000b
DATA permK4<>+368(SB)/8, $0x0000000b0000000b
DATA permK4<>+376(SB)/8, $0x0000000b0000000b
DATA permK4<>+384(SB)/8, $0x0000000c0000000c
DATA permK4<>+392(SB)/8, $0x0000000c0000000c
DATA permK4<>+400(SB)/8, $0x0000000c0000000c
DATA permK4<>+408(SB)/8, $0x0000000c0000000c
DATA permK4<>+416(SB)/8, $0x0000000d0000000d
DATA permK4<>+424(SB)/8, $0x0000000d0000000d
DATA permK4<>+432(SB)/8, $0x0000000d0000000d
DATA permK4<>+440(SB)/8, $0x0000000d0000000d
DATA permK4<>+448(SB)/8, $0x0000000e0000000e
DATA permK4<>+456(SB)/8, $0x0000000e0000000e
DATA permK4<>+464(SB)/8, $0x0000000e0000000e
DATA permK4<>+472(SB)/8, $0x0000000e0000000e
DATA permK4<>+480(SB)/8, $0x0000000f0000000f
DATA permK4<>+488(SB)/8, $0x0000000f0000000f
DATA permK4<>+496(SB)/8, $0x0000000f0000000f
DATA permK4<>+504(SB)/8, $0x0000000f0000000f
GLOBL permK4<>(SB), RODATA|NOPTR, $512

DATA c0f32<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0f32<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0f32<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0f32<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL c0f32<>(SB), RODATA|NOPTR, $32
DATA c0832<>+0(SB)/8, $0x0808080808080808
DATA c0832<>+8(SB)/8, $0x0808080808080808
DATA c0832<>+16(SB)/8, $0x0808080808080808
DATA c0832<>+24(SB)/8, $0x0808080808080808
GLOBL c0832<>(SB), RODATA|NOPTR, $32

// Load the arguments of a four-row routine: CX blocks, SI weights, DI/R10/
// R11/R12 the activation rows, R9 the output.
#define ARGS4 \
	MOVQ nb+0(FP), CX; \
	MOVQ w+8(FP), SI; \
	MOVQ a+16(FP), DI; \
	MOVQ stride+24(FP), R8; \
	MOVQ y+32(FP), R9; \
	LEAQ (DI)(R8*1), R10; \
	LEAQ (DI)(R8*2), R11; \
	LEAQ (R10)(R8*2), R12

#define ADV4(n) \
	ADDQ $n, DI; \
	ADDQ $n, R10; \
	ADDQ $n, R11; \
	ADDQ $n, R12

// Y1 = [d_w0·d_a0(row j), d_w1·d_a1(row j)] for j = 0..3 in lanes 2j, 2j+1:
// weight scales at wo0, wo1 (SI), activation scales at ao, ao+34 of each row.
// Each product is the one-row DPROD2's w·a with w as the first operand.
#define SCALES4(wo0, wo1, ao) \
	HPAIR(wo0(SI), wo1(SI), AX); \
	VMOVD AX, X7; \
	VPBROADCASTD X7, X7; \
	VCVTPH2PS X7, Y7; \
	HOCT(ao(DI), ao+34(DI), ao(R10), ao+34(R10), ao(R11), ao+34(R11), ao(R12), ao+34(R12)); \
	VMOVQ AX, X1; \
	VPINSRQ $1, DX, X1, X1; \
	VCVTPH2PS X1, Y1; \
	VMULPS Y1, Y7, Y1

// One activation row r against the weight pair in Z2 (signed), Z9 = the
// weight-only correction, Z12 = 0x80 bytes: acc += scale · float(Σ).
#define ROWZ(ao, r, perm, acc) \
	VPERMPS Z1, perm, Z10; \
	VMOVDQU ao+2(r), Y3; \
	VINSERTI64X4 $1, ao+36(r), Z3, Z3; \
	VPXORD Z12, Z3, Z3; \
	VMOVDQA64 Z9, Z4; \
	VPDPBUSD Z2, Z3, Z4; \
	VCVTDQ2PS Z4, Z4; \
	VFMADD231PS Z4, Z10, acc

// Z9 = -VPDPBUSD(0x80, Z2): the weight-only term.
#define CORRZ \
	VPXORD Z8, Z8, Z8; \
	VPDPBUSD Z2, Z12, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPSUBD Z8, Z9, Z9

#define ROWS4Z(ao, a0, a1, a2, a3) \
	ROWZ(ao, DI, Z25, a0); \
	ROWZ(ao, R10, Z26, a1); \
	ROWZ(ao, R11, Z27, a2); \
	ROWZ(ao, R12, Z28, a3)

// Two Q4_0 blocks as Q4_0_PAIR lays them out, as signed q-8.
#define Q4_0_PAIR4(wo, ao, a0, a1, a2, a3) \
	SCALES4(wo, wo+18, ao); \
	VMOVDQU wo+2(SI), X2; \
	VINSERTI128 $1, wo+20(SI), Y2, Y2; \
	VPSRLW $4, Y2, Y3; \
	VINSERTI64X4 $1, Y3, Z2, Z2; \
	VPANDD Z15, Z2, Z2; \
	VSHUFI64X2 $0xD8, Z2, Z2, Z2; \
	VPSUBB Z13, Z2, Z2; \
	CORRZ; \
	ROWS4Z(ao, a0, a1, a2, a3)

#define Q8_0_PAIR4(wo, ao, a0, a1, a2, a3) \
	SCALES4(wo, wo+34, ao); \
	VMOVDQU wo+2(SI), Y2; \
	VINSERTI64X4 $1, wo+36(SI), Z2, Z2; \
	CORRZ; \
	ROWS4Z(ao, a0, a1, a2, a3)

#define LOADPERMK4 \
	VMOVDQU64 permK4<>+0(SB), Z25; \
	VMOVDQU64 permK4<>+64(SB), Z26; \
	VMOVDQU64 permK4<>+128(SB), Z27; \
	VMOVDQU64 permK4<>+192(SB), Z28

#define ZERO8Z \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	VPXORD Z24, Z24, Z24

#define MERGE8Z \
	VADDPS Z18, Z17, Z17; \
	VADDPS Z20, Z19, Z19; \
	VADDPS Z22, Z21, Z21; \
	VADDPS Z24, Z23, Z23

// Row r's end of the one-row routine: fold its accumulator, optional
// single-block tail (blk, with DI = row r), horizontal sum, store at off(R9).
#define FINZ(acc, r, blk, off) \
	VMOVAPS acc, Z0; \
	FOLDZ0; \
	MOVQ r, DI; \
	blk; \
	HSUMPS(Y0, X0, X1); \
	MOVSS X0, off(R9)

#define NOBLK

// func dot4Q4_0Q8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q4_0Q8_0AVX512(SB), NOSPLIT, $0-40
	ARGS4
	VPBROADCASTD c0f<>(SB), Z15
	VPBROADCASTD cw1<>(SB), Y14
	VPBROADCASTD c08<>(SB), Z13
	VPBROADCASTD c80<>(SB), Z12
	LOADPERMK4
	ZERO8Z
k40loop4:
	CMPQ CX, $4
	JLT k40loop2
	Q4_0_PAIR4(0, 0, Z17, Z19, Z21, Z23)
	Q4_0_PAIR4(36, 68, Z18, Z20, Z22, Z24)
	ADDQ $72, SI
	ADV4(136)
	SUBQ $4, CX
	JMP k40loop4
k40loop2:
	MERGE8Z
	CMPQ CX, $2
	JLT k40tail
	Q4_0_PAIR4(0, 0, Z17, Z19, Z21, Z23)
	ADDQ $36, SI
	ADV4(68)
	SUBQ $2, CX
k40tail:
	TESTQ CX, CX
	JZ k40notail
	FINZ(Z17, DI, Q4_0_BLK(0, 0, Y0), 0)
	FINZ(Z19, R10, Q4_0_BLK(0, 0, Y0), 4)
	FINZ(Z21, R11, Q4_0_BLK(0, 0, Y0), 8)
	FINZ(Z23, R12, Q4_0_BLK(0, 0, Y0), 12)
	VZEROUPPER
	RET
k40notail:
	FINZ(Z17, DI, NOBLK, 0)
	FINZ(Z19, R10, NOBLK, 4)
	FINZ(Z21, R11, NOBLK, 8)
	FINZ(Z23, R12, NOBLK, 12)
	VZEROUPPER
	RET

// func dot4Q8_0Q8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q8_0Q8_0AVX512(SB), NOSPLIT, $0-40
	ARGS4
	VPBROADCASTD c80<>(SB), Z12
	LOADPERMK4
	ZERO8Z
k80loop4:
	CMPQ CX, $4
	JLT k80loop2
	Q8_0_PAIR4(0, 0, Z17, Z19, Z21, Z23)
	Q8_0_PAIR4(68, 68, Z18, Z20, Z22, Z24)
	ADDQ $136, SI
	ADV4(136)
	SUBQ $4, CX
	JMP k80loop4
k80loop2:
	MERGE8Z
	CMPQ CX, $2
	JLT k80tail
	Q8_0_PAIR4(0, 0, Z17, Z19, Z21, Z23)
	ADDQ $68, SI
	ADV4(68)
	SUBQ $2, CX
k80tail:
	TESTQ CX, CX
	JZ k80notail
	FINZ(Z17, DI, Q8_0_BLK(0, 0, Y0), 0)
	FINZ(Z19, R10, Q8_0_BLK(0, 0, Y0), 4)
	FINZ(Z21, R11, Q8_0_BLK(0, 0, Y0), 8)
	FINZ(Z23, R12, Q8_0_BLK(0, 0, Y0), 12)
	VZEROUPPER
	RET
k80notail:
	FINZ(Z17, DI, NOBLK, 0)
	FINZ(Z19, R10, NOBLK, 4)
	FINZ(Z21, R11, NOBLK, 8)
	FINZ(Z23, R12, NOBLK, 12)
	VZEROUPPER
	RET

// AVX2 four-row routines: one block per step as the one-row routines do
// (even blocks into the first accumulator of each row, odd into the
// second). Accumulators Y8..Y11 (even) and Y12..Y15 (odd) for rows 0..3.


// Y0 = broadcast(lane sel of X1).
#define SCALEROW(sel) \
	VPERMILPS sel, X1, X0; \
	VBROADCASTSS X0, Y0

// Q4_0 row r: Y2 = signed q-8 (lo nibbles then hi), Y3 = -128·Σ(q-8) per
// dword, Y7 = 0x80 bytes, Y6 = 1 words. (a^0x80)·(q-8) pair sums fit int16.
#define ROWQ4X(ao, r, sel, acc) \
	SCALEROW(sel); \
	VPXOR ao+2(r), Y7, Y4; \
	VPMADDUBSW Y2, Y4, Y4; \
	VPMADDWD Y6, Y4, Y4; \
	VPADDD Y3, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	VFMADD231PS Y4, Y0, acc

#define Q4_0_BLK4X(wo, ao, a0, a1, a2, a3) \
	SCALES4X(wo, ao); \
	VMOVDQU wo+2(SI), X2; \
	VPSRLW $4, X2, X3; \
	VINSERTI128 $1, X3, Y2, Y2; \
	VPAND c0f32<>(SB), Y2, Y2; \
	VPSUBB c0832<>(SB), Y2, Y2; \
	VPMADDUBSW Y2, Y7, Y3; \
	VPMADDWD Y6, Y3, Y3; \
	VPXOR Y4, Y4, Y4; \
	VPSUBD Y3, Y4, Y3; \
	ROWQ4X(ao, DI, $0x00, a0); \
	ROWQ4X(ao, R10, $0x01, a1); \
	ROWQ4X(ao, R11, $0x02, a2); \
	ROWQ4X(ao, R12, $0x03, a3)

// Q8_0 row r: the weight block sign-extended once in Y2 (bytes 0..15) and
// Y3 (16..31), lanes grouped as in Q8_0_BLK.
#define ROWQ8X(ao, r, sel, acc) \
	SCALEROW(sel); \
	VPMOVSXBW ao+2(r), Y4; \
	VPMADDWD Y4, Y2, Y4; \
	VPMOVSXBW ao+18(r), Y5; \
	VPMADDWD Y5, Y3, Y5; \
	VPADDD Y5, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	VFMADD231PS Y4, Y0, acc

#define Q8_0_BLK4X(wo, ao, a0, a1, a2, a3) \
	SCALES4X(wo, ao); \
	VPMOVSXBW wo+2(SI), Y2; \
	VPMOVSXBW wo+18(SI), Y3; \
	ROWQ8X(ao, DI, $0x00, a0); \
	ROWQ8X(ao, R10, $0x01, a1); \
	ROWQ8X(ao, R11, $0x02, a2); \
	ROWQ8X(ao, R12, $0x03, a3)

#define ZERO8Y \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11; \
	VXORPS Y12, Y12, Y12; \
	VXORPS Y13, Y13, Y13; \
	VXORPS Y14, Y14, Y14; \
	VXORPS Y15, Y15, Y15

// Row end as in the one-row routine: Y0 = even + odd, horizontal sum, store.
#define FINX(e, o, off) \
	VADDPS o, e, Y0; \
	HSUMPS(Y0, X0, X1); \
	MOVSS X0, off(R9)

#define FIN4X \
	FINX(Y8, Y12, 0); \
	FINX(Y9, Y13, 4); \
	FINX(Y10, Y14, 8); \
	FINX(Y11, Y15, 12)


// func dot4Q8_0Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dot4Q8_0Q8_0AVX2(SB), NOSPLIT, $0-40
	ARGS4
	ZERO8Y
j80loop:
	CMPQ CX, $2
	JLT j80tail
	Q8_0_BLK4X(0, 0, Y8, Y9, Y10, Y11)
	Q8_0_BLK4X(34, 34, Y12, Y13, Y14, Y15)
	ADDQ $68, SI
	ADV4(68)
	SUBQ $2, CX
	JMP j80loop
j80tail:
	TESTQ CX, CX
	JZ j80done
	Q8_0_BLK4X(0, 0, Y8, Y9, Y10, Y11)
j80done:
	FIN4X
	VZEROUPPER
	RET

// ---- Four weight rows per activation row (generation). Each activation
// block pair, its scales and its weight-independent integer correction are
// loaded once and used for the weight rows at SI, R10, R11, R12 (w +
// j*stride). As with the four-activation-row routines, every output's
// integer lanes and float operations (operands in the same positions) are
// the one-row routine's, so y[j] equals it on row j bit for bit. Exact
// integer rearrangements: Q4_0 keeps Σq·a - Σ8·a with the second term now
// shared; Q8_0 uses Σw·a = VPDPBUSD(w^0x80, a) - VPDPBUSD(0x80, a), the
// second term depending on the activation only.

// Load the arguments of a four-weight-row routine: CX blocks, DI the
// activation row, SI/R10/R11/R12 the weight rows, R9 the output.
// out = [d_w0(row j)·d_a0, d_w1(row j)·d_a1] for j = 0..3 in lanes 2j, 2j+1
// (a YMM register; VEX zeroes the rest of its ZMM): weight scales at wo0,
// wo1 of each row, activation scales at ao, ao1 (DI). w is the first
// operand, as in DPROD2. Clobbers AX, BX, DX, R13, Y7, Y8.
#define SCALESR4(wo0, wo1, ao, ao1, out) \
	HPAIR(ao(DI), ao1(DI), AX); \
	VMOVD AX, X8; \
	VPBROADCASTD X8, X8; \
	VCVTPH2PS X8, Y8; \
	HOCT(wo0(SI), wo1(SI), wo0(R10), wo1(R10), wo0(R11), wo1(R11), wo0(R12), wo1(R12)); \
	VMOVQ AX, X7; \
	VPINSRQ $1, DX, X7, X7; \
	VCVTPH2PS X7, Y7; \
	VMULPS Y8, Y7, out

// Q4_0 weight row r's block pair as Q4_0_PAIR lays it out (unsigned
// nibbles) against the shared activations Z3, Z9 = -VPDPBUSD(8, a). As in
// ROWQ4RX, without shuffles: each block's 16 quant bytes broadcast to its
// two 128-bit chunks (the second block merged into chunks 2, 3 by K4 =
// 0xFF00), the odd chunks shifted right by 4 (Z12 = srl04 twice), masked.
// IQ4_NL's blocks have Q4_0's layout: dec (NODEC for Q4_0) turns the
// nibbles in Z2 into the bytes VPDPBUSD multiplies, IQ4NLDECZ into IQ4_NL's
// codebook values + 128, with Z9 = -VPDPBUSD(0x80, a).
#define ROWQ4Z(wo, r, perm, acc, dec) \
	VPERMPS Z1, perm, Z10; \
	VBROADCASTI32X4 wo+2(r), Z2; \
	VBROADCASTI32X4 wo+20(r), K4, Z2; \
	VPSRLVD Z12, Z2, Z2; \
	VPANDD Z15, Z2, Z2; \
	dec; \
	VMOVDQA64 Z9, Z4; \
	VPDPBUSD Z3, Z2, Z4; \
	VCVTDQ2PS Z4, Z4; \
	VFMADD231PS Z4, Z10, acc

// Z3 = the activation block pair at ao+2, ao+36; Z9 = -VPDPBUSD(u, Z3).
#define ACTPAIRZ(ao, u) \
	VMOVDQU ao+2(DI), Y3; \
	VINSERTI64X4 $1, ao+36(DI), Z3, Z3; \
	VPXORD Z8, Z8, Z8; \
	VPDPBUSD Z3, u, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPSUBD Z8, Z9, Z9

#define NODEC

// Z2 = the codebook values + 128 (Z20) of IQ4_NL's nibbles in Z2.
#define IQ4NLDECZ VPSHUFB Z2, Z20, Z2

// A block pair of the four rows against the activations at ao, with Z1's
// scale products spread by the permutes p0..p3 (rows 0..3): Q4_0's
// nibbles against Z9 = -VPDPBUSD(8, a) (u = Z13 = 8 bytes), or decoded
// by dec.
#define NIBPAIRR4(wo, ao, u, dec, a0, a1, a2, a3, p0, p1, p2, p3) \
	ACTPAIRZ(ao, u); \
	ROWQ4Z(wo, SI, p0, a0, dec); \
	ROWQ4Z(wo, R10, p1, a1, dec); \
	ROWQ4Z(wo, R11, p2, a2, dec); \
	ROWQ4Z(wo, R12, p3, a3, dec)

#define Q4_0_PAIRR4(wo, ao, a0, a1, a2, a3, p0, p1, p2, p3) \
	NIBPAIRR4(wo, ao, Z13, NODEC, a0, a1, a2, a3, p0, p1, p2, p3)

// The scale products of four blocks (one loop step) gathered with vector
// permutes instead of SCALESR4's scalar loads: lanes 8p+2j+b =
// d_w(row j, block 2p+b)·d_a(block 2p+b), so pair 0 is SCALESR4's Y1 and
// pair 1 the same eight products at +8 (permK4 entries 4..7 spread them).
// The products are the same VCVTPH2PS values in one VMULPS with w first, so
// they are SCALESR4's bit for bit. Set up by LOADSCALESR4Z: Z11 = scla4 (the
// activation scales, words 0 and 17 of the 64 bytes at ao and at ao+68:
// the step's 136 bytes), K2 = the lanes of rows 2 and 3.
// Z6 = the four activation scales, as floats, in those lanes.
#define ACTSCALESR4Z(ao) \
	VMOVDQU64 ao(DI), Z6; \
	VPERMT2W ao+68(DI), Z11, Z6; \
	VCVTPH2PS Y6, Z6

// Z5 = the products of the Q4_0 step at wo, ao. A row's four scales are
// words 0, 9, 18, 27 of its step's first 64 of 72 bytes; Z7 = sclq4 picks
// rows 0 and 2 from the first table, 1 and 3 from the second, so two
// independent VPERMT2W and one word blend (K2) gather them: a short
// dependency chain, which matters more here than the instruction count.
// The routine computes them one step ahead (Z5 → Z1 at the step's end).
#define SCALESR4Q4Z(wo, ao) \
	VMOVDQU64 wo(SI), Z5; \
	VPERMT2W wo(R10), Z7, Z5; \
	VMOVDQU64 wo(R11), Z0; \
	VPERMT2W wo(R12), Z7, Z0; \
	VMOVDQU16 Z0, K2, Z5; \
	VCVTPH2PS Y5, Z5; \
	ACTSCALESR4Z(ao); \
	VMULPS Z6, Z5, Z5

// Pair 1's permutes in Z29, Z30, Z31, Z16 (rows 0..3), and SCALESR4Q4Z's
// setup (SCALESR4Q4ZSET).
#define LOADSCALESR4Z \
	VMOVDQU64 permK4<>+256(SB), Z29; \
	VMOVDQU64 permK4<>+320(SB), Z30; \
	VMOVDQU64 permK4<>+384(SB), Z31; \
	VMOVDQU64 permK4<>+448(SB), Z16; \
	SCALESR4Q4ZSET

// SCALESR4Q4Z's constants: the activation scale index in Z11, and the row
// mask K2 (Z7 = sclq4 is the caller's).
#define SCALESR4Q4ZSET \
	VMOVDQU64 scla4<>(SB), Z11; \
	MOVL $0xF0F0, AX; \
	KMOVD AX, K2

// Q8_0 weight row r's block pair, biased to unsigned by ^0x80 (Z12).
#define ROWQ8Z(wo, r, perm, acc) \
	VPERMPS Z1, perm, Z10; \
	VMOVDQU wo+2(r), Y2; \
	VINSERTI64X4 $1, wo+36(r), Z2, Z2; \
	VPXORD Z12, Z2, Z2; \
	VMOVDQA64 Z9, Z4; \
	VPDPBUSD Z3, Z2, Z4; \
	VCVTDQ2PS Z4, Z4; \
	VFMADD231PS Z4, Z10, acc

// Z1 = the pair's SCALESR4 products.
#define Q8_0_PAIRR4(wo, ao, a0, a1, a2, a3) \
	ACTPAIRZ(ao, Z12); \
	ROWQ8Z(wo, SI, Z25, a0); \
	ROWQ8Z(wo, R10, Z26, a1); \
	ROWQ8Z(wo, R11, Z27, a2); \
	ROWQ8Z(wo, R12, Z28, a3)

// Row r's end of the one-row routine with SI = weight row r (DI stays the
// activation row): fold, optional single-block tail, horizontal sum, store.
// Row 0 goes first, while SI still is row 0.
#define FINRZ(acc, r, blk, off) \
	VMOVAPS acc, Z0; \
	FOLDZ0; \
	MOVQ r, SI; \
	blk; \
	HSUMPS(Y0, X0, X1); \
	MOVSS X0, off(R9)

// scla4, sclq4: VPERMT2W word indices for SCALESR4Q4Z, lanes 8p+2j+b for
// block 2p+b (only the low 16 words are used; sclq4's rows 1, 3 at +32).
DATA scla4<>+0(SB)/8, $0x0011000000110000
DATA scla4<>+8(SB)/8, $0x0011000000110000
DATA scla4<>+16(SB)/8, $0x0031002000310020
DATA scla4<>+24(SB)/8, $0x0031002000310020
DATA scla4<>+32(SB)/8, $0
DATA scla4<>+40(SB)/8, $0
DATA scla4<>+48(SB)/8, $0
DATA scla4<>+56(SB)/8, $0
GLOBL scla4<>(SB), RODATA|NOPTR, $64

DATA sclq4<>+0(SB)/8, $0x0029002000090000
DATA sclq4<>+8(SB)/8, $0x0029002000090000
DATA sclq4<>+16(SB)/8, $0x003b0032001b0012
DATA sclq4<>+24(SB)/8, $0x003b0032001b0012
DATA sclq4<>+32(SB)/8, $0x0000000000000000
DATA sclq4<>+40(SB)/8, $0x0000000000000000
DATA sclq4<>+48(SB)/8, $0x0000000000000000
DATA sclq4<>+56(SB)/8, $0x0000000000000000
GLOBL sclq4<>(SB), RODATA|NOPTR, $64

// Zen 5, one thread, 4×11008 in cache, calls of this and the previous
// version interleaved (p10 of 20-call samples): 37 GB/s against 31 with
// SCALESR4 per pair and the VINSERTI/VSHUFI64X2 unpack. The vector gather
// alone was no faster (30.5); the unpack alone 35; SCALESR4 pipelined with
// the new unpack 35.5; a GFNI unpack (VGF2P8AFFINEQB, one per row pair
// instead of VPSRLVD+VPANDD) 38.3, not used: the avx512 path does not
// require GFNI.
// func dotRows4Q4_0Q8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q4_0Q8_0AVX512(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD c0f<>(SB), Z15
	VPBROADCASTD cw1<>(SB), Y14
	VPBROADCASTD c08<>(SB), Z13
	LOADPERMK4
	LOADSCALESR4Z
	VMOVDQU64 sclq4<>(SB), Z7
	VBROADCASTI64X4 srl04<>(SB), Z12
	MOVL $0xFF00, AX
	KMOVW AX, K4
	ZERO8Z
	CMPQ CX, $4
	JLT r40loop2
	SCALESR4Q4Z(0, 0)
	VMOVAPS Z5, Z1
r40loop4:
	CMPQ CX, $8
	JLT r40last4
	SCALESR4Q4Z(72, 136)
	Q4_0_PAIRR4(0, 0, Z17, Z19, Z21, Z23, Z25, Z26, Z27, Z28)
	Q4_0_PAIRR4(36, 68, Z18, Z20, Z22, Z24, Z29, Z30, Z31, Z16)
	VMOVAPS Z5, Z1
	ADVW4(72)
	ADDQ $136, DI
	SUBQ $4, CX
	JMP r40loop4
r40last4:
	Q4_0_PAIRR4(0, 0, Z17, Z19, Z21, Z23, Z25, Z26, Z27, Z28)
	Q4_0_PAIRR4(36, 68, Z18, Z20, Z22, Z24, Z29, Z30, Z31, Z16)
	ADVW4(72)
	ADDQ $136, DI
	SUBQ $4, CX
r40loop2:
	MERGE8Z
	CMPQ CX, $2
	JLT r40tail
	SCALESR4(0, 18, 0, 34, Y1)
	Q4_0_PAIRR4(0, 0, Z17, Z19, Z21, Z23, Z25, Z26, Z27, Z28)
	ADVW4(36)
	ADDQ $68, DI
	SUBQ $2, CX
r40tail:
	TESTQ CX, CX
	JZ r40notail
	FINRZ(Z17, SI, Q4_0_BLK(0, 0, Y0), 0)
	FINRZ(Z19, R10, Q4_0_BLK(0, 0, Y0), 4)
	FINRZ(Z21, R11, Q4_0_BLK(0, 0, Y0), 8)
	FINRZ(Z23, R12, Q4_0_BLK(0, 0, Y0), 12)
	VZEROUPPER
	RET
r40notail:
	FINRZ(Z17, SI, NOBLK, 0)
	FINRZ(Z19, R10, NOBLK, 4)
	FINRZ(Z21, R11, NOBLK, 8)
	FINRZ(Z23, R12, NOBLK, 12)
	VZEROUPPER
	RET

// SCALESR4 one pair ahead: 78 GB/s against 75.5 (as above); SCALESR4Q4Z's
// vector gather (with a per-row VPERMT2W) was 66.
// func dotRows4Q8_0Q8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q8_0Q8_0AVX512(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD c80<>(SB), Z12
	LOADPERMK4
	ZERO8Z
	CMPQ CX, $4
	JLT r80loop2
	SCALESR4(0, 34, 0, 34, Y1)
r80loop4:
	CMPQ CX, $8
	JLT r80last4
	SCALESR4(68, 102, 68, 102, Y6)
	Q8_0_PAIRR4(0, 0, Z17, Z19, Z21, Z23)
	SCALESR4(136, 170, 136, 170, Y5)
	VMOVAPS Z6, Z1
	Q8_0_PAIRR4(68, 68, Z18, Z20, Z22, Z24)
	VMOVAPS Z5, Z1
	ADVW4(136)
	ADDQ $136, DI
	SUBQ $4, CX
	JMP r80loop4
r80last4:
	SCALESR4(68, 102, 68, 102, Y6)
	Q8_0_PAIRR4(0, 0, Z17, Z19, Z21, Z23)
	VMOVAPS Z6, Z1
	Q8_0_PAIRR4(68, 68, Z18, Z20, Z22, Z24)
	ADVW4(136)
	ADDQ $136, DI
	SUBQ $4, CX
r80loop2:
	MERGE8Z
	CMPQ CX, $2
	JLT r80tail
	SCALESR4(0, 34, 0, 34, Y1)
	Q8_0_PAIRR4(0, 0, Z17, Z19, Z21, Z23)
	ADVW4(68)
	ADDQ $68, DI
	SUBQ $2, CX
r80tail:
	TESTQ CX, CX
	JZ r80notail
	FINRZ(Z17, SI, Q8_0_BLK(0, 0, Y0), 0)
	FINRZ(Z19, R10, Q8_0_BLK(0, 0, Y0), 4)
	FINRZ(Z21, R11, Q8_0_BLK(0, 0, Y0), 8)
	FINRZ(Z23, R12, Q8_0_BLK(0, 0, Y0), 12)
	VZEROUPPER
	RET
r80notail:
	FINRZ(Z17, SI, NOBLK, 0)
	FINRZ(Z19, R10, NOBLK, 4)
	FINRZ(Z21, R11, NOBLK, 8)
	FINRZ(Z23, R12, NOBLK, 12)
	VZEROUPPER
	RET

// ---- IQ4_NL four weight rows on AVX-512, bit-identical to the one-row
// dotIQ4_NLQ8_0AVX2 (there is no AVX-512 IQ4_NL dot; the avx512 path keeps
// that one). That routine's per-block integers are 8 int32 lanes, lane k =
// Σ value·a over elements 4k..4k+3 of the block (IQ4_VALUES: low nibbles
// are elements 0..15, high nibbles 16..31), and its float part per block
// is acc = float(lane)·(d_w·d_a) + acc (VFMADD231PS), even blocks into one
// YMM accumulator and odd into another, which are added and summed at the
// end. Here VPDPBUSD forms the same lanes, each exact: the codebook values
// + 128 as unsigned bytes times the signed activations, less 128·Σa of the
// same four (|sum| < 2^17), the correction depending on the activations
// only. The float part is the one-row routine's lane for lane: every
// accumulator lane is one lane of one row's even or odd accumulator, and
// gets the same FMAs (operands in the same positions) in block order, so
// the results are bit-identical; the lanes are only placed differently.
//
// Four blocks per step. Two weight rows j, j' and a block pair b, b+1
// make a quad of 128 weights: one VPERMT2W gathers their index bytes into
// [j.b, j'.b, j.b+1, j'.b+1] (16 bytes each; the tables are the two rows'
// bytes 0..63 of the step for pair 0, bytes 8..71 for pair 1, all within
// the step), and one shift and two masks split them into low and high
// nibbles, which pair with the activations [a_b low 16, a_b low 16, a_b+1
// low 16, a_b+1 low 16] and the same with the high 16 (loaded once per
// pair for the four rows). The quad's accumulators: lo = [j even lanes
// 0..3, j' even 0..3, j odd 0..3, j' odd 0..3], hi the same for lanes
// 4..7, both scaled by one permute of the step's products (nlqs). Zen 5,
// one thread, 4×11008 in L1/L2, fastest of interleaved 10-call samples:
// 42.5 GB/s, against 37 for one row per ZMM laid out as
// dotRows4Q4_0Q8_0AVX512 does (IQ4_NL_PAIRR4 below throughout; it spends
// a masked broadcast, a shift and a mask per row and pair where a quad
// spends one VPERMT2W, one shift and two masks per two rows) and 18.3 for
// dotRows4IQ4_NLQ8_0AVX2. Building a quad from four 16-byte loads (masked
// broadcasts 34, inserts 37-38), the activations by inserts (41) and the
// scales per pair by SCALESR4 (39.5) were all slower.
//
// After the steps the quads' accumulators are rearranged into one ZMM per
// row, [even accumulator | odd accumulator] (NLQROW), a remaining block
// pair runs dotRows4Q4_0Q8_0AVX512's row step with the nibbles looked up
// (IQ4_NL_PAIRR4), and an odd block count's last block goes, as in the
// one-row routine, into the even accumulator by its own IQ4_NL_BLK before
// even + odd and HSUMPS (FINIQNLZ).

// nlqw: NLQUAD's VPERMT2W word indices, pair 0 then pair 1 (64 bytes
// each): table words 1..8 and 10..17 are blocks 0 and 1's 16 index bytes in
// a row's bytes 0..63, words 15..22 and 24..31 blocks 2 and 3's in its bytes
// 8..71; +32 selects the second row.
DATA nlqw<>+0(SB)/8, $0x0004000300020001
DATA nlqw<>+8(SB)/8, $0x0008000700060005
DATA nlqw<>+16(SB)/8, $0x0024002300220021
DATA nlqw<>+24(SB)/8, $0x0028002700260025
DATA nlqw<>+32(SB)/8, $0x000d000c000b000a
DATA nlqw<>+40(SB)/8, $0x00110010000f000e
DATA nlqw<>+48(SB)/8, $0x002d002c002b002a
DATA nlqw<>+56(SB)/8, $0x00310030002f002e
DATA nlqw<>+64(SB)/8, $0x001200110010000f
DATA nlqw<>+72(SB)/8, $0x0016001500140013
DATA nlqw<>+80(SB)/8, $0x003200310030002f
DATA nlqw<>+88(SB)/8, $0x0036003500340033
DATA nlqw<>+96(SB)/8, $0x001b001a00190018
DATA nlqw<>+104(SB)/8, $0x001f001e001d001c
DATA nlqw<>+112(SB)/8, $0x003b003a00390038
DATA nlqw<>+120(SB)/8, $0x003f003e003d003c
GLOBL nlqw<>(SB), RODATA|NOPTR, $128
// nlqs: NLQUAD's VPERMPS indices into SCALESR4Q4Z's products (lane
// 8p+2j+b: row j, block 2p+b) for pair 0 rows 0, 1; pair 0 rows 2, 3; pair
// 1 rows 0, 1; pair 1 rows 2, 3 (64 bytes each).
DATA nlqs<>+0(SB)/8, $0x0000000000000000
DATA nlqs<>+8(SB)/8, $0x0000000000000000
DATA nlqs<>+16(SB)/8, $0x0000000200000002
DATA nlqs<>+24(SB)/8, $0x0000000200000002
DATA nlqs<>+32(SB)/8, $0x0000000100000001
DATA nlqs<>+40(SB)/8, $0x0000000100000001
DATA nlqs<>+48(SB)/8, $0x0000000300000003
DATA nlqs<>+56(SB)/8, $0x0000000300000003
DATA nlqs<>+64(SB)/8, $0x0000000400000004
DATA nlqs<>+72(SB)/8, $0x0000000400000004
DATA nlqs<>+80(SB)/8, $0x0000000600000006
DATA nlqs<>+88(SB)/8, $0x0000000600000006
DATA nlqs<>+96(SB)/8, $0x0000000500000005
DATA nlqs<>+104(SB)/8, $0x0000000500000005
DATA nlqs<>+112(SB)/8, $0x0000000700000007
DATA nlqs<>+120(SB)/8, $0x0000000700000007
DATA nlqs<>+128(SB)/8, $0x0000000800000008
DATA nlqs<>+136(SB)/8, $0x0000000800000008
DATA nlqs<>+144(SB)/8, $0x0000000a0000000a
DATA nlqs<>+152(SB)/8, $0x0000000a0000000a
DATA nlqs<>+160(SB)/8, $0x0000000900000009
DATA nlqs<>+168(SB)/8, $0x0000000900000009
DATA nlqs<>+176(SB)/8, $0x0000000b0000000b
DATA nlqs<>+184(SB)/8, $0x0000000b0000000b
DATA nlqs<>+192(SB)/8, $0x0000000c0000000c
DATA nlqs<>+200(SB)/8, $0x0000000c0000000c
DATA nlqs<>+208(SB)/8, $0x0000000e0000000e
DATA nlqs<>+216(SB)/8, $0x0000000e0000000e
DATA nlqs<>+224(SB)/8, $0x0000000d0000000d
DATA nlqs<>+232(SB)/8, $0x0000000d0000000d
DATA nlqs<>+240(SB)/8, $0x0000000f0000000f
DATA nlqs<>+248(SB)/8, $0x0000000f0000000f
GLOBL nlqs<>(SB), RODATA|NOPTR, $256

// Z3 / Z8 = the low / high 16 activations of blocks at ao and ao+34, each
// twice (K4 = 0xFF00), Z9 / Z10 = -VPDPBUSD(0x80, Z3 / Z8) (Z18 = 0x80).
#define NLQACT(ao) \
	VBROADCASTI32X4 ao+2(DI), Z3; \
	VBROADCASTI32X4 ao+36(DI), K4, Z3; \
	VBROADCASTI32X4 ao+18(DI), Z8; \
	VBROADCASTI32X4 ao+52(DI), K4, Z8; \
	VPXORD Z12, Z12, Z12; \
	VPDPBUSD Z3, Z18, Z12; \
	VPXORD Z9, Z9, Z9; \
	VPSUBD Z12, Z9, Z9; \
	VPXORD Z17, Z17, Z17; \
	VPDPBUSD Z8, Z18, Z17; \
	VPXORD Z10, Z10, Z10; \
	VPSUBD Z17, Z10, Z10

// The quad of weight rows r, r2 (index bytes gathered from their bytes at
// off by the word indices qi) against NLQACT's activations: lo, hi +=
// float(sums)·(Z1's products permuted by si). Z15 = 0x0f bytes, Z20 = the
// codebook + 128.
#define NLQUAD(off, r, r2, qi, si, lo, hi) \
	VMOVDQU64 off(r), Z2; \
	VPERMT2W off(r2), qi, Z2; \
	VPSRLW $4, Z2, Z4; \
	VPANDD Z15, Z2, Z2; \
	VPANDD Z15, Z4, Z4; \
	VPSHUFB Z2, Z20, Z2; \
	VPSHUFB Z4, Z20, Z4; \
	VMOVDQA64 Z9, Z12; \
	VPDPBUSD Z3, Z2, Z12; \
	VMOVDQA64 Z10, Z17; \
	VPDPBUSD Z8, Z4, Z17; \
	VCVTDQ2PS Z12, Z12; \
	VCVTDQ2PS Z17, Z17; \
	VPERMPS Z1, si, Z19; \
	VFMADD231PS Z12, Z19, lo; \
	VFMADD231PS Z17, Z19, hi

// One step: pair 0 (blocks 0, 1) then pair 1 (2, 3), rows 0, 1 into
// Z29/Z30 and rows 2, 3 into Z31/Z16.
#define NLQSTEP \
	NLQACT(0); \
	NLQUAD(0, SI, R10, Z13, Z21, Z29, Z30); \
	NLQUAD(0, R11, R12, Z13, Z22, Z31, Z16); \
	NLQACT(68); \
	NLQUAD(8, SI, R10, Z14, Z23, Z29, Z30); \
	NLQUAD(8, R11, R12, Z14, Z24, Z31, Z16)

// acc = one row's [even | odd] accumulators from its quads' lo, hi: 128-bit
// lanes [lo.0, hi.0, lo.2, hi.2] (sel 0x88: the quad's first row) or
// [lo.1, hi.1, lo.3, hi.3] (sel 0xDD: its second).
#define NLQROW(lo, hi, sel, acc) \
	VSHUFF32X4 sel, hi, lo, acc; \
	VSHUFF32X4 $0xD8, acc, acc, acc

// Row r's end of dotIQ4_NLQ8_0AVX2 with SI = weight row r: Y0 = the even
// half of acc, blk (the tail block into Y0, or NOBLK), Y0 += the odd half,
// horizontal sum, store at off(R9). Row 0 goes first, while SI is row 0.
#define FINIQNLZ(acc, r, blk, off) \
	VEXTRACTF64X4 $1, acc, Y5; \
	VMOVAPS acc, Z0; \
	MOVQ r, SI; \
	blk; \
	FINX(Y0, Y5, off)

// A block pair of the four rows into the row accumulators Z17, Z19, Z21,
// Z23 (Z1 = SCALESR4's products, permK4 in Z25..Z28, Z12 = srl04 twice).
#define IQ4_NL_PAIRR4 \
	NIBPAIRR4(0, 0, Z18, IQ4NLDECZ, Z17, Z19, Z21, Z23, Z25, Z26, Z27, Z28)

// func dotRows4IQ4_NLQ8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ4_NLQ8_0AVX512(SB), NOSPLIT, $0-40
	ARGSR4
	VPBROADCASTD c0f<>(SB), Z15
	VPBROADCASTD c80<>(SB), Z18
	VBROADCASTI32X4 iq4kv<>(SB), Z20
	VPXORD Z18, Z20, Z20
	VMOVDQU64 sclq4<>(SB), Z7
	SCALESR4Q4ZSET
	MOVL $0xFF00, AX
	KMOVW AX, K4
	VMOVDQU64 nlqw<>+0(SB), Z13
	VMOVDQU64 nlqw<>+64(SB), Z14
	VMOVDQU64 nlqs<>+0(SB), Z21
	VMOVDQU64 nlqs<>+64(SB), Z22
	VMOVDQU64 nlqs<>+128(SB), Z23
	VMOVDQU64 nlqs<>+192(SB), Z24
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31
	VPXORD Z16, Z16, Z16
	CMPQ CX, $4
	JLT rnlrows
	SCALESR4Q4Z(0, 0)
	VMOVAPS Z5, Z1
rnlloop4:
	CMPQ CX, $8
	JLT rnllast4
	SCALESR4Q4Z(72, 136)
	NLQSTEP
	VMOVAPS Z5, Z1
	ADVW4(72)
	ADDQ $136, DI
	SUBQ $4, CX
	JMP rnlloop4
rnllast4:
	NLQSTEP
	ADVW4(72)
	ADDQ $136, DI
	SUBQ $4, CX
rnlrows:
	NLQROW(Z29, Z30, $0x88, Z17)
	NLQROW(Z29, Z30, $0xDD, Z19)
	NLQROW(Z31, Z16, $0x88, Z21)
	NLQROW(Z31, Z16, $0xDD, Z23)
	CMPQ CX, $2
	JLT rnltail
	LOADPERMK4
	VBROADCASTI64X4 srl04<>(SB), Z12
	SCALESR4(0, 18, 0, 34, Y1)
	IQ4_NL_PAIRR4
	ADVW4(36)
	ADDQ $68, DI
	SUBQ $2, CX
rnltail:
	VPBROADCASTD cw1<>(SB), Y14
	VBROADCASTI128 iq4kv<>(SB), Y13
	TESTQ CX, CX
	JZ rnlnotail
	FINIQNLZ(Z17, SI, IQ4_NL_BLK(0, 0, Y0), 0)
	FINIQNLZ(Z19, R10, IQ4_NL_BLK(0, 0, Y0), 4)
	FINIQNLZ(Z21, R11, IQ4_NL_BLK(0, 0, Y0), 8)
	FINIQNLZ(Z23, R12, IQ4_NL_BLK(0, 0, Y0), 12)
	VZEROUPPER
	RET
rnlnotail:
	FINIQNLZ(Z17, SI, NOBLK, 0)
	FINIQNLZ(Z19, R10, NOBLK, 4)
	FINIQNLZ(Z21, R11, NOBLK, 8)
	FINIQNLZ(Z23, R12, NOBLK, 12)
	VZEROUPPER
	RET

// AVX2 four-weight-row routines: one block per step as the one-row routines
// do (even blocks into Y8..Y11, odd into Y12..Y15 for rows 0..3), the
// activation block and its weight-independent terms loaded once per block.

// srl04: VPSRLVD counts 0 for the low lane's dwords, 4 for the high's.
DATA srl04<>+0(SB)/8, $0
DATA srl04<>+8(SB)/8, $0
DATA srl04<>+16(SB)/8, $0x0000000400000004
DATA srl04<>+24(SB)/8, $0x0000000400000004
GLOBL srl04<>(SB), RODATA|NOPTR, $32


// Q4_0 weight row r as Q4_0_BLK computes it: Y3 = activations, Y5 =
// VPMADDUBSW(8, a), Y6 = 1 words. The 16 quant bytes are broadcast to both
// lanes and the high lane shifted right by 4 (srl04), which gives NIBBLES'
// [low nibbles | high nibbles] without its lane insert (11-13% faster
// hot on Zen 3 than load, shift, insert).
#define ROWQ4RX(wo, r, sel, acc) \
	SCALEROW(sel); \
	VBROADCASTI128 wo+2(r), Y2; \
	VPSRLVD srl04<>(SB), Y2, Y2; \
	VPAND c0f32<>(SB), Y2, Y2; \
	VPMADDUBSW Y3, Y2, Y4; \
	VPSUBW Y5, Y4, Y4; \
	VPMADDWD Y6, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	VFMADD231PS Y4, Y0, acc

#define Q4_0_BLKR4X(wo, ao, a0, a1, a2, a3) \
	SCALESR4X(wo, ao); \
	VMOVDQU ao+2(DI), Y3; \
	VPMADDUBSW Y3, Y7, Y5; \
	ROWQ4RX(wo, SI, $0x00, a0); \
	ROWQ4RX(wo, R10, $0x01, a1); \
	ROWQ4RX(wo, R11, $0x02, a2); \
	ROWQ4RX(wo, R12, $0x03, a3)

// Q8_0 weight row r as Q8_0_BLK computes it, the activation block
// sign-extended once in Y3 (bytes 0..15) and Y5 (16..31).
#define ROWQ8RX(wo, r, sel, acc) \
	SCALEROW(sel); \
	VPMOVSXBW wo+2(r), Y2; \
	VPMADDWD Y3, Y2, Y2; \
	VPMOVSXBW wo+18(r), Y4; \
	VPMADDWD Y5, Y4, Y4; \
	VPADDD Y4, Y2, Y2; \
	VCVTDQ2PS Y2, Y2; \
	VFMADD231PS Y2, Y0, acc

#define Q8_0_BLKR4X(wo, ao, a0, a1, a2, a3) \
	SCALESR4X(wo, ao); \
	VPMOVSXBW ao+2(DI), Y3; \
	VPMOVSXBW ao+18(DI), Y5; \
	ROWQ8RX(wo, SI, $0x00, a0); \
	ROWQ8RX(wo, R10, $0x01, a1); \
	ROWQ8RX(wo, R11, $0x02, a2); \
	ROWQ8RX(wo, R12, $0x03, a3)


// func dotRows4Q8_0Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4Q8_0Q8_0AVX2(SB), NOSPLIT, $0-40
	ARGSR4
	ZERO8Y
s80loop:
	CMPQ CX, $2
	JLT s80tail
	Q8_0_BLKR4X(0, 0, Y8, Y9, Y10, Y11)
	Q8_0_BLKR4X(34, 34, Y12, Y13, Y14, Y15)
	ADVW4(68)
	ADDQ $68, DI
	SUBQ $2, CX
	JMP s80loop
s80tail:
	TESTQ CX, CX
	JZ s80done
	Q8_0_BLKR4X(0, 0, Y8, Y9, Y10, Y11)
s80done:
	FIN4X
	VZEROUPPER
	RET
