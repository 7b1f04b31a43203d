package kerneltest_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/internal/kerneltest"
	"github.com/memvanta/memvanta/kernels"
)

var kt = kerneltest.API{
	RowSize: kernels.RowSize, Quantize: kernels.Quantize, QuantizeAct: kernels.QuantizeAct,
	Dequantize: kernels.Dequantize, ActType: kernels.ActType,
	F32ToF16: kernels.F32ToF16, F16ToF32: kernels.F16ToF32,
}

// The harness's checks must be able to fail: a dot off by 1e-4 of the terms'
// magnitude is reported for every type, the exact value and the scalar dot
// pass, and the byte and float comparisons report a one-element difference.
func TestChecksCatchDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range kernels.Executable() {
		n := kerneltest.TestLengths(typ)[1]
		w := kt.RandWeights(r, typ, n)
		a := kt.EncodeAct(typ, kerneltest.RandActivations(r, n))
		exact, mag := kt.ExactDot(typ, n, w, a)
		if !(mag > 0) {
			t.Fatalf("%s: mag %g, want > 0", typ, mag)
		}
		if msg := kt.DotError(typ, n, float32(exact), w, a, false); msg != "" {
			t.Errorf("%s: the exact value failed: %s", typ, msg)
		}
		// 1e-4·mag is about what one dropped element of a few hundred costs;
		// the bound must not be derived from the tolerance under test.
		off := 1e-4 * mag
		if msg := kt.DotError(typ, n, float32(exact+off), w, a, true); msg == "" {
			t.Errorf("%s n=%d: a dot 1e-4·mag off passed", typ, n)
		}
		// And the kernels' own scalar dot passes (the bound is not too tight
		// for the code it was derived for).
		if msg := kt.DotError(typ, n, kernels.Scalar().Dot(typ)(n, w, a), w, a, false); msg != "" {
			t.Errorf("%s: scalar dot: %s", typ, msg)
		}
	}
	if msg := kerneltest.BitExact([]byte{1, 2}, []byte{1, 3}); msg == "" {
		t.Error("BitExact passed different bytes")
	}
	if msg := kerneltest.BitExact([]byte{1, 2}, []byte{1, 2}); msg != "" {
		t.Errorf("BitExact failed equal bytes: %s", msg)
	}
	want := []float32{1, 2, 3, float32(math.NaN())}
	got := []float32{1, 2.001, 3, want[3]}
	if msg := kerneltest.F32Within(got, want, func(int) float64 { return 1e-4 }, 0); msg == "" {
		t.Error("a difference of 1e-3 passed a bound of 1e-4")
	}
	if msg := kerneltest.F32Within(got, want, func(int) float64 { return 1e-2 }, 0); msg != "" {
		t.Errorf("a difference of 1e-3 failed a bound of 1e-2: %s", msg)
	}
	if msg := kerneltest.F32Within(got, want, func(int) float64 { return 0 }, 1<<14); msg != "" {
		t.Errorf("a difference of 1e-3 (< 2^14 ulps of 2) failed: %s", msg)
	}
}

// EncodeAct takes a weight type (mapped to its activation type) or an
// activation type itself.
func TestEncodeActTypes(t *testing.T) {
	x := kerneltest.RandActivations(rand.New(rand.NewPCG(3, 4)), 256)
	for _, c := range []struct{ in, act ggml.Type }{{ggml.Q4_K, ggml.Q8_K}, {ggml.Q8_K, ggml.Q8_K}, {ggml.Q4_1, ggml.Q8_1}, {ggml.F32, ggml.F32}} {
		if got, want := len(kt.EncodeAct(c.in, x)), kt.Size(c.act, len(x)); got != want {
			t.Errorf("EncodeAct(%s): %d bytes, want %s's %d", c.in, got, c.act, want)
		}
	}
}
