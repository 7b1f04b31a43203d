// Package kernels computes everything the model graph needs over quantized
// weights: dequantization, activation quantization, dot products, matrix ×
// vector/matrix, and the f32 vector ops. The portable scalar half is pure Go
// and builds for GOOS=wasip1; native SIMD lives in *_amd64.s / *_arm64.s files
// and is selected once at start-up (see Select).
//
// A matrix × vector product is: QuantizeAct(ActType(t), x, a) once per input
// row, then k.MatVec(pool, t, rows, cols, w, a, y) with k = Select(). Every
// integer part of a dot product is exact and laid out as in ggml, so results
// track llama.cpp to f32 summation order; block formats, quantization and
// dequantization are bit-exact with ggml (testdata/golden holds vectors made
// by llama.cpp's own libggml). The CLI should call Selected once at start-up:
// it returns an error for a bad MEMVANTA_KERNELS value, and the chosen
// Impl's Name is what bench output reports.
package kernels

import "github.com/memvanta/memvanta/core/ggml"

// DotFunc returns the dot product of n elements of one weight row w (of the
// table's weight type) with one activation row a already encoded in
// ActType(weight type). n is a multiple of the weight type's block size;
// len(w) and len(a) are exactly the row sizes for n elements.
type DotFunc func(n int, w, a []byte) float32

// Dot4Func computes y[j] = w·a_j for one weight row w and the four
// activation rows a_j = a[j*stride : j*stride+rowsize], j < 4, unpacking each
// weight block once for all four (prefill reuses a weight row across the
// batch, and unpacking dominated). Each y[j] is bit-identical to the same
// path's DotFunc on (w, a_j): same per-block integer sums and the same float
// operations in the same order, so MatMul results do not depend on whether
// it was used (paths with packed MatMul routines use those instead for
// batches of gemmMinBatch or more; they are not bit-identical to Dot, see
// MatMul).
type Dot4Func func(n int, w, a []byte, stride int, y *[4]float32)

// DotRows4Func computes y[j] = w_j·a for the four weight rows w_j =
// w[j*stride : j*stride+rowsize], j < 4, and one activation row a, loading
// and converting each activation block once for all four (generation is one
// MatVec per weight matrix and was compute-bound in the one-row dot). Each
// y[j] is bit-identical to the same path's DotFunc on (w_j, a), so MatVec
// results do not depend on whether it was used.
type DotRows4Func func(n int, w, a []byte, stride int, y *[4]float32)

// Impl is one dispatch path: a name and a dot product per weight type.
// Types without a SIMD routine fall back to the scalar one, so every Impl
// answers for every executed type.
type Impl struct {
	Name string // "scalar", "avx2", "avx512", "neon"
	dot  [64]DotFunc
	// dot4 optionally adds a four-activation-row routine per type (nil: MatMul
	// calls dot once per activation row). An entry is only valid together
	// with the dot entry it was written against, so arch files that replace
	// dot[t] also reset dot4[t].
	dot4 [64]Dot4Func
	// dotRows4 optionally adds a four-weight-row routine per type (nil:
	// MatVec calls dot once per weight row); like dot4 it is only valid
	// together with the dot entry it was written against.
	dotRows4 [64]DotRows4Func
	// deq optionally overrides dequantization per type (nil: the portable
	// routine). Every override must be bit-exact with the portable one; the
	// differential test checks that for every Available path.
	deq [64]func(src []byte, dst []float32)
	// gemm optionally adds packed matrix × matrix routines per type (nil:
	// MatMul uses dot4/dot). They are not bit-identical to dot: see gemm.go.
	gemm [64]*gemmRoutines
}

// Dot returns the dot routine for weight type t, or nil if t is not executable.
func (k *Impl) Dot(t ggml.Type) DotFunc {
	if int(t) >= len(k.dot) {
		return nil
	}
	return k.dot[t]
}

// Dot4 returns the four-row routine for weight type t, or nil if this path
// has none (callers then use Dot per row).
func (k *Impl) Dot4(t ggml.Type) Dot4Func {
	if int(t) >= len(k.dot4) {
		return nil
	}
	return k.dot4[t]
}

// DotRows4 returns the four-weight-row routine for weight type t, or nil if
// this path has none (callers then use Dot per row).
func (k *Impl) DotRows4(t ggml.Type) DotRows4Func {
	if int(t) >= len(k.dotRows4) {
		return nil
	}
	return k.dotRows4[t]
}

// Dequantize is the package Dequantize through this path's override, if any.
func (k *Impl) Dequantize(t ggml.Type, src []byte, dst []float32) error {
	if int(t) < len(k.deq) && k.deq[t] != nil {
		if err := checkRow("dequantize", t, len(dst), len(src)); err != nil {
			return err
		}
		k.deq[t](src, dst)
		return nil
	}
	return Dequantize(t, src, dst)
}
