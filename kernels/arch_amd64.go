package kernels

import (
	"github.com/klauspost/cpuid/v2"

	"github.com/memvanta/memvanta/core/ggml"
)

// archImpls returns the SIMD dispatch paths this CPU supports, best first,
// each derived from the scalar table by its row list and op edits. AVX2
// needs FMA3 and F16C too (every AVX2 CPU we target has them, but the check
// keeps a VM that masks them from faulting). The avx512 path is derived from
// avx2: it only replaces the routines where it measured faster on Zen 5 and
// keeps the AVX2 ones otherwise. The avxvnni path is avx2 with byte-product
// (VPDPBUSD) packed MatMuls, for CPUs with AVX-VNNI and no AVX-512.
func archImpls(scalar *Impl) []*Impl {
	c := &cpuid.CPU
	if !c.Supports(cpuid.AVX2, cpuid.FMA3, cpuid.F16C) {
		return nil
	}
	avx2 := derive(scalar, "avx2", avx2Rows, avx2Ops)
	out := []*Impl{avx2}
	// avxvnni (gemmvnni_amd64.go) ranks above avx2 and below avx512, so it
	// is the default only where AVX-512 is absent (Alder Lake and later).
	if c.Supports(cpuid.AVXVNNI) {
		out = append([]*Impl{derive(avx2, "avxvnni", avxvnniRows, nil)}, out...)
	}
	if c.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512VNNI) {
		out = append([]*Impl{derive(avx2, "avx512", avx512Rows, avx512Ops)}, out...)
	}
	return out
}

