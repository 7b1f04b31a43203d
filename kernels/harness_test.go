package kernels

// The differential test every dispatch path in Available() passes
// automatically, so a SIMD path (*_amd64.go / *_arm64.go) needs no test code
// of its own to be covered: appearing in archImpls is enough. The random
// rows, the exact reference, the error model and its tolerances live in
// internal/kerneltest, shared with wasmhost's wasm-vs-native test.

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/internal/kerneltest"
)

// kt is the shared harness (internal/kerneltest) bound to this package; the
// functions below keep the short names the package's tests use.
var kt = kerneltest.API{
	RowSize: RowSize, Quantize: Quantize, QuantizeAct: QuantizeAct, Dequantize: Dequantize,
	ActType: ActType, F32ToF16: F32ToF16, F16ToF32: F16ToF32,
}

// u is the unit roundoff of float32 (half an ulp of 1).
const u = kerneltest.U

func randWeights(r *rand.Rand, t ggml.Type, n int) []byte { return kt.RandWeights(r, t, n) }

func scaleFields(t ggml.Type) []int { return kerneltest.ScaleFields(t) }

func randActivations(r *rand.Rand, n int) []float32 { return kerneltest.RandActivations(r, n) }

func encodeAct(t ggml.Type, x []float32) []byte { return kt.EncodeAct(t, x) }

func dequant(t ggml.Type, b []byte, n int) []float32 { return kt.Dequant(t, b, n) }

func exactDot(t ggml.Type, n int, w, a []byte) (exact, mag float64) { return kt.ExactDot(t, n, w, a) }

// dotTolerance is the error model's bound (kerneltest.DotTolerance).
func dotTolerance(t ggml.Type, n int, simd bool) float64 { return kerneltest.DotTolerance(t, n, simd) }

func testLengths(t ggml.Type) []int { return kerneltest.TestLengths(t) }

func checkDot(tb testing.TB, name string, t ggml.Type, n int, got float32, w, a []byte, simd bool) {
	tb.Helper()
	kt.CheckDot(tb, name, t, n, got, w, a, simd)
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
						tol := kerneltest.PathsTolerance(typ, n) * u * mag
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
