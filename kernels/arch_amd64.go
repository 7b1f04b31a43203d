package kernels

import (
	"github.com/klauspost/cpuid/v2"

	"github.com/memvanta/memvanta/core/ggml"
)

// asmDot is the calling convention shared by the assembly dot routines: nb
// counts blocks for quantized types and elements for the float types, so the
// assembly never divides. w and a point at the first byte of each row.
type asmDot func(nb int, w, a *byte) float32

// asmDot4 is the four-activation-row convention: rows at a, a+stride,
// a+2*stride, a+3*stride; results to y[0..3].
type asmDot4 func(nb int, w, a *byte, stride int, y *[4]float32)

// archImpls returns the SIMD dispatch paths this CPU supports, best first,
// each built from the scalar table with its SIMD routines swapped in. AVX2
// needs FMA3 and F16C too (every AVX2 CPU we target has them, but the check
// keeps a VM that masks them from faulting). The AVX-512 path only replaces
// the routines where it measured faster on Zen 5; the rest are the AVX2 ones.
func archImpls(scalar *Impl) []*Impl {
	c := &cpuid.CPU
	if !c.Supports(cpuid.AVX2, cpuid.FMA3, cpuid.F16C) {
		return nil
	}
	avx2 := deriveImpl(scalar, "avx2", avx2Dots)
	setDot4s(avx2, avx2Dot4s)
	setDotRows4s(avx2, avx2Rows4s)
	setGemms(avx2, avx2Gemms)
	// Packed K-quants: AVX2 code, so the avx512 path derived below keeps it.
	avx2.gemm[ggml.Q4_K] = newGemmK(ggml.Q4_K, gemmQ4KBlockB, gemmQ4KKB, packQ4K, gemmKernelQ4KAVX2, gemmQ4KMinBatch)
	avx2.gemm[ggml.Q5_K] = newGemmK(ggml.Q5_K, gemmQ4KBlockB, gemmQ4KKB, packQ5K, gemmKernelQ5KAVX2, gemmQ5KMinBatch)
	avx2.gemm[ggml.IQ4_XS] = newGemmK(ggml.IQ4_XS, gemmIQ4XSBlockB, gemmIQ4XSKB, packIQ4XS, gemmKernelIQ4XSAVX2, gemmIQ4XSMinBatch)
	avx2.gemm[ggml.Q6_K] = newGemmK(ggml.Q6_K, gemmQ6KBlockB, gemmQ6KKB, packQ6K, gemmKernelQ6KAVX2, gemmQ6KMinBatch)
	out := []*Impl{avx2}
	if c.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512VNNI) {
		avx512 := deriveImpl(avx2, "avx512", avx512Dots)
		setDot4s(avx512, avx512Dot4s)
		setDotRows4s(avx512, avx512Rows4s)
		setGemms(avx512, avx512Gemms)
		out = append([]*Impl{avx512}, out...)
	}
	return out
}

// avx2Dots lists the AVX2+FMA routines, one per executed weight type.
var avx2Dots = []archDot{
	{ggml.Q4_0, dotQ4_0Q8_0AVX2},
	{ggml.Q4_1, dotQ4_1Q8_1AVX2},
	{ggml.Q5_0, dotQ5_0Q8_0AVX2},
	{ggml.Q5_1, dotQ5_1Q8_1AVX2},
	{ggml.Q8_0, dotQ8_0Q8_0AVX2},
	{ggml.Q2_K, dotQ2_KQ8_KAVX2},
	{ggml.Q3_K, dotQ3_KQ8_KAVX2},
	{ggml.Q4_K, dotQ4_KQ8_KAVX2},
	{ggml.Q5_K, dotQ5_KQ8_KAVX2},
	{ggml.Q6_K, dotQ6_KQ8_KAVX2},
	{ggml.IQ4_NL, dotIQ4_NLQ8_0AVX2},
	{ggml.IQ4_XS, dotIQ4_XSQ8_KAVX2},
	{ggml.F32, dotF32AVX2},
	{ggml.F16, dotF16AVX2},
	{ggml.BF16, dotBF16AVX2},
}

// avx2Dot4s and avx512Dot4s are the four-activation-row routines (prefill);
// each is bit-identical to its path's one-row routine for the same type.
var avx2Dot4s = []archDot4{
	{ggml.Q4_0, dot4Q4_0Q8_0AVX2},
	{ggml.Q8_0, dot4Q8_0Q8_0AVX2},
}

var avx512Dot4s = []archDot4{
	{ggml.Q4_0, dot4Q4_0Q8_0AVX512},
	{ggml.Q8_0, dot4Q8_0Q8_0AVX512},
}

