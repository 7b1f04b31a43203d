package engine

import (
	"context"
	"errors"
	"math"
	"sort"
	"testing"

	"github.com/memvanta/memvanta/core/sample"
)

// naiveLogSoftmax is the textbook formula, term by term in float64.
func naiveLogSoftmax(logits []float32) []float64 {
	out := make([]float64, len(logits))
	sum := 0.0
	for _, v := range logits {
		if v == v {
			sum += math.Exp(float64(v))
		}
	}
	for i, v := range logits {
		if v != v {
			out[i] = math.Inf(-1)
			continue
		}
		out[i] = float64(v) - math.Log(sum)
	}
	return out
}

func TestLogSoftmaxTop(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	for _, c := range []struct {
		name   string
		logits []float32
		k      int
		want   []int32 // ids of the top k
	}{
		{"plain", []float32{1, 3, 2, 0.5}, 2, []int32{1, 2}},
		{"ties keep lower id", []float32{2, 1, 2, 2}, 3, []int32{0, 2, 3}},
		{"nan ignored", []float32{nan, 1, 0}, 2, []int32{1, 2}},
		{"-inf last", []float32{inf, 0, -1}, 3, []int32{1, 2, 0}},
		{"k 0", []float32{0, 1}, 0, nil},
		{"k above vocab", []float32{0, 1}, 5, []int32{1, 0}},
		{"large logits", []float32{1000, 999, 998}, 3, []int32{0, 1, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			logZ, top := logSoftmaxTop(c.logits, c.k, nil)
			var ids []int32
			for _, p := range top {
				ids = append(ids, p.ID)
			}
			if len(ids) != len(c.want) {
				t.Fatalf("top %v, want %v", ids, c.want)
			}
			for i := range ids {
				if ids[i] != c.want[i] {
					t.Fatalf("top %v, want %v", ids, c.want)
				}
			}
			// Against the textbook formula, shifted to avoid overflow.
			shift := make([]float32, len(c.logits))
			mx := float32(math.Inf(-1))
			for _, v := range c.logits {
				if v > mx {
					mx = v
				}
			}
			for i, v := range c.logits {
				shift[i] = v - mx
			}
			want := naiveLogSoftmax(shift)
			for _, p := range top {
				if w := want[p.ID]; math.Abs(float64(p.LogProb)-w) > 1e-6 && !(math.IsInf(w, -1) && math.IsInf(float64(p.LogProb), -1)) {
					t.Errorf("token %d: %v, want %v", p.ID, p.LogProb, w)
				}
			}
			for i, v := range c.logits {
				if w, got := want[i], logProbOf(v, logZ); math.Abs(float64(got)-w) > 1e-6 && !(math.IsInf(w, -1) && math.IsInf(float64(got), -1)) {
					t.Errorf("logProbOf token %d: %v, want %v", i, got, w)
				}
			}
		})
	}
	// All tokens impossible: -Inf everywhere, no NaN.
	logZ, top := logSoftmaxTop([]float32{inf, inf}, 1, nil)
	if lp := logProbOf(inf, logZ); !math.IsInf(float64(lp), -1) || !math.IsInf(float64(top[0].LogProb), -1) {
		t.Errorf("all -inf: %v %v", lp, top)
	}
}

// modelLogProbs is the reference: the model's logits after prompt+gen[:i],
// computed without the engine, log-softmaxed in float64.
func modelLogProbs(t *testing.T, st Stepper, prompt, gen []int32) [][]float64 {
	t.Helper()
	seq, err := st.NewSeq(0)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float64
	toks := prompt
	for i := 0; i <= len(gen); i++ {
		logits := make([]float32, st.NVocab())
		if err := st.Step(context.Background(), []Work{{Seq: seq, Tokens: toks, Logits: logits}}); err != nil {
			t.Fatal(err)
		}
		out = append(out, naiveLogSoftmax(logits))
		if i < len(gen) {
			toks = gen[i : i+1]
		}
	}
	return out
}

