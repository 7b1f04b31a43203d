package engine

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/model"
)

// TestEmbedRequests runs Embed requests through the scheduler next to a
// generating request, on both steppers and with a shared prompt prefix
// reused from a slot's cache, and checks each vector against Model.Embed
// on the same tokens alone (which core/model checks against llama.cpp).
// The batched stepper runs each sequence's rows in a mixed batch, so the
// vectors are compared by cosine, not bit for bit.
func TestEmbedRequests(t *testing.T) {
	for _, sp := range steppers {
		t.Run(sp.name, func(t *testing.T) {
			m, tok := testModel(t, 256)
			prompts := [][]int32{
				tok.Encode("Once upon a time", true, false),
				tok.Encode("Once upon a time there was a dog", true, false), // reuses the first's prefix
				tok.Encode("The sun", true, false),
			}
			want := make([][]float32, len(prompts))
			for i, p := range prompts {
				v, err := m.Embed(context.Background(), p, arch.PoolLast)
				if err != nil {
					t.Fatal(err)
				}
				want[i] = v
			}
			e := startWith(t, sp.make(m), tok, Options{Slots: 2, Queue: 8})
			var wg sync.WaitGroup
			wg.Add(1)
			h, err := e.Submit(context.Background(), greedy(8, prompts[2]))
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				defer wg.Done()
				if _, ev, err := h.Collect(context.Background()); err != nil || ev.Err != nil {
					t.Errorf("generation next to embeddings: %v / %v", err, ev.Err)
				}
			}()
			for i, p := range prompts {
				_, ev := run(t, e, Request{Prompt: p, Embed: true})
				if ev.Finish != "stop" || ev.Cause != CauseEmbedded || ev.Usage.CompletionTokens != 0 {
					t.Fatalf("prompt %d: finish %q cause %q completion %d", i, ev.Finish, ev.Cause, ev.Usage.CompletionTokens)
				}
				cos, err := model.Cosine(ev.Embedding, want[i])
				if err != nil {
					t.Fatal(err)
				}
				if cos < 1-1e-6 {
					t.Errorf("prompt %d: cosine with Model.Embed %.9f", i, cos)
				}
			}
			wg.Wait()
		})
	}
}

// gateless hides the stepper's Embedder method.
type gateless struct{ Stepper }

func TestEmbedNeedsEmbedder(t *testing.T) {
	m, tok := testModel(t, 64)
	e := startWith(t, gateless{PerSeq{M: m}}, tok, Options{Slots: 1})
	if _, err := e.Submit(context.Background(), Request{Prompt: []int32{1, 2}, Embed: true}); !errors.Is(err, ErrNoEmbeddings) {
		t.Fatalf("err %v, want ErrNoEmbeddings", err)
	}
}
