package model

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/internal/archfixtures"
	"github.com/memvanta/memvanta/kernels"
)

// openArch opens a test architecture (internal/archfixtures: every
// architecture with every option on, sliding windows shorter than the test
// sequences, soft-caps that bite, LongRoPE's long and short factors) on
// this package's small shape, for the graph properties that must hold
// whatever the architecture. Agreement with llama.cpp is TestArchGoldens'.
func openArch(t testing.TB, a synth.Arch, typ ggml.Type, opt Options) *Model {
	t.Helper()
	c := synth.Config{Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, Ctx: 256, RopeBase: 10000, Eps: 1e-6,
		Type: typ, VocabSize: 300, Seed: 3, Quantize: kernels.Quantize, Arch: a}
	var buf bytes.Buffer
	if err := synth.Write(context.Background(), &buf, c, nil); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	f := parse(t, b)
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	w, err := MemWeightsFromBytes(f, b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(cfg, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// TestArchBatchInvariance: prefill in batches of 4 or 32 gives the logits
// of token-by-token generation for every architecture (the blocked F16
// attention applies soft-caps and sliding-window masks per row exactly as
// the one-token path; the F32 cache takes the other attention routine).
func TestArchBatchInvariance(t *testing.T) {
	for _, am := range archfixtures.All() {
		if am.Encoder() {
			continue // no logits: encoder_test.go
		}
		for _, kv := range []ggml.Type{ggml.F16, ggml.F32} {
			var ref []float32
			for _, batch := range []int{1, 4, 32} {
				m := openArch(t, am.Arch, ggml.F32, Options{Threads: 2, Batch: batch, KVType: kv})
				got, err := m.Forward(context.Background(), testTokens)
				if err != nil {
					t.Fatal(err)
				}
				if ref == nil {
					ref = append([]float32(nil), got...)
					continue
				}
				for i := range ref {
					if got[i] != ref[i] && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(ref[i]))) {
						t.Fatalf("%s kv %s batch %d: logit %d = %v, batch 1 gave %v", am.Label, kv, batch, i, got[i], ref[i])
					}
				}
			}
		}
	}
}

// TestArchGenerationAllocs: the options every architecture adds keep a
// generation step free of allocations in the graph (see
// TestGenerationAllocs).
func TestArchGenerationAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, am := range archfixtures.All() {
		if am.Encoder() {
			continue // no logits: encoder_test.go
		}
		m := openArch(t, am.Arch, ggml.Q8_0, Options{Threads: 1, Batch: 8, KVType: ggml.F16, Ctx: 256})
		ctx := context.Background()
		if _, err := m.Forward(ctx, testTokens); err != nil {
			t.Fatal(err)
		}
		tok := []int32{3}
		for i := 0; i < 4; i++ {
			if _, err := m.Forward(ctx, tok); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := m.Forward(ctx, tok); err != nil {
				t.Fatal(err)
			}
		})
		if limit := float64(2*m.Cfg.NLayer + 1); allocs > limit {
			t.Errorf("%s: a generation step allocates %v times, want at most %v (kernels.MatVec's)", am.Label, allocs, limit)
		}
	}
}

// TestArchForwardBatch: several sequences through ForwardBatch give each
// sequence's own logits for every architecture (sliding windows, soft-caps,
// q/k norms and the rest apply per sequence against its own cache), exactly
// for F32 weights.
func TestArchForwardBatch(t *testing.T) {
	prompts := [][]int32{{1, 5, 9, 13, 17, 21, 25}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1}}
	next := []int32{40, 41, 42}
	for _, am := range archfixtures.All() {
		if am.Encoder() {
			continue // no logits: encoder_test.go
		}
		m := openArch(t, am.Arch, ggml.F32, Options{Threads: 2, Batch: 4, KVType: ggml.F16})
		V := m.Cfg.NVocab
		var want [][]float32
		for i, p := range prompts {
			kv, err := m.NewKV(0)
			if err != nil {
				t.Fatal(err)
			}
			old, _ := m.SwapKV(kv)
			if _, err := m.Forward(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			lg, err := m.Forward(context.Background(), []int32{next[i]})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, append([]float32(nil), lg...))
			_, _ = m.SwapKV(old)
		}
		var sb []SeqBatch
		for _, p := range prompts {
			kv, _ := m.NewKV(0)
			sb = append(sb, SeqBatch{KV: kv, Tokens: p})
		}
		if err := m.ForwardBatch(context.Background(), sb); err != nil {
			t.Fatal(err)
		}
		for i := range sb {
			sb[i].Tokens, sb[i].Logits = []int32{next[i]}, make([]float32, V)
		}
		if err := m.ForwardBatch(context.Background(), sb); err != nil {
			t.Fatal(err)
		}
		for i := range sb {
			for j, v := range sb[i].Logits {
				if v != want[i][j] {
					t.Fatalf("%s: sequence %d logit %d = %v, alone %v", am.Label, i, j, v, want[i][j])
				}
			}
		}
	}
}
