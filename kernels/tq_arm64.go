package kernels

// TQ2_0's NEON dot (tq_arm64.s), bit-identical to the scalar dot for
// QuantizeAct's activations. TQ1_0 and the four-row routines run the
// portable code on arm64.

//go:noescape
func dotTQ2_0Q8_KNEON(nb int, w, a *byte) float32
