package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The long AccumF16 cases (accumLongCases) cross the AVX2 route's widening
// blocks only if their block size is the route's: a compile-time check.
var _ = [1]struct{}{}[accumBlock-accumTestBlock]

// TestScoresF16Pair: the two-key hd-64 score routine that ScoresF16 uses
// on AVX2 must be bit-identical to the one-key routine it replaced (same
// products, FMAs and reduction per score), for odd and even key counts,
// several four-row blocks and a head inside a wider row.
func TestScoresF16Pair(t *testing.T) {
	if _, err := ByName("avx2"); err != nil {
		t.Skipf("no avx2 path on this CPU: %v", err)
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
			scoresF16x64AVX2(&q[0], nq, &keys[0], stride, n, 0.125, &want[0], ws)
			scoresF16x64x2AVX2(&q[0], nq, &keys[0], stride, n, 0.125, &got[0], ws)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("nq=%d n=%d [%d]: two-key %v, one-key %v (must be bit-identical)", nq, n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestScoresF16PairAVX512: the two-key hd-64 AVX-512 score routine that
// ScoresF16 uses on the avx512 path must be bit-identical to the one-key
// routine it replaced (same products, FMAs and reduction pairings per
// score), for odd and even key counts, several four-row blocks and a head
// inside a wider row.
func TestScoresF16PairAVX512(t *testing.T) {
	if _, err := ByName("avx512"); err != nil {
		t.Skipf("no avx512 path on this CPU: %v", err)
	}
	r := rand.New(rand.NewPCG(9, 10))
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
				got[i], want[i] = -7, -7 // untouched cells must stay
			}
			scoresF16x64AVX512(&q[0], nq, &keys[0], stride, n, 0.125, &want[0], ws)
			scoresF16x64x2AVX512(&q[0], nq, &keys[0], stride, n, 0.125, &got[0], ws)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("nq=%d n=%d [%d]: two-key %v, one-key %v (must be bit-identical)", nq, n, i, got[i], want[i])
				}
			}
		}
	}
}
