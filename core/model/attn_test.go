package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/kernels"
)

// TestAttendF16MatchesPerToken checks the blocked F16 attention (all query
// rows of a token block and kv head in one pass over the cache, causal mask
// as row ranges, page-spanning reads) against attend, the one-token,
// one-position-at-a-time path, on every kernel path, with batches that start
// mid-page and cross a page boundary.
//
// Bound: both compute the same scores up to summation order. Each score
// s = scale·Σ q_d k_d has products exact in f32 (F16-valued operands), and
// neither path's sum of hd terms is off by more than (hd+10)·u·Σ|q_d k_d|
// (u = 2⁻²⁴; the SIMD dots use fewer than hd+10 roundings per term, the
// scalar ones sum in float64), so two scores differ by at most
// 2ε with ε = scale·(hd+10)·u·max_p Σ_d|q_d k_pd|. Shifting every score by
// at most 2ε changes each softmax weight by a factor within e^{±4ε}, so
// Σ w_p v_p moves by at most (e^{4ε}−1)·max|v|; the value sums then round
// the same n+1 times per element in both paths (same order), adding at most
// 2(n+1)·u·max|v|.
func TestAttendF16MatchesPerToken(t *testing.T) {
	c := defTiny()
	c.heads, c.kvHeads, c.embd, c.layers, c.ctx = 8, 2, 8*64, 1, 2*PageSize
	for _, k := range kernels.Available() {
		for _, tc := range []struct{ pos0, nb int }{{0, 1}, {0, 37}, {5, 8}, {250, 13}, {PageSize, 9}, {300, 1}} {
			t.Run(fmt.Sprintf("%s/pos%d+%d", k.Name, tc.pos0, tc.nb), func(t *testing.T) {
				m := c.open(t, Options{Threads: 2, Batch: 40, KVType: ggml.F16, Ctx: c.ctx, Kernels: k})
				cfg := m.Cfg
				hd, Q, KV := cfg.HeadDim, cfg.QDim(), cfg.KVDim()
				r := rand.New(rand.NewPCG(uint64(tc.pos0), uint64(tc.nb)))
				n := tc.pos0 + tc.nb
				if err := m.kv.reserve(0, n); err != nil {
					t.Fatal(err)
				}
				kr, vr := make([]float32, KV), make([]float32, KV)
				var vmax float64
				for p := 0; p < n; p++ {
					for i := range kr {
						kr[i] = float32(r.NormFloat64() * 2)
						vr[i] = float32(r.NormFloat64())
						vmax = math.Max(vmax, math.Abs(float64(vr[i]))*1.001) // F16 rounding
					}
					if err := m.kv.store(m.k, 0, p, kr, vr); err != nil {
						t.Fatal(err)
					}
				}
				for i := range m.q[:tc.nb*Q] {
					m.q[i] = float32(r.NormFloat64() * 2)
				}
				m.attendBatch(0, tc.pos0, 0, tc.nb)
				got := append([]float32(nil), m.att[:tc.nb*Q]...)

				want := make([]float32, tc.nb*Q)
				sc := &attnScratch{scores: make([]float32, cfg.NHead*n), qAct: make([]byte, 4*hd), vrow: make([]float32, hd)}
				kf := make([]float32, hd)
				scale := 1 / math.Sqrt(float64(hd))
				group := cfg.NHead / cfg.NHeadKV
				for b := 0; b < tc.nb; b++ {
					for g := 0; g < cfg.NHeadKV; g++ {
						m.attend(0, tc.pos0+b, g, m.q[b*Q:(b+1)*Q], want[b*Q:(b+1)*Q], sc)
					}
				}
				const u = 1.0 / (1 << 24)
				for b := 0; b < tc.nb; b++ {
					np := tc.pos0 + b + 1
					for h := 0; h < cfg.NHead; h++ {
						var amax float64
						for p := 0; p < np; p++ {
							if err := kernels.Dequantize(ggml.F16, m.kv.keyHead(0, p, h/group), kf); err != nil {
								t.Fatal(err)
							}
							var a float64
							for d := 0; d < hd; d++ {
								qv := kernels.F16ToF32(kernels.F32ToF16(m.q[b*Q+h*hd+d]))
								a += math.Abs(float64(qv) * float64(kf[d]))
							}
							amax = math.Max(amax, a)
						}
						eps := scale * float64(hd+10) * u * amax
						tol := (math.Expm1(4*eps) + 2*float64(np+1)*u) * vmax
						for d := 0; d < hd; d++ {
							i := b*Q + h*hd + d
							if diff := math.Abs(float64(got[i]) - float64(want[i])); diff > tol {
								t.Fatalf("token %d head %d dim %d: blocked %v, per-token %v: |diff| %g > bound %g",
									b, h, d, got[i], want[i], diff, tol)
							}
						}
					}
				}
			})
		}
	}
}
