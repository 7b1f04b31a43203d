package serve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/tokenizer"
)

// encoderInputs are short texts of different lengths, as a retrieval
// pipeline sends them one per request.
func encoderInputs(t testing.TB, tok *tokenizer.Tokenizer, n int) [][]int32 {
	t.Helper()
	words := []string{"panda", "bamboo", "what is a panda?", "hi", "the quick brown fox jumps over the lazy dog",
		"embeddings for retrieval", "a b c d e f g", "memory-first inference"}
	var out [][]int32
	for i := range n {
		out = append(out, tok.Encode(fmt.Sprintf("%s %d", words[i%len(words)], i), true, true))
	}
	return out
}

// embedAlone is each input's vector from Model.Embed, one input at a time.
func embedAlone(t testing.TB, m *model.Model, inputs [][]int32) [][]float32 {
	t.Helper()
	want := make([][]float32, len(inputs))
	for i, in := range inputs {
		v, err := m.Embed(context.Background(), in, arch.PoolCLS)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = v
	}
	return want
}

// TestEncoderBatchesAcrossRequests sends many one-input requests at once:
// each gets exactly the vector Model.Embed gives its input alone, whether
// its pass held other requests' inputs or not, and at least one pass held
// several requests (else nothing was batched).
func TestEncoderBatchesAcrossRequests(t *testing.T) {
	g := loadRerankGolden(t)
	_, m, tok := encoderServer(t, g, arch.PoolCLS)
	inputs := encoderInputs(t, tok, 24)
	want := embedAlone(t, m, inputs)
	enc := NewEncoder(m, arch.PoolCLS)
	got := make([][]float32, len(inputs))
	errs := make([]error, len(inputs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, in := range inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			vs, err := enc.EmbedBatch(context.Background(), [][]int32{in})
			if err == nil && len(vs) != 1 {
				err = fmt.Errorf("%d vectors for one input", len(vs))
			}
			if err == nil {
				got[i] = vs[0]
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	for i := range inputs {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("request %d: vector differs from Model.Embed of its input alone", i)
		}
	}
	if p := enc.passes.Load(); p >= int64(len(inputs)) {
		t.Errorf("%d requests took %d passes: nothing was batched across requests", len(inputs), p)
	} else {
		t.Logf("%d requests in %d passes", len(inputs), p)
	}
	// Several inputs in one request still come back in order.
	vs, err := enc.EmbedBatch(context.Background(), inputs[:5])
	if err != nil {
		t.Fatal(err)
	}
	for i := range vs {
		if !slices.Equal(vs[i], want[i]) {
			t.Errorf("input %d of a five-input request differs", i)
		}
	}
}

// TestEncoderCancelled: a request whose context is done gets its error and
// does not cancel the pass it shares with live requests.
func TestEncoderCancelled(t *testing.T) {
	g := loadRerankGolden(t)
	_, m, tok := encoderServer(t, g, arch.PoolCLS)
	enc := NewEncoder(m, arch.PoolCLS)
	inputs := encoderInputs(t, tok, 4)
	want := embedAlone(t, m, inputs)
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := enc.EmbedBatch(dead, inputs[:1]); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled request: %v, want context.Canceled", err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		ctx := context.Background()
		if i%2 == 1 {
			c, cancel := context.WithCancel(ctx)
			cancel()
			ctx = c
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			vs, err := enc.EmbedBatch(ctx, inputs[i%4:i%4+1])
			if i%2 == 1 {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("request %d (cancelled): %v", i, err)
				}
				return
			}
			if err != nil || len(vs) != 1 || !slices.Equal(vs[0], want[i%4]) {
				t.Errorf("request %d (live): err %v", i, err)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkEncoderRequests: 32 concurrent clients, one short text per
// request, batched across requests against one request per pass (the
// encoder before it batched). inputs/s is the figure to compare.
func BenchmarkEncoderRequests(b *testing.B) {
	g := loadRerankGolden(b)
	_, m, tok := encoderServer(b, g, arch.PoolCLS)
	inputs := encoderInputs(b, tok, 32)
	for _, mode := range []struct {
		name       string
		perRequest bool
	}{{"per-request", true}, {"batched", false}} {
		b.Run(mode.name, func(b *testing.B) {
			enc := NewEncoder(m, arch.PoolCLS)
			enc.perRequest = mode.perRequest
			for b.Loop() {
				var wg sync.WaitGroup
				for _, in := range inputs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := enc.EmbedBatch(context.Background(), [][]int32{in}); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*len(inputs))/b.Elapsed().Seconds(), "inputs/s")
		})
	}
}
