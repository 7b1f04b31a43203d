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

// TestExp16MatchesExp8: EXP16 runs EXP8's operations per lane, so every
// exponential of expSubSumAVX512 must be bit-identical to expSubSumAVX2's
// (including inputs clamped at either end, -Inf and subnormal results),
// and the float64 sums may differ only by their order.
func TestExp16MatchesExp8(t *testing.T) {
	if _, err := ByName("avx512"); err != nil {
		t.Skipf("no avx512 path on this CPU: %v", err)
	}
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{16, 32, 48, 512, 2048} {
		for _, spread := range []float64{1, 10, 100} {
			x := randF32s(r, n, spread)
			x[r.IntN(n)] = float32(math.Inf(-1))
			x[r.IntN(n)] = -90 // below the clamp: 0
			x[r.IntN(n)] = -86 // near the clamp: a tiny normal result
			a, b := append([]float32(nil), x...), append([]float32(nil), x...)
			const m = 3.5
			sa := expSubSumAVX2(&a[0], n, m)
			sb := expSubSumAVX512(&b[0], n, m)
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("n=%d spread %g [%d]: e^(%v-%v) = %v (EXP8), %v (EXP16)", n, spread, i, x[i], m, a[i], b[i])
				}
			}
			if d := math.Abs(sa - sb); d > 1e-12*sa {
				t.Fatalf("n=%d spread %g: sums %v and %v", n, spread, sa, sb)
			}
		}
	}
}
