package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/memvanta/memvanta/core/grammar"
	"github.com/memvanta/memvanta/core/sample"
)

func TestGrammarConstrainsOutput(t *testing.T) {
	m, tok := testModel(t, 0)
	e := startEngine(t, m, tok, Options{Slots: 2})
	prompt := tok.Encode("hello", true, false)
	for _, c := range []struct {
		name, src string
		p         sample.Params
		bounded   bool // the language is finite: every reply completes
	}{
		{"greedy digits", `root ::= [0-9]{3,8} "."`, sample.Params{RepeatPenalty: 1}, true},
		{"greedy json", grammar.JSONObject(), sample.Params{RepeatPenalty: 1}, false},
		{"sampled alternatives", `root ::= ("yes" | "no" | "maybe") " " [a-z]{2,4} "!"`, sample.Params{Temp: 1.5, RepeatPenalty: 1, Seed: 3}, true},
		{"sampled json", grammar.JSONObject(), sample.Params{Temp: 1, RepeatPenalty: 1, Seed: 11}, false},
	} {
		g, err := grammar.Parse(c.src, "")
		if err != nil {
			t.Fatal(err)
		}
		stopped := 0
		for seed := uint64(0); seed < 3; seed++ {
			p := c.p
			p.Seed += seed
			text, ev := run(t, e, Request{Prompt: prompt, Sample: p, MaxTokens: 400, Grammar: g})
			// A synthetic model may never close a JSON string: running
			// out of tokens is allowed, but the text so far must be a
			// viable prefix; a stopped reply must be complete.
			gm, err := grammar.NewMatcher(g)
			if err != nil {
				t.Fatal(err)
			}
			if err := gm.AcceptString(text); err != nil {
				t.Errorf("%s (seed %d): output %q leaves the grammar: %v", c.name, seed, text, err)
			}
			if ev.Finish == "stop" && !gm.Accepting() {
				t.Errorf("%s (seed %d): stopped (%s) with incomplete %q", c.name, seed, ev.Cause, text)
			}
			if ev.Finish == "stop" {
				stopped++
			}
		}
		if c.bounded && stopped != 3 {
			t.Errorf("%s: a grammar with bounded output did not always complete", c.name)
		}
	}
}

// TestGrammarExhaustedEnds: a grammar that allows nothing more ends the
// request at once (CauseGrammar), without a step for the EOG token.
func TestGrammarExhaustedEnds(t *testing.T) {
	m, tok := testModel(t, 0)
	e := startEngine(t, m, tok, Options{Slots: 1})
	g, err := grammar.Parse(`root ::= "abc"`, "")
	if err != nil {
		t.Fatal(err)
	}
	text, ev := run(t, e, Request{Prompt: tok.Encode("x", true, false), Sample: sample.Params{RepeatPenalty: 1}, Grammar: g, MaxTokens: 50})
	if text != "abc" || ev.Cause != CauseGrammar || ev.Finish != "stop" {
		t.Fatalf("got %q, cause %q, finish %q", text, ev.Cause, ev.Finish)
	}
}

// TestGrammarNoToken: a grammar the vocabulary cannot spell fails the
// request with an error instead of generating unconstrained text.
func TestGrammarNoToken(t *testing.T) {
	m, tok := testModel(t, 0)
	e := startEngine(t, m, tok, Options{Slots: 1})
	// Tokens whose text starts with NUL are never allowed (as in
	// llama.cpp), so no token can start this reply.
	g, err := grammar.Parse(`root ::= "\x00"`, "")
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.Submit(context.Background(), Request{Prompt: tok.Encode("x", true, false), Sample: sample.Params{RepeatPenalty: 1}, Grammar: g, MaxTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	_, ev, err := h.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(ev.Err, grammar.ErrNoToken) {
		t.Fatalf("err %v, want ErrNoToken", ev.Err)
	}
}

func TestApplyMask(t *testing.T) {
	lg := make([]float32, 130)
	mask := make([]uint64, 3)
	if applyMask(lg, mask) {
		t.Error("empty mask left a token")
	}
	lg = make([]float32, 130)
	mask[0] = ^uint64(0)
	mask[2] = 1 << 1 // token 129
	if !applyMask(lg, mask) {
		t.Fatal("no token left")
	}
	for i, v := range lg {
		want := i < 64 || i == 129
		if (v == 0) != want {
			t.Fatalf("token %d: logit %v", i, v)
		}
	}
}

// TestGrammarMatcherReused: requests under one grammar reuse a matcher
// (its masks), and reply exactly as on an engine that never saw the
// grammar; a request under another grammar does not disturb that.
func TestGrammarMatcherReused(t *testing.T) {
	m, tok := testModel(t, 0)
	prompt := tok.Encode("json please", true, false)
	g, err := grammar.Parse(grammar.JSONObject(), "")
	if err != nil {
		t.Fatal(err)
	}
	other, err := grammar.Parse(`root ::= [a-z]{2,6} "!"`, "")
	if err != nil {
		t.Fatal(err)
	}
	e := startEngine(t, m, tok, Options{Slots: 1})
	for seed := uint64(0); seed < 4; seed++ {
		r := Request{Prompt: prompt, Sample: sample.Params{Temp: 1, RepeatPenalty: 1, Seed: seed}, MaxTokens: 40, Grammar: g}
		got, _ := run(t, e, r)
		fresh := startEngine(t, m, tok, Options{Slots: 1})
		want, _ := run(t, fresh, r)
		if got != want {
			t.Fatalf("seed %d: %q with a reused matcher, %q with a fresh one", seed, got, want)
		}
		run(t, e, Request{Prompt: prompt, Sample: sample.Params{RepeatPenalty: 1}, MaxTokens: 10, Grammar: other})
	}
}
