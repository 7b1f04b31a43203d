package model

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/internal/golden"
	"github.com/memvanta/memvanta/kernels"
)

// dlogitTol is how far our logit gaps (logit_i - logit_top1, for llama.cpp's
// top-5 candidates) may be from llama.cpp's at each greedy step. The golden
// gaps are rounded to 1e-3. With F32/F16 weights the engines differ only by
// float reassociation and llama.cpp's f16 flash-attention accumulators
// (measured max 0.0009 F32, 0.0019 F16). With Q8_0/Q4_0 weights every matmul re-quantizes its
// input to Q8_0 (steps of 1/127 of a block's max), so a last-bit difference
// upstream can flip a rounding and the flips cascade: llama.cpp itself moves
// gaps by ~0.04 between its flash-attention on and off paths on these files.
// (Measured max 0.036 Q8_0, 0.043 Q4_0.) The tolerances are ~2.5-3.5x the
// largest deviation measured here; a wrong
// graph (e.g. a 1% attention-scale error) moves the gaps by 0.1-1.
var dlogitTol = map[string]float64{"F32": 0.005, "F16": 0.005, "Q8_0": 0.1, "Q4_0": 0.15}

// pathTol bounds the logit difference between the scalar path and a SIMD
// path over a whole greedy run, relative to the largest |logit|. F32 paths
// differ only by summation order (measured 1.8e-5 after 32 steps); F16
// weights round activations to f16 and Q8_0/Q4_0 to Q8_0 before every
// matmul, so last-bit differences flip roundings that then propagate
// (measured 1.6e-4 for F16, 3.7e-3 for Q8_0/Q4_0). Tolerances are ~3x.
var pathTol = map[string]float64{"F32": 1e-4, "F16": 5e-4, "Q8_0": 1e-2, "Q4_0": 1e-2}

const goldenDir = "../../testdata/golden"