// avx2Rows are the AVX2+FMA routines, one row per type (archRow: dot, the
// four-activation-row dot4 for prefill and four-weight-row rows4 for
// generation's MatVec, each bit-identical to the row's dot; packed MatMul;
// encoders). Packed layouts: Q4_0 in gemm.go's 32-element one, Q8_0 in
// it too with the quants kept signed (its kernel multiplies |w| by
// sign(a, w): gemmKernelQ8PFAVX2) below batch gemmQ8I16MinBatch, as
// int16 for VPMADDWD from there (gemmq8i16_amd64.go); IQ4_NL (its codebook values + 128) in
// the nibble-split form (gemmsplit.go: a whole byte would saturate
// VPMADDUBSW); the K-quants in their own (gemmk.go; Q3_K packs into
// Q6_K's and runs its kernel, Q2_K into Q6_K's plus dmin: gemmkq2q3.go);
// IQ4_XS as int16 scale·value for VPMADDWD (gemmiq4xs_amd64.go). The
// encoders: Q8_0 activations (bit-exact with
// quantQ8_0 for finite inputs), Q8_K activations (bit-exact with quantQ8_K)
// and F16 for activations and Quantize (the
// KV cache), bit-exact with F32ToF16.
var avx2Rows = []archRow{
	{t: ggml.Q4_0, dot: dotQ4_0Q8_0AVX2, dot4: dot4Q4_0Q8_0AVX2, rows4: dotRows4Q4_0Q8_0AVX2,
		gemm: gemm32PF(8, gemmPackQ4_0AVX2, gemmKernelQ4PFAVX2), deq: deqQ4_0SIMD},
	{t: ggml.Q4_1, dot: dotQ4_1Q8_1AVX2},
	{t: ggml.Q5_0, dot: dotQ5_0Q8_0AVX2},
	{t: ggml.Q5_1, dot: dotQ5_1Q8_1AVX2},
	{t: ggml.Q8_0, dot: dotQ8_0Q8_0AVX2, dot4: dot4Q8_0Q8_0AVX2, rows4: dotRows4Q8_0Q8_0AVX2,
		gemm: gemmQ8AVX2, quantAct: quantQ8_0SIMD, deq: deqQ8_0SIMD},
	{t: ggml.Q2_K, dot: dotQ2_KQ8_KAVX2, rows4: dotRows4Q2_KQ8_KAVX2,
		gemm: gemmK(gemmQ2KBlockB, gemmQ2KKB, packQ2K, gemmKernelQ2KAVX2, gemmQ2KMinBatch)},
	{t: ggml.Q3_K, dot: dotQ3_KQ8_KAVX2, rows4: dotRows4Q3_KQ8_KAVX2,
		gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packQ3K, gemmKernelQ6KAVX2, gemmQ3KMinBatch)},
	{t: ggml.Q4_K, dot: dotQ4_KQ8_KAVX2, rows4: dotRows4Q4_KQ8_KAVX2,
		gemm: gemmK(gemmQ4KBlockB, gemmQ4KKB, packQ4K, gemmKernelQ4KAVX2, gemmQ4KMinBatch)},
	{t: ggml.Q5_K, dot: dotQ5_KQ8_KAVX2, rows4: dotRows4Q5_KQ8_KAVX2,
		gemm: gemmK(gemmQ4KBlockB, gemmQ4KKB, packQ5K, gemmKernelQ5KAVX2, gemmQ5KMinBatch)},
	{t: ggml.Q6_K, dot: dotQ6_KQ8_KAVX2, rows4: dotRows4Q6_KQ8_KAVX2,
		gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packQ6K, gemmKernelQ6KAVX2, gemmQ6KMinBatch)},
	{t: ggml.IQ4_NL, dot: dotIQ4_NLQ8_0AVX2, rows4: dotRows4IQ4_NLQ8_0AVX2,
		gemm: gemmSplit(128, gemmPackIQ4_NLSplitAVX2, gemmKernelSplitAVX2)},
	{t: ggml.IQ4_XS, dot: dotIQ4_XSQ8_KAVX2, rows4: dotRows4IQ4_XSQ8_KAVX2,
		gemm: newGemmIQ4XS16},
	{t: ggml.MXFP4, dot: dotMXFP4Q8_0AVX2, rows4: dotRows4MXFP4Q8_0AVX2,
		gemm: gemm32PF(0, gemmPackMXFP4AVX2, gemmKernelQ8PFAVX2)},
	{t: ggml.TQ2_0, dot: dotTQ2_0Q8_KAVX2, rows4: dotRows4TQ2_0Q8_KAVX2},
	{t: ggml.TQ1_0, dot: dotTQ1_0Q8_KAVX2, rows4: dotRows4TQ1_0Q8_KAVX2},
	{t: ggml.IQ3_XXS, dot: dotIQ3_XXSQ8_KAVX2, rows4: dotRows4IQ3_XXSQ8_KAVX2,
		gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packIQ3_XXS, gemmKernelQ6KAVX2, gemmIQMinBatch)},
	{t: ggml.IQ3_S, dot: dotIQ3_SQ8_KAVX2, rows4: dotRows4IQ3_SQ8_KAVX2,
		gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packIQ3_S, gemmKernelQ6KAVX2, gemmIQMinBatch)},
	{t: ggml.IQ1_S, dot: dotIQ1_SQ8_KAVX2, rows4: dotRows4IQ1_SQ8_KAVX2,
		gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packIQ1_S, gemmKernelQ6KAVX2, gemmIQMinBatch)},
	{t: ggml.IQ1_M, dot: dotIQ1_MQ8_KAVX2, rows4: dotRows4IQ1_MQ8_KAVX2,
		gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packIQ1_M, gemmKernelQ6KAVX2, gemmIQMinBatch)},
	{t: ggml.IQ2_XXS, dot: dotIQ2_XXSQ8_KAVX2, rows4: dotRows4IQ2_XXSQ8_KAVX2, gemm: newGemmIQ2I16}, // iq2*_amd64.go
	{t: ggml.IQ2_XS, dot: dotIQ2_XSQ8_KAVX2, rows4: dotRows4IQ2_XSQ8_KAVX2, gemm: newGemmIQ2I16},
	{t: ggml.IQ2_S, dot: dotIQ2_SQ8_KAVX2, rows4: dotRows4IQ2_SQ8_KAVX2, gemm: newGemmIQ2I16},
	{t: ggml.Q8_K, quantAct: quantQ8_KSIMD},
	{t: ggml.F32, dot: dotF32AVX2},
	{t: ggml.F16, dot: dotF16AVX2, quant: f16RowSIMD, quantAct: f16RowSIMD},
	{t: ggml.BF16, dot: dotBF16AVX2},
}

