// IQ1_S and IQ1_M against Q8_K on AVX2. Per 32-weight group: the four grid
// entries (eight int8 values in {-1, 0, 1} each) are scalar loads inserted
// into lanes (VPGATHERDQ measured slower on Zen 5) from the 11-bit indices
// (the quant bytes with three bits each from qh, moved by a per-lane shift,
// formed in a vector and stored to the frame), and each value becomes v = 8·grid + delta with the
// ±1 delta of its eight (a byte mask from the delta bits, OR 1), |v| ≤ 9.
// VPMADDUBSW(|a|, sign(a)·v) is exact for every activation byte; VPMADDWD
// by the odd scale of each 16 (IQ1_S: one per 32) widens to int32, and a
// super-block's C = Σ sc·Σ v·a = 8·sumi + sumi1 (≤ 256·9·128·15 < 2^24).
// The scalar dot forms sumi + sumi1/8 in f32, the same real number C/8,
// exact in f32 either way, so with the scalar dot's remaining float steps
// (fl(d·d_a)·t, then the sum) these routines are bit-identical to
// dotIQ1_S / dotIQ1_M whenever the activation's sums of 16 are its
// quants' sums (QuantizeAct writes them so; IQ1_S's scalar dot reads
// them, these routines use the quants), and the four-row ones to the
// one-row ones for any bytes.

#include "textflag.h"
#include "rows4_amd64.h"

// Per-lane right shifts bringing a group's three index bits to bits 0..2.
DATA iq1sshift<>+0(SB)/4, $0
DATA iq1sshift<>+4(SB)/4, $3
DATA iq1sshift<>+8(SB)/4, $6
DATA iq1sshift<>+12(SB)/4, $9
GLOBL iq1sshift<>(SB), RODATA|NOPTR, $16
DATA iq1mshift<>+0(SB)/4, $0
DATA iq1mshift<>+4(SB)/4, $4
DATA iq1mshift<>+8(SB)/4, $8
DATA iq1mshift<>+12(SB)/4, $12
GLOBL iq1mshift<>(SB), RODATA|NOPTR, $16
DATA iq1seven<>+0(SB)/4, $7
GLOBL iq1seven<>(SB), RODATA|NOPTR, $4
DATA iq1ones<>+0(SB)/8, $0x0101010101010101
DATA iq1ones<>+8(SB)/8, $0x0101010101010101
DATA iq1ones<>+16(SB)/8, $0x0101010101010101
DATA iq1ones<>+24(SB)/8, $0x0101010101010101
GLOBL iq1ones<>(SB), RODATA|NOPTR, $32
DATA iq1eighth<>+0(SB)/4, $0x3e000000
GLOBL iq1eighth<>(SB), RODATA|NOPTR, $4
// The delta bit of each weight, as VPSHUFB control into the broadcast qh
// word and the bit to test: IQ1_S bit 15 for all 32; IQ1_M bits 3, 7 of
// byte 0 and 3, 7 of byte 1 for the four eights.
DATA iq1sdctl<>+0(SB)/8, $0x0101010101010101
GLOBL iq1sdctl<>(SB), RODATA|NOPTR, $8
DATA iq1sdbit<>+0(SB)/8, $0x8080808080808080
GLOBL iq1sdbit<>(SB), RODATA|NOPTR, $8
DATA iq1mdctl<>+0(SB)/8, $0x0000000000000000
DATA iq1mdctl<>+8(SB)/8, $0x0000000000000000
DATA iq1mdctl<>+16(SB)/8, $0x0101010101010101
DATA iq1mdctl<>+24(SB)/8, $0x0101010101010101
GLOBL iq1mdctl<>(SB), RODATA|NOPTR, $32
DATA iq1mdbit<>+0(SB)/8, $0x0808080808080808
DATA iq1mdbit<>+8(SB)/8, $0x8080808080808080
GLOBL iq1mdbit<>(SB), RODATA|NOPTR, $16

// Constants: Y15 = delta VPSHUFB control, Y14 = delta bits, X13 = index
// shifts, X12 = 7 dwords; R14 = the grid.
#define IQ1S_CONSTS \
	VPBROADCASTQ iq1sdctl<>(SB), Y15; \
	VPBROADCASTQ iq1sdbit<>(SB), Y14; \
	VMOVDQU iq1sshift<>(SB), X13; \
	VPBROADCASTD iq1seven<>(SB), X12; \
	LEAQ ·iq1sGrid(SB), R14

#define IQ1M_CONSTS \
	VMOVDQU iq1mdctl<>(SB), Y15; \
	VBROADCASTI128 iq1mdbit<>(SB), Y14; \
	VMOVDQU iq1mshift<>(SB), X13; \
	VPBROADCASTD iq1seven<>(SB), X12; \
	LEAQ ·iq1sGrid(SB), R14

