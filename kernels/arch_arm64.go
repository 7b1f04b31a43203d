package kernels

import (
	"github.com/klauspost/cpuid/v2"

	"github.com/memvanta/memvanta/core/ggml"
)

// asmDot is the calling convention shared by the assembly dot routines: nb
// counts blocks for quantized types and elements for the float types.
type asmDot func(nb int, w, a *byte) float32

// archImpls returns the NEON path. Advanced SIMD is mandatory in ARMv8-A, so
// the base routines (neonDots) use only ARMv8.0 instructions and run on every
// arm64 CPU; where the CPU has the ARMv8.2 dot-product extension (ASIMDDP:
// Graviton2+, Apple M1+, Neoverse) the Q4_0/Q8_0/Q4_K/Q6_K/IQ4_NL/IQ4_XS
// routines switch to SDOT, which needs half the instructions per block.
func archImpls(scalar *Impl) []*Impl {
	neon := deriveImpl(scalar, "neon", neonDots)
	if cpuid.CPU.Supports(cpuid.ASIMDDP) {
		neon = deriveImpl(neon, "neon", neonDotprodDots)
	}
	return []*Impl{neon}
}

// neonDotprodDots replace neonDots entries on CPUs with ASIMDDP.
var neonDotprodDots = []archDot{
	{ggml.Q4_0, dotQ4_0Q8_0NEONDot},
	{ggml.Q8_0, dotQ8_0Q8_0NEONDot},
	{ggml.Q4_K, dotQ4_KQ8_KNEONDot},
	{ggml.Q6_K, dotQ6_KQ8_KNEONDot},
	{ggml.IQ4_NL, dotIQ4_NLQ8_0NEONDot},
	{ggml.IQ4_XS, dotIQ4_XSQ8_KNEONDot},
}

var neonDots = []archDot{
	{ggml.Q4_0, dotQ4_0Q8_0NEON},
	{ggml.Q8_0, dotQ8_0Q8_0NEON},
	{ggml.Q4_K, dotQ4_KQ8_KNEON},
	{ggml.Q6_K, dotQ6_KQ8_KNEON},
	{ggml.F32, dotF32NEON},
	{ggml.F16, dotF16NEON},
	{ggml.Q4_1, dotQ4_1Q8_1NEON},
	{ggml.Q5_0, dotQ5_0Q8_0NEON},
	{ggml.Q5_1, dotQ5_1Q8_1NEON},
	{ggml.Q2_K, dotQ2_KQ8_KNEON},
	{ggml.Q3_K, dotQ3_KQ8_KNEON},
	{ggml.Q5_K, dotQ5_KQ8_KNEON},
	{ggml.BF16, dotBF16NEON},
	{ggml.IQ4_NL, dotIQ4_NLQ8_0NEON},
	{ggml.IQ4_XS, dotIQ4_XSQ8_KNEON},
}

//go:noescape
func dotQ4_0Q8_0NEON(nb int, w, a *byte) float32

//go:noescape
func dotQ8_0Q8_0NEON(nb int, w, a *byte) float32

//go:noescape
func dotQ4_KQ8_KNEON(nb int, w, a *byte) float32

//go:noescape
func dotQ6_KQ8_KNEON(nb int, w, a *byte) float32

//go:noescape
func dotF32NEON(n int, w, a *byte) float32

//go:noescape
func dotF16NEON(n int, w, a *byte) float32

//go:noescape
func dotQ4_1Q8_1NEON(nb int, w, a *byte) float32

//go:noescape
func dotQ5_0Q8_0NEON(nb int, w, a *byte) float32

//go:noescape
func dotQ5_1Q8_1NEON(nb int, w, a *byte) float32

//go:noescape
func dotQ2_KQ8_KNEON(nb int, w, a *byte) float32

//go:noescape
func dotQ3_KQ8_KNEON(nb int, w, a *byte) float32

//go:noescape
func dotQ5_KQ8_KNEON(nb int, w, a *byte) float32

//go:noescape
func dotBF16NEON(n int, w, a *byte) float32

//go:noescape
func dotQ4_0Q8_0NEONDot(nb int, w, a *byte) float32

//go:noescape
func dotQ8_0Q8_0NEONDot(nb int, w, a *byte) float32

//go:noescape
func dotQ4_KQ8_KNEONDot(nb int, w, a *byte) float32

//go:noescape
func dotQ6_KQ8_KNEONDot(nb int, w, a *byte) float32

//go:noescape
func dotIQ4_NLQ8_0NEON(nb int, w, a *byte) float32

//go:noescape
func dotIQ4_XSQ8_KNEON(nb int, w, a *byte) float32

//go:noescape
func dotIQ4_NLQ8_0NEONDot(nb int, w, a *byte) float32

//go:noescape
func dotIQ4_XSQ8_KNEONDot(nb int, w, a *byte) float32
