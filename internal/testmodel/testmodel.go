// Package testmodel builds small synthetic models in memory for the tests of
// packages that run a model (engine, server, CLI).
package testmodel

import (
	"bytes"
	"context"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/core/tokenizer"
)

// Bytes writes a 2-layer, 64-wide F32 llama model with a 400-token
// synthetic vocabulary (no network, no files).
func Bytes(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	cfg := synth.Config{Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, Ctx: 1024, Type: ggml.F32,
		VocabSize: 400, Seed: 7, RopeBase: 10000, Eps: 1e-5}
	if err := synth.Write(context.Background(), &buf, cfg, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// New returns the model (context ctx, 0 = 1024) and its tokenizer.
func New(t testing.TB, ctx int) (*model.Model, *tokenizer.Tokenizer) {
	t.Helper()
	return FromBytes(t, Bytes(t), model.Options{Threads: 2, Ctx: ctx, KVType: ggml.F16})
}

// FromBytes loads the GGUF file b (held in memory) as a model with opt,
// closed when the test ends, and its tokenizer.
func FromBytes(t testing.TB, b []byte, opt model.Options) (*model.Model, *tokenizer.Tokenizer) {
	t.Helper()
	f, err := gguf.Parse(bytes.NewReader(b), int64(len(b)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	w, err := model.MemWeightsFromBytes(f, b)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := model.ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(mc, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return m, tok
}
