// Package golden is the schema of testdata/golden/*.json, shared by the
// generator (internal/cmd/refgolden, which asks llama.cpp) and the tests
// that replay it, so the two cannot drift apart.
package golden

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
)

// File is one synthetic model and llama.cpp's greedy runs on it.
type File struct {
	Generator string  `json:"generator"`
	Synth     Synth   `json:"synth"`
	Random    *Random `json:"random,omitempty"` // if set, the model is WriteRandom(Random), not core/synth
	// Quant, if set, means the model is the core/synth model (ModelSHA256)
	// converted by llama.cpp's own quantizer (internal/realfiles).
	Quant *Quant `json:"quant,omitempty"`
	// File, if set, names a model file under ../shared/models (the trained
	// model), and ModelSHA256 is that file's hash.
	File        string          `json:"file,omitempty"`
	ModelSHA256 string          `json:"model_sha256"`
	Reference   json.RawMessage `json:"reference"` // harness env and settings
	Cases       []Case          `json:"cases"`
}

// Synth are the core/synth parameters that rebuild the model bit for bit.
type Synth struct {
	Embd     int     `json:"embd"`
	Layers   int     `json:"layers"`
	Heads    int     `json:"heads"`
	KVHeads  int     `json:"kv_heads"`
	FF       int     `json:"ff"`
	Ctx      int     `json:"ctx"`
	RopeBase float32 `json:"rope_base"`
	Eps      float32 `json:"eps"`
	Type     string  `json:"type"`
	Seed     uint64  `json:"seed"`
	Vocab    string  `json:"vocab"` // file name under ../shared/vocab
	// Arch selects another architecture than llama, with its options.
	Arch *synth.Arch `json:"arch,omitempty"`
}

// Config turns the parameters into a synth.Config over the vocab file.
func (s Synth) Config(vocab *gguf.File, quantize func(ggml.Type, []float32, []byte) error) (synth.Config, error) {
	t, ok := ggml.Parse(s.Type)
	if !ok {
		return synth.Config{}, fmt.Errorf("golden: unknown type %q", s.Type)
	}
	return synth.Config{Embd: s.Embd, Layers: s.Layers, Heads: s.Heads, KVHeads: s.KVHeads, FF: s.FF, Ctx: s.Ctx,
		RopeBase: s.RopeBase, Eps: s.Eps, Type: t, Vocab: vocab, Seed: s.Seed, Quantize: quantize, Arch: s.arch()}, nil
}

func (s Synth) arch() synth.Arch {
	if s.Arch == nil {
		return synth.Arch{}
	}
	return *s.Arch
}

// Quant is one llama.cpp quantization of a synthetic model.
type Quant struct {
	FileType string         `json:"file_type"` // llama.cpp's name: Q4_K_M, IQ4_XS, ...
	SHA256   string         `json:"sha256"`    // of the quantized file
	Types    map[string]int `json:"types"`     // tensor count per ggml type: llama.cpp's mix
}

// Case is one prompt's greedy continuation.
type Case struct {
	Prompt       string          `json:"prompt"`
	PromptTokens []int32         `json:"prompt_tokens"` // llama.cpp's tokenization, BOS included
	Tokens       []int32         `json:"tokens"`
	Text         string          `json:"text"`
	Margins      json.RawMessage `json:"margins"`
	Steps        []Step          `json:"steps"`
	// Spread is llama.cpp's own variation: the largest change of any top-5
	// logit gap between its flash-attention settings (auto, which made
	// Steps, and off), over the steps before the two runs' tokens part.
	Spread *float64 `json:"fa_off_spread,omitempty"`
}

// Step is one greedy step: the chosen token and llama.cpp's top candidates
// with their logit gap to the best one (ln p_i/p_0 = logit_i - logit_0).
type Step struct {
	Token int32 `json:"token"`
	Top   []Top `json:"top"`
}

// Top is one candidate.
type Top struct {
	ID     int32   `json:"id"`
	DLogit float64 `json:"dlogit"`
}

// Read loads a golden file.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("golden: %s: %w", path, err)
	}
	return &f, nil
}
