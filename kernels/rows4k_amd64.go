package kernels

// Four-weight-row AVX2 routines for the K-quants and IQ4 types
// (rows4k_amd64.s), in the asmDot4 convention with the stride stepping
// through the weight rows; each is bit-identical to the same type's one-row
// AVX2 routine (wired in arch_amd64.go's avx2Rows, and for the K-quants
// also in avx512Rows).

//go:noescape
func dotRows4Q4_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q6_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q5_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_XSQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_NLQ8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q3_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q2_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

// dotRows4Q4_KQ8_KAVX512 is dotRows4Q4_KQ8_KAVX2 with its integer loop on
// ZMM (rows4k512_amd64.s), bit-identical to it and to the Q4_K dots.
//
//go:noescape
func dotRows4Q4_KQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)

// dotRows4Q5_KQ8_KAVX512 is dotRows4Q4_KQ8_KAVX512's ZMM loop with
// dotQ5_KQ8_KAVX512's fifth bits, finished as dotRows4Q5_KQ8_KAVX2
// (rows4k512_amd64.s), bit-identical to both Q5_K dots.
//
//go:noescape
func dotRows4Q5_KQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)

// dotRows4Q2_KQ8_KAVX512 runs dotQ2_KQ8_KAVX512's VPMADDUBSW/VPDPWSSD
// integer loop for four rows (the activations loaded once per super-block,
// the quants unpacked from a broadcast by per-half word shifts) and
// finishes them as dotRows4Q2_KQ8_KAVX2 (rows4k512_amd64.s), bit-identical
// to both Q2_K dots.
//
//go:noescape
func dotRows4Q2_KQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)

// dotRows4Q3_KQ8_KAVX512 is dotRows4Q2_KQ8_KAVX512's loop with Q3_K's
// hmask bit merged in (VPTERNLOGD), finished as dotRows4Q3_KQ8_KAVX2
// (rows4k512_amd64.s), bit-identical to both Q3_K dots.
//
//go:noescape
func dotRows4Q3_KQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)

// dotRows4Q6_KQ8_KAVX512 runs dotQ6_KQ8_KAVX512's integer loop for four
// rows and finishes them as dotRows4Q6_KQ8_KAVX2 (rows4k512_amd64.s),
// bit-identical to both Q6_K dots.
//
//go:noescape
func dotRows4Q6_KQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)

// dotRows4IQ4_XSQ8_KAVX512 is dotRows4IQ4_XSQ8_KAVX2 with its integer loop
// on ZMM (rows4k512_amd64.s): VPDPBUSD of the codebook biased to unsigned
// against the signed activations, the bias taken off per dword from the
// activations themselves (so raw bsums cannot change the result), then
// VPMULLD by the sub-block multipliers. The per-super-block int32 is the
// same exact integer the AVX2 routines form and its float finish the AVX2
// four-row one (KFIN4_D), so it is bit-identical to dotIQ4_XSQ8_KAVX2, which
// the avx512 path keeps as IQ4_XS's one-row dot (there is no AVX-512 one).
//
//go:noescape
func dotRows4IQ4_XSQ8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)
