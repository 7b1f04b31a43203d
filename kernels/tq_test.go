package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// TestTQDotsMatchScalar: the TQ SIMD dots keep the scalar dot's float steps
// (one exact int32 per super-block, scaled and added in order), so with
// activations from QuantizeAct (bsums equal to the block sums) they are
// bit-identical to it, every code pattern included (TQ2_0's unused code 3).
func TestTQDotsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(131, 132))
	for _, typ := range []ggml.Type{ggml.TQ1_0, ggml.TQ2_0} {
		for _, k := range fourRowPaths() {
			if k == Scalar() {
				continue
			}
			for _, nb := range []int{1, 2, 3, 7, 43} {
				n := 256 * nb
				w := randWeights(r, typ, n)
				a := encodeAct(typ, randActivations(r, n))
				got, want := k.Dot(typ)(n, w, a), Scalar().Dot(typ)(n, w, a)
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("%s %s n=%d: %g, scalar %g", k.Name, typ, n, got, want)
				}
			}
		}
	}
}
