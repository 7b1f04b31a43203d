// Package kerneltest holds the kernels' differential test harness: seeded
// random rows of every executed type, the float64 reference dot with the
// magnitude of the terms a dot routine adds, the error model's tolerances,
// and the comparisons. The kernels tests (each dispatch path against the
// exact value and the scalar path) and the wasmhost tests (the scalar code
// compiled to wasm against every native path) both use it, so the inputs and
// the bounds they check are derived once.
//
// The package cannot import kernels: the kernels package's own tests would
// then form an import cycle. Callers pass the kernels functions it needs as
// an API value instead.
package kerneltest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// U is the unit roundoff of float32 (half an ulp of 1).
const U = 1.0 / (1 << 24)

// API is the part of package kernels the helpers call, with kernels'
// signatures (kernels.RowSize, kernels.Quantize, ...).
type API struct {
	RowSize     func(t ggml.Type, n int) (int, error)
	Quantize    func(t ggml.Type, x []float32, dst []byte) error
	QuantizeAct func(t ggml.Type, x []float32, dst []byte) error
	Dequantize  func(t ggml.Type, src []byte, dst []float32) error
	ActType     func(w ggml.Type) ggml.Type
	F32ToF16    func(f float32) uint16
	F16ToF32    func(h uint16) float32
}

// scaleFields lists the byte offsets of each block's fp16 scale/min fields,
// so random blocks can get sane scales (random bits would give Inf/NaN).
var scaleFields = map[ggml.Type][]int{
	ggml.Q4_0: {0}, ggml.Q4_1: {0, 2}, ggml.Q5_0: {0}, ggml.Q5_1: {0, 2}, ggml.Q8_0: {0},
	ggml.Q2_K: {80, 82}, ggml.Q3_K: {108}, ggml.Q4_K: {0, 2}, ggml.Q5_K: {0, 2}, ggml.Q6_K: {208},
	ggml.IQ4_NL: {0}, ggml.IQ4_XS: {0},
	ggml.TQ1_0: {52}, ggml.TQ2_0: {64},
}

// ScaleFields returns the byte offsets of the fp16 scale (and min) fields in
// each block of t, for tests that set them to chosen values.
func ScaleFields(t ggml.Type) []int { return append([]int(nil), scaleFields[t]...) }

// minZero lists, for types with an additive min, the byte ranges that zero
// the quants (leaving only the min part) and the min scale (leaving only the
// scale part). Used to bound the magnitude of the terms a dot product sums.
var minZero = map[ggml.Type]struct{ quants, mins [2]int }{
	ggml.Q4_1: {[2]int{4, 20}, [2]int{2, 4}},
	ggml.Q5_1: {[2]int{4, 24}, [2]int{2, 4}},
	ggml.Q2_K: {[2]int{16, 80}, [2]int{82, 84}},
	ggml.Q4_K: {[2]int{16, 144}, [2]int{2, 4}},
	ggml.Q5_K: {[2]int{16, 176}, [2]int{2, 4}},
}

// Size is k.RowSize for a shape the caller knows is valid.
func (k API) Size(t ggml.Type, n int) int {
	s, err := k.RowSize(t, n)
	if err != nil {
		panic(err)
	}
	return s
}

// RandWeights returns a random weight row of n elements of t: random quant
// bits, scales in [2^-12, 2^-4] (signs random where ggml allows negative d),
// and for float types values ~ N(0, 1).
func (k API) RandWeights(r *rand.Rand, t ggml.Type, n int) []byte {
	w := make([]byte, k.Size(t, n))
	if !t.Quantized() {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		if err := k.Quantize(t, x, w); err != nil {
			panic(err)
		}
		return w
	}
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	bs := t.TypeSize()
	for b := 0; b < len(w); b += bs {
		for j, off := range scaleFields[t] {
			v := float32(math.Ldexp(1+r.Float64(), -4-r.IntN(9)))
			if j == 0 && r.IntN(4) == 0 {
				v = -v // d may be negative (Q4_0's d = max/-8)
			}
			binary.LittleEndian.PutUint16(w[b+off:], k.F32ToF16(v))
		}
		for _, off := range E8M0Fields[t] {
			w[b+off] = byte(116 + r.IntN(9)) // 2^(e-128) in [2^-12, 2^-4]
		}
	}
	return w
}

