package model

import (
	"context"
	"math"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/internal/archfixtures"
	"github.com/memvanta/memvanta/kernels"
)

// checkRows feeds prefix, then rest one token at a time through a, and
// prefix then rest as one ForwardRows call through b: every row of the
// latter must be bit-identical to the matching one-token logits (what
// speculative verification relies on for greedy identity), and the caches
// must end at the same length.
func checkRows(t *testing.T, label string, a, b *Model, prefix, rest []int32) {
	t.Helper()
	ctx := context.Background()
	if _, err := a.Forward(ctx, prefix); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Forward(ctx, prefix); err != nil {
		t.Fatal(err)
	}
	V := a.Cfg.NVocab
	out := make([]float32, len(rest)*V)
	if err := b.ForwardRows(ctx, rest, out, true); err != nil {
		t.Fatal(err)
	}
	for i, tok := range rest {
		want, err := a.Forward(ctx, []int32{tok})
		if err != nil {
			t.Fatal(err)
		}
		got := out[i*V : (i+1)*V]
		for j := range want {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) && !(math.IsNaN(float64(got[j])) && math.IsNaN(float64(want[j]))) {
				t.Fatalf("%s: row %d logit %d = %v, one-token generation gave %v", label, i, j, got[j], want[j])
			}
		}
	}
	if a.Pos() != b.Pos() {
		t.Fatalf("%s: cache holds %d positions, one at a time %d", label, b.Pos(), a.Pos())
	}
}

// TestForwardRowsExact: on every kernel path and for weight types with
// packed MatMul kernels (Q4_0, Q8_0, Q4_K, from small batches), the rows of
// a verification pass equal one-token generation bit for bit, over more
// rows than the packed kernels' minimum batch and across two batches (-b 8).
func TestForwardRowsExact(t *testing.T) {
	rest := []int32{7, 19, 23, 2, 55, 61, 8, 8, 13, 44, 71, 1, 30, 29, 4, 66, 12, 40, 3, 9}
	paths := kernels.Available()
	if raceEnabled || testing.Short() {
		paths = []*kernels.Impl{kernels.Select()} // every path is minutes under the race detector
	}
	for _, k := range paths {
		for _, typ := range []ggml.Type{ggml.F32, ggml.Q8_0, ggml.Q4_0, ggml.Q4_K} {
			c := defTiny()
			c.typ = typ
			// Rows of several blocks (a sum of two is the same in any
			// order) and, for Q4_K, of two super-blocks.
			c.embd, c.ff, c.rot = 512, 512, 32
			for _, batch := range []int{8, 32} {
				opt := Options{Threads: 2, Batch: batch, KVType: ggml.F16, Kernels: k}
				checkRows(t, k.Name+" "+typ.String(), c.open(t, opt), c.open(t, opt), testTokens, rest)
			}
		}
	}
}

// TestArchForwardRowsExact: the same for every architecture fixture
// (sliding windows, soft-caps, q/k norms, biases, experts) with Q8_0
// matrices and both cache types.
func TestArchForwardRowsExact(t *testing.T) {
	rest := []int32{7, 19, 23, 2, 55, 61, 8, 8, 13, 44, 1, 30, 29, 4, 12, 40, 3}
	k := kernels.Select()
	for _, am := range archfixtures.All() {
		if am.Encoder() {
			continue // no next-token logits to verify (Embed only)
		}
		for _, kv := range []ggml.Type{ggml.F16, ggml.F32} {
			opt := Options{Threads: 2, Batch: 32, KVType: kv, Kernels: k}
			a := openArch(t, am.Arch, ggml.Q8_0, opt)
			b := openArch(t, am.Arch, ggml.Q8_0, opt)
			checkRows(t, am.Label+" kv "+kv.String(), a, b, testTokens, rest)
		}
	}
}

func TestForwardRowsErrors(t *testing.T) {
	m := defTiny().open(t, Options{Threads: 1, Batch: 4, KVType: ggml.F16, Ctx: 8})
	ctx := context.Background()
	V := m.Cfg.NVocab
	if err := m.ForwardRows(ctx, nil, nil, false); err == nil {
		t.Error("no tokens: no error")
	}
	if err := m.ForwardRows(ctx, []int32{1, 2}, make([]float32, V), false); err == nil {
		t.Error("short logits buffer: no error")
	}
	if err := m.ForwardRows(ctx, []int32{1, int32(V)}, make([]float32, 2*V), true); err == nil {
		t.Error("token outside the vocabulary: no error")
	}
	if err := m.ForwardRows(ctx, make([]int32, 9), make([]float32, 9*V), false); err == nil {
		t.Error("past the context: no error")
	}
	if m.Pos() != 0 {
		t.Errorf("failed calls left %d positions", m.Pos())
	}
}
