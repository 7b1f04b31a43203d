package kernels

// TQ2_0's AVX2 routines (tq_amd64.s): a one-row dot and a four-weight-row
// MatVec routine, bit-identical to it.

//go:noescape
func dotTQ2_0Q8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4TQ2_0Q8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
