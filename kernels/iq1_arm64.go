package kernels

// The IQ1 NEON dots (iq1_arm64.s, ARMv8.0), bit-identical to the scalar
// dots for QuantizeAct's activations. Their four-row routines are not
// written for arm64 (MatVec runs the one-row dot); MatMul packs into Q6_K's
// layout (gemmiq.go).

//go:noescape
func dotIQ1_SQ8_KNEON(nb int, w, a *byte) float32

//go:noescape
func dotIQ1_MQ8_KNEON(nb int, w, a *byte) float32
