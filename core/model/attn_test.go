package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/kernels"
)

// u is the unit roundoff of float32.
const u = 1.0 / (1 << 24)

// attendRef is the reference attention: the token at position pos over
// cached positions 0..pos, for the query heads that share kv head g, one
// position at a time. Each score is the float64 sum of the query (rounded
// to F16 for an F16 cache, as llama.cpp does) times the decoded key; each
// value row is decoded and added with AddScaled; the window and soft-cap
// are applied by masking the full row, as the graph says. q holds all query
// heads of the token, out receives them.
func attendRef(m *Model, l, pos, g int, q, out []float32) {
	c := m.Cfg
	hd := c.HeadDim
	group := c.NHead / c.NHeadKV
	n := pos + 1
	scale, softcap, window := m.attnParams(l)
	kt, vt := m.kv.Types()
	scores := make([]float32, group*n)
	row := make([]float32, hd)
	for j := 0; j < group; j++ {
		h := g*group + j
		qh := refQuery(kt, q[h*hd:(h+1)*hd])
		s := scores[j*n : (j+1)*n]
		for p := 0; p < n; p++ {
			if err := m.k.Dequantize(kt, m.kv.keyHead(l, p, g), row); err != nil {
				panic(err)
			}
			var a float64
			for d, v := range qh {
				a += float64(v) * float64(row[d])
			}
			s[p] = float32(a) * scale
		}
		if softcap != 0 || window > 0 {
			capMask(s, 0, pos, softcap, window)
		}
		m.softmax(s, h)
		clear(out[h*hd : (h+1)*hd])
	}
	for p := 0; p < n; p++ {
		if err := m.k.Dequantize(vt, m.kv.valueHead(l, p, g), row); err != nil {
			panic(err)
		}
		for j := 0; j < group; j++ {
			h := g*group + j
			m.k.AddScaled(out[h*hd:(h+1)*hd], row, scores[j*n+p])
		}
	}
}

// refQuery is the query as attention multiplies it with keys of type kt.
func refQuery(kt ggml.Type, q []float32) []float32 {
	r := append([]float32(nil), q...)
	if kt == ggml.F16 {
		for i, v := range r {
			r[i] = kernels.F16ToF32(kernels.F32ToF16(v))
		}
	}
	return r
}

// TestAttendBlockMatchesPerToken checks the blocked attention (all query
// rows of a token block and kv head in one pass over the cache, causal mask
// as row ranges, page-spanning reads, a sliding window as a shorter pass)
// against attendRef, the one-token, one-position-at-a-time path, on every
// kernel path, for each key/value encoding pair, with batches that start
// mid-page and cross a page boundary.
//
// Both compute the same scores up to summation order. Each score
// s = scale·Σ q_d k_d (q rounded to F16 for F16 keys, k decoded) is off by at
// most (hd+10)·u·Σ|q_d k_d| in either path (the reference sums exact products
// in float64; the F16 SIMD dots use fewer than hd+10 roundings per term,
// ScoresQ's f32 chain hd+3: TestScoresF16SIMD, TestScoresQ), so two scores
// differ by at most 2ε with ε = scale·(hd+10)·u·max_p Σ_d|q_d k_pd|. Shifting
// every score by at most 2ε changes each softmax weight by a factor within
// e^{±4ε}, so Σ w_p v_p moves by at most (e^{4ε}−1)·max|v|; the value sums
// then round the same n+1 times per element in both paths (AccumF16 and
// AccumQ are AddScaled's operations in position order), adding at most
// 2(n+1)·u·max|v|. Positions skipped before a window add exact zeros.
func TestAttendBlockMatchesPerToken(t *testing.T) {
	c := defTiny()
	c.heads, c.kvHeads, c.embd, c.layers, c.ctx = 8, 2, 8*64, 1, 2*PageSize
	type shape struct{ pos0, nb, window int }
	all := []shape{{0, 1, 0}, {0, 37, 0}, {5, 8, 0}, {250, 13, 0}, {PageSize, 9, 0}, {300, 1, 0}, {300, 9, 40}, {260, 20, 7}}
	few := []shape{{250, 13, 0}, {300, 1, 0}, {300, 9, 40}}
	for _, k := range kernels.Available() {
		for _, kv := range []struct {
			k, v   ggml.Type
			shapes []shape
		}{
			{ggml.F16, ggml.F16, all}, {ggml.Q8_0, ggml.Q8_0, all}, {ggml.Q4_0, ggml.Q4_0, all},
			{ggml.F32, ggml.F32, few}, {ggml.F16, ggml.Q8_0, few}, {ggml.Q8_0, ggml.F16, few}, {ggml.Q4_1, ggml.Q5_0, few},
		} {
			for _, tc := range kv.shapes {
				t.Run(fmt.Sprintf("%s/%s-%s/pos%d+%d/w%d", k.Name, kv.k, kv.v, tc.pos0, tc.nb, tc.window), func(t *testing.T) {
					m := c.open(t, Options{Threads: 2, Batch: 40, KVType: kv.k, KVTypeV: kv.v, KVTypeVSet: true, Ctx: c.ctx, Kernels: k})
					if tc.window > 0 {
						m.Cfg.SlidingWindow, m.Cfg.SWAPattern = tc.window, 0
					}
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
							vmax = math.Max(vmax, math.Abs(float64(vr[i]))*1.2) // bounds the decoded value (4-bit types round by up to 1/14 of a block's range)
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
					for b := 0; b < tc.nb; b++ {
						for g := 0; g < cfg.NHeadKV; g++ {
							attendRef(m, 0, tc.pos0+b, g, m.q[b*Q:(b+1)*Q], want[b*Q:(b+1)*Q])
						}
					}
					kf := make([]float32, hd)
					scale := 1 / math.Sqrt(float64(hd))
					group := cfg.NHead / cfg.NHeadKV
					for b := 0; b < tc.nb; b++ {
						np := tc.pos0 + b + 1
						for h := 0; h < cfg.NHead; h++ {
							var amax float64
							qh := refQuery(kv.k, m.q[b*Q+h*hd:b*Q+(h+1)*hd])
							for p := 0; p < np; p++ {
								if err := kernels.Dequantize(kv.k, m.kv.keyHead(0, p, h/group), kf); err != nil {
									t.Fatal(err)
								}
								var a float64
								for d := 0; d < hd; d++ {
									a += math.Abs(float64(qh[d]) * float64(kf[d]))
								}
								amax = math.Max(amax, a)
							}
							eps := scale * float64(hd+10) * u * amax
							tol := (math.Expm1(4*eps) + 2*float64(np+1)*u) * vmax
							for d := 0; d < hd; d++ {
								i := b*Q + h*hd + d
								if diff := math.Abs(float64(got[i]) - float64(want[i])); !(diff <= tol) {
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
}
