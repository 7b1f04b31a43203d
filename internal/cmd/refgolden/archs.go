package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/internal/archfixtures"
	"github.com/memvanta/memvanta/internal/golden"
	"github.com/memvanta/memvanta/internal/realfiles"
	"github.com/memvanta/memvanta/kernels"
)

// ArchTypes are the weight types core/synth writes for each arch golden.
var ArchTypes = []string{"F16", "Q8_0"}

// ArchShape is the shape of the arch goldens (the synth goldens' shape;
// eps 1e-6 as the newer architectures use), on which each golden fixture
// of internal/archfixtures is recorded. Each mutation of the graph that
// ignores one of the options those fixtures turn on moves llama.cpp's
// top-5 gaps by 0.01-9 logits (measured), far beyond the F16 tolerance.
func ArchShape(m archfixtures.Fixture, typ string, seed uint64, vocab string) golden.Synth {
	a := m.Arch
	return golden.Synth{Embd: 256, Layers: 4, Heads: 8, KVHeads: m.KVHeads, FF: 512, Ctx: 512, RopeBase: m.RopeBase,
		Eps: 1e-6, Type: typ, Seed: seed, Vocab: vocab, Arch: &a}
}

// archGoldens writes arch-LABEL-TYPE.json for every golden fixture and
// type.
func archGoldens(ref string, vf *gguf.File, vocabName, tmp, out string, n int) error {
	for i, m := range archfixtures.All() {
		if !m.Golden {
			continue
		}
		for j, typ := range ArchTypes {
			if !wanted(typ, "arch-"+m.Label+"-"+typ) {
				continue
			}
			s := ArchShape(m, typ, uint64(100+10*i+j), vocabName)
			cfg, err := s.Config(vf, kernels.Quantize)
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := synth.Write(context.Background(), &buf, cfg, nil); err != nil {
				return fmt.Errorf("%s %s: %w", m.Label, typ, err)
			}
			sum := sha256.Sum256(buf.Bytes())
			path := filepath.Join(tmp, "arch-"+m.Label+"-"+typ+".gguf")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				return err
			}
			g := golden.File{Generator: "go run ./internal/cmd/refgolden -sets arch", Synth: s, ModelSHA256: hex.EncodeToString(sum[:])}
			for _, p := range prompts {
				c, env, err := greedy(ref, path, p, n)
				if err != nil {
					return fmt.Errorf("%s %s %q: %w", m.Label, typ, p, err)
				}
				g.Reference = env
				g.Cases = append(g.Cases, c)
			}
			if err := writeGolden(filepath.Join(out, "arch-"+m.Label+"-"+typ+".json"), g); err != nil {
				return err
			}
		}
	}
	tools, err := realfiles.ToolsFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "refgolden: no llama.cpp quantizer, quant-arch-*.json not regenerated: %v\n", err)
		return nil
	}
	return archQuantGoldens(tools, ref, vf, vocabName, out, n)
}

// ArchQuantType is the K-quant mix each architecture is checked with:
// llama.cpp's most published file type (Q4_K + Q6_K, per-tensor choice by
// llama.cpp's quantizer from the F16 file).
const ArchQuantType = "Q4_K_M"

// archQuantTypes are the llama.cpp file types fixture m is recorded in:
// ArchQuantType, and for gpt-oss also MXFP4_MOE (its published type: MXFP4
// experts, Q8_0 attention). The gpt-oss Q4_K_M replay has one step where a
// layer's 4th and 5th experts are 0.00058 router logits apart, which the
// replay excuses as a router near-tie (internal/realfiles routerTie).
func archQuantTypes(m archfixtures.Fixture) []string {
	if m.Name() == synth.GPTOSS {
		return []string{"MXFP4_MOE", ArchQuantType}
	}
	return []string{ArchQuantType}
}

// archQuantGoldens writes quant-arch-LABEL-Q4_K_M.json: the F16 arch model
// converted by llama.cpp's quantizer, with llama.cpp's flash-attention
// spread per case; internal/realfiles' TestQuantFileTypes replays them
// with its bound (3x that spread).
func archQuantGoldens(tools realfiles.Tools, ref string, vf *gguf.File, vocabName, out string, n int) error {
	dir, err := realfiles.CacheDir()
	if err != nil {
		return err
	}
	for i, m := range archfixtures.All() {
		if !m.Golden {
			continue
		}
		for _, ft := range archQuantTypes(m) {
			name := "quant-arch-" + m.Label + "-" + ft
			if !wanted(ft, name) {
				continue
			}
			s := ArchShape(m, "F16", uint64(200+i), vocabName)
			src, err := realfiles.SynthBytes(context.Background(), s, vf)
			if err != nil {
				return err
			}
			q := quantRecording{tools: tools, dir: dir, ref: ref, generator: "go run ./internal/cmd/refgolden -sets arch",
				synth: s, src: src, ftype: ft, prompts: prompts, n: n}
			if err := q.record(filepath.Join(out, name+".json")); err != nil {
				return fmt.Errorf("%s: %w", m.Label, err)
			}
		}
	}
	return nil
}
