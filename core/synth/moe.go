package synth

import "math"

// # Router model (mixture-of-experts files)
//
// Real routers are not uniform: some experts of a layer are chosen far
// more often than others, and consecutive tokens share experts (about 38%
// of the chosen experts for Qwen3-30B-A3B, 18% for gpt-oss, where uniform
// choices of 8 of 128 would share 6%). An expert cache's hit rate depends
// on exactly that, so synthetic MoE files reproduce it with a simple
// generative model:
//
//   - every token embedding is z_t + m, with z_t the usual N(0,1) row and m
//     one fixed N(0,1) vector ("the shared direction"), so every hidden
//     state carries a component along m; the output rows' structured part
//     still uses z_t only, so the successor margins are unchanged;
//   - router row e of layer l is r/sqrt(n) + β_{l,e}·m/n, with r ~ N(0,1)
//     per element and β_{l,e} ~ N(0, routerPopularity²) drawn per layer and
//     expert. Its logit for a hidden state near (z_t + m)/sqrt(2) is then
//     about (ξ_t + ρ_e + β_{l,e})/sqrt(2): a per-token random part ξ_t ~
//     N(0,1), plus a per-layer, per-expert popularity (ρ_e = r·m/sqrt(n) ~
//     N(0,1) and β) whose spread sets how skewed each layer's expert use
//     is and, with it, how often two tokens share experts.
//
// routerPopularity = 1.1 puts the popularity's standard deviation at ~1.5
// times the per-token part, which simulates to ~37% reuse for 8 of 128
// experts (and ~60% for 2 of 8); TestRouterReuse in core/model measures it
// on written files. Reuse in this model is the same for any two tokens,
// not only consecutive ones: the popularity is global per layer, where
// real models also have topic-driven temporal locality.
const (
	sharedScale      = 1.0
	routerPopularity = 1.1
)

// sharedDirection is m: n elements of N(0,1), fixed by the seed.
func sharedDirection(seed uint64, n int) []float32 {
	m := make([]float32, n)
	rg := newRNG(seed, "moe.shared_direction", 0)
	for i := range m {
		m[i] = float32(rg.normal())
	}
	return m
}

// routerRow fills row e of a router (name is its tensor) as above.
func (g *gen) routerRow(name string, e int, x []float32) {
	n := float64(len(x))
	rg := newRNG(g.c.Seed, name, e)
	beta := routerPopularity * newRNG(g.c.Seed, name+"#popularity", e).normal()
	for i := range x {
		x[i] = float32(rg.normal() / math.Sqrt(n))
		if g.shared != nil {
			x[i] += float32(beta * float64(g.shared[i]) / n)
		}
	}
}
