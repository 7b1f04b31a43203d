package synth

import (
	"flag"
	"fmt"
	"strings"

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

	Arch                                        *string
	HeadDim, Rot, Window, WindowPattern         *int
	OrigCtx                                     *int
	RopeBaseSWA, AttnSoftcap, FinalSoftcap      *float64
	RopeScale                                   *float64
	RopeFreqs, NoLongRope, FusedQKV, Bias, Tied *bool
	YaRN                                        *bool
	Experts, ExpertsUsed, FFExp                 *int
	RouterReuse                                 *float64
	Pooling                                     *string
	Classifier                                  *bool
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
		Type:      fs.String("type", "Q4_0", "weight `type` (F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 MXFP4)"),
		VocabFrom: fs.String("vocab-from", "", "vocab-only GGUF `file` to copy tokenizer.* metadata from"),
		VocabSize: fs.Int("vocab", 32000, "synthetic vocabulary size when --vocab-from is not given"),
		Seed:      fs.Uint64("seed", 1, "random seed"),
		Name:      fs.String("name", "", "general.name (default describes the shape)"),
		Gain:      fs.Float64("logit-gain", 12, "structured logit gain: how far the successor token leads"),
		Noise:     fs.Float64("logit-noise", 1, "std of the random, forward-pass-dependent part of the logits"),

		Arch:          fs.String("arch", "llama", "architecture `name` ("+strings.Join(Archs(), ", ")+")"),
		HeadDim:       fs.Int("head-dim", 0, "attention.key_length (head length) if not embd/heads (qwen3, gemma)"),
		Rot:           fs.Int("rot", 0, "rope.dimension_count if not the whole head (partial rotary, phi3)"),
		Window:        fs.Int("sliding-window", 0, "gemma, gpt-oss: attention.sliding_window (0 = not written; gpt-oss: 128)"),
		WindowPattern: fs.Int("swa-pattern", 0, "gemma, gpt-oss: sliding_window_pattern, every Nth layer global (0 = not written)"),
		RopeBaseSWA:   fs.Float64("rope-base-swa", 0, "gemma, gpt-oss: rope.freq_base_swa of the sliding layers (0 = not written)"),
		AttnSoftcap:   fs.Float64("attn-softcap", 0, "gemma2: attn_logit_softcapping (0 = 50; <0 = not written)"),
		FinalSoftcap:  fs.Float64("final-softcap", 0, "gemma: final_logit_softcapping (0 = gemma2's 30, none for gemma3; <0 = not written)"),
		RopeScale:     fs.Float64("rope-scale", 0, "linear (or with --yarn, YaRN) rope.scaling.factor (0 = none)"),
		YaRN:          fs.Bool("yarn", false, "write --rope-scale as rope.scaling.type yarn (gpt-oss's scaling), original context --rope-orig-ctx (0 = ctx/4)"),
		RopeFreqs:     fs.Bool("rope-freqs", false, "llama: write a llama 3.1-style rope_freqs.weight (RoPE scaling factors; original context ctx/16)"),
		OrigCtx:       fs.Int("rope-orig-ctx", 0, "phi3 (LongRoPE), --yarn: rope.scaling.original_context_length (0 = ctx/4)"),
		NoLongRope:    fs.Bool("no-longrope", false, "phi3: leave out the LongRoPE factors (Phi-3 4k files)"),
		FusedQKV:      fs.Bool("fused-qkv", false, "one attn_qkv.weight instead of attn_q/k/v (always for phi3)"),
		Bias:          fs.Bool("bias", false, "attn_q/k/v.bias (always for qwen2)"),
		Tied:          fs.Bool("tied", false, "no output.weight: logits reuse token_embd (always for gemma2)"),
		Experts:       fs.Int("experts", 0, "qwen3moe, qwen2moe, mixtral, gpt-oss: experts per layer (expert_count)"),
		ExpertsUsed:   fs.Int("experts-used", 0, "qwen3moe, qwen2moe, mixtral, gpt-oss: experts each token runs (expert_used_count)"),
		RouterReuse:   fs.Float64("router-reuse", 0, "MoE router locality model by its consecutive-token expert reuse: 0.38 (Qwen3-30B-A3B) or 0.18 (gpt-oss); 0 = the architecture's"),
		FFExp:         fs.Int("ff-exp", 0, "qwen3moe, qwen2moe, mixtral, gpt-oss: one expert's feed-forward length (0 = ff/experts-used; mixtral: ff)"),
		Pooling:       fs.String("pooling", "", "embedding models: write pooling_type (none, mean, cls, last, rank; empty = not written)"),
		Classifier:    fs.Bool("classifier", false, "bert, qwen3: a reranker's classifier head (bert: cls, cls.output, one score; qwen3: cls.output, labels yes/no), for --pooling rank"),
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
		Arch: Arch{Name: *f.Arch, HeadDim: *f.HeadDim, Rot: *f.Rot, Window: *f.Window, WindowPattern: *f.WindowPattern,
			RopeBaseSWA: float32(*f.RopeBaseSWA), AttnSoftcap: float32(*f.AttnSoftcap), FinalSoftcap: float32(*f.FinalSoftcap),
			RopeScale: float32(*f.RopeScale), RopeFreqs: *f.RopeFreqs, OrigCtx: *f.OrigCtx, NoLongRope: *f.NoLongRope, YaRN: *f.YaRN,
			FusedQKV: *f.FusedQKV, Bias: *f.Bias, Tied: *f.Tied, Experts: *f.Experts, ExpertsUsed: *f.ExpertsUsed, FFExp: *f.FFExp, RouterReuse: float32(*f.RouterReuse),
			Pooling: *f.Pooling, Classifier: *f.Classifier},
	}, nil
}
