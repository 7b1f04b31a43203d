package model

import (
	"context"
	"math"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// TestForwardBatchMatchesForward runs three sequences of different lengths
// through ForwardBatch (prompts split across batches of 4 rows, then
// decoding steps of one token each) and compares every logit with each
// sequence run alone through Forward: identical for F32/F16 weights, within
// TestBatchInvariance's bound for the packed Q8_0/Q4_0 MatMul. Both cache
// encodings' attention paths (F16 blocked, F32 per token) are covered.
func TestForwardBatchMatchesForward(t *testing.T) {
	prompts := [][]int32{{1, 5, 9, 13, 17}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1}}
	decode := [][]int32{{20, 21, 22}, {30, 31, 32}, {40, 41, 42}}
	for _, typ := range []ggml.Type{ggml.F32, ggml.Q4_0} {
		for _, kvt := range []ggml.Type{ggml.F16, ggml.F32} {
			c := defTiny()
			c.typ = typ
			m := c.open(t, Options{Threads: 2, Batch: 4, KVType: kvt})
			V := m.Cfg.NVocab
			// Reference: each sequence alone.
			var want [][][]float32 // [seq][step][logit]
			for i, p := range prompts {
				kv, err := m.NewKV(0)
				if err != nil {
					t.Fatal(err)
				}
				old, _ := m.SwapKV(kv)
				var steps [][]float32
				lg, err := m.Forward(context.Background(), p)
				for _, d := range decode[i] {
					if err != nil {
						t.Fatal(err)
					}
					steps = append(steps, append([]float32(nil), lg...))
					lg, err = m.Forward(context.Background(), []int32{d})
				}
				if err != nil {
					t.Fatal(err)
				}
				steps = append(steps, append([]float32(nil), lg...))
				_, _ = m.SwapKV(old)
				want = append(want, steps)
			}
			tol := 0.0
			if typ == ggml.Q4_0 {
				for _, s := range want {
					for _, v := range s[0] {
						tol = max(tol, 1e-5*math.Abs(float64(v)))
					}
				}
			}
			kvs := make([]*KVCache, len(prompts))
			bufs := make([][]float32, len(prompts))
			for i := range kvs {
				kvs[i], _ = m.NewKV(0)
				bufs[i] = make([]float32, V)
			}
			check := func(step int) {
				t.Helper()
				for i := range prompts {
					for j, v := range bufs[i] {
						if d := math.Abs(float64(v - want[i][step][j])); d > tol {
							t.Fatalf("%s kv %s: sequence %d step %d logit %d = %v, alone %v (tolerance %.3g)", typ, kvt, i, step, j, v, want[i][step][j], tol)
						}
					}
				}
			}
			var sb []SeqBatch
			for i, p := range prompts {
				sb = append(sb, SeqBatch{KV: kvs[i], Tokens: p, Logits: bufs[i]})
			}
			if err := m.ForwardBatch(context.Background(), sb); err != nil {
				t.Fatal(err)
			}
			check(0)
			for step := 0; step < 3; step++ {
				sb = sb[:0]
				for i := range prompts {
					sb = append(sb, SeqBatch{KV: kvs[i], Tokens: []int32{decode[i][step]}, Logits: bufs[i]})
				}
				if err := m.ForwardBatch(context.Background(), sb); err != nil {
					t.Fatal(err)
				}
				check(step + 1)
			}
			for i, p := range prompts {
				if kvs[i].Len() != len(p)+3 {
					t.Errorf("sequence %d holds %d positions, want %d", i, kvs[i].Len(), len(p)+3)
				}
			}
			if m.KV().Len() != 0 {
				t.Errorf("the model's own cache was touched: %d positions", m.KV().Len())
			}
		}
	}
}

func TestForwardBatchErrors(t *testing.T) {
	m := defTiny().open(t, Options{Threads: 1, Batch: 4, KVType: ggml.F16})
	a, _ := m.NewKV(8)
	b, _ := m.NewKV(8)
	if err := m.ForwardBatch(context.Background(), []SeqBatch{{KV: a, Tokens: []int32{1, 2}}, {KV: b, Tokens: []int32{1}}}); err != nil {
		t.Fatal(err)
	}
	for name, sb := range map[string][]SeqBatch{
		"empty":        {{KV: a}},
		"shared cache": {{KV: a, Tokens: []int32{1}}, {KV: a, Tokens: []int32{2}}},
		"bad token":    {{KV: a, Tokens: []int32{1}}, {KV: b, Tokens: []int32{-1}}},
		"context full": {{KV: a, Tokens: []int32{1}}, {KV: b, Tokens: make([]int32, 8)}},
		"logits size":  {{KV: a, Tokens: []int32{1}, Logits: make([]float32, 3)}},
	} {
		if err := m.ForwardBatch(context.Background(), sb); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if a.Len() != 2 || b.Len() != 1 {
			t.Fatalf("%s: caches changed to %d, %d positions", name, a.Len(), b.Len())
		}
	}
}
