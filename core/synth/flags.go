package synth

import (
	"flag"
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
)

// Flags are the `memvanta synth` shape flags. They live here so the CLI and
// the tests that re-create recorded synthetic models parse the same flags
// with the same defaults.
type Flags struct {
	Embd, Layers, Heads, KVHeads, FF, Ctx *int
	RopeBase, Eps                         *float64
	Type                                  *string
	VocabFrom                             *string
	VocabSize                             *int
	Seed                                  *uint64
	Name                                  *string
	Gain, Noise                           *float64
}

// RegisterFlags defines the shape flags on fs.
func RegisterFlags(fs *flag.FlagSet) *Flags {
	return &Flags{
		Embd:      fs.Int("embd", 2048, "embedding length"),
		Layers:    fs.Int("layers", 22, "number of blocks"),
		Heads:     fs.Int("heads", 32, "attention heads"),
		KVHeads:   fs.Int("kv-heads", 4, "key/value heads (GQA)"),
		FF:        fs.Int("ff", 5632, "feed-forward length"),
		Ctx:       fs.Int("ctx", 2048, "training context length"),
		RopeBase:  fs.Float64("rope-base", 10000, "RoPE frequency base"),
		Eps:       fs.Float64("eps", 1e-5, "RMS norm epsilon"),
		Type:      fs.String("type", "Q4_0", "weight `type` (F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1)"),
		VocabFrom: fs.String("vocab-from", "", "vocab-only GGUF `file` to copy tokenizer.* metadata from"),
		VocabSize: fs.Int("vocab", 32000, "synthetic vocabulary size when --vocab-from is not given"),
		Seed:      fs.Uint64("seed", 1, "random seed"),
		Name:      fs.String("name", "", "general.name (default describes the shape)"),
		Gain:      fs.Float64("logit-gain", 12, "structured logit gain: how far the successor token leads"),
		Noise:     fs.Float64("logit-noise", 1, "std of the random, forward-pass-dependent part of the logits"),
	}
}

// Config returns the parsed shape; the caller loads VocabFrom into
// Config.Vocab and sets Config.Quantize.
func (f *Flags) Config() (Config, error) {
	if *f.Gain <= 0 || *f.Noise <= 0 {
		return Config{}, fmt.Errorf("synth: --logit-gain and --logit-noise must be positive")
	}
	t, ok := ggml.Parse(*f.Type)
	if !ok {
		return Config{}, fmt.Errorf("synth: unknown type %q", *f.Type)
	}
	return Config{
		Embd: *f.Embd, Layers: *f.Layers, Heads: *f.Heads, KVHeads: *f.KVHeads, FF: *f.FF, Ctx: *f.Ctx,
		RopeBase: float32(*f.RopeBase), Eps: float32(*f.Eps), Type: t, VocabSize: *f.VocabSize,
		Seed: *f.Seed, Name: *f.Name, Gain: float32(*f.Gain), Noise: float32(*f.Noise),
	}, nil
}
