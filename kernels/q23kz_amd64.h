// ZMM integer steps of the Q2_K and Q3_K AVX-512 dots, shared by the one-
// row dots (dot_amd64.s: dotQ2_KQ8_KAVX512, dotQ3_KQ8_KAVX512, activations
// as memory operands) and the four-weight-row routines (rows4k512_amd64.s:
// the same steps once per row, the activations loaded into registers once
// per super-block). Z13 = 0x03 bytes, Z15 = 0x04 bytes (Q3_K), Z16..Z19 =
// the word permutations that spread sub-block scales 0-3, 4-7, 8-11, 12-15
// over their 16 products each (permQ6 / kz6perm). They clobber Y7, Z8,
// Z9, Z10 and Z14, and the Q3_K ones Y11 and Y12.

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

// acc += Σ scale·(Z9·a0) + Σ scale·(Z10·a1), a0 / a1 the 64 activations
// each (a ZMM or a memory operand), the scales spread from the words of sc
// by the permutations in ilo / ihi.
#define KZACC(a0, a1, sc, acc, ilo, ihi) \
	VPMADDUBSW a0, Z9, Z9; \
	VPMADDUBSW a1, Z10, Z10; \
	VPERMW sc, ilo, Z14; \
	VPERMW sc, ihi, Z8; \
	VPDPWSSD Z14, Z9, acc; \
	VPDPWSSD Z8, Z10, acc

// Q3_K high bits for two chunks: bit m0 / m1 of hmask (Y11) to bit 2 of the
// low / high ZMM half, OR-ed into zv; Z15 = 0x04.
#define Q3HB_Z(zv, op0, c0, op1, c1) \
	op0 $c0, Y11, Y8; \
	op1 $c1, Y11, Y12; \
	VINSERTI64X4 $1, Y12, Z8, Z8; \
	VPANDD Z15, Z8, Z8; \
	VPORD Z8, zv, zv

// acc = Σ scale·q·a over Q2_K block r's 256 values (2-bit quants at 16),
// sc = its 16 scales as words, a0..a3 = activations [0, 64) .. [192, 256).
#define Q2K_ZBODY(r, a0, a1, a2, a3, sc, acc) \
	VPXORD acc, acc, acc; \
	VMOVDQU 16(r), Y7; \
	Q2BITS_Z; \
	KZACC(a0, a1, sc, acc, Z16, Z17); \
	VMOVDQU 48(r), Y7; \
	Q2BITS_Z; \
	KZACC(a2, a3, sc, acc, Z18, Z19)

// acc += Σ scale·(value+4)·a over Q3_K block r's 256 values (hmask at 0,
// 2-bit quants at 32), sc = its 16 scales (minus 32) as words, a0..a3 as
// in Q2K_ZBODY.
#define Q3K_ZBODY(r, a0, a1, a2, a3, sc, acc) \
	VMOVDQU 0(r), Y11; \
	VMOVDQU 32(r), Y7; \
	Q2BITS_Z; \
	Q3HB_Z(Z9, VPSLLW, 2, VPSLLW, 1); \
	Q3HB_Z(Z10, VPSRLW, 0, VPSRLW, 1); \
	KZACC(a0, a1, sc, acc, Z16, Z17); \
	VMOVDQU 64(r), Y7; \
	Q2BITS_Z; \
	Q3HB_Z(Z9, VPSRLW, 2, VPSRLW, 3); \
	Q3HB_Z(Z10, VPSRLW, 4, VPSRLW, 5); \
	KZACC(a2, a3, sc, acc, Z18, Z19)