// avx512Rows replace avx2's rows only where AVX-512 measured faster on Zen 5
// (BenchmarkArchAVX512vsAVX2; figures in docs/benchmarks-kernels-history.md),
// so F32 stays on AVX2 (a row pair overflows L1 either way). A row with a
// dot drops avx2's dot4/rows4 for that type (derive), and derive takes a
// rows4 only together with the dot it matches (a row with rows4 and no dot
// panics). So IQ4_NL and IQ4_XS, which have no AVX-512 one-row dot, list
// the AVX2 dot with an AVX-512 four-weight-row routine bit-identical to it
// (dot_amd64.s, rows4k512_amd64.s), and no dot4.
// The K-quant four-row routines (rows4k512_amd64.s) are the AVX-512 dots'
// ZMM integer loops with the AVX2 routines' four-row finish: the AVX-512
// K-quant dots form the same exact int32 per super-block (VPDPWSSD / ZMM
// VPMADDUBSW cannot saturate or lose bits for these ranges) and finish with
// the same float instructions (KDMIN/KFINISH_MIN, KD + VFMADD231SS), so all
// are bit-identical (TestDotRows4MatchesDot). The AVX2 four-row routines
// lost to the AVX-512 dot a row at a time, hence one per K-quant. Q2_K and
// Q3_K build their quant bytes from a broadcast with per-half word shifts:
// the one-row dots' unpacking (Q2BITS_Z, Q3HB_Z) left the four-row loop
// bound by integer work.
// The packed K-quant MatMuls keep the AVX2 layouts and run AVX-512 VNNI
// kernels on them (gemmk512_amd64.go), bit-identical to the AVX2 packed
// path; IQ4_XS packs bytes for VPDPBUSD with a
// per-sub-block VPMULLD scale (gemmiq4xs8_amd64.go), bit-identical to the
// AVX2 int16 kernel. Q4_0, Q8_0 and IQ4_NL pack in gemm.go's layout (one
// kernel and activation prep, a packer per type). IQ4_NL's packer
// (gemmPackIQ4_NL) is Q4_0's nibble transpose with the nibbles looked up in
// the codebook + 128, the unsigned bytes Q8_0's packer stores as w+128, so
// its offset is Q8_0's 128 (the codebook spans -127..113: only offsets
// 127..142 make it unsigned, and the kernel's cost does not depend on
// which); its outputs equal the avx2 nibble-split MatMul's bit for bit
// (same exact block sums, same float steps: TestGemmIQ4NLAVX512MatchesAVX2).
var avx512Rows = []archRow{
	{t: ggml.Q4_0, dot: dotQ4_0Q8_0AVX512, dot4: dot4Q4_0Q8_0AVX512, rows4: dotRows4Q4_0Q8_0AVX512,
		gemm: gemm32(8, gemmPackQ4_0, gemmKernel)},
	{t: ggml.Q8_0, dot: dotQ8_0Q8_0AVX512, dot4: dot4Q8_0Q8_0AVX512, rows4: dotRows4Q8_0Q8_0AVX512,
		gemm: gemm32(128, gemmPackQ8_0, gemmKernel)},
	{t: ggml.F16, dot: dotF16AVX512},
	{t: ggml.Q4_K, dot: dotQ4_KQ8_KAVX512, rows4: dotRows4Q4_KQ8_KAVX512,
		gemm: gemmK(gemmQ4KBlockB, gemmQ4KKB, packQ4KAVX512, gemmKernelQ4KAVX512, gemmQ4KMinBatchAVX512)},
	{t: ggml.Q6_K, dot: dotQ6_KQ8_KAVX512, rows4: dotRows4Q6_KQ8_KAVX512,
		gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packQ6KAVX512, gemmKernelQ6KAVX512, gemmQ6KMinBatchAVX512)},
	{t: ggml.Q5_K, dot: dotQ5_KQ8_KAVX512, rows4: dotRows4Q5_KQ8_KAVX512,
		gemm: gemmK(gemmQ4KBlockB, gemmQ4KKB, packQ5KAVX512, gemmKernelQ4KAVX512, gemmQ5KMinBatchAVX512)},
	{t: ggml.Q2_K, dot: dotQ2_KQ8_KAVX512, rows4: dotRows4Q2_KQ8_KAVX512,
		gemm: gemmK(gemmQ2KBlockB, gemmQ2KKB, packQ2KAVX512, gemmKernelQ2KAVX512, gemmQ2KMinBatchAVX512)},
	{t: ggml.Q3_K, dot: dotQ3_KQ8_KAVX512, rows4: dotRows4Q3_KQ8_KAVX512,
		gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packQ3KAVX512, gemmKernelQ6KAVX512, gemmQ3KMinBatchAVX512)},
	{t: ggml.Q4_1, dot: dotQ4_1Q8_1AVX512},
	{t: ggml.Q5_0, dot: dotQ5_0Q8_0AVX512},
	{t: ggml.Q5_1, dot: dotQ5_1Q8_1AVX512},
	{t: ggml.BF16, dot: dotBF16AVX512},
	{t: ggml.IQ4_XS, dot: dotIQ4_XSQ8_KAVX2, rows4: dotRows4IQ4_XSQ8_KAVX512,
		gemm: newGemmIQ4XS8AVX512},
	{t: ggml.IQ4_NL, dot: dotIQ4_NLQ8_0AVX2, rows4: dotRows4IQ4_NLQ8_0AVX512,
		gemm: gemm32(128, gemmPackIQ4_NL, gemmKernel)},
	{t: ggml.MXFP4, dot: dotMXFP4Q8_0AVX2, rows4: dotRows4MXFP4Q8_0AVX512,
		gemm: gemm32(128, gemmPackMXFP4AVX512, gemmKernel)},
	{t: ggml.TQ1_0, dot: dotTQ1_0Q8_KAVX512, rows4: dotRows4TQ1_0Q8_KAVX512},
	// The grid i-quants' packed MatMul: Q6_K's layout (gemmiq.go) and
	// AVX-512 kernel; their dots stay AVX2's.
	{t: ggml.IQ3_XXS, gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packIQ3_XXS, gemmKernelQ6KAVX512, gemmIQMinBatchAVX512)},
	{t: ggml.IQ3_S, gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packIQ3_S, gemmKernelQ6KAVX512, gemmIQMinBatchAVX512)},
	{t: ggml.IQ1_S, gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packIQ1_S, gemmKernelQ6KAVX512, gemmIQMinBatchAVX512)},
	{t: ggml.IQ1_M, gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packIQ1_M, gemmKernelQ6KAVX512, gemmIQMinBatchAVX512)},
	{t: ggml.IQ2_XXS, gemm: newGemmIQ2XXS8AVX512}, // iq2gemm_amd64.go; IQ2_XS/IQ2_S keep avx2's
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

// dotRows4IQ4_NLQ8_0AVX512 is dotRows4Q4_0Q8_0AVX512's loop with the
// nibbles looked up in IQ4_NL's codebook, finished as dotIQ4_NLQ8_0AVX2
// (dot_amd64.s), bit-identical to it and to dotRows4IQ4_NLQ8_0AVX2.
//
//go:noescape
func dotRows4IQ4_NLQ8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q4_0Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q8_0Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)