func loadGolden(t *testing.T, name string) (*golden.File, []byte, *gguf.File) {
	t.Helper()
	g, err := golden.Read(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	vpath := filepath.Join("../../../shared/vocab", g.Synth.Vocab)
	vb, err := os.ReadFile(vpath)
	if err != nil {
		t.Skipf("vocab %s not available (%v); golden replay needs it", vpath, err)
	}
	vf, err := gguf.Parse(bytes.NewReader(vb), int64(len(vb)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := g.Synth.Config(vf, kernels.Quantize)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if g.Random != nil {
		err = golden.WriteRandom(&buf, *g.Random, vf)
	} else {
		err = synth.Write(context.Background(), &buf, cfg, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	sum := sha256.Sum256(b)
	if h := hex.EncodeToString(sum[:]); h != g.ModelSHA256 {
		t.Fatalf("core/synth no longer rebuilds the golden model (sha256 %s, golden %s): regenerate with go run ./internal/cmd/refgolden", h, g.ModelSHA256)
	}
	return g, b, parse(t, b)
}

// TestGoldenGreedy replays llama.cpp's greedy continuations on synthetic
// F32, F16, Q8_0 and Q4_0 models: every token must be identical on every
// kernel path, each step's top-5 logit gaps must match llama.cpp's within
// dlogitTol, and the SIMD paths' logits must match the scalar path's within
// pathTol. The prompts are tokenized by core/tokenizer and checked against
// llama.cpp's tokenization too.
func TestGoldenGreedy(t *testing.T) {
	names := []string{"synth-F32.json", "synth-F16.json", "synth-Q8_0.json", "synth-Q4_0.json", "random-qwen2.json"}
	if raceEnabled {
		// The replay checks numerics, not concurrency (the other tests run
		// the same code under -race); rebuilding the larger models with the
		// race detector on would dominate the package's test time.
		names = names[3:4]
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) { replayGolden(t, name) })
	}
}

// TestArchGoldens replays llama.cpp's greedy runs on every architecture
// core/synth writes besides the plain llama one (testdata/golden/arch-*.json,
// see internal/cmd/refgolden/archs.go): qwen3, gemma2, gemma3, phi3
// (LongRoPE long and short, partial rotary), llama with llama3 rope_freqs,
// llama with a fused attn_qkv and biases; F16 and Q8_0 weights. Tokens
// must be identical, gaps within dlogitTol (the bounds of the llama
// goldens: the same kernels and rounding points; measured worst 0.0021
// F16), SIMD paths within pathTol of scalar.
func TestArchGoldens(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(goldenDir, "arch-*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no arch goldens (%v)", err)
	}
	if raceEnabled {
		names = names[:1]
	}
	for _, name := range names {
		name = filepath.Base(name)
		t.Run(name, func(t *testing.T) { replayGolden(t, name) })
	}
}

// replayGolden checks one golden file: llama.cpp's prompt tokenization,
// then its greedy continuation on every kernel path (see TestGoldenGreedy).
func replayGolden(t *testing.T, name string) {
	g, b, f := loadGolden(t, name)
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
	// Every kernel path replays the first prompt (and is compared
	// with the scalar path); the dispatch path replays them all.
	// Under -race or -short only the dispatch path's first prompt
	// runs, to keep the package's tests quick.
	sel := kernels.Select()
	quick := testing.Short() || raceEnabled
	for ci, c := range g.Cases {
		if got := tok.Encode(c.Prompt, true, false); !equalIDs(got, c.PromptTokens) {
			t.Errorf("prompt %q tokenizes to %v, llama.cpp %v", c.Prompt, got, c.PromptTokens)
		}
		paths := []*kernels.Impl{sel}
		switch {
		case quick && ci > 0:
			continue
		case !quick && ci == 0:
			paths = kernels.Available() // scalar last
		}
		var byPath [][][]float32
		for _, k := range paths {
			m, err := New(cfg, w, Options{Threads: 2, Batch: 32, KVType: ggml.F16, Kernels: k})
			if err != nil {
				t.Fatal(err)
			}
			byPath = append(byPath, replay(t, m, c, g.Synth.Type, k.Name, minMargin(g)))
			m.Close()
		}
		scalar := byPath[len(byPath)-1]
		for pi, k := range paths[:len(paths)-1] {
			worst := 0.0
			for i, l := range byPath[pi] {
				worst = math.Max(worst, relDiff(l, scalar[i]))
			}
			if worst > pathTol[g.Synth.Type] {
				t.Errorf("%s %q: %s logits differ from scalar by %.3g of max |logit|, tolerance %.3g",
					g.Synth.Type, c.Prompt, k.Name, worst, pathTol[g.Synth.Type])
			}
			t.Logf("%s %q: %s vs scalar logits: max diff %.3g of max |logit|", g.Synth.Type, c.Prompt, k.Name, worst)
		}
	}
}

// minMargin is the top-2 logit gap below which a step's argmax is not
// compared. core/synth's llama models have margins of several logits, so
// every step counts; the unstructured random model (qwen2) has the tiny
// margins of random logits, so its argmax is compared wherever llama.cpp's
// own gap is at least twice the gap tolerance (and its top-5 gaps at every
// step). The mixture-of-experts files route through near-ties too, and
// their margins go down to thousandths of a logit (gpt-oss Q8_0: 0.007 at
// one step, where llama.cpp's flash-attention-off path has 0.001): a step
// whose llama.cpp top-2 gap is within the gap tolerance is a tie at that
// precision, so its argmax is not compared, only its gaps (which bound our
// top-2 gap to within the tolerance of llama.cpp's).
func minMargin(g *golden.File) float64 {
	switch {
	case g.Random != nil:
		return 2 * dlogitTol[g.Synth.Type]
	case g.Synth.Arch != nil && g.Synth.Arch.Experts > 0:
		return dlogitTol[g.Synth.Type]
	}
	return 0
}

// replay runs one golden case, feeding llama.cpp's tokens (teacher
// forcing), and returns each step's logits.
func replay(t *testing.T, m *Model, c golden.Case, typ, path string, minMargin float64) [][]float32 {
	t.Helper()
	ctx := context.Background()
	logits, err := m.Forward(ctx, c.PromptTokens)
	if err != nil {
		t.Fatal(err)
	}
	var all [][]float32
	worst, ties := 0.0, 0
	for i, want := range c.Tokens {
		all = append(all, append([]float32(nil), logits...))
		got := int32(kernels.Argmax(logits))
		top := c.Steps[i].Top
		decisive := len(top) < 2 || -top[1].DLogit >= minMargin
		if !decisive {
			ties++
		}
		if got != want && decisive {
			t.Fatalf("%s/%s %q step %d: greedy token %d, llama.cpp %d (llama.cpp top: %+v; our gap %.4f)",
				typ, path, c.Prompt, i, got, want, c.Steps[i].Top, logits[got]-logits[want])
		}
		for _, e := range top {
			d := math.Abs(float64(logits[e.ID]-logits[top[0].ID]) - e.DLogit)
			worst = math.Max(worst, d)
			if d > dlogitTol[typ] {
				t.Errorf("%s/%s %q step %d: gap of token %d is %.4f, llama.cpp %.4f (tolerance %.3g)",
					typ, path, c.Prompt, i, e.ID, logits[e.ID]-logits[top[0].ID], e.DLogit, dlogitTol[typ])
			}
		}
		if i == len(c.Tokens)-1 {
			break
		}
		if logits, err = m.Forward(ctx, []int32{want}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%s/%s %q: %d greedy tokens checked (%d ties within the gap bound), worst top-5 gap deviation %.4f", typ, path, c.Prompt,
		len(c.Tokens)-ties, ties, worst)
	return all
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// relDiff is max|a-b| over max|b|.
func relDiff(a, b []float32) float64 {
	d, m := 0.0, 0.0
	for i := range b {
		d = math.Max(d, math.Abs(float64(a[i]-b[i])))
		m = math.Max(m, math.Abs(float64(b[i])))
	}
	return d / m
}
