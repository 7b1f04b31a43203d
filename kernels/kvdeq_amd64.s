#include "textflag.h"

// Q8_0 and Q4_0 rows decoded to f32 with AVX2 + F16C (see kvattn_amd64.go).
// Each value is an integer in [-128, 127] times the block's F16 scale:
// VCVTDQ2PS is exact on it and the product is exact in f32, so the result
// is bit-exact with deqQ8_0/deqQ4_0.

// func deqQ8_0AVX2(src *byte, dst *float32, nb int)
TEXT ·deqQ8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ nb+16(FP), CX
q8loop:
	MOVWLZX 0(SI), AX
	VMOVD AX, X0
	VCVTPH2PS X0, X0
	VBROADCASTSS X0, Y0
	VPMOVSXBD 2(SI), Y1
	VPMOVSXBD 10(SI), Y2
	VPMOVSXBD 18(SI), Y3
	VPMOVSXBD 26(SI), Y4
	VCVTDQ2PS Y1, Y1
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VCVTDQ2PS Y4, Y4
	VMULPS Y0, Y1, Y1
	VMULPS Y0, Y2, Y2
	VMULPS Y0, Y3, Y3
	VMULPS Y0, Y4, Y4
	VMOVUPS Y1, 0(DI)
	VMOVUPS Y2, 32(DI)
	VMOVUPS Y3, 64(DI)
	VMOVUPS Y4, 96(DI)
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JNZ q8loop
	VZEROUPPER
	RET

// func deqQ4_0AVX2(src *byte, dst *float32, nb int)
// Byte j of a block holds value j (low nibble) and value j+16 (high),
// each stored +8.
TEXT ·deqQ4_0AVX2(SB), NOSPLIT, $0-24
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X14
	VPBROADCASTD X14, X14     // 0x0f bytes
	MOVL $0x08080808, AX
	VMOVD AX, X13
	VPBROADCASTD X13, X13     // 8 bytes
q4loop:
	MOVWLZX 0(SI), AX
	VMOVD AX, X0
	VCVTPH2PS X0, X0
	VBROADCASTSS X0, Y0
	VMOVDQU 2(SI), X1
	VPAND X14, X1, X2         // values 0..15
	VPSRLW $4, X1, X3
	VPAND X14, X3, X3         // values 16..31
	VPSUBB X13, X2, X2
	VPSUBB X13, X3, X3
	VPMOVSXBD X2, Y4
	VPSRLDQ $8, X2, X2
	VPMOVSXBD X2, Y5
	VPMOVSXBD X3, Y6
	VPSRLDQ $8, X3, X3
	VPMOVSXBD X3, Y7
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VCVTDQ2PS Y7, Y7
	VMULPS Y0, Y4, Y4
	VMULPS Y0, Y5, Y5
	VMULPS Y0, Y6, Y6
	VMULPS Y0, Y7, Y7
	VMOVUPS Y4, 0(DI)
	VMOVUPS Y5, 32(DI)
	VMOVUPS Y6, 64(DI)
	VMOVUPS Y7, 96(DI)
	ADDQ $18, SI
	ADDQ $128, DI
	DECQ CX
	JNZ q4loop
	VZEROUPPER
	RET
