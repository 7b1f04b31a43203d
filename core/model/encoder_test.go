package model

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/internal/archfixtures"
)

// encoderFixtures are the encoder rows of the shared fixture table.
func encoderFixtures(t *testing.T) []archfixtures.Fixture {
	var fs []archfixtures.Fixture
	for _, fx := range archfixtures.All() {
		if fx.Encoder() {
			fs = append(fs, fx)
		}
	}
	if len(fs) == 0 {
		t.Fatal("no encoder fixtures")
	}
	return fs
}

// TestEncoderGraph: properties of the encoder graph that a wrong graph
// breaks (its agreement with llama.cpp is TestEmbedGoldens'):
//   - attention is bidirectional: changing the last token changes the
//     first token's state (a causal mask would leave it alone);
//   - positions matter (learned embeddings for bert, RoPE for nomic-bert):
//     mean pooling of a permuted input differs;
//   - the result does not depend on the batch option (the input is one
//     batch whatever it is), the thread count, or what ran before;
//   - decoding passes are refused.
func TestEncoderGraph(t *testing.T) {
	ctx := context.Background()
	toks := testTokens
	for _, fx := range encoderFixtures(t) {
		m := openArch(t, fx.Arch, ggml.F32, Options{Threads: 2, Batch: 4})
		if !m.Cfg.NonCausal {
			t.Fatalf("%s: synth wrote a causal encoder", fx.Label)
		}
		embed := func(m *Model, toks []int32, p arch.Pooling) []float32 {
			t.Helper()
			v, err := m.Embed(ctx, toks, p)
			if err != nil {
				t.Fatalf("%s: %v", fx.Label, err)
			}
			return v
		}
		cls := embed(m, toks, arch.PoolCLS)
		changed := slices.Clone(toks)
		changed[len(changed)-1]++
		if slices.Equal(cls, embed(m, changed, arch.PoolCLS)) {
			t.Errorf("%s: the first token's state ignores the last token (causal attention?)", fx.Label)
		}
		// A file that leaves attention.causal true (llama.cpp's default)
		// gets causal attention: then the first state ignores later tokens.
		mc := openArch(t, fx.Arch, ggml.F32, Options{Threads: 2, Batch: 4})
		mc.Cfg.NonCausal = false
		if !slices.Equal(embed(mc, toks, arch.PoolCLS), embed(mc, changed, arch.PoolCLS)) {
			t.Errorf("%s: with causal attention the first token's state depends on the last token", fx.Label)
		}
		mean := embed(m, toks, arch.PoolMean)
		perm := slices.Clone(toks)
		slices.Reverse(perm)
		if slices.Equal(mean, embed(m, perm, arch.PoolMean)) {
			t.Errorf("%s: mean pooling of the reversed input is unchanged (positions ignored?)", fx.Label)
		}
		if got := embed(m, toks, arch.PoolCLS); !slices.Equal(got, cls) {
			t.Errorf("%s: a second Embed of the same input differs", fx.Label)
		}
		m1 := openArch(t, fx.Arch, ggml.F32, Options{Threads: 1, Batch: 64})
		if got := embed(m1, toks, arch.PoolMean); !slices.Equal(got, mean) {
			t.Errorf("%s: 1 thread, batch 64 gives another mean than 2 threads, batch 4", fx.Label)
		}
		none := embed(m1, toks, arch.PoolNone)
		E := m.Cfg.NEmbd
		if len(none) != len(toks)*E || !slices.Equal(none[:E], cls) {
			t.Errorf("%s: pooling none: %d values, first row equal to CLS %v", fx.Label, len(none), slices.Equal(none[:E], cls))
		}
		last := embed(m1, toks, arch.PoolLast)
		if !slices.Equal(last, none[(len(toks)-1)*E:]) {
			t.Errorf("%s: last pooling is not the last row", fx.Label)
		}
		rank := embed(m1, toks, arch.PoolRank)
		switch {
		case m.Cfg.ClsOutput && len(rank) != m.Cfg.NClsOut:
			t.Errorf("%s: rank pooling gave %d scores, want %d", fx.Label, len(rank), m.Cfg.NClsOut)
		case !m.Cfg.ClsDense && !m.Cfg.ClsOutput && !slices.Equal(rank, cls):
			t.Errorf("%s: rank pooling without a head is not the CLS state", fx.Label)
		}
		// Packed passes: several inputs in one pass (budget 64 rows) or
		// split (budget 4, as m's batch option), every pooling, give each
		// input's own vectors exactly (F32 weights: the products' rows do
		// not depend on the batch).
		inputs := [][]int32{toks, {5, 6}, changed, {7}}
		for _, p := range []arch.Pooling{arch.PoolNone, arch.PoolMean, arch.PoolCLS, arch.PoolLast, arch.PoolRank} {
			for _, mm := range []*Model{m, m1} {
				got, err := mm.EmbedBatch(ctx, inputs, p)
				if err != nil {
					t.Fatal(err)
				}
				for i, in := range inputs {
					if want := embed(m1, in, p); !slices.Equal(got[i], want) {
						t.Errorf("%s: %s pooling, batch budget %d: input %d differs from its own Embed", fx.Label, p, mm.enc.budget, i)
					}
				}
			}
		}
		if _, err := m.EmbedBatch(ctx, [][]int32{toks, {}}, arch.PoolCLS); err == nil {
			t.Errorf("%s: an empty input in a batch was accepted", fx.Label)
		}
		if _, err := m.Forward(ctx, toks); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: Forward on an encoder: %v, want ErrUnsupported", fx.Label, err)
		}
		if err := m.ForwardBatch(ctx, []SeqBatch{{Tokens: toks}}); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: ForwardBatch on an encoder: %v, want ErrUnsupported", fx.Label, err)
		}
		if _, err := m.Embed(ctx, make([]int32, m.Cfg.NCtxTrain+1), arch.PoolCLS); err == nil {
			t.Errorf("%s: an input longer than the context was accepted", fx.Label)
		}
		if _, err := m.Embed(ctx, []int32{int32(m.Cfg.NVocab)}, arch.PoolCLS); err == nil {
			t.Errorf("%s: a token outside the vocabulary was accepted", fx.Label)
		}
	}
}
