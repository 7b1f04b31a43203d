package kernels

// Shared test harness: seeded random rows of every executed type, and the
// differential test every dispatch path in Available() passes automatically.
// SIMD paths (H3's *_amd64.go / *_arm64.go) need no test code of their own to
// be covered: appearing in archImpls is enough.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// u is the unit roundoff of float32 (half an ulp of 1).
const u = 1.0 / (1 << 24)

// scaleFields lists the byte offsets of each block's fp16 scale/min fields,
// so random blocks can get sane scales (random bits would give Inf/NaN).
var scaleFields = map[ggml.Type][]int{
	ggml.Q4_0: {0}, ggml.Q4_1: {0, 2}, ggml.Q5_0: {0}, ggml.Q5_1: {0, 2}, ggml.Q8_0: {0},
	ggml.Q2_K: {80, 82}, ggml.Q3_K: {108}, ggml.Q4_K: {0, 2}, ggml.Q5_K: {0, 2}, ggml.Q6_K: {208},
	ggml.IQ4_NL: {0}, ggml.IQ4_XS: {0},
	ggml.TQ1_0: {52}, ggml.TQ2_0: {64},
}

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

// randWeights returns a random weight row of n elements of t: random quant
// bits, scales in [2^-12, 2^-4] (signs random where ggml allows negative d),
// and for float types values ~ N(0, 1).
func randWeights(r *rand.Rand, t ggml.Type, n int) []byte {
	sz, err := RowSize(t, n)
	if err != nil {
		panic(err)
	}
	w := make([]byte, sz)
	if !t.Quantized() {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		portableRows[t].quant(x, w)
		return w
	}
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	bs := t.TypeSize()
	for b := 0; b < len(w); b += bs {
		for k, off := range scaleFields[t] {
			v := float32(math.Ldexp(1+r.Float64(), -4-r.IntN(9)))
			if k == 0 && r.IntN(4) == 0 {
				v = -v // d may be negative (Q4_0's d = max/-8)
			}
			putF16(w[b+off:], v)
		}
		for _, off := range e8m0Fields[t] {
			w[b+off] = byte(116 + r.IntN(9)) // 2^(e-128) in [2^-12, 2^-4]
		}
	}
	return w
}

// randActivations returns n activation values with occasional outliers, as
// real hidden states have, so blocks exercise different scales.
func randActivations(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		if r.IntN(97) == 0 {
			x[i] *= 20
		}
	}
	return x
}

func encodeAct(t ggml.Type, x []float32) []byte {
	at := ActType(t)
	sz, err := RowSize(at, len(x))
	if err != nil {
		panic(err)
	}
	a := make([]byte, sz)
	if err := QuantizeAct(at, x, a); err != nil {
		panic(err)
	}
	return a
}

func dequant(t ggml.Type, b []byte, n int) []float32 {
	y := make([]float32, n)
	if err := Dequantize(t, b, y); err != nil {
		panic(err)
	}
	return y
}

// exactDot is Σ w_i·a_i over the dequantized rows in float64. Products of
// two f32 values are exact in float64 and n ≤ 2^20, so its own error
// (≤ n·2^-53 relative to Σ|w_i a_i|) is negligible next to f32 tolerances.
// It also returns mag = Σ|a_i|·(|scale part_i| + |min part_i|), the size of
// the terms a dot routine actually adds (for types with a min, the scale and
// min parts are summed separately and may cancel).
func exactDot(t ggml.Type, n int, w, a []byte) (exact, mag float64) {
	wd := dequant(t, w, n)
	ad := dequant(ActType(t), a, n)
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
	sp, mp := dequant(t, scalePart, n), dequant(t, minPart, n)
	for i := range ad {
		mag += math.Abs(float64(ad[i])) * (math.Abs(float64(sp[i])) + math.Abs(float64(mp[i])))
	}
	if ActType(t) == ggml.Q8_1 {
		// Q8_1 carries s = fp16(d·Σq) and the format defines the min term as
		// m·s, so s's fp16 rounding (up to 2^-11 relative) is part of the
		// exact value, as in ggml.
		exact = 0
		for i := range ad {
			exact += float64(sp[i]) * float64(ad[i])
		}
		for b := 0; b*32 < n; b++ {
			ms := float64(mp[32*b]) * float64(getF16(a[36*b+2:]))
			exact += ms
			mag += math.Abs(ms)
		}
	}
	return exact, mag
}

