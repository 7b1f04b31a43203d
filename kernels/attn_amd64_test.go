package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The long AccumF16 cases (accumLongCases) cross the AVX2 route's widening
// blocks only if their block size is the route's: a compile-time check.
var _ = [1]struct{}{}[accumBlock-accumTestBlock]

// TestScoresF16Pair: the hd-64 score routines take key rows two at a time
// and an odd last key through their one-key loop; every score of a pair
// must be bit-identical to the one-key loop's for that key alone (same
// products, FMAs and reduction pairings), which is what a call with n = 1
// runs. For odd and even key counts, several four-row blocks and a head
// inside a wider row; cells outside the scores must stay untouched.
func TestScoresF16Pair(t *testing.T) {
	type scoresFunc func(q *float32, nq int, keys *byte, stride, n int, scale float32, out *float32, ws int)
	for _, c := range []struct {
		path string
		f    scoresFunc
	}{
		{"avx2", scoresF16x64x2AVX2},
		{"avx512", scoresF16x64x2AVX512},
	} {
		t.Run(c.path, func(t *testing.T) {
			if _, err := ByName(c.path); err != nil {
				t.Skipf("no %s path on this CPU: %v", c.path, err)
			}
			r := rand.New(rand.NewPCG(9, 9))
			const hd = 64
			for _, nq := range []int{4, 8, 64} {
				for _, n := range []int{1, 2, 3, 16, 17, 255, 256} {
					stride := 4*hd*2 + 2*(n%3)
					keys := make([]byte, (n-1)*stride+2*hd)
					for p := 0; p < n; p++ {
						b, _ := randHalfRow(r, hd)
						copy(keys[p*stride:], b)
					}
					q := make([]float32, nq*hd)
					_, qv := randHalfRow(r, nq*hd)
					copy(q, qv)
					ws := n + 5
					want := make([]float32, (nq-1)*ws+n)
					got := make([]float32, len(want))
					for i := range got {
						got[i], want[i] = -7, -7
					}
					for p := 0; p < n; p++ {
						c.f(&q[0], nq, &keys[p*stride], stride, 1, 0.125, &want[p], ws)
					}
					c.f(&q[0], nq, &keys[0], stride, n, 0.125, &got[0], ws)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("nq=%d n=%d [%d]: %d keys %v, one key %v (must be bit-identical)", nq, n, i, n, got[i], want[i])
						}
					}
				}
			}
		})
	}
}