func TestLogProbs(t *testing.T) {
	m, tok := testModel(t, 0)
	st := PerSeq{M: m}
	prompt := tok.Encode("the log of a probability", true, false)
	e := startWith(t, st, tok, Options{Slots: 2})
	for _, c := range []struct {
		name string
		edit func(*Request)
	}{
		{"greedy", func(r *Request) {}},
		// The distribution is the raw model's: temperature, the
		// penalties and logit_bias change what is drawn, not the
		// reported log-probabilities.
		{"temperature", func(r *Request) {
			r.Sample = sample.Params{Temp: 1.5, TopK: 5, TopP: 1, RepeatPenalty: 1.3, RepeatLastN: 64, Seed: 7}
		}},
		{"bias and penalties", func(r *Request) {
			r.LogitBias = map[int32]float32{5: 8, 9: -100}
			r.FrequencyPenalty, r.PresencePenalty = 1, 0.5
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := greedy(12, prompt)
			r.LogProbs, r.TopLogProbs = true, 5
			c.edit(&r)
			_, ev := run(t, e, r)
			if len(ev.LogProbs) != len(ev.Tokens) || len(ev.Tokens) == 0 {
				t.Fatalf("%d logprobs for %d tokens", len(ev.LogProbs), len(ev.Tokens))
			}
			ref := modelLogProbs(t, st, prompt, ev.Tokens)
			for i, lp := range ev.LogProbs {
				want := ref[i]
				if lp.ID != ev.Tokens[i] || math.Abs(float64(lp.LogProb)-want[lp.ID]) > 1e-4 {
					t.Fatalf("step %d: token %d logprob %v, reference %v", i, lp.ID, lp.LogProb, want[lp.ID])
				}
				order := make([]int, len(want))
				for j := range order {
					order[j] = j
				}
				sort.SliceStable(order, func(a, b int) bool { return want[order[a]] > want[order[b]] })
				if len(lp.Top) != 5 {
					t.Fatalf("step %d: %d alternatives", i, len(lp.Top))
				}
				for j, p := range lp.Top {
					// Near-ties may order either way; the values must match.
					if math.Abs(float64(p.LogProb)-want[order[j]]) > 1e-4 || math.Abs(float64(p.LogProb)-want[p.ID]) > 1e-4 {
						t.Errorf("step %d top %d: token %d %v, reference #%d is %d %v", i, j, p.ID, p.LogProb, j, order[j], want[order[j]])
					}
				}
				if c.name == "greedy" && lp.Top[0].ID != lp.ID {
					t.Errorf("step %d: greedy token %d is not the most likely %d", i, lp.ID, lp.Top[0].ID)
				}
			}
		})
	}
	r := greedy(2, prompt)
	r.TopLogProbs = 3
	if _, err := e.Submit(context.Background(), r); err == nil {
		t.Error("top_logprobs without logprobs accepted")
	}
	r.LogProbs, r.TopLogProbs = true, MaxTopLogProbs+1
	if _, err := e.Submit(context.Background(), r); err == nil {
		t.Error("top_logprobs above the limit accepted")
	}
}

// TestChoicesShareThePrompt: n choices compute the prompt once and then
// generate exactly what n separate requests with the choices' seeds do.
func TestChoicesShareThePrompt(t *testing.T) {
	for _, sk := range steppers {
		t.Run(sk.name, func(t *testing.T) {
			m, tok := testModel(t, 0)
			prompt := tok.Encode("three ways to end a story", true, false)
			e := startWith(t, sk.make(m), tok, Options{Slots: 4, Chunk: 4})
			for _, c := range []struct {
				name string
				smp  sample.Params
			}{
				{"greedy", sample.Params{Temp: 0, RepeatPenalty: 1}},
				{"sampled", sample.Params{Temp: 1.2, TopP: 1, RepeatPenalty: 1, Seed: 42}},
			} {
				t.Run(c.name, func(t *testing.T) {
					r := Request{Prompt: prompt, Sample: c.smp, MaxTokens: 10}
					before := e.Stats()
					hs, err := e.SubmitN(context.Background(), r, 3)
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for i, h := range hs {
						text, ev, err := h.Collect(context.Background())
						if err != nil || ev.Err != nil {
							t.Fatalf("choice %d: %v %v", i, err, ev.Err)
						}
						if ev.Usage.CompletionTokens != 10 || ev.Usage.PromptTokens != len(prompt) {
							t.Errorf("choice %d usage %+v", i, ev.Usage)
						}
						got = append(got, text)
					}
					after := e.Stats()
					computed := after.PromptTokens - before.PromptTokens
					if computed > int64(len(prompt)) {
						t.Errorf("%d prompt tokens computed for 3 choices of a %d-token prompt: not shared", computed, len(prompt))
					}
					if after.ForkedTokens <= before.ForkedTokens {
						t.Errorf("no positions forked: %+v", after)
					}
					for i := range got {
						alone := r
						alone.Sample.Seed = choiceSeed(r.Sample.Seed, i)
						want, _ := run(t, e, alone)
						// Exact for both steppers: the F32 test model's
						// rows take the per-row dot path at any batch
						// size, so a choice's logits do not depend on
						// the choices stepped beside it.
						if got[i] != want {
							t.Errorf("choice %d %q, alone with its seed %q", i, got[i], want)
						}
					}
					if c.name == "sampled" && got[0] == got[1] && got[1] == got[2] {
						t.Errorf("three sampled choices are identical: %q", got[0])
					}
				})
			}
		})
	}
}

func TestChoicesLimitsAndCancel(t *testing.T) {
	m, tok := testModel(t, 0)
	prompt := tok.Encode("too many", true, false)
	e := startWith(t, PerSeq{M: m}, tok, Options{Slots: 2})
	for _, n := range []int{0, 3, MaxChoices + 1} {
		if _, err := e.SubmitN(context.Background(), greedy(2, prompt), n); err == nil {
			t.Errorf("n=%d accepted with 2 slots", n)
		}
	}
	if _, err := e.SubmitN(context.Background(), greedy(2, prompt), 3); !errors.Is(err, ErrTooManyChoices) {
		t.Errorf("n=3 with 2 slots: %v, want ErrTooManyChoices", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	hs, err := e.SubmitN(ctx, greedy(0, prompt), 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		_, ev, _ := h.Collect(context.Background())
		if !ev.Done || ev.Err == nil {
			t.Errorf("choice %d of a cancelled request: %+v", i, ev)
		}
	}
	// The slots are free again: a plain request runs.
	if text, ev := run(t, e, greedy(3, prompt)); ev.Usage.CompletionTokens != 3 {
		t.Errorf("after cancel: %q %+v", text, ev)
	}
	if st := e.Stats(); st.Running != 0 {
		t.Errorf("stats after: %+v", st)
	}
}
