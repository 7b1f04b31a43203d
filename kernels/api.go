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
//
// Dispatch is data, built once per path (traits.go). A path is a table with
// one row per type — activation encoding (ActType), dot with the four-row
// routines written against it (dot4 for prefill, rows4 for MatVec), packed
// MatMul, dequantizer, encoders — and a table of op functions (AddScaled,
// ScoresF16, AccumF16, Softmax, SiLUMul, RoundF16). The scalar path is
// portableRows plus the package functions; arch_amd64.go and arch_arm64.go
// derive the SIMD paths from it with one archRow per accelerated type
// (replacing a row's dot drops the four-row routines of the base's dot
// unless the row brings its own) and named op-field edits. Giving a type a
// SIMD routine is one row edit; adding a type is one portableRows entry.
// Model code reaches every routine through the selected Impl; Executes
// says whether a weight type can run at all.
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

// Impl is one dispatch path: a name, a table with one row of routines per
// weight/activation type (traits.go: dot with its four-row companions,
// packed MatMul, dequantization, encoders) and the f32/attention ops as
// function fields (ops.go), all chosen once when the path is built. Types
// without a SIMD routine keep the scalar one, so every Impl answers for
// every executed type.
type Impl struct {
	Name  string // "scalar", "avx2", "avx512", "neon"
	types [numTypes]routines
	ops   opsTable
}

// Executes reports whether every path can multiply by weights of type t
// (MatVec, MatMul and Dequantize all support it). Model loading asks this
// to refuse a file before reading it.
func Executes(t ggml.Type) bool {
	return uint64(t) < numTypes && portableRows[t].dots.dot != nil
}

// Dot returns the dot routine for weight type t, or nil if t is not executable.
func (k *Impl) Dot(t ggml.Type) DotFunc {
	if r := k.row(t); r != nil {
		return r.dots.dot
	}
	return nil
}

// Dot4 returns the four-row routine for weight type t, or nil if this path
// has none (callers then use Dot per row).
func (k *Impl) Dot4(t ggml.Type) Dot4Func {
	if r := k.row(t); r != nil {
		return r.dots.dot4
	}
	return nil
}

// DotRows4 returns the four-weight-row routine for weight type t, or nil if
// this path has none (callers then use Dot per row).
func (k *Impl) DotRows4(t ggml.Type) DotRows4Func {
	if r := k.row(t); r != nil {
		return r.dots.rows4
	}
	return nil
}

// Dequantize decodes len(dst) elements of type t from src, which must be
// exactly that row's bytes, with this path's decoder (bit-exact with the
// package Dequantize on every path).
func (k *Impl) Dequantize(t ggml.Type, src []byte, dst []float32) error {
	return dequantize(&k.types, t, src, dst)
}