// avx2Rows4s and avx512Rows4s are the four-weight-row routines (generation's MatVec), in
// the asmDot4 convention with the stride stepping through the weight rows;
// each is bit-identical to its path's one-row routine.
var avx2Rows4s = []archDot4{
	{ggml.Q4_0, dotRows4Q4_0Q8_0AVX2},
	{ggml.Q8_0, dotRows4Q8_0Q8_0AVX2},
}

var avx512Rows4s = []archDot4{
	{ggml.Q4_0, dotRows4Q4_0Q8_0AVX512},
	{ggml.Q8_0, dotRows4Q8_0Q8_0AVX512},
}

// avx512Dots lists the routines where AVX-512 beat AVX2 on Zen 5 in
// BenchmarkArchAVX512vsAVX2 (fastest of alternating bursts, 11008-element
// row in cache): Q5_1 2.0×, BF16 2.0×, Q4_1 1.7×, Q5_0 1.7×, Q8_0 1.7×,
// Q4_0 1.4×, Q6_K 1.35×, Q3_K 1.3×, F16 1.3×, Q2_K 1.3×, Q4_K 1.2×, Q5_K
// 1.2×. An AVX-512 F32 dot lost to AVX2 (a row pair overflows L1 either way),
// so F32 stays on AVX2. IQ4_NL and IQ4_XS have no AVX-512 routine: the
// machine they were written on has no AVX-512 to test one, so the avx512
// path inherits (and dispatches) their AVX2 routines.
var avx512Dots = []archDot{
	{ggml.Q4_0, dotQ4_0Q8_0AVX512},
	{ggml.Q8_0, dotQ8_0Q8_0AVX512},
	{ggml.F16, dotF16AVX512},
	{ggml.Q4_K, dotQ4_KQ8_KAVX512},
	{ggml.Q6_K, dotQ6_KQ8_KAVX512},
	{ggml.Q5_K, dotQ5_KQ8_KAVX512},
	{ggml.Q2_K, dotQ2_KQ8_KAVX512},
	{ggml.Q3_K, dotQ3_KQ8_KAVX512},
	{ggml.Q4_1, dotQ4_1Q8_1AVX512},
	{ggml.Q5_0, dotQ5_0Q8_0AVX512},
	{ggml.Q5_1, dotQ5_1Q8_1AVX512},
	{ggml.BF16, dotBF16AVX512},
}

//go:noescape
func dotQ4_0Q8_0AVX2(nb int, w, a *byte) float32

//go:noescape
func dotQ4_1Q8_1AVX2(nb int, w, a *byte) float32

//go:noescape
func dotQ5_0Q8_0AVX2(nb int, w, a *byte) float32

//go:noescape
func dotQ5_1Q8_1AVX2(nb int, w, a *byte) float32

//go:noescape
func dotQ8_0Q8_0AVX2(nb int, w, a *byte) float32

//go:noescape
func dotQ2_KQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotQ3_KQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotQ4_KQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotQ5_KQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotQ6_KQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotIQ4_NLQ8_0AVX2(nb int, w, a *byte) float32

//go:noescape
func dotIQ4_XSQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotF32AVX2(n int, w, a *byte) float32

//go:noescape
func dotF16AVX2(n int, w, a *byte) float32

//go:noescape
func dotBF16AVX2(n int, w, a *byte) float32

//go:noescape
func dotQ4_0Q8_0AVX512(nb int, w, a *byte) float32

//go:noescape
func dotQ8_0Q8_0AVX512(nb int, w, a *byte) float32

//go:noescape
func dotF16AVX512(n int, w, a *byte) float32

//go:noescape
func dotQ4_KQ8_KAVX512(nb int, w, a *byte) float32

//go:noescape
func dotQ6_KQ8_KAVX512(nb int, w, a *byte) float32

//go:noescape
func dotQ5_KQ8_KAVX512(nb int, w, a *byte) float32

//go:noescape
func dotQ2_KQ8_KAVX512(nb int, w, a *byte) float32

//go:noescape
func dotQ3_KQ8_KAVX512(nb int, w, a *byte) float32

// readSumAVX2 only reads n bytes (a multiple of 128) and returns a checksum:
// BenchmarkArchReadBW's read-bandwidth ceiling.
//
//go:noescape
func readSumAVX2(n int, p *byte) uint64

//go:noescape
func dotQ4_1Q8_1AVX512(nb int, w, a *byte) float32

//go:noescape
func dotQ5_0Q8_0AVX512(nb int, w, a *byte) float32

//go:noescape
func dotQ5_1Q8_1AVX512(nb int, w, a *byte) float32

//go:noescape
func dotBF16AVX512(n int, w, a *byte) float32

//go:noescape
func dot4Q4_0Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q8_0Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q4_0Q8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q8_0Q8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q4_0Q8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q8_0Q8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q4_0Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q8_0Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)
