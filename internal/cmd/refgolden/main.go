// Command refgolden regenerates testdata/golden/*.json: greedy
// continuations and per-step top-5 logit gaps from llama.cpp (through the
// node-llama-cpp harness, ../shared/ref or an installed copy) on synthetic
// models made by core/synth. The golden files record the synth parameters
// and the model's SHA-256, so the Go tests rebuild the identical model in
// memory and need neither node nor the model file at test time.
//
// Sets (-sets, comma-separated; default all):
//   - synth:   synth-{F32,F16,Q8_0,Q4_0}.json (core/synth writes the types)
//   - random:  random-qwen2.json
//   - arch:    arch-*.json (the other architectures; also -arch-only)
//   - quant:   quant-*.json, one per llama.cpp file type: a core/synth F16
//     model converted by llama.cpp's quantizer (needs MEMVANTA_QUANTIZE and
//     MEMVANTA_LIBLLAMA, see internal/realfiles), plus quant-fallback-*.json
//     on a shape whose rows are not all multiples of 256
//   - stories: stories260K-*.json for the trained model in ../shared/models
//
// quant and stories cases also record llama.cpp's own spread between its
// flash-attention settings (fa_off_spread), which the tests' bounds cite.
//
//	go run ./internal/cmd/refgolden -ref /work/ref
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/internal/golden"
	"github.com/memvanta/memvanta/kernels"
)

// The shape every synthetic golden model shares: small enough that the
// tests stay fast, wide enough (n_embd 256) for core/synth's logit margins.
var shape = golden.Synth{Embd: 256, Layers: 4, Heads: 8, KVHeads: 4, FF: 512, Ctx: 512, RopeBase: 10000, Eps: 1e-5}

var onlyRandom, onlyArch bool

// sets selects what to regenerate.
var sets = map[string]bool{}

var prompts = []string{
	"Once upon a time",
	"The quick brown fox jumps over the lazy dog.",
	"Hello, world! 12345",
}

func main() {
	ref := flag.String("ref", "/work/ref", "directory with an installed ref.mjs harness (npm ci done)")
	vocabDir := flag.String("vocab", "../shared/vocab", "directory with ggml-vocab-llama-spm.gguf")
	out := flag.String("out", "testdata/golden", "output directory")
	n := flag.Int("n", 32, "greedy tokens per prompt")
	randomOnly := flag.Bool("random-only", false, "regenerate only random-*.json (the unstructured qwen2 model)")
	archOnly := flag.Bool("arch-only", false, "regenerate only arch-*.json (the other architectures)")
	setList := flag.String("sets", "synth,random,arch,quant,stories", "comma-separated sets to regenerate: synth, random, arch, quant, stories")
	models := flag.String("models", "../shared/models", "directory with the stories260K-*.gguf files (set stories)")
	only := flag.String("only", "", "quant and stories sets: comma-separated file types or golden names to regenerate (default all)")
	flag.Parse()
	onlyRandom, onlyArch = *randomOnly, *archOnly
	for _, s := range strings.Split(*setList, ",") {
		sets[strings.TrimSpace(s)] = true
	}
	if onlyRandom {
		sets = map[string]bool{"random": true}
	}
	if onlyArch {
		sets = map[string]bool{"arch": true}
	}
	modelsDir, onlyTypes = *models, *only
	if err := run(*ref, *vocabDir, *out, *n); err != nil {
		fmt.Fprintln(os.Stderr, "refgolden:", err)
		os.Exit(1)
	}
}