// E8M0Fields lists, per block type, the offsets of E8M0 exponent bytes
// (2^(e-128) scales), which random rows set to realistic exponents as they
// set fp16 scales: a random byte would reach 2^127 and turn the dots into
// Inf.
var E8M0Fields = map[ggml.Type][]int{
	ggml.MXFP4: {0},
}

// RandActivations returns n activation values ~ N(0, 1) with occasional ×20
// outliers, as real hidden states have, so blocks exercise different scales.
func RandActivations(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		if r.IntN(97) == 0 {
			x[i] *= 20
		}
	}
	return x
}

// EncodeAct encodes x as the activation row a dot with weights of type t
// takes (t may also be an activation type itself).
func (k API) EncodeAct(t ggml.Type, x []float32) []byte {
	at := k.ActType(t)
	if at.TypeSize() == 0 { // kernels.NoType: t is an activation type
		at = t
	}
	a := make([]byte, k.Size(at, len(x)))
	if err := k.QuantizeAct(t, x, a); err != nil {
		panic(err)
	}
	return a
}

// Dequant is k.Dequantize of n elements into a new slice.
func (k API) Dequant(t ggml.Type, b []byte, n int) []float32 {
	y := make([]float32, n)
	if err := k.Dequantize(t, b, y); err != nil {
		panic(err)
	}
	return y
}

// ExactDot is Σ w_i·a_i over the dequantized rows in float64. Products of
// two f32 values are exact in float64 and n ≤ 2^20, so its own error
// (≤ n·2^-53 relative to Σ|w_i a_i|) is negligible next to f32 tolerances.
// It also returns mag = Σ|a_i|·(|scale part_i| + |min part_i|), the size of
// the terms a dot routine actually adds (for types with a min, the scale and
// min parts are summed separately and may cancel).
func (k API) ExactDot(t ggml.Type, n int, w, a []byte) (exact, mag float64) {
	wd := k.Dequant(t, w, n)
	ad := k.Dequant(k.ActType(t), a, n)
	for i := range wd {
		exact += float64(wd[i]) * float64(ad[i])
	}
	mz, ok := minZero[t]
	if !ok {
		for i := range wd {
			mag += math.Abs(float64(wd[i]) * float64(ad[i]))
		}
		return exact, mag
	}
	scalePart := append([]byte(nil), w...)
	minPart := append([]byte(nil), w...)
	bs := t.TypeSize()
	for b := 0; b < len(w); b += bs {
		clear(scalePart[b+mz.mins[0] : b+mz.mins[1]])
		clear(minPart[b+mz.quants[0] : b+mz.quants[1]])
	}
	sp, mp := k.Dequant(t, scalePart, n), k.Dequant(t, minPart, n)
	for i := range ad {
		mag += math.Abs(float64(ad[i])) * (math.Abs(float64(sp[i])) + math.Abs(float64(mp[i])))
	}
	if k.ActType(t) == ggml.Q8_1 {
		// Q8_1 carries s = fp16(d·Σq) and the format defines the min term as
		// m·s, so s's fp16 rounding (up to 2^-11 relative) is part of the
		// exact value, as in ggml.
		exact = 0
		for i := range ad {
			exact += float64(sp[i]) * float64(ad[i])
		}
		for b := 0; b*32 < n; b++ {
			ms := float64(mp[32*b]) * float64(k.F16ToF32(binary.LittleEndian.Uint16(a[36*b+2:])))
			exact += ms
			mag += math.Abs(ms)
		}
	}
	return exact, mag
}

