package engine

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/internal/archfixtures"
	"github.com/memvanta/memvanta/internal/testmodel"
	"github.com/memvanta/memvanta/kernels"
)

// shiftModel opens a synthetic model with the given options.
func shiftModel(t testing.TB, c synth.Config, opt model.Options) (*model.Model, *tokenizer.Tokenizer) {
	t.Helper()
	var buf bytes.Buffer
	c.RopeBase, c.Eps, c.Quantize = 10000, 1e-5, kernels.Quantize
	if err := synth.Write(context.Background(), &buf, c, nil); err != nil {
		t.Fatal(err)
	}
	return testmodel.FromBytes(t, buf.Bytes(), opt)
}

// shiftReference is greedy generation of n tokens by hand, with
// llama.cpp's context shift: before a token is computed into a cache of
// capacity ctx that it would fill (Len+1 >= ctx), keep positions stay and
// half of the rest are discarded. When the cache refuses with
// model.ErrShiftWindow, it computes the kept tokens again in a fresh
// cache. It returns the tokens, the shifts and the recomputed ones.
func shiftReference(t *testing.T, m *model.Model, prompt []int32, ctx, keep, n int) ([]int32, int, int) {
	t.Helper()
	kv, err := m.NewKV(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := m.SwapKV(kv)
	defer m.SwapKV(old)
	bg := context.Background()
	toks := append([]int32(nil), prompt...) // the cache's tokens
	logits, err := m.Forward(bg, prompt)
	if err != nil {
		t.Fatal(err)
	}
	var out []int32
	shifts, recomputes := 0, 0
	for len(out) < n {
		next := int32(kernels.Argmax(logits))
		out = append(out, next)
		if len(out) == n {
			break
		}
		in := []int32{next}
		if m.KV().Len()+1 >= ctx {
			d := (len(toks) - keep) / 2
			shifts++
			err := m.ShiftKV(m.KV(), keep, d)
			toks = append(toks[:keep], toks[keep+d:]...)
			switch {
			case errors.Is(err, model.ErrShiftWindow):
				recomputes++
				m.KV().Truncate(0)
				in = append(append([]int32(nil), toks...), next)
			case err != nil:
				t.Fatal(err)
			}
		}
		if logits, err = m.Forward(bg, in); err != nil {
			t.Fatal(err)
		}
		toks = append(toks, next)
	}
	return out, shifts, recomputes
}

// TestContextShift: with ContextShift a greedy request runs past a
// 64-position slot, shifting as llama.cpp does (n_keep after BOS, half of
// the rest discarded): its tokens are those of the hand-written loop
// above, Stats and Usage count its shifts, and without ContextShift the
// same request ends at the context. A later request reuses the cache only
// up to the shift's keep (past it the cache holds keys computed with the
// discarded tokens) and generates what a fresh cache does.
func TestContextShift(t *testing.T) {
	m, tok := shiftModel(t, synth.Config{Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, Ctx: 1024,
		Type: ggml.Q8_0, VocabSize: 300, Seed: 11, Gain: 6}, model.Options{Threads: 2, Batch: 32, KVType: ggml.F16})
	const ctx, gen = 64, 150
	prompt := tok.Encode("the context shift keeps this prompt", true, false)
	keep := 4
	for _, sk := range steppers {
		t.Run(sk.name, func(t *testing.T) {
			r := Request{Prompt: prompt, Sample: sample.Params{Temp: 0, RepeatPenalty: 1}, MaxTokens: gen, IgnoreEOS: true,
				ContextShift: true, NKeep: keep}
			e, err := New(sk.make(m), tok, Options{Slots: 1, CtxPerSlot: ctx})
			if err != nil {
				t.Fatal(err)
			}
			got, ev := stepAll(t, e, r)
			want, shifts, _ := shiftReference(t, m, prompt, ctx, keep+1, gen) // + BOS
			if ev.Cause != CauseMaxTokens || len(got) != gen {
				t.Fatalf("%d tokens, cause %q: want %d generated past the %d-position context", len(got), ev.Cause, gen, ctx)
			}
			if shifts < 2 {
				t.Fatalf("reference shifted %d times; the test wants at least 2", shifts)
			}
			st := e.Stats()
			if st.Shifts != int64(shifts) || ev.Usage.Shifts != shifts || st.ShiftRecomputes != 0 {
				t.Fatalf("shifts: stats %d (recomputed %d), usage %d, want %d", st.Shifts, st.ShiftRecomputes, ev.Usage.Shifts, shifts)
			}
			for i := range want { // ForwardBatch's logits are Forward's
				if got[i] != want[i] {
					t.Fatalf("token %d: %d, the reference loop %d", i, got[i], want[i])
				}
			}
			// Prefix reuse after the shift: the prompt again, no shift.
			r2 := greedy(8, prompt)
			got2, ev2 := stepAll(t, e, r2)
			if ev2.Usage.CachedTokens != keep+1 {
				t.Fatalf("after a shift keeping %d, the same prompt reused %d cached tokens", keep+1, ev2.Usage.CachedTokens)
			}
			want2, _, _ := shiftReference(t, m, prompt, ctx, 0, 8)
			for i := range want2 {
				if got2[i] != want2[i] {
					t.Fatalf("after a shift, token %d: %d, a fresh cache %d", i, got2[i], want2[i])
				}
			}
			// Without ContextShift: the context ends it.
			r.ContextShift = false
			got3, ev3 := stepAll(t, e, r)
			if ev3.Cause != CauseContext || ev3.Finish != "length" || len(got3) >= gen {
				t.Fatalf("without context shift: %d tokens, cause %q", len(got3), ev3.Cause)
			}
			// Options.ContextShift (llama-server's flag) shifts every
			// request, with the request's NKeep.
			es, err := New(sk.make(m), tok, Options{Slots: 1, CtxPerSlot: ctx, ContextShift: true})
			if err != nil {
				t.Fatal(err)
			}
			got4, ev4 := stepAll(t, es, r)
			if ev4.Usage.Shifts != shifts || len(got4) != gen || es.Stats().Shifts != int64(shifts) {
				t.Fatalf("Options.ContextShift: %d tokens, %d shifts, want %d and %d", len(got4), ev4.Usage.Shifts, gen, shifts)
			}
		})
	}
}

// TestContextShiftRecompute: when the sliding-window rings cannot shift
// (a window of 300 with 32 positions of slack, keeping a 600-token prompt
// whose tail falls in the shifted window), the engine computes the kept
// tokens again, and generates what the reference loop does.
func TestContextShiftRecompute(t *testing.T) {
	m, tok := shiftModel(t, synth.Config{Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, Ctx: 2048,
		Type: ggml.Q8_0, VocabSize: 300, Seed: 12, Gain: 6, Arch: synth.Arch{Name: "gemma2", HeadDim: 64, Window: 300}},
		model.Options{Threads: 2, Batch: 32, KVType: ggml.F16, SWASlack: 32})
	const ctx, gen = 1024, 430
	prompt := make([]int32, 600)
	prompt[0] = tok.BOS()
	for i := 1; i < len(prompt); i++ {
		prompt[i] = int32(3 + (i*7)%290)
	}
	r := Request{Prompt: prompt, Sample: sample.Params{Temp: 0, RepeatPenalty: 1}, MaxTokens: gen, IgnoreEOS: true,
		ContextShift: true, NKeep: -1}
	e, err := New(PerSeq{M: m}, tok, Options{Slots: 1, CtxPerSlot: ctx, Chunk: 256})
	if err != nil {
		t.Fatal(err)
	}
	if _, ring := e.slots[0].seq.(kvSeq).kv.Window(); ring == 0 || ring >= ctx {
		t.Fatalf("ring of %d positions in a %d-position slot", ring, ctx)
	}
	got, ev := stepAll(t, e, r)
	want, shifts, recomputes := shiftReference(t, m, prompt, ctx, len(prompt), gen)
	st := e.Stats()
	if recomputes == 0 || st.ShiftRecomputes != int64(recomputes) || st.Shifts != int64(shifts) {
		t.Fatalf("shifts %d (recomputed %d), the reference %d (%d)", st.Shifts, st.ShiftRecomputes, shifts, recomputes)
	}
	if ev.Cause != CauseMaxTokens || len(got) != gen {
		t.Fatalf("%d tokens, cause %q", len(got), ev.Cause)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("token %d: %d, the reference loop %d", i, got[i], want[i])
		}
	}
}

