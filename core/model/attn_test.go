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
// position at a time. Each query head is encoded in the key type's
// activation encoding so a score is one kernel dot; each value row is
// decoded and added with AddScaled; the window and soft-cap are applied by
// masking the full row, as the graph says. q holds all query heads of the
// token, out receives them.
func attendRef(m *Model, l, pos, g int, q, out []float32) {
	c := m.Cfg
	hd := c.HeadDim
	group := c.NHead / c.NHeadKV
	n := pos + 1
	scale, softcap, window := m.attnParams(l)
	kt, vt := m.kv.Types()
	dot := m.k.Dot(kt)
	at := kernels.ActType(kt)
	qb := make([]byte, actRowBytes(kt, hd))
	scores := make([]float32, group*n)
	vrow := make([]float32, hd)
	for j := 0; j < group; j++ {
		h := g*group + j
		if err := m.k.QuantizeAct(at, q[h*hd:(h+1)*hd], qb); err != nil {
			panic(err)
		}
		s := scores[j*n : (j+1)*n]
		for p := 0; p < n; p++ {
			s[p] = dot(hd, m.kv.keyHead(l, p, g), qb) * scale
		}
		if softcap != 0 || window > 0 {
			capMask(s, 0, pos, softcap, window)
		}
		m.softmax(s, h)
		clear(out[h*hd : (h+1)*hd])
	}
	for p := 0; p < n; p++ {
		if err := m.k.Dequantize(vt, m.kv.valueHead(l, p, g), vrow); err != nil {
			panic(err)
		}
		for j := 0; j < group; j++ {
			h := g*group + j
			m.k.AddScaled(out[h*hd:(h+1)*hd], vrow, scores[j*n+p])
		}
	}
}

// TestAttendBlockMatchesPerToken checks the blocked attention (all query
// rows of a token block and kv head in one pass over the cache, causal mask
// as row ranges, page-spanning reads, a sliding window as a shorter pass)
// against attendRef, the one-token, one-position-at-a-time path, on every
// kernel path, for each key/value encoding pair, with batches that start
// mid-page and cross a page boundary.
//
// Keys other than F16: ScoresQ is bit-identical to the path's Dot, AccumQ
// and AccumF16 to decoding plus AddScaled in position order, the softmax
// sees the same scores, and positions skipped before a window add exact
// zeros; so the results must be equal.
//
// F16 keys: both compute the same scores up to summation order. Each score
// s = scale·Σ q_d k_d has products exact in f32 (F16-valued operands), and
// neither path's sum of hd terms is off by more than (hd+10)·u·Σ|q_d k_d|
// (u = 2⁻²⁴; the SIMD dots use fewer than hd+10 roundings per term, the
// scalar ones sum in float64), so two scores differ by at most
// 2ε with ε = scale·(hd+10)·u·max_p Σ_d|q_d k_pd|. Shifting every score by
// at most 2ε changes each softmax weight by a factor within e^{±4ε}, so
// Σ w_p v_p moves by at most (e^{4ε}−1)·max|v|; the value sums then round
// the same n+1 times per element in both paths (same order), adding at most
// 2(n+1)·u·max|v|.
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
							tol := 0.0
							if kv.k == ggml.F16 {
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
								tol = (math.Expm1(4*eps) + 2*float64(np+1)*u) * vmax
							}
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
