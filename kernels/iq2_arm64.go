package kernels

// The IQ2 types' NEON dots (iq2_arm64.s, ARMv8.0), bit-identical to the
// scalar dots for any bytes. Their four-row routines and packed MatMuls are
// not written for arm64 (MatVec and MatMul run the one-row dot).

//go:noescape
func dotIQ2_XXSQ8_KNEON(nb int, w, a *byte) float32

//go:noescape
func dotIQ2_XSQ8_KNEON(nb int, w, a *byte) float32

//go:noescape
func dotIQ2_SQ8_KNEON(nb int, w, a *byte) float32
