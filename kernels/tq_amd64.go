package kernels

// The ternary types' AVX2 routines (tq_amd64.s): for TQ2_0 and TQ1_0 a
// one-row dot and a four-weight-row MatVec routine bit-identical to it
// (and to the scalar dot for QuantizeAct's activations). The avx512 path
// keeps them.

//go:noescape
func dotTQ2_0Q8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4TQ2_0Q8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotTQ1_0Q8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4TQ1_0Q8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

// The AVX-512 TQ1_0 routines: the AVX2 ones' trit extraction on ZMM, 64
// trits per vector (tq_amd64.s); bit-identical to them.

//go:noescape
func dotTQ1_0Q8_KAVX512(nb int, w, a *byte) float32

//go:noescape
func dotRows4TQ1_0Q8_KAVX512(nb int, w, a *byte, stride int, y *[4]float32)