// Error model for a dot routine.
//
// Quantized types: inside a group of at least 16 elements every path sums
// quant products in integers, which is exact. Floating point enters only when
// group sums are scaled and accumulated: each scaled term carries a few
// roundings (f16 scales are exact in f32; d_w·d_a, int→f32 of sums beyond
// 2^24, the multiply, and the min subtraction: at most 4u relative), and a
// recursive or tree summation of m terms adds at most (m-1)·u·Σ|terms|
// (Higham, Accuracy and Stability, §4.2). The dequantized reference itself
// carries up to 3u per element (scale×sub-scale, ×quant, −min). So
//
//	|dot − exact| ≤ (m + 8)·u·mag,  m = number of f32 additions in the
//	longest accumulation chain.
//
// The scalar path adds one term per block (two with a min): m ≤ 2·blocks.
// A SIMD path may keep one accumulator per lane and add once per ≥16-element
// group before a log2(lanes) reduction: m ≤ n/16 + 16. mag (see ExactDot)
// bounds Σ|terms| because each term is a sum over its group of
// |a_i|·(|scale part_i| + |min part_i|).
//
// Float types (F32, F16, BF16): the scalar path sums exact float64 products
// (error ≤ u from the final rounding). A SIMD path accumulating f32 in L ≥ 4
// lanes (FMA or not) has m ≤ n/4 + 16 and one more u per product for F32
// without FMA: |dot − exact| ≤ (n/4 + 18)·u·Σ|w_i a_i|.

// DotTolerance is the error model's bound on |dot − exact| in units of
// U·mag, for the scalar path or (simd) any other.
func DotTolerance(t ggml.Type, n int, simd bool) float64 {
	if !t.Quantized() {
		if !simd {
			return 2
		}
		return float64(n)/4 + 18
	}
	m := 2 * (n / t.BlockSize())
	if simd {
		m = n/16 + 16
	}
	return float64(m) + 8
}

// PathsTolerance bounds, in units of U·mag, the difference between two paths'
// dots: each is within its own bound of the exact value.
func PathsTolerance(t ggml.Type, n int) float64 {
	return DotTolerance(t, n, false) + DotTolerance(t, n, true)
}

// TestLengths returns row lengths covering one block, odd block counts, and
// the model shapes (4096, 11008) for type t; for float types also lengths
// that are not a multiple of any vector width.
func TestLengths(t ggml.Type) []int {
	bs := t.BlockSize()
	if bs == 1 {
		return []int{1, 3, 8, 17, 31, 32, 33, 64, 255, 4096, 11008}
	}
	out := []int{bs, 3 * bs, 7 * bs}
	for _, n := range []int{4096, 11008} {
		if n%bs == 0 {
			out = append(out, n)
		}
	}
	return out
}

// CheckDot reports through tb when got, a dot of the rows w and a computed
// by the path called name, is not within DotTolerance of the exact value.
func (k API) CheckDot(tb testing.TB, name string, t ggml.Type, n int, got float32, w, a []byte, simd bool) {
	tb.Helper()
	if msg := k.DotError(t, n, got, w, a, simd); msg != "" {
		tb.Errorf("%s %s n=%d: %s", name, t, n, msg)
	}
}

// DotError is CheckDot's test: "" or the values and the bound it broke.
func (k API) DotError(t ggml.Type, n int, got float32, w, a []byte, simd bool) string {
	exact, mag := k.ExactDot(t, n, w, a)
	tol := DotTolerance(t, n, simd) * U * mag
	if d := math.Abs(float64(got) - exact); !(d <= tol) {
		return fmt.Sprintf("dot=%g exact=%g |diff|=%g > tol %g (mag %g)", got, exact, d, tol, mag)
	}
	return ""
}

// BitExact returns "" or where got first differs from want.
func BitExact(got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at byte %d: %#02x, want %#02x (bound: bit-exact)", i, got[i], want[i])
		}
	}
	return ""
}

// F32Within returns "" or the first index where |got−want| exceeds both
// abs(i) and ulps f32 ulps of want (equal bits, NaNs included, always pass).
func F32Within(got, want []float32, abs func(i int) float64, ulps int) string {
	if len(got) != len(want) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) == math.Float32bits(want[i]) {
			continue
		}
		d := math.Abs(float64(got[i]) - float64(want[i]))
		ulp := math.Abs(float64(math.Nextafter32(want[i], float32(math.Inf(1))) - want[i]))
		if d <= abs(i) || d <= float64(ulps)*ulp {
			continue
		}
		return fmt.Sprintf("first difference at index %d: %g, want %g, |diff| %g > bound %g (or %d ulp)", i, got[i], want[i], d, abs(i), ulps)
	}
	return ""
}