// acc += Σ scale·v·a over one group: quant bytes at qoff(r), the qh word
// (index bits and delta bits) at hoff(r), activations at aoff(DI), the
// scale words in Y11. Clobbers Y5..Y10, R8 (free in the four-row
// routines once ARGSR4 has used the stride).
#define IQ1_GROUP(r, qoff, hoff, aoff, acc) \
	VPBROADCASTW hoff(r), Y7; \
	VPSHUFB Y15, Y7, Y5; \
	VPAND Y14, Y5, Y5; \
	VPCMPEQB Y14, Y5, Y5; \
	VPOR iq1ones<>(SB), Y5, Y5; \
	VPSRLVD X13, X7, X7; \
	VPAND X12, X7, X7; \
	VPSLLD $8, X7, X7; \
	VPMOVZXBD qoff(r), X6; \
	VPOR X7, X6, X6; \
	VMOVDQU X6, 0(SP); \
	MOVL 0(SP), R8; \
	VMOVQ (R14)(R8*8), X8; \
	MOVL 4(SP), R8; \
	VPINSRQ $1, (R14)(R8*8), X8, X8; \
	MOVL 8(SP), R8; \
	VMOVQ (R14)(R8*8), X7; \
	MOVL 12(SP), R8; \
	VPINSRQ $1, (R14)(R8*8), X7, X7; \
	VINSERTI128 $1, X7, Y8, Y8; \
	VPADDB Y8, Y8, Y8; \
	VPADDB Y8, Y8, Y8; \
	VPADDB Y8, Y8, Y8; \
	VPADDB Y5, Y8, Y8; \
	VMOVDQU aoff(DI), Y9; \
	VPABSB Y9, Y10; \
	VPSIGNB Y9, Y8, Y8; \
	VPMADDUBSW Y8, Y10, Y8; \
	VPMADDWD Y11, Y8, Y8; \
	VPADDD Y8, acc, acc

// Y11 = IQ1_S group scale 2·((qh >> 12) & 7) + 1 (qh at hoff(r)) in every
// word. Clobbers AX.
#define IQ1S_SCALE(r, hoff) \
	MOVWLZX hoff(r), AX; \
	SHRL $12, AX; \
	ANDL $7, AX; \
	LEAL 1(AX)(AX*1), AX; \
	VMOVD AX, X11; \
	VPBROADCASTW X11, Y11

#define IQ1S_G(r, g, acc) \
	IQ1S_SCALE(r, 34+2*g); \
	IQ1_GROUP(r, 2+4*g, 34+2*g, 4+32*g, acc)

#define IQ1S_BLOCK(r, acc) \
	VPXOR acc, acc, acc; \
	IQ1S_G(r, 0, acc); \
	IQ1S_G(r, 1, acc); \
	IQ1S_G(r, 2, acc); \
	IQ1S_G(r, 3, acc); \
	IQ1S_G(r, 4, acc); \
	IQ1S_G(r, 5, acc); \
	IQ1S_G(r, 6, acc); \
	IQ1S_G(r, 7, acc)

// Y11 = the IQ1_M scales of group g's two 16s: 3-bit fields at bit sh and
// sh+3 of the scale word at soff(r), as 2s+1 words (low / high 128 bits).
// Clobbers AX, BX, X10.
#define IQ1M_SCALE(r, soff, sh) \
	MOVWLZX soff(r), AX; \
	SHRL $sh, AX; \
	MOVL AX, BX; \
	ANDL $7, AX; \
	LEAL 1(AX)(AX*1), AX; \
	SHRL $3, BX; \
	ANDL $7, BX; \
	LEAL 1(BX)(BX*1), BX; \
	VMOVD AX, X11; \
	VPBROADCASTW X11, X11; \
	VMOVD BX, X10; \
	VPBROADCASTW X10, X10; \
	VINSERTI128 $1, X10, Y11, Y11

#define IQ1M_G(r, g, acc) \
	IQ1M_SCALE(r, 48+2*(g/2), 6*(g%2)); \
	IQ1_GROUP(r, 4*g, 32+2*g, 4+32*g, acc)

#define IQ1M_BLOCK(r, acc) \
	VPXOR acc, acc, acc; \
	IQ1M_G(r, 0, acc); \
	IQ1M_G(r, 1, acc); \
	IQ1M_G(r, 2, acc); \
	IQ1M_G(r, 3, acc); \
	IQ1M_G(r, 4, acc); \
	IQ1M_G(r, 5, acc); \
	IQ1M_G(r, 6, acc); \
	IQ1M_G(r, 7, acc)

// AX = Σ acc (x: its low half). Clobbers X9.
#define IQ1_HSUM(acc, x) \
	VEXTRACTI128 $1, acc, X9; \
	VPADDD X9, x, x; \
	VPSHUFD $0x4E, x, X9; \
	VPADDD X9, x, x; \
	VPSHUFD $0xB1, x, X9; \
	VPADDD X9, x, x; \
	VMOVD x, AX

