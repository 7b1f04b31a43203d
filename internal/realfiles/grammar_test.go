package realfiles

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/grammar"
	"github.com/memvanta/memvanta/kernels"
)

// grammarGolden is testdata/grammar/stories260K-F32.json, written by
// scripts/grammar-golden.mjs: llama.cpp's grammar-constrained greedy runs
// (node-llama-cpp's LlamaGrammar) on stories260K.
type grammarGolden struct {
	File        string `json:"file"`
	ModelSHA256 string `json:"model_sha256"`
	Cases       []struct {
		Name         string         `json:"name"`
		Prompt       string         `json:"prompt"`
		Grammar      string         `json:"grammar"`
		PromptTokens []int32        `json:"prompt_tokens"`
		Tokens       []int32        `json:"tokens"`
		EOG          bool           `json:"eog"`
		Top          [][][2]float64 `json:"top"` // per step: [id, logit - top logit] as node-llama-cpp reports them
	} `json:"cases"`
}

// TestGrammarMatchesLlama replays llama.cpp's constrained greedy runs with
// teacher forcing: at every step our grammar must allow llama.cpp's token,
// and our constrained argmax (our logits, our mask) must be llama.cpp's
// token, except at a near-tie (llama.cpp's own logits of the two tokens
// within nearTie; counted and capped). Where llama.cpp ended with an
// end-of-generation token, our grammar must accept there.
func TestGrammarMatchesLlama(t *testing.T) {
	const nearTie = 0.01
	b, err := os.ReadFile("../../testdata/grammar/stories260K-F32.json")
	if err != nil {
		t.Fatal(err)
	}
	var g grammarGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	path := storiesPath(t, g.File)
	if sum, err := FileSHA256(path); err != nil {
		t.Fatal(err)
	} else if sum != g.ModelSHA256 {
		t.Fatalf("%s has sha256 %s, the golden was made from %s", path, sum, g.ModelSHA256)
	}
	l := open(t, path)
	vocab, err := engine.GrammarVocab(l.tok)
	if err != nil {
		t.Fatal(err)
	}
	ties, steps := 0, 0
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			gr, err := grammar.Parse(c.Grammar, "root")
			if err != nil {
				t.Fatal(err)
			}
			mt, err := grammar.NewMatcher(gr)
			if err != nil {
				t.Fatal(err)
			}
			if got := l.tok.Encode(c.Prompt, true, false); !equalIDs(got, c.PromptTokens) {
				t.Fatalf("prompt tokenizes to %v, llama.cpp %v", got, c.PromptTokens)
			}
			m := l.model(t, kernels.Select())
			logits, err := m.Forward(context.Background(), c.PromptTokens)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range c.Tokens {
				mask, err := mt.Mask(vocab)
				if err != nil {
					t.Fatal(err)
				}
				best, bestV := int32(-1), float32(math.Inf(-1))
				for id, v := range logits {
					if mask[id>>6]&(1<<(id&63)) != 0 && v > bestV {
						best, bestV = int32(id), v
					}
				}
				steps++
				if mask[want>>6]&(1<<(want&63)) == 0 {
					t.Fatalf("step %d: llama.cpp's token %d %q is refused by our grammar", i, want, l.tok.PieceSpecial(want))
				}
				if best != want {
					gap := math.Inf(-1)
					for _, e := range c.Top[i] {
						if int32(e[0]) == best {
							gap = e[1]
						}
					}
					if gap < -nearTie {
						t.Fatalf("step %d: our constrained argmax %d %q, llama.cpp's %d %q (llama.cpp's logit gap %.3f)", i, best, l.tok.PieceSpecial(best), want, l.tok.PieceSpecial(want), gap)
					}
					ties++
					t.Logf("step %d: near-tie: ours %d %q, llama.cpp's %d %q (gap %.3f)", i, best, l.tok.PieceSpecial(best), want, l.tok.PieceSpecial(want), gap)
				}
				if err := mt.Accept(l.tok.PieceSpecial(want)); err != nil {
					t.Fatal(err)
				}
				if logits, err = m.Forward(context.Background(), []int32{want}); err != nil {
					t.Fatal(err)
				}
			}
			if c.EOG && !mt.Accepting() {
				t.Errorf("llama.cpp ended with an end-of-generation token where our grammar does not accept")
			}
		})
	}
	t.Logf("%d steps, %d near-ties", steps, ties)
	if ties > 2 {
		t.Errorf("%d near-ties in %d steps: more than the 2 the stories260K replays allow", ties, steps)
	}
}
