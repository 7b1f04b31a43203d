package kernels

// The IQ2 types' AVX2 routines (iq2_amd64.s): a one-row dot and a
// four-weight-row MatVec routine per type, bit-identical to the scalar dot
// for any bytes. The avx512 path keeps them.

//go:noescape
func dotIQ2_XXSQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4IQ2_XXSQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotIQ2_XSQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4IQ2_XSQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotIQ2_SQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4IQ2_SQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
