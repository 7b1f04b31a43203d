package engine

import (
	"math"
)

// MaxTopLogProbs bounds Request.TopLogProbs, as OpenAI's top_logprobs (20).
const MaxTopLogProbs = 20

// TokenLogProb is a generated token's log-probability and the most likely
// alternatives at its step (Request.LogProbs).
//
// The distribution is the model's own: a log-softmax of the raw logits of
// the step, before logit_bias, the penalties, temperature and the sampler's
// truncations. That is llama-server's choice for OpenAI's logprobs (its
// post_sampling_probs is false by default: probabilities come from
// llama_get_logits_ith, not from the sampler chain) and what OpenAI
// documents (the logprob of the token, whatever the temperature). So a
// token sampled at a high temperature can have a low logprob, and a
// greedy reply's tokens are always the first of their Top.
type TokenLogProb struct {
	ID      int32
	LogProb float32     // natural log; -Inf for a token the model gives no probability
	Top     []TokenProb // the TopLogProbs most likely tokens, most likely first (ties: lower id first)
}

// TokenProb is one alternative of a step.
type TokenProb struct {
	ID      int32
	LogProb float32
}

// logSoftmaxTop returns the log of the softmax's normaliser over logits
// (NaN counts as -Inf) and the k most likely tokens with their
// log-probabilities, appended to top. Sums run in float64: over a 152k
// vocabulary float32 loses digits the 1e-3 bounds of the goldens notice.
func logSoftmaxTop(logits []float32, k int, top []TokenProb) (float64, []TokenProb) {
	mx := math.Inf(-1)
	for _, v := range logits {
		if f := float64(v); f > mx { // NaN never wins
			mx = f
		}
	}
	if math.IsInf(mx, -1) {
		// No token has any probability (every logit -Inf, say every
		// token banned by logit_bias before this point): report -Inf.
		for i := 0; i < k && i < len(logits); i++ {
			top = append(top, TokenProb{ID: int32(i), LogProb: float32(math.Inf(-1))})
		}
		return math.Inf(1), top
	}
	sum := 0.0
	base := len(top)
	for i, v := range logits {
		f := float64(v)
		if f != f {
			continue
		}
		sum += math.Exp(f - mx)
		if k == 0 {
			continue
		}
		// Insertion into the k best so far (k <= 20): a token enters only
		// when it beats the current last, which after the first few
		// hundred tokens is rare.
		n := len(top) - base
		if n == k && !(v > top[len(top)-1].LogProb) {
			continue
		}
		if n < k {
			top = append(top, TokenProb{})
		}
		j := len(top) - 1
		for j > base && v > top[j-1].LogProb {
			top[j] = top[j-1]
			j--
		}
		top[j] = TokenProb{ID: int32(i), LogProb: v}
	}
	logZ := mx + math.Log(sum)
	for i := base; i < len(top); i++ {
		top[i].LogProb = float32(float64(top[i].LogProb) - logZ)
	}
	return logZ, top
}

// logProbOf is a raw logit's log-probability under normaliser logZ.
func logProbOf(logit float32, logZ float64) float32 {
	if logit != logit {
		return float32(math.Inf(-1))
	}
	return float32(float64(logit) - logZ)
}