// TestContextShiftRefused: a request for context shift on a model whose
// cache cannot shift (an encoder: no RoPE) is refused at Submit.
func TestContextShiftRefused(t *testing.T) {
	var bert archfixtures.Fixture
	for _, f := range archfixtures.All() {
		if f.Label == "bert" {
			bert = f
		}
	}
	m, tok := shiftModel(t, synth.Config{Embd: 64, Layers: 1, Heads: 4, KVHeads: 4, FF: 128, Ctx: 128,
		Type: ggml.F32, VocabSize: 300, Seed: 1, Arch: bert.Arch}, model.Options{Threads: 1})
	e, err := New(PerSeq{M: m}, tok, Options{Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Submit(context.Background(), Request{Prompt: []int32{1, 2, 3}, Sample: sample.Params{RepeatPenalty: 1}, ContextShift: true})
	if !errors.Is(err, ErrNoShift) || !errors.Is(err, model.ErrShiftUnsupported) {
		t.Fatalf("Submit with context shift on an encoder: %v, want ErrNoShift", err)
	}
}

// stepAll runs r alone on e (stepped here) and returns its tokens and
// final event.
func stepAll(t *testing.T, e *Engine, r Request) ([]int32, Event) {
	t.Helper()
	h, err := e.Submit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	var out []int32
	for {
		busy := e.Step(context.Background())
		for {
			ev, ok := h.TryNext()
			if !ok {
				break
			}
			if ev.Done {
				if ev.Err != nil {
					t.Fatal(ev.Err)
				}
				return out, ev
			}
			out = append(out, ev.Tokens...)
		}
		if !busy {
			t.Fatal("the request ended without a final event")
		}
	}
}
