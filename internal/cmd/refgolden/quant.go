package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/internal/golden"
	"github.com/memvanta/memvanta/internal/realfiles"
)

var modelsDir, onlyTypes string

// QuantShape is the core/synth F16 model every llama.cpp file type is made
// from: the synth goldens' shape (rows of 256 and 512, so every K-quant
// applies; n_embd 256 gives core/synth's margins of several logits).
var QuantShape = golden.Synth{Embd: 256, Layers: 4, Heads: 8, KVHeads: 4, FF: 512, Ctx: 512, RopeBase: 10000,
	Eps: 1e-5, Type: "F16", Seed: 21}

// FallbackShape has rows of 384 (not a multiple of 256): llama.cpp's
// quantizer (v0.4.0) replaces K-quants there (Q4_K by Q5_0, Q5_K by Q5_1,
// Q6_K by Q8_0, Q3_K by Q4_0; the goldens record the resulting mixes)
// while ffn_down (rows of 768) keeps them.
var FallbackShape = golden.Synth{Embd: 384, Layers: 2, Heads: 6, KVHeads: 2, FF: 768, Ctx: 512, RopeBase: 10000,
	Eps: 1e-5, Type: "F16", Seed: 22}

// QuantTypes are llama.cpp's file types (its names, as quantize takes them;
// "+pure" adds --pure: MXFP4_MOE on a dense model is otherwise all Q8_0).
var QuantTypes = []string{"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K_S", "Q3_K_M",
	"Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ4_NL", "IQ4_XS",
	"MXFP4_MOE" + realfiles.PureSuffix, "TQ1_0", "TQ2_0",
	"IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ2_M" + realfiles.PureSuffix, "IQ3_XXS", "IQ3_XS", "IQ3_S", "IQ3_M", "IQ1_S", "IQ1_M"}

// FallbackTypes are the file types made on FallbackShape.
var FallbackTypes = []string{"Q4_K_M", "Q5_K_S", "Q3_K_M"}

// wanted reports whether -only selects file type ft of the golden named
// base (e.g. Q3_K_M selects quant-Q3_K_M and quant-fallback-Q3_K_M;
// quant-fallback-Q3_K_M only the latter).
func wanted(ft, base string) bool {
	if onlyTypes == "" {
		return true
	}
	for _, t := range strings.Split(onlyTypes, ",") {
		if t == ft || t == base {
			return true
		}
	}
	return false
}

// quantGoldens writes quant-FTYPE.json and quant-fallback-FTYPE.json.
func quantGoldens(ref string, vf *gguf.File, vocabName, out string, n int) error {
	tools, err := realfiles.ToolsFromEnv()
	if err != nil {
		return err
	}
	dir, err := realfiles.CacheDir()
	if err != nil {
		return err
	}
	for _, set := range []struct {
		prefix string
		shape  golden.Synth
		types  []string
	}{{"quant-", QuantShape, QuantTypes}, {"quant-fallback-", FallbackShape, FallbackTypes}} {
		s := set.shape
		s.Vocab = vocabName
		src, err := realfiles.SynthBytes(context.Background(), s, vf)
		if err != nil {
			return err
		}
		for _, ft := range set.types {
			if !wanted(ft, set.prefix+ft) {
				continue
			}
			q := quantRecording{tools: tools, dir: dir, ref: ref, generator: "go run ./internal/cmd/refgolden -sets quant",
				synth: s, src: src, ftype: ft, prompts: prompts, n: n}
			if err := q.record(filepath.Join(out, set.prefix+ft+".json")); err != nil {
				return err
			}
		}
	}
	return nil
}

// storiesPrompts include the empty prompt (BOS only), from which the model
// tells llama2.c's published story.
var storiesPrompts = []string{"", "Once upon a time", "Lily and Ben went to the park.", "The little dog was sad because",
	"Tom had a red ball"}

// StoriesFiles are the stories260K files of ../shared/models.
var StoriesFiles = []string{"F32", "untied-F32", "F16", "Q8_0", "Q5_1", "Q5_0", "Q4_1", "Q4_0"}

func storiesGoldens(ref, out string) error {
	for _, ft := range StoriesFiles {
		if !wanted(ft, "stories260K-"+ft) {
			continue
		}
		name := "stories260K-" + ft + ".gguf"
		path, err := filepath.Abs(filepath.Join(modelsDir, name))
		if err != nil {
			return err
		}
		sum, err := realfiles.FileSHA256(path)
		if err != nil {
			return err
		}
		g := golden.File{Generator: "go run ./internal/cmd/refgolden -sets stories", File: name, ModelSHA256: sum,
			Synth: golden.Synth{Type: ft}}
		if err := addCases(ref, path, storiesPrompts, 64, &g); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := writeGolden(filepath.Join(out, "stories260K-"+ft+".json"), g); err != nil {
			return err
		}
	}
	return nil
}

// addCases runs each prompt with llama.cpp's default flash-attention
// setting (the golden) and with it off (the spread).
func addCases(ref, path string, prompts []string, n int, g *golden.File) error {
	for _, p := range prompts {
		c, env, err := greedy(ref, path, p, n)
		if err != nil {
			return fmt.Errorf("%q: %w", p, err)
		}
		off, _, err := greedy(ref, path, p, n, "--fa", "off")
		if err != nil {
			return fmt.Errorf("%q (fa off): %w", p, err)
		}
		sp := spread(c, off)
		c.Spread = &sp
		g.Reference = env
		g.Cases = append(g.Cases, c)
	}
	return nil
}

// spread is the largest difference of a top-5 gap between two runs, over
// the steps whose preceding tokens agree (after the first differing token
// the runs continue different texts).
func spread(a, b golden.Case) float64 {
	worst := 0.0
	for i := 0; i < len(a.Steps) && i < len(b.Steps); i++ {
		if i > 0 && a.Tokens[i-1] != b.Tokens[i-1] {
			break
		}
		for _, e := range a.Steps[i].Top {
			for _, f := range b.Steps[i].Top {
				if f.ID == e.ID {
					worst = math.Max(worst, math.Abs(e.DLogit-f.DLogit))
				}
			}
		}
	}
	return math.Round(worst*1e4) / 1e4
}

// quantRecording is one golden of a file llama.cpp's quantizer makes from
// a synthetic source model: the quantized file's hash and type mix, and
// llama.cpp's runs on it.
type quantRecording struct {
	tools     realfiles.Tools
	dir, ref  string
	generator string
	synth     golden.Synth
	src       []byte // the source model's bytes (realfiles.SynthBytes of synth)
	ftype     string
	prompts   []string
	n         int
}

func (q quantRecording) record(dst string) error {
	path, err := q.tools.FileFrom(context.Background(), q.dir, q.src, q.ftype)
	if err != nil {
		return err
	}
	qsum, err := realfiles.FileSHA256(path)
	if err != nil {
		return err
	}
	qb, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	qf, err := gguf.Parse(bytes.NewReader(qb), int64(len(qb)), gguf.DefaultLimits())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	sum := sha256.Sum256(q.src)
	g := golden.File{Generator: q.generator, Synth: q.synth, ModelSHA256: hex.EncodeToString(sum[:]),
		Quant: &golden.Quant{FileType: q.ftype, SHA256: qsum, Types: realfiles.TypeCounts(qf)}}
	if err := addCases(q.ref, path, q.prompts, q.n, &g); err != nil {
		return fmt.Errorf("%s: %w", q.ftype, err)
	}
	return writeGolden(dst, g)
}

func writeGolden(dst string, g golden.File) error {
	b, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "refgolden: wrote %s\n", dst)
	return nil
}
