package kernels

import "github.com/memvanta/memvanta/core/ggml"

// archImpls returns the NEON path. Advanced SIMD is mandatory in ARMv8-A, so
// the base routines (neonRows) use only ARMv8.0 instructions and run on every
// arm64 CPU; where the CPU has the ARMv8.2 dot-product extension (ASIMDDP:
// Graviton2+, Apple M1+, Neoverse) the Q4_0/Q8_0/Q4_K/Q6_K/IQ4_NL/IQ4_XS
// rows are replaced by SDOT ones (neonDotprodRows), which need half the
// instructions per block, and Q4_0/Q8_0/IQ4_NL/Q2_K…Q6_K/IQ4_XS get packed MatMul
// (gemm_arm64.go).
// Every quantized type's dot comes with its four-row routines
// (dot4_arm64.s: Dot4 for MatMul, DotRows4 for MatVec), bit-identical to
// it; types without an SDOT dot keep their ARMv8.0 row on both tables. The ops stay portable (nil op
// edits).
func archImpls(scalar *Impl) []*Impl {
	neon := derive(scalar, "neon", neonRows, nil)
	if hasDotProd() {
		neon = derive(neon, "neon", neonDotprodRows, nil)
	}
	return []*Impl{neon}
}

// neonDotprodRows replace neonRows entries on CPUs with ASIMDDP.
var neonDotprodRows = []archRow{
	{t: ggml.Q4_0, dot: dotQ4_0Q8_0NEONDot, dot4: dot4Q4_0Q8_0NEONDot, rows4: dotRows4Q4_0Q8_0NEONDot,
		gemm: gemmNEONDot(8, gemmKernelQ4_0NEONDot)},
	{t: ggml.Q8_0, dot: dotQ8_0Q8_0NEONDot, dot4: dot4Q8_0Q8_0NEONDot, rows4: dotRows4Q8_0Q8_0NEONDot,
		gemm: gemmNEONDot(128, gemmKernelQ8_0NEONDot)},
	{t: ggml.Q4_K, dot: dotQ4_KQ8_KNEONDot, dot4: dot4Q4_KQ8_KNEONDot, rows4: dotRows4Q4_KQ8_KNEONDot,
		gemm: gemmKNEONDot(gemmQ4KBlockB, gemmQ4KKB, packQ4K, gemmKernelQ4KNEONDot)},
	{t: ggml.Q6_K, dot: dotQ6_KQ8_KNEONDot, dot4: dot4Q6_KQ8_KNEONDot, rows4: dotRows4Q6_KQ8_KNEONDot,
		gemm: gemmKNEONDot(gemmQ6KBlockB, gemmQ6KKB, packQ6K, gemmKernelQ6KNEONDot)},
	{t: ggml.IQ4_NL, dot: dotIQ4_NLQ8_0NEONDot, dot4: dot4IQ4_NLQ8_0NEONDot, rows4: dotRows4IQ4_NLQ8_0NEONDot,
		gemm: gemmNEONDot(128, gemmKernelQ8_0NEONDot)},
	{t: ggml.IQ4_XS, dot: dotIQ4_XSQ8_KNEONDot, dot4: dot4IQ4_XSQ8_KNEONDot, rows4: dotRows4IQ4_XSQ8_KNEONDot,
		gemm: gemmKNEONDot(gemmIQ4XSBlockB, gemmIQ4XSKB, packIQ4XS, gemmKernelIQ4XSNEONDot)},
	{t: ggml.MXFP4, dot: dotMXFP4Q8_0NEONDot, dot4: dot4MXFP4Q8_0NEONDot, rows4: dotRows4MXFP4Q8_0NEONDot,
		gemm: gemmNEONDot(128, gemmKernelQ8_0NEONDot)},
	// Q5_K keeps its ARMv8.0 dot (and four-row routines) and gains the
	// packed MatMul, which needs SDOT.
	{t: ggml.Q5_K, gemm: gemmKNEONDot(gemmQ4KBlockB, gemmQ4KKB, packQ5K, gemmKernelQ4KNEONDot)},
	// Q3_K packs into Q6_K's layout (gemmkq2q3.go) and runs its kernel; Q2_K
	// has its own.
	{t: ggml.Q3_K, gemm: gemmKNEONDot(gemmQ6KBlockB, gemmQ6KKB, packQ3K, gemmKernelQ6KNEONDot)},
	{t: ggml.Q2_K, gemm: gemmKNEONDot(gemmQ2KBlockB, gemmQ2KKB, packQ2K, gemmKernelQ2KNEONDot)},
}

// neonRows are the ARMv8.0 routines, one row per type (see archRow).
var neonRows = []archRow{
	{t: ggml.Q4_0, dot: dotQ4_0Q8_0NEON, dot4: dot4Q4_0Q8_0NEON, rows4: dotRows4Q4_0Q8_0NEON},
	{t: ggml.Q8_0, dot: dotQ8_0Q8_0NEON, dot4: dot4Q8_0Q8_0NEON, rows4: dotRows4Q8_0Q8_0NEON},
	{t: ggml.Q4_K, dot: dotQ4_KQ8_KNEON, dot4: dot4Q4_KQ8_KNEON, rows4: dotRows4Q4_KQ8_KNEON},
	{t: ggml.Q6_K, dot: dotQ6_KQ8_KNEON, dot4: dot4Q6_KQ8_KNEON, rows4: dotRows4Q6_KQ8_KNEON},
	{t: ggml.F32, dot: dotF32NEON},
	{t: ggml.F16, dot: dotF16NEON},
	{t: ggml.Q4_1, dot: dotQ4_1Q8_1NEON, dot4: dot4Q4_1Q8_1NEON, rows4: dotRows4Q4_1Q8_1NEON},
	{t: ggml.Q5_0, dot: dotQ5_0Q8_0NEON, dot4: dot4Q5_0Q8_0NEON, rows4: dotRows4Q5_0Q8_0NEON},
	{t: ggml.Q5_1, dot: dotQ5_1Q8_1NEON, dot4: dot4Q5_1Q8_1NEON, rows4: dotRows4Q5_1Q8_1NEON},
	{t: ggml.Q2_K, dot: dotQ2_KQ8_KNEON, dot4: dot4Q2_KQ8_KNEON, rows4: dotRows4Q2_KQ8_KNEON},
	{t: ggml.Q3_K, dot: dotQ3_KQ8_KNEON, dot4: dot4Q3_KQ8_KNEON, rows4: dotRows4Q3_KQ8_KNEON},
	{t: ggml.Q5_K, dot: dotQ5_KQ8_KNEON, dot4: dot4Q5_KQ8_KNEON, rows4: dotRows4Q5_KQ8_KNEON},
	{t: ggml.BF16, dot: dotBF16NEON},
	{t: ggml.IQ4_NL, dot: dotIQ4_NLQ8_0NEON, dot4: dot4IQ4_NLQ8_0NEON, rows4: dotRows4IQ4_NLQ8_0NEON},
	{t: ggml.IQ4_XS, dot: dotIQ4_XSQ8_KNEON, dot4: dot4IQ4_XSQ8_KNEON, rows4: dotRows4IQ4_XSQ8_KNEON},
	{t: ggml.MXFP4, dot: dotMXFP4Q8_0NEON, dot4: dot4MXFP4Q8_0NEON, rows4: dotRows4MXFP4Q8_0NEON},
	{t: ggml.TQ2_0, dot: dotTQ2_0Q8_KNEON},
	{t: ggml.TQ1_0, dot: dotTQ1_0Q8_KNEON},
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
