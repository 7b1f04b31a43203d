// The scaled accumulation step of the Q2_K and Q3_K AVX-512 dots, shared by
// the one-row dots (dot_amd64.s: dotQ2_KQ8_KAVX512, dotQ3_KQ8_KAVX512, the
// activations as memory operands) and the four-weight-row routines
// (rows4k512_amd64.s: the activations in registers, loaded once per
// super-block for four rows).

// acc += Σ scale·(Z9·a0) + Σ scale·(Z10·a1): Z9 / Z10 = 64 unsigned quant
// bytes each, a0 / a1 = their 64 activations (a ZMM or a memory operand),
// the scales spread from the 16 words of sc over 16 products each by the
// VPERMW indices in ilo / ihi (sub-blocks 0-3 / 4-7 of the 128 elements,
// permQ6 / kz6perm entries). Clobbers Z8, Z14.
#define KZACC(a0, a1, sc, acc, ilo, ihi) \
	VPMADDUBSW a0, Z9, Z9; \
	VPMADDUBSW a1, Z10, Z10; \
	VPERMW sc, ilo, Z14; \
	VPERMW sc, ihi, Z8; \
	VPDPWSSD Z14, Z9, acc; \
	VPDPWSSD Z8, Z10, acc
