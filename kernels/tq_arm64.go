package kernels

// The ternary types' NEON dots (tq_arm64.s, ARMv8.0), bit-identical to the
// scalar dots for QuantizeAct's activations. Their four-row routines and
// packed MatMuls are not written for arm64 (MatVec runs the one-row dot).

//go:noescape
func dotTQ2_0Q8_KNEON(nb int, w, a *byte) float32

//go:noescape
func dotTQ1_0Q8_KNEON(nb int, w, a *byte) float32