func run(ref, vocabDir, out string, n int) error {
	const vocabName = "ggml-vocab-llama-spm.gguf"
	vb, err := os.ReadFile(filepath.Join(vocabDir, vocabName))
	if err != nil {
		return err
	}
	vf, err := gguf.Parse(bytes.NewReader(vb), int64(len(vb)), gguf.DefaultLimits())
	if err != nil {
		return fmt.Errorf("%s: %w", vocabName, err)
	}
	tmp, err := os.MkdirTemp("", "refgolden")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	types := []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0, ggml.Q4_0}
	if !sets["synth"] {
		types = nil
	}
	for i, typ := range types {
		s := shape
		s.Type, s.Seed, s.Vocab = typ.String(), uint64(11+i), vocabName
		cfg, err := s.Config(vf, kernels.Quantize)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := synth.Write(context.Background(), &buf, cfg, nil); err != nil {
			return err
		}
		sum := sha256.Sum256(buf.Bytes())
		path := filepath.Join(tmp, "synth-"+typ.String()+".gguf")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return err
		}
		g := golden.File{Generator: "go run ./internal/cmd/refgolden", Synth: s, ModelSHA256: hex.EncodeToString(sum[:])}
		for _, p := range prompts {
			c, env, err := greedy(ref, path, p, n)
			if err != nil {
				return fmt.Errorf("%s %q: %w", typ, p, err)
			}
			g.Reference = env
			g.Cases = append(g.Cases, c)
		}
		b, err := json.MarshalIndent(g, "", " ")
		if err != nil {
			return err
		}
		dst := filepath.Join(out, "synth-"+typ.String()+".json")
		if err := os.WriteFile(dst, append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "refgolden: wrote %s\n", dst)
	}
	if sets["random"] {
		if err := randomGolden(ref, vf, vocabName, tmp, out, n); err != nil {
			return err
		}
	}
	if sets["arch"] {
		if err := archGoldens(ref, vf, vocabName, tmp, out, n); err != nil {
			return err
		}
	}
	if sets["quant"] {
		if err := quantGoldens(ref, vf, vocabName, out, n); err != nil {
			return err
		}
	}
	if sets["stories"] {
		return storiesGoldens(ref, out)
	}
	return nil
}

// randomGolden covers qwen2 (q/k/v biases, NeoX RoPE, GQA, untied output),
// which core/synth does not write, with an unstructured random F32 model.
func randomGolden(ref string, vf *gguf.File, vocabName, tmp, out string, n int) error {
	r := golden.Random{Arch: "qwen2", Embd: 256, Layers: 2, Heads: 8, KVHeads: 2, FF: 512, Ctx: 512,
		RopeBase: 1e6, Eps: 1e-6, Bias: true, Seed: 3}
	var buf bytes.Buffer
	if err := golden.WriteRandom(&buf, r, vf); err != nil {
		return err
	}
	sum := sha256.Sum256(buf.Bytes())
	path := filepath.Join(tmp, "random-qwen2.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	g := golden.File{Generator: "go run ./internal/cmd/refgolden", Synth: golden.Synth{Type: "F32", Vocab: vocabName},
		Random: &r, ModelSHA256: hex.EncodeToString(sum[:])}
	for _, p := range prompts {
		c, env, err := greedy(ref, path, p, n)
		if err != nil {
			return fmt.Errorf("qwen2 %q: %w", p, err)
		}
		g.Reference = env
		g.Cases = append(g.Cases, c)
	}
	b, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		return err
	}
	dst := filepath.Join(out, "random-qwen2.json")
	if err := os.WriteFile(dst, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "refgolden: wrote %s\n", dst)
	return nil
}

// greedy runs `node ref.mjs greedy` and keeps what the tests compare.
// extra are more ref.mjs flags (e.g. --fa off).
func greedy(ref, model, prompt string, n int, extra ...string) (golden.Case, json.RawMessage, error) {
	args := append([]string{"ref.mjs", "greedy", model, "--prompt", prompt, "-n", fmt.Sprint(n), "--threads", "2", "--top", "5"}, extra...)
	cmd := exec.Command("node", args...)
	cmd.Dir = ref
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return golden.Case{}, nil, fmt.Errorf("ref.mjs greedy: %w", err)
	}
	var r struct {
		PromptTokens []int32         `json:"prompt_tokens"`
		Tokens       []int32         `json:"tokens"`
		Text         string          `json:"text"`
		Margins      json.RawMessage `json:"margins"`
		Steps        []golden.Step   `json:"steps"`
		Settings     json.RawMessage `json:"settings"`
		Env          json.RawMessage `json:"env"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return golden.Case{}, nil, fmt.Errorf("ref.mjs output: %w", err)
	}
	env, _ := json.Marshal(map[string]json.RawMessage{"env": r.Env, "settings": r.Settings})
	return golden.Case{Prompt: prompt, PromptTokens: r.PromptTokens, Tokens: r.Tokens, Text: r.Text,
		Margins: r.Margins, Steps: r.Steps}, env, nil
}
