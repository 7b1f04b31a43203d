package model

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/kernels"
)

// mixedTiny is a two-layer model whose every matrix has its own type, as in
// llama.cpp's _S/_M/_L mixes but more varied: within one layer q, k and v
// need three different activation encodings (Q8_0, F16, Q8_1) in layer 1
// and share one (Q8_K) in layer 0; gate and up differ in both; every
// executable type appears (IQ4_NL/IQ4_XS too); the embedding and output
// are of other types again, tied (Q5_0) or not.
func mixedTiny(tied bool) tiny {
	c := defTiny()
	c.embd, c.ff, c.heads, c.kvHeads, c.rot = 256, 256, 4, 2, 32
	c.tied = tied
	c.types = map[string]ggml.Type{
		"token_embd.weight":        ggml.Q6_K,
		"output.weight":            ggml.Q5_K,
		"blk.0.attn_q.weight":      ggml.Q4_K,
		"blk.0.attn_k.weight":      ggml.Q6_K,
		"blk.0.attn_v.weight":      ggml.Q4_K,
		"blk.0.attn_output.weight": ggml.IQ4_XS,
		"blk.0.ffn_gate.weight":    ggml.Q3_K,
		"blk.0.ffn_up.weight":      ggml.Q2_K,
		"blk.0.ffn_down.weight":    ggml.Q6_K,
		"blk.1.attn_q.weight":      ggml.Q8_0,
		"blk.1.attn_k.weight":      ggml.F16,
		"blk.1.attn_v.weight":      ggml.Q4_1,
		"blk.1.attn_output.weight": ggml.BF16,
		"blk.1.ffn_gate.weight":    ggml.IQ4_NL,
		"blk.1.ffn_up.weight":      ggml.Q4_K,
		"blk.1.ffn_down.weight":    ggml.Q5_1,
		"blk.1.ffn_norm.weight":    ggml.F16,
		"blk.0.ffn_norm.weight":    ggml.F16,
		"blk.0.attn_norm.weight":   ggml.F32,
		"output_norm.weight":       ggml.F32,
	}
	if tied {
		c.types["token_embd.weight"] = ggml.Q5_0
	}
	return c
}

// TestMixedTypesMatchNaive: with every tensor of its own type, the graph
// must pick each tensor's kernels (a wrong choice gives garbage, not a
// small error) and match the float64 reference over the same dequantized
// weights. What separates the two is the activation encoding each weight
// type's dot product uses (Q8_0/Q8_1/Q8_K round each activation to 1/127 of
// its block's max, F16/BF16 to 2^-11/2^-8 relative) and f32 sums. On this
// shape a uniform Q8_0 model (the long-standing path) already measures
// 1.4e-2 of the largest logit, the uniform K types 1.1-1.7e-2, and this mix
// 2.2e-2 untied, 3.4e-3 tied; the tolerance is 5e-2, while a tensor run by
// the wrong kernel moves logits by O(1) of the largest.
func TestMixedTypesMatchNaive(t *testing.T) {
	for _, tied := range []bool{false, true} {
		t.Run(fmt.Sprintf("tied=%v", tied), func(t *testing.T) {
			c := mixedTiny(tied)
			b := c.build(t)
			f := parse(t, b)
			ref := newNaive(t, f, b)
			for _, k := range kernels.Available() {
				m := c.open(t, Options{Threads: 2, Batch: 5, KVType: ggml.F32, Kernels: k})
				for _, ti := range f.Tensors { // the file really is mixed
					if want, ok := c.types[ti.Name]; ok && ti.Type != want {
						t.Fatalf("%s has type %s, want %s", ti.Name, ti.Type, want)
					}
				}
				ref := *ref
				ref.kc, ref.vc, ref.pos = make([][][]float64, c.layers), make([][][]float64, c.layers), 0
				var want []float64
				for _, tok := range testTokens[:9] {
					want = ref.step(tok)
				}
				got, err := m.Forward(context.Background(), testTokens[:9])
				if err != nil {
					t.Fatal(err)
				}
				worst := maxRelErr(got, want)
				for _, tok := range testTokens[9:] { // generation: the fused dispatches
					want = ref.step(tok)
					if got, err = m.Forward(context.Background(), []int32{tok}); err != nil {
						t.Fatal(err)
					}
					worst = math.Max(worst, maxRelErr(got, want))
				}
				t.Logf("%s: max logit error %.3g of the largest", k.Name, worst)
				if worst > 5e-2 {
					t.Errorf("%s: logits differ from the float64 reference by %.3g of the largest, tolerance 5e-2", k.Name, worst)
				}
			}
		})
	}
}

// TestMixedBatchInvariance: prefill (MatMul per projection) and generation
// (fused q/k/v and gate/up dispatches over matrices of different types)
// give the same logits; only the packed Q4_0/Q8_0 MatMul may reorder f32
// sums (see TestBatchInvariance), and this model has a Q8_0 matrix.
func TestMixedBatchInvariance(t *testing.T) {
	c := mixedTiny(false)
	var ref []float32
	for _, batch := range []int{1, 4, 32} {
		m := c.open(t, Options{Threads: 2, Batch: batch, KVType: ggml.F16})
		got, err := m.Forward(context.Background(), testTokens)
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = append([]float32(nil), got...)
			continue
		}
		tol := 0.0
		for _, v := range ref {
			tol = max(tol, 1e-5*math.Abs(float64(v)))
		}
		for i := range ref {
			if d := math.Abs(float64(got[i] - ref[i])); d > tol {
				t.Fatalf("batch %d: logit %d = %v, batch 1 gave %v (tolerance %.3g)", batch, i, got[i], ref[i], tol)
			}
		}
	}
}

// TestUnexecutableTypesRefused: a type no kernel path runs is refused at
// load, naming the tensor and the type, wherever it sits.
func TestUnexecutableTypesRefused(t *testing.T) {
	for _, tc := range []struct {
		tensor string
		typ    ggml.Type
		tied   bool
	}{
		{"blk.1.ffn_down.weight", ggml.I16, false},
		{"blk.0.attn_k.weight", ggml.I16, false},
		{"blk.1.attn_q.weight", ggml.F64, false},
		{"output.weight", ggml.I32, false},
		{"token_embd.weight", ggml.I32, false},
		{"token_embd.weight", ggml.F64, true},
		{"blk.0.ffn_norm.weight", ggml.I8, false},
	} {
		c := mixedTiny(tc.tied)
		c.types[tc.tensor] = tc.typ
		_, err := ConfigFromGGUF(parse(t, c.build(t)))
		msg := fmt.Sprint(err)
		if err == nil || !strings.Contains(msg, tc.tensor) || !strings.Contains(msg, "type "+tc.typ.String()) ||
			!strings.Contains(msg, "cannot execute") {
			t.Errorf("%s as %s: err = %v, want a refusal naming both", tc.tensor, tc.typ, err)
		}
	}
}
