package model

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/internal/golden"
	"github.com/memvanta/memvanta/kernels"
)

// embedCosTol is the least cosine similarity allowed between our pooled
// embedding and llama.cpp's on the same synthetic file (see
// TestEmbedGoldens for the measurements behind the bounds).
var embedCosTol = map[string]float64{"F16": 0.9999, "Q8_0": 0.9999}

type embedGolden struct {
	Synth       golden.Synth `json:"synth"`
	ModelSHA256 string       `json:"model_sha256"`
	Cases       []struct {
		Text      string    `json:"text"`
		Tokens    []int32   `json:"tokens"`
		Embedding []float32 `json:"embedding"`
	} `json:"cases"`
}

// TestEmbedGoldens compares last-token pooled embeddings with llama.cpp's
// (testdata/golden/embed-*.json, scripts/embed-golden.sh) on every kernel
// path: llama.cpp's tokens must be ours too (BOS/EOS as its embedding
// context adds them), and cosine similarity must reach embedCosTol.
// Measured worst (every path): F16 1-2.4e-8 (float reassociation, f16 KV),
// Q8_0 1-8.3e-6 (activations re-quantized to Q8_0 before each matmul flip
// roundings, as in TestArchGoldens); the Q8_0 bound 1-1e-4 is 12x that.
func TestEmbedGoldens(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(goldenDir, "embed-*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no embedding goldens (%v)", err)
	}
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) { replayEmbed(t, name) })
	}
}

func replayEmbed(t *testing.T, path string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g embedGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("golden has no cases")
	}
	vpath := filepath.Join("../../../shared/vocab", g.Synth.Vocab)
	vb, err := os.ReadFile(vpath)
	if err != nil {
		t.Skipf("vocab %s not available (%v)", vpath, err)
	}
	vf, err := gguf.Parse(bytes.NewReader(vb), int64(len(vb)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := g.Synth.Config(vf, kernels.Quantize)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := synth.Write(context.Background(), &buf, sc, nil); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != g.ModelSHA256 {
		t.Fatalf("core/synth no longer rebuilds the golden model: regenerate with scripts/embed-golden.sh")
	}
	f := parse(t, b)
	pool, ok, err := arch.PoolingOf(f)
	if err != nil || !ok {
		t.Fatalf("pooling_type: %v %v", ok, err)
	}
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	w, err := MemWeightsFromBytes(f, b)
	if err != nil {
		t.Fatal(err)
	}
	paths := kernels.Available()
	if testing.Short() || raceEnabled {
		paths = []*kernels.Impl{kernels.Select()}
	}
	for _, k := range paths {
		m, err := New(cfg, w, Options{Threads: 2, Batch: 32, KVType: ggml.F16, Kernels: k})
		if err != nil {
			t.Fatal(err)
		}
		worst := 1.0
		for _, c := range g.Cases {
			if got := tok.Encode(c.Text, true, false); !equalIDs(got, c.Tokens) {
				t.Errorf("%q tokenizes to %v, llama.cpp embedded %v", c.Text, got, c.Tokens)
			}
			e, err := m.Embed(context.Background(), c.Tokens, pool)
			if err != nil {
				t.Fatal(err)
			}
			cos, err := Cosine(e, c.Embedding)
			if err != nil {
				t.Fatal(err)
			}
			worst = min(worst, cos)
		}
		m.Close()
		if worst < embedCosTol[g.Synth.Type] {
			t.Errorf("%s: worst cosine with llama.cpp %.7f < %.7f", k.Name, worst, embedCosTol[g.Synth.Type])
		}
		t.Logf("%s %s: worst cosine with llama.cpp 1-%.3g", g.Synth.Type, k.Name, 1-worst)
	}
}

func TestNormalize(t *testing.T) {
	v := []float32{3, 4}
	Normalize(v)
	if v[0] != 0.6 || v[1] != 0.8 {
		t.Fatalf("got %v", v)
	}
	z := []float32{0, 0}
	Normalize(z)
	if z[0] != 0 || z[1] != 0 {
		t.Fatalf("zero vector became %v", z)
	}
	if _, err := Cosine(v, z[:1]); err == nil {
		t.Fatal("cosine of different lengths: no error")
	}
}
