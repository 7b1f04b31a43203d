package kernels

// The IQ1 AVX2 routines (iq1_amd64.s): for IQ1_S and IQ1_M a one-row dot
// and a four-weight-row MatVec routine bit-identical to it and to the
// scalar dot (for activations whose group sums are their quants' sums).
// The avx512 path keeps them.

//go:noescape
func dotIQ1_SQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4IQ1_SQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotIQ1_MQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4IQ1_MQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