// sum += fl(d·d_a)·(C/8), C in AX, the fp16 d in BX. Clobbers X9, X10.
#define IQ1_FIN(sum) \
	VMOVD BX, X9; \
	VCVTPH2PS X9, X9; \
	VMULSS (DI), X9, X9; \
	VCVTSI2SSL AX, X10, X10; \
	VMULSS iq1eighth<>(SB), X10, X10; \
	VMULSS X10, X9, X9; \
	VADDSS X9, sum, sum

// BX = an IQ1_M block's fp16 d, the top nibbles of its scale words. Clobbers DX.
#define IQ1M_D(r) \
	MOVWLZX 48(r), BX; \
	SHRL $12, BX; \
	MOVWLZX 50(r), DX; \
	SHRL $8, DX; \
	ANDL $0xf0, DX; \
	ORL DX, BX; \
	MOVWLZX 52(r), DX; \
	SHRL $4, DX; \
	ANDL $0xf00, DX; \
	ORL DX, BX; \
	MOVWLZX 54(r), DX; \
	ANDL $0xf000, DX; \
	ORL DX, BX

// func dotIQ1_SQ8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotIQ1_SQ8_KAVX2(SB), NOSPLIT, $16-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	IQ1S_CONSTS
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ sdone
sloop:
	IQ1S_BLOCK(SI, Y1)
	IQ1_HSUM(Y1, X1)
	MOVWLZX (SI), BX
	IQ1_FIN(X0)
	ADDQ $50, SI
	ADDQ $292, DI
	DECQ CX
	JNZ sloop
sdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotRows4IQ1_SQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ1_SQ8_KAVX2(SB), NOSPLIT, $16-40
	ARGSR4
	IQ1S_CONSTS
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	TESTQ CX, CX
	JZ r4sdone
r4sloop:
	IQ1S_BLOCK(SI, Y4)
	IQ1_HSUM(Y4, X4)
	MOVWLZX (SI), BX
	IQ1_FIN(X0)
	IQ1S_BLOCK(R10, Y4)
	IQ1_HSUM(Y4, X4)
	MOVWLZX (R10), BX
	IQ1_FIN(X1)
	IQ1S_BLOCK(R11, Y4)
	IQ1_HSUM(Y4, X4)
	MOVWLZX (R11), BX
	IQ1_FIN(X2)
	IQ1S_BLOCK(R12, Y4)
	IQ1_HSUM(Y4, X4)
	MOVWLZX (R12), BX
	IQ1_FIN(X3)
	ADVW4(50)
	ADDQ $292, DI
	DECQ CX
	JNZ r4sloop
r4sdone:
	MOVSS X0, 0(R9)
	MOVSS X1, 4(R9)
	MOVSS X2, 8(R9)
	MOVSS X3, 12(R9)
	VZEROUPPER
	RET

// func dotIQ1_MQ8_KAVX2(nb int, w, a *byte) float32
TEXT ·dotIQ1_MQ8_KAVX2(SB), NOSPLIT, $16-28
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ a+16(FP), DI
	IQ1M_CONSTS
	VXORPS X0, X0, X0
	TESTQ CX, CX
	JZ mdone
mloop:
	IQ1M_BLOCK(SI, Y1)
	IQ1_HSUM(Y1, X1)
	IQ1M_D(SI)
	IQ1_FIN(X0)
	ADDQ $56, SI
	ADDQ $292, DI
	DECQ CX
	JNZ mloop
mdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotRows4IQ1_MQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
TEXT ·dotRows4IQ1_MQ8_KAVX2(SB), NOSPLIT, $16-40
	ARGSR4
	IQ1M_CONSTS
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	TESTQ CX, CX
	JZ r4mdone
r4mloop:
	IQ1M_BLOCK(SI, Y4)
	IQ1_HSUM(Y4, X4)
	IQ1M_D(SI)
	IQ1_FIN(X0)
	IQ1M_BLOCK(R10, Y4)
	IQ1_HSUM(Y4, X4)
	IQ1M_D(R10)
	IQ1_FIN(X1)
	IQ1M_BLOCK(R11, Y4)
	IQ1_HSUM(Y4, X4)
	IQ1M_D(R11)
	IQ1_FIN(X2)
	IQ1M_BLOCK(R12, Y4)
	IQ1_HSUM(Y4, X4)
	IQ1M_D(R12)
	IQ1_FIN(X3)
	ADVW4(56)
	ADDQ $292, DI
	DECQ CX
	JNZ r4mloop
r4mdone:
	MOVSS X0, 0(R9)
	MOVSS X1, 4(R9)
	MOVSS X2, 8(R9)
	MOVSS X3, 12(R9)
	VZEROUPPER
	RET
