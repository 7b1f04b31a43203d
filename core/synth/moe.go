package synth

// # Router model (mixture-of-experts files)
//
// Real routers are not uniform: some experts of a layer are chosen more
// often than others, and consecutive tokens share experts (about 38% of
// the chosen experts for Qwen3-30B-A3B, 18% for gpt-oss, where uniform
// choices of 8 of 128 would share 6%). An expert cache's hit rate depends
// on exactly that, so synthetic MoE files reproduce it with a simple
// generative model in the token embeddings, which every layer's router
// (plain N(0, 1/n_embd) rows) then reads through the residual stream:
//
//   - every embedding row is z_t + s·m + a·c_τ(t): z_t the usual N(0,1) row,
//     m one fixed N(0,1) vector shared by all tokens, and c_τ a N(0,1)
//     "topic" vector shared by the tokens of one topic;
//   - topics follow the text synthetic models generate: each token's
//     greedy successor is fixed (the successor permutation, see the
//     package comment), and walking the permutation's cycles, every run
//     of topicLen consecutive tokens shares one topic;
//   - the output rows' structured part still uses z_t only, so the
//     successor margins are unchanged (m and c add noise of the size of
//     the random part).
//
// A router row r (N(0,1)/sqrt(n)) gives a hidden state near the embedding
// the logit (r·z_t + s·r·m + a·r·c_τ)/sqrt(n) up to the common RMS scale:
// a per-token part ~N(0,1), a per-layer, per-expert popularity s·ρ (ρ =
// r·m/sqrt(n) ~ N(0,1), fixed per router row), and a per-topic part ~N(0,a²)
// that persists over topicLen consecutive tokens. s sets how skewed a
// layer's expert use is, a how much consecutive tokens share beyond it.
// s = 0.6, a = 1.9, topicLen = 8 were tuned on written files: for 8 of 128
// experts TestRouterReuse (core/model) measures 38% consecutive-token
// reuse in greedy text and, over a random prompt, the most used eighth of
// a layer's experts taking 27% of its choices (uniform: 12.5%). Text that
// does not follow the successor chain (prompts) still sees the popularity
// but not the topics.
//
// gpt-oss routes 4 of 32 experts with ~18% consecutive-token reuse
// (uniform: 12.5%), so its files (Arch.RouterReuse 0 or 0.18) take
// s = 0.4, a = 0.3, and keep the
// biases that every token shares small (router bias N(0, 0.1²), output
// and expert down biases N(0, 0.05²)): a common bias in the residual
// stream is a popularity of its own. TestRouterReuse measures 17% reuse
// for 4 of 32 and the top eighth taking 22%.
const (
	sharedScale = 0.6
	topicScale  = 1.9
	topicLen    = 8

	ossSharedScale = 0.4
	ossTopicScale  = 0.3
)

// Arch.RouterReuse picks between the two tuned parameter sets for any
// architecture (the golden fixtures keep gpt-oss on the 0.38 set: its
// strong popularity makes routing decisive, where the 0.18 set's close
// router logits turn Q8_0 rounding into expert swaps that llama.cpp's own
// two attention paths disagree on).

// reuse18 reports whether the file uses the 0.18 parameter set.
func (a Arch) reuse18() bool {
	return a.RouterReuse == 0.18 || a.RouterReuse == 0 && a.Name == GPTOSS
}

// routerScales are s and a for the file.
func (g *gen) routerScales() (shared, topic float32) {
	if g.c.Arch.reuse18() {
		return ossSharedScale, ossTopicScale
	}
	return sharedScale, topicScale
}

// sharedDirection is m: n elements of N(0,1), fixed by the seed.
func sharedDirection(seed uint64, n int) []float32 {
	m := make([]float32, n)
	rg := newRNG(seed, "moe.shared_direction", 0)
	for i := range m {
		m[i] = float32(rg.normal())
	}
	return m
}

// topics numbers the topic of every token: runs of topicLen tokens along
// the successor permutation's cycles (tokens outside it, control and byte
// tokens, start runs of their own).
func topics(succ []int32) []int32 {
	topic := make([]int32, len(succ))
	for i := range topic {
		topic[i] = -1
	}
	next := int32(0)
	for t := range succ {
		i := 0
		for u := int32(t); topic[u] < 0; u = succ[u] {
			if i%topicLen == 0 {
				next++
			}
			topic[u] = next - 1
			i++
		}
	}
	return topic
}

// moeEmbd adds token t's shared and topic parts to its embedding row x.
func (g *gen) moeEmbd(t int, x []float32) {
	rg := newRNG(g.c.Seed, "moe.topic", int(g.topic[t]))
	s, a := g.routerScales()
	for i := range x {
		x[i] += s*g.shared[i] + a*float32(rg.normal())
	}
}
