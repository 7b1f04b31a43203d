package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// iqGridTypes are the grid i-quants of iq3.go and iq1.go.
var iqGridTypes = []ggml.Type{ggml.IQ3_XXS, ggml.IQ3_S, ggml.IQ1_S, ggml.IQ1_M}

// TestIQGridDotsMatchScalar: the IQ3/IQ1 SIMD dots form the scalar dot's
// exact int32 per super-block and keep its float steps, so they are
// bit-identical to it, for every activation byte (-128 included: raw
// random rows) and every quant byte. (IQ1_S takes the delta term from the
// Q8_K group sums, so its rows come from QuantizeAct.)
func TestIQGridDotsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(231, 232))
	for _, typ := range iqGridTypes {
		for _, k := range fourRowPaths() {
			if k == Scalar() || k.Dot(typ) == nil {
				continue
			}
			for _, nb := range []int{1, 2, 3, 7, 43} {
				n := 256 * nb
				for _, raw := range []bool{false, true} {
					w := randWeights(r, typ, n)
					a := encodeAct(typ, randActivations(r, n))
					if raw && typ != ggml.IQ1_S {
						for b := 0; b < nb; b++ {
							for i := 0; i < 256; i++ {
								a[b*292+4+i] = byte(r.Uint32())
							}
						}
					}
					got, want := k.Dot(typ)(n, w, a), Scalar().Dot(typ)(n, w, a)
					if math.Float32bits(got) != math.Float32bits(want) {
						t.Errorf("%s %s n=%d raw=%v: %g, scalar %g", k.Name, typ, n, raw, got, want)
					}
				}
			}
		}
	}
}
