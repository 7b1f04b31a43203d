package engine

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/kernels"
)

// synthModel opens a synthetic model held in memory.
func synthModel(t testing.TB, c synth.Config) (*model.Model, *tokenizer.Tokenizer) {
	t.Helper()
	var buf bytes.Buffer
	if c.Ctx == 0 {
		c.Ctx = 1024
	}
	c.RopeBase, c.Eps = 10000, 1e-5
	c.Quantize = kernels.Quantize
	if err := synth.Write(context.Background(), &buf, c, nil); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	f, err := gguf.Parse(bytes.NewReader(b), int64(len(b)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	w, err := model.MemWeightsFromBytes(f, b)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := model.ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(mc, w, model.Options{Threads: 2, Batch: 32, KVType: ggml.F16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return m, tok
}

// specTarget is a Q8_0 model with rows of 8 blocks (so the packed MatMul's
// sums would differ from one-token generation's) and a low logit gain, so
// its text depends on the context and drafts are both accepted and
// rejected.
func specTarget(t testing.TB, layers int, seed uint64) (*model.Model, *tokenizer.Tokenizer) {
	return synthModel(t, synth.Config{Embd: 256, Layers: layers, Heads: 4, KVHeads: 2, FF: 512, Type: ggml.Q8_0,
		VocabSize: 400, Seed: seed, Gain: 6})
}

// genTokens runs r on a fresh engine over st and returns the tokens.
func genTokens(t *testing.T, st Stepper, tok *tokenizer.Tokenizer, opt Options, r Request) ([]int32, Stats) {
	t.Helper()
	e, err := New(st, tok, opt)
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.Submit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	var out []int32
	for e.Step(context.Background()) {
		for {
			ev, ok := h.TryNext()
			if !ok {
				break
			}
			if ev.Err != nil {
				t.Fatal(ev.Err)
			}
			if ev.Done {
				break
			}
			out = append(out, ev.Tokens...)
		}
	}
	return out, e.Stats()
}

// TestSpecIdentity: with exact verification and a draft model (the same seed and fewer layers,
// which mostly agrees; another seed, which mostly does not) and with n-gram
// lookup, on both steppers, greedy and seeded sampling with penalties and
// logit bias give the tokens of plain generation, and the drafts were
// both accepted and rejected.
func TestSpecIdentity(t *testing.T) {
	m, tok := specTarget(t, 3, 5)
	near, _ := specTarget(t, 1, 5)
	far, _ := specTarget(t, 1, 9)
	prompt := tok.Encode("the same words again and the same words again and", true, false)
	reqs := map[string]Request{
		"greedy": {Prompt: prompt, MaxTokens: 80, Sample: sample.Params{RepeatPenalty: 1}},
		"seeded": {Prompt: prompt, MaxTokens: 80, Sample: sample.Params{Temp: 0.7, TopK: 40, TopP: 0.95, RepeatPenalty: 1.1, RepeatLastN: 16, Seed: 3},
			FrequencyPenalty: 0.2, LogitBias: map[int32]float32{9: 2}},
	}
	specs := map[string]Spec{
		"near":  {DraftMax: 6, PMin: 0.3, Draft: near, Exact: true},
		"far":   {DraftMax: 4, PMin: 0, Draft: far, Exact: true},
		"ngram": {DraftMax: 16, NgramN: 2, NgramM: 8, Exact: true},
	}
	var total SpecStats
	for _, st := range steppers {
		for rn, r := range reqs {
			want, _ := genTokens(t, st.make(m), tok, Options{Slots: 1}, r)
			for sn, sp := range specs {
				got, stats := genTokens(t, st.make(m), tok, Options{Slots: 1, Spec: &sp}, r)
				if !slices.Equal(got, want) {
					t.Fatalf("%s %s %s: speculative\n%v\nplain\n%v", st.name, rn, sn, got, want)
				}
				if stats.GenTokens != int64(len(want)) {
					t.Errorf("%s %s %s: %d tokens counted, %d generated", st.name, rn, sn, stats.GenTokens, len(want))
				}
				total.Drafted += stats.Spec.Drafted
				total.Accepted += stats.Spec.Accepted
			}
		}
	}
	if total.Accepted == 0 || total.Accepted == total.Drafted {
		t.Errorf("%d of %d drafted tokens accepted: the test needs both outcomes", total.Accepted, total.Drafted)
	}
}

// TestSpecPacked: the default verification (packed kernels) on a model
// whose choices have margins far above the packed kernels' rounding
// (synth's default logit gain: the successor token leads by several
// logits) gives plain generation's tokens, greedy and seeded, with a draft
// model and with n-gram lookup, on both steppers. (On TestSpecIdentity's
// low-margin model it does not: there the output diverges within 80
// tokens, which is why Exact exists.)
func TestSpecPacked(t *testing.T) {
	cfg := synth.Config{Embd: 256, Layers: 3, Heads: 4, KVHeads: 2, FF: 512, Type: ggml.Q8_0, VocabSize: 400, Seed: 5}
	m, tok := synthModel(t, cfg)
	cfg.Layers = 1
	draft, _ := synthModel(t, cfg)
	prompt := tok.Encode("the same words again and the same words again and", true, false)
	var drafted, accepted int64
	for _, st := range steppers {
		for _, r := range []Request{{Prompt: prompt, MaxTokens: 60, Sample: sample.Params{RepeatPenalty: 1}},
			{Prompt: prompt, MaxTokens: 60, Sample: sample.Params{Temp: 0.8, TopK: 40, TopP: 0.95, RepeatPenalty: 1, Seed: 4}}} {
			want, _ := genTokens(t, st.make(m), tok, Options{Slots: 1}, r)
			for _, sp := range []Spec{{DraftMax: 8, Draft: draft}, {DraftMax: 8, NgramN: 1, NgramM: 8}} {
				got, stats := genTokens(t, st.make(m), tok, Options{Slots: 1, Spec: &sp}, r)
				if !slices.Equal(got, want) {
					t.Fatalf("%s %+v: speculative\n%v\nplain\n%v", st.name, sp, got, want)
				}
				drafted += stats.Spec.Drafted
				accepted += stats.Spec.Accepted
			}
		}
	}
	if accepted == 0 {
		t.Errorf("no draft accepted (%d drafted)", drafted)
	}
}

// TestSpecStatsAndLimits: a draft that is always right (the target as its
// own draft) gives DraftMax+1 tokens per pass, and never drafts past
// max_tokens or the context.
func TestSpecStatsAndLimits(t *testing.T) {
	m, tok := specTarget(t, 2, 5)
	self, _ := specTarget(t, 2, 5)
	prompt := tok.Encode("a b c", true, false)
	sp := Spec{DraftMax: 4, Draft: self}
	got, st := genTokens(t, PerSeq{M: m}, tok, Options{Slots: 1, Spec: &sp}, Request{Prompt: prompt, MaxTokens: 21, Sample: sample.Params{RepeatPenalty: 1}, IgnoreEOS: true})
	if len(got) != 21 {
		t.Fatalf("%d tokens, want 21", len(got))
	}
	// One token from the prompt pass, then four passes of 5.
	if st.Spec.Drafted != 16 || st.Spec.Accepted != 16 || st.Spec.Passes != 5 || st.Spec.Verified != 4 {
		t.Errorf("stats %+v, want 16 drafted and accepted in 4 verifications, 5 passes", st.Spec)
	}
	// Context: the slot fills exactly as without speculation.
	want, _ := genTokens(t, PerSeq{M: m}, tok, Options{Slots: 1, CtxPerSlot: 30}, Request{Prompt: prompt, Sample: sample.Params{RepeatPenalty: 1}, IgnoreEOS: true})
	got, _ = genTokens(t, PerSeq{M: m}, tok, Options{Slots: 1, CtxPerSlot: 30, Spec: &sp}, Request{Prompt: prompt, Sample: sample.Params{RepeatPenalty: 1}, IgnoreEOS: true})
	if !slices.Equal(got, want) {
		t.Fatalf("at the context limit: speculative %v, plain %v", got, want)
	}
}

func TestNgramDraft(t *testing.T) {
	h := []int32{1, 2, 3, 4, 9, 2, 3, 5, 6, 2, 3}
	if got := ngramDraft(nil, h, 2, 3); !slices.Equal(got, []int32{5, 6, 2}) {
		t.Errorf("n=2: %v, want the tokens after the last earlier [2 3]", got)
	}
	if got := ngramDraft(nil, h, 3, 3); len(got) != 0 {
		t.Errorf("n=3: %v, want none ([6 2 3] did not occur before)", got)
	}
	if got := ngramDraft(nil, []int32{7, 7}, 1, 5); !slices.Equal(got, []int32{7}) {
		t.Errorf("[7 7]: %v, want [7]", got)
	}
}

// TestArgmaxProb: the draft's probability is the softmax over its 40 most
// likely tokens (llama.cpp's draft sampler's top-k), whatever their order.
func TestArgmaxProb(t *testing.T) {
	lg := make([]float32, 1000)
	for i := range lg {
		lg[i] = float32(-20 - i%7)
	}
	for j := 0; j < 45; j++ { // 45 candidates at 0 (one at 3), scattered
		lg[(j*97+13)%1000] = 0
	}
	lg[500] = 3
	lg[501] = float32(math.NaN())
	tok, p := argmaxProb(lg)
	// The top 40: the 3 and 39 zeros.
	want := 1 / (1 + 39*math.Exp(-3))
	if tok != 500 || math.Abs(float64(p)-want) > 1e-6 {
		t.Errorf("argmaxProb = %d, %v; want 500, %v", tok, p, want)
	}
	if tok, p := argmaxProb([]float32{1, 2}); tok != 1 || math.Abs(float64(p)-1/(1+math.Exp(-1))) > 1e-6 {
		t.Errorf("two logits: %d, %v", tok, p)
	}
}

func TestSpecValidate(t *testing.T) {
	m, tok := specTarget(t, 1, 5)
	for _, sp := range []Spec{{DraftMax: 0, NgramN: 1, NgramM: 1}, {DraftMax: 4, DraftMin: 5, NgramN: 1, NgramM: 1},
		{DraftMax: 4, PMin: 2, NgramN: 1, NgramM: 1}, {DraftMax: 4, NgramN: 0, NgramM: 1}} {
		if _, err := New(PerSeq{M: m}, tok, Options{Slots: 1, Spec: &sp}); err == nil {
			t.Errorf("%+v: no error", sp)
		}
	}
}

// TestCheckDraftVocab: a draft with another vocabulary is refused with the
// difference named.
func TestCheckDraftVocab(t *testing.T) {
	_, a := specTarget(t, 1, 5)
	_, b := specTarget(t, 1, 9) // the same synthetic vocabulary
	if err := CheckDraftVocab(a, b); err != nil {
		t.Fatalf("same vocabulary refused: %v", err)
	}
	_, c := synthModel(t, synth.Config{Embd: 64, Layers: 1, Heads: 4, KVHeads: 2, FF: 128, Type: ggml.F32, VocabSize: 600, Seed: 5})
	if err := CheckDraftVocab(a, c); err == nil || !strings.Contains(err.Error(), "600 tokens, target 400") {
		t.Errorf("vocabulary of 600 against 400: %v", err)
	}
}

// TestSpecDistribution: with sampling (temperature 1) the speculative
// output has the target's distribution. Six tokens are left to sample
// (logit_bias -inf on the others: a tiny vocabulary), the prompt is made of
// them so n-gram drafts are among them, and each request generates three
// tokens: the first from the prompt pass, the second verified against a
// one-token draft (accepted, or rejected and resampled), the third the
// bonus row after an accepted draft or a plain step. The empirical
// distribution of the 216 triples over 6000 seeds is compared with the
// exact one (the target's softmax at every prefix, in float64) by Pearson's
// chi-square, cells expected below 5 pooled; the bound is the 0.999
// quantile of chi-square with k−1 degrees of freedom (Wilson–Hilferty:
// df·(1 − 2/(9df) + 3.09·sqrt(2/(9df)))³). The seeds are fixed, so the test
// is deterministic; the quantile says how unlikely a correct rule is to
// land above it. To show the statistic can see a wrong rule, the same
// counts measured against the distribution with the second token replaced
// by the draft whenever the draft is among the six must exceed the bound.
func TestSpecDistribution(t *testing.T) {
	if testing.Short() {
		t.Skip("6000 requests")
	}
	m, tok := synthModel(t, synth.Config{Embd: 64, Layers: 1, Heads: 4, KVHeads: 2, FF: 128, Type: ggml.F32, VocabSize: 300, Seed: 11, Gain: 1, Noise: 2})
	V := m.Cfg.NVocab
	allowed := []int32{100, 101, 102, 103, 104, 105}
	bias := map[int32]float32{}
	for i := int32(0); i < int32(V); i++ {
		if !slices.Contains(allowed, i) {
			bias[i] = float32(math.Inf(-1))
		}
	}
	prompt := []int32{1, 103, 100, 101, 102, 104, 105, 100, 102}
	sp := Spec{DraftMax: 4, NgramN: 1, NgramM: 4}
	e, err := New(PerSeq{M: m}, tok, Options{Slots: 1, Spec: &sp})
	if err != nil {
		t.Fatal(err)
	}
	idx := func(t int32) int { return slices.Index(allowed, t) }
	const N = 6000
	counts := make([]float64, 216)
	for seed := uint64(1); seed <= N; seed++ {
		r := Request{Prompt: prompt, MaxTokens: 3, LogitBias: bias, IgnoreEOS: true,
			Sample: sample.Params{Temp: 1, TopP: 1, RepeatPenalty: 1, Seed: seed}}
		h, err := e.Submit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		var got []int32
		for e.Step(context.Background()) {
		}
		for {
			ev, ok := h.TryNext()
			if !ok || ev.Done {
				break
			}
			got = append(got, ev.Tokens...)
		}
		if len(got) != 3 {
			t.Fatalf("seed %d: %v", seed, got)
		}
		counts[idx(got[0])*36+idx(got[1])*6+idx(got[2])]++
	}
	st := e.Stats().Spec
	if st.Accepted == 0 || st.Accepted == st.Drafted {
		t.Fatalf("%d of %d drafts accepted: the test needs both outcomes", st.Accepted, st.Drafted)
	}
	// Exact probabilities over the six tokens after a prefix.
	probs := func(pre []int32) []float64 {
		kv, _ := m.NewKV(0)
		old, _ := m.SwapKV(kv)
		defer m.SwapKV(old)
		lg, err := m.Forward(context.Background(), append(slices.Clone(prompt), pre...))
		if err != nil {
			t.Fatal(err)
		}
		p := make([]float64, 6)
		z := 0.0
		for i, a := range allowed {
			p[i] = math.Exp(float64(lg[a]))
			z += p[i]
		}
		for i := range p {
			p[i] /= z
		}
		return p
	}
	exact := make([]float64, 216)
	wrong := make([]float64, 216) // second token always the n-gram draft
	p1 := probs(nil)
	for a := 0; a < 6; a++ {
		p2 := probs([]int32{allowed[a]})
		d := ngramDraft(nil, append(slices.Clone(prompt), allowed[a]), 1, 1)
		for b := 0; b < 6; b++ {
			p3 := probs([]int32{allowed[a], allowed[b]})
			for c := 0; c < 6; c++ {
				exact[a*36+b*6+c] = p1[a] * p2[b] * p3[c]
				if len(d) == 1 && idx(d[0]) >= 0 {
					if idx(d[0]) == b {
						wrong[a*36+b*6+c] = p1[a] * p3[c]
					}
				} else {
					wrong[a*36+b*6+c] = exact[a*36+b*6+c]
				}
			}
		}
	}
	chi, bound := chiSquare(counts, exact, N)
	if chi > bound {
		t.Errorf("chi-square %.1f above the 0.999 bound %.1f: the speculative output is not distributed as the target", chi, bound)
	}
	if chiW, boundW := chiSquare(counts, wrong, N); chiW <= boundW {
		t.Errorf("against the always-accept distribution chi-square %.1f, bound %.1f: the test cannot tell the rules apart", chiW, boundW)
	}
	t.Logf("chi-square %.1f (bound %.1f); %d of %d drafts accepted", chi, bound, st.Accepted, st.Drafted)
}

// chiSquare is Pearson's statistic of counts (n in all) against p, cells
// expected below 5 pooled into one, and the 0.999 quantile of its
// distribution (Wilson–Hilferty).
func chiSquare(counts, p []float64, n int) (chi, bound float64) {
	var poolO, poolE float64
	k := 0
	for i := range p {
		e := p[i] * float64(n)
		if e < 5 {
			poolO += counts[i]
			poolE += e
			continue
		}
		chi += (counts[i] - e) * (counts[i] - e) / e
		k++
	}
	if poolE > 0 {
		if poolE < 1e-9 {
			if poolO > 0 {
				return math.Inf(1), 0
			}
		} else {
			chi += (poolO - poolE) * (poolO - poolE) / poolE
			k++
		}
	}
	df := float64(k - 1)
	h := 2 / (9 * df)
	bound = df * math.Pow(1-h+3.09*math.Sqrt(h), 3)
	return chi, bound
}
