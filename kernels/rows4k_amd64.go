package kernels

// Four-weight-row AVX2 routines for the K-quants and IQ4 types
// (rows4k_amd64.s), in the asmDot4 convention with the stride stepping
// through the weight rows; each is bit-identical to the same type's one-row
// AVX2 routine.

//go:noescape
func dotRows4Q4_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)