// Error model for a dot routine (written beside the test as the issue asks).
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
// group before a log2(lanes) reduction: m ≤ n/16 + 16. mag (see exactDot)
// bounds Σ|terms| because each term is a sum over its group of
// |a_i|·(|scale part_i| + |min part_i|).
//
// Float types (F32, F16, BF16): the scalar path sums exact float64 products
// (error ≤ u from the final rounding). A SIMD path accumulating f32 in L ≥ 4
// lanes (FMA or not) has m ≤ n/4 + 16 and one more u per product for F32
// without FMA: |dot − exact| ≤ (n/4 + 18)·u·Σ|w_i a_i|.
func dotTolerance(t ggml.Type, n int, simd bool) float64 {
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

// testLengths returns row lengths covering one block, odd block counts, and
// the model shapes (4096, 11008) for type t.
func testLengths(t ggml.Type) []int {
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

func checkDot(tb testing.TB, name string, t ggml.Type, n int, got float32, w, a []byte, simd bool) {
	tb.Helper()
	exact, mag := exactDot(t, n, w, a)
	tol := dotTolerance(t, n, simd) * u * mag
	if d := math.Abs(float64(got) - exact); !(d <= tol) {
		tb.Errorf("%s %s n=%d: dot=%g exact=%g |diff|=%g > tol %g (mag %g)", name, t, n, got, exact, d, tol, mag)
	}
}

// TestScalarDotMatchesDequant checks every scalar dot against the float64
// dot of the dequantized rows: this ties the dot's block decoding to
// Dequantize's, which is in turn checked against the layout tests.
func TestScalarDotMatchesDequant(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	k := Scalar()
	for _, typ := range Executable() {
		for _, n := range testLengths(typ) {
			for rep := 0; rep < 3; rep++ {
				w := randWeights(r, typ, n)
				a := encodeAct(typ, randActivations(r, n))
				checkDot(t, k.Name, typ, n, k.Dot(typ)(n, w, a), w, a, false)
			}
		}
	}
}

// TestDotPathsAgree is the differential test for every dispatch path: each
// path's dot must be within the derived tolerance of the exact value (and so
// of the scalar result), for every type and length.
func TestDotPathsAgree(t *testing.T) {
	scalar := Scalar()
	for _, k := range Available() {
		if k == scalar {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(21, 22))
			for _, typ := range Executable() {
				f := k.Dot(typ)
				if f == nil {
					t.Errorf("%s has no dot for %s", k.Name, typ)
					continue
				}
				for _, n := range testLengths(typ) {
					for rep := 0; rep < 4; rep++ {
						w := randWeights(r, typ, n)
						a := encodeAct(typ, randActivations(r, n))
						got := f(n, w, a)
						checkDot(t, k.Name, typ, n, got, w, a, true)
						want := scalar.Dot(typ)(n, w, a)
						_, mag := exactDot(typ, n, w, a)
						tol := (dotTolerance(typ, n, true) + dotTolerance(typ, n, false)) * u * mag
						if d := math.Abs(float64(got - want)); !(d <= tol) {
							t.Errorf("%s %s n=%d: %g vs scalar %g, diff %g > %g", k.Name, typ, n, got, want, d, tol)
						}
					}
				}
			}
		})
	}
}

// TestDequantPathsBitExact: dequantization must be identical on every path.
func TestDequantPathsBitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, k := range Available() {
		for _, typ := range append(Executable(), ggml.Q8_K, ggml.Q8_1) {
			for _, n := range testLengths(typ) {
				var w []byte
				switch typ {
				case ggml.Q8_K, ggml.Q8_1:
					w = encodeAct(map[ggml.Type]ggml.Type{ggml.Q8_K: ggml.Q4_K, ggml.Q8_1: ggml.Q4_1}[typ], randActivations(r, n))
				default:
					w = randWeights(r, typ, n)
				}
				want := dequant(typ, w, n)
				got := make([]float32, n)
				if err := k.Dequantize(typ, w, got); err != nil {
					t.Fatal(err)
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s dequant %s n=%d: element %d = %g, portable %g", k.Name, typ, n, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestDotZeroLength: a zero-length row is a valid empty sum on every path.
func TestDotZeroLength(t *testing.T) {
	for _, k := range Available() {
		for _, typ := range Executable() {
			if got := k.Dot(typ)(0, nil, nil); got != 0 {
				t.Errorf("%s %s: empty dot = %g", k.Name, typ, got)
			}
		}
	}
}

var _ = fmt.Sprint
