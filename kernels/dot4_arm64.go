package kernels

import "github.com/memvanta/memvanta/core/ggml"

// neonRows4s and neonDot4s are the four-weight-row (MatVec) and
// four-activation-row (MatMul) routines matching neonRows; the Dotprod lists
// match neonDotprodRows. Each is bit-identical to its one-row routine
// (TestNEONFourRowMatchesDot checks every entry against it directly). The
// K-quant and IQ4_XS routines' super-block integer sums are exact in every
// variant (ARMv8.0 or SDOT, one- or four-row), so for them bit-identity
// only needs the float tail repeated; TestNEONFourRowMatchesDot also checks
// the ARMv8.0 four-row routines against the SDOT one-row ones.
var neonRows4s = []archDot4{
	{ggml.Q4_0, dotRows4Q4_0Q8_0NEON},
	{ggml.Q8_0, dotRows4Q8_0Q8_0NEON},
	{ggml.IQ4_NL, dotRows4IQ4_NLQ8_0NEON},
	{ggml.Q4_K, dotRows4Q4_KQ8_KNEON},
	{ggml.Q5_K, dotRows4Q5_KQ8_KNEON},
	{ggml.Q6_K, dotRows4Q6_KQ8_KNEON},
	{ggml.IQ4_XS, dotRows4IQ4_XSQ8_KNEON},
}

var neonDot4s = []archDot4{
	{ggml.Q4_0, dot4Q4_0Q8_0NEON},
	{ggml.Q8_0, dot4Q8_0Q8_0NEON},
	{ggml.IQ4_NL, dot4IQ4_NLQ8_0NEON},
	{ggml.Q4_K, dot4Q4_KQ8_KNEON},
	{ggml.Q5_K, dot4Q5_KQ8_KNEON},
	{ggml.Q6_K, dot4Q6_KQ8_KNEON},
	{ggml.IQ4_XS, dot4IQ4_XSQ8_KNEON},
}

var neonDotprodRows4s = []archDot4{
	{ggml.Q4_0, dotRows4Q4_0Q8_0NEONDot},
	{ggml.Q8_0, dotRows4Q8_0Q8_0NEONDot},
	{ggml.IQ4_NL, dotRows4IQ4_NLQ8_0NEONDot},
	{ggml.Q4_K, dotRows4Q4_KQ8_KNEONDot},
	{ggml.Q6_K, dotRows4Q6_KQ8_KNEONDot},
	{ggml.IQ4_XS, dotRows4IQ4_XSQ8_KNEONDot},
}

var neonDotprodDot4s = []archDot4{
	{ggml.Q4_0, dot4Q4_0Q8_0NEONDot},
	{ggml.Q8_0, dot4Q8_0Q8_0NEONDot},
	{ggml.IQ4_NL, dot4IQ4_NLQ8_0NEONDot},
	{ggml.Q4_K, dot4Q4_KQ8_KNEONDot},
	{ggml.Q6_K, dot4Q6_KQ8_KNEONDot},
	{ggml.IQ4_XS, dot4IQ4_XSQ8_KNEONDot},
}

//go:noescape
func dotRows4Q4_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q4_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q4_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q4_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q8_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q8_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q8_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q8_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_NLQ8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4IQ4_NLQ8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_NLQ8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4IQ4_NLQ8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q4_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q4_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q5_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q5_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q6_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q6_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_XSQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4IQ4_XSQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q4_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q4_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q6_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q6_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_XSQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4IQ4_XSQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)
