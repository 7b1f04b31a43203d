package kernels

// The IQ3 NEON dots (iq3_arm64.s, ARMv8.0), bit-identical to the scalar
// dots. Their four-row routines are not written for arm64 (MatVec runs the
// one-row dot); MatMul packs into Q6_K's layout (gemmiq.go).

//go:noescape
func dotIQ3_XXSQ8_KNEON(nb int, w, a *byte) float32

//go:noescape
func dotIQ3_SQ8_KNEON(nb int, w, a *byte) float32
