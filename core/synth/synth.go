// Package synth writes synthetic Llama-architecture GGUF models with seeded
// pseudo-random weights, so tests and benchmarks can have a model of any
// shape without downloading one. Tensors are generated row by row from
// (seed, tensor name, row) and streamed through gguf.Writer: memory use is a
// few rows, whatever the model size, and the same flags always give the
// same bytes.
//
// # Weight design
//
// Random weights alone give greedy decoding tiny top-1 margins (the gap
// between the two largest of 32k Gaussian logits averages ~0.2σ), so two
// engines with slightly different rounding would diverge. The model is
// therefore structured:
//
//   - token_embd row t is u_t with elements ~ N(0,1) (approximately; an
//     Irwin–Hall sum of four uniforms), so the residual stream has RMS ≈ 1.
//   - Every block's input is RMS-normalised; q/k/v/gate/up are
//     N(0, 1/fan_in) so their outputs are O(1) and attention scores are
//     well spread; attn_output and ffn_down are scaled by 0.5/sqrt(layers)
//     so the whole stack adds a perturbation of about half the embedding.
//   - output row j is (Gain/n_embd)·Σ u_t over the tokens t whose successor
//     is j (a seeded permutation of the "normal" tokens; control, unknown
//     and byte tokens are mapped onto normal ones), plus an N(0, Noise²/n_embd)
//     random part. Other tokens' structured logits have std
//     Gain/sqrt(n_embd), so for n_embd ≥ 256 the successor of the current
//     token wins by several logits (llama.cpp measured min 4.2 over 16
//     greedy steps at n_embd 256), while the random part (which depends
//     on the whole forward pass) still moves every logit by O(Noise).
//     Narrower models work but have smaller margins.
//
// A consequence: the greedy token sequence follows the successor map
// almost regardless of the layers (the same seed and vocab give the same
// text at any depth), so comparing two engines token by token checks the
// embedding/output path and the plumbing, while comparing their top-k
// logits or probabilities (the random part) checks the whole forward pass.
// Lower Gain (--logit-gain) trades margin for more context-dependent tokens.
//   - Norm weights are 1 ± 0.1 (F32).
package synth

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
)

// Config is the model shape and generation parameters.
type Config struct {
	Embd, Layers, Heads, KVHeads, FF, Ctx int
	RopeBase, Eps                         float32
	Type                                  ggml.Type // matrix weights (token_embd, attn_*, ffn_*, output)
	// Vocab, when non-nil, supplies every tokenizer.* key (a vocab-only
	// GGUF such as ggml-vocab-llama-spm.gguf). Otherwise a synthetic SPM
	// vocabulary of VocabSize tokens is made.
	Vocab     *gguf.File
	VocabSize int
	Seed      uint64
	Name      string  // general.name; default describes the shape
	Gain      float32 // structured logit gain (default 12)
	Noise     float32 // random logit std (default 1)
	// Quantize encodes one row of f32 into Type (kernels.Quantize). It is
	// injected rather than imported so this package stays free of the
	// native kernel dispatch (cpuid, x/sys); nil handles F32 only.
	Quantize func(t ggml.Type, src []float32, dst []byte) error
	Arch     Arch // architecture; the zero value writes llama
}

// Arch selects the architecture and its specific tensors and metadata.
// The zero value is the llama file synth has always written (same bytes).
// Zero options mean the architecture's usual values, listed per field.
type Arch struct {
	Name    string `json:"name,omitempty"`     // general.architecture (one of Archs); "" = llama
	HeadDim int    `json:"head_dim,omitempty"` // attention.key_length/value_length; 0 = embd/heads (qwen3, gemma: set it to decouple)
	Rot     int    `json:"rot,omitempty"`      // rope.dimension_count; 0 = the head length (Phi-4-mini rotates 3/4 of it)
	// Sliding window (gemma2/gemma3/gpt-oss): attention.sliding_window
	// and its layer pattern; 0 writes nothing (gemma2 then slides 4096 on
	// every other layer in llama.cpp, gemma3 not at all; gpt-oss always
	// writes a window, 0 meaning its published 128).
	Window        int     `json:"window,omitempty"`
	WindowPattern int     `json:"window_pattern,omitempty"`
	RopeBaseSWA   float32 `json:"rope_base_swa,omitempty"` // rope.freq_base_swa; 0 = not written
	// Soft-caps: 0 = the architecture's published value (gemma2: 50 and
	// 30; gemma3: none); negative = not written.
	AttnSoftcap  float32 `json:"attn_softcap,omitempty"`
	FinalSoftcap float32 `json:"final_softcap,omitempty"`
	RopeScale    float32 `json:"rope_scale,omitempty"` // linear rope.scaling.factor; 0 = none
	// YaRN writes RopeScale (required) as rope.scaling.type yarn, with
	// OrigCtx (0 = Ctx/4) as rope.scaling.original_context_length.
	YaRN      bool `json:"yarn,omitempty"`
	RopeFreqs bool `json:"rope_freqs,omitempty"` // llama: a llama3-style rope_freqs.weight (factor 8, low 1, high 4, original ctx/16)
	// LongRoPE (phi3): rope_factors_short/long.weight, attn_factor and
	// original_context_length (OrigCtx, 0 = Ctx/4; also YaRN's). NoLongRope
	// leaves them out.
	OrigCtx    int  `json:"orig_ctx,omitempty"`
	NoLongRope bool `json:"no_longrope,omitempty"`
	FusedQKV   bool `json:"fused_qkv,omitempty"` // one attn_qkv.weight instead of attn_q/k/v (always for phi3)
	Bias       bool `json:"bias,omitempty"`      // attn_q/k/v.bias (always for qwen2), attn_qkv.bias when fused
	Tied       bool `json:"tied,omitempty"`      // no output.weight (always for gemma2)
	// Mixture of experts (qwen3moe, qwen2moe, mixtral, gpt-oss: required there,
	// refused elsewhere): expert_count, expert_used_count and one
	// expert's feed-forward length (0 = FF / ExpertsUsed for qwen3moe and
	// qwen2moe, whose shared expert is FF wide; mixtral's experts are
	// feed_forward_length wide, so FFExp, when given, is written as that).
	Experts     int `json:"experts,omitempty"`
	ExpertsUsed int `json:"experts_used,omitempty"`
	FFExp       int `json:"ff_exp,omitempty"`
	// RouterReuse selects the router locality model (moe.go) by the
	// consecutive-token expert reuse it was tuned to: 0.38 (Qwen3-30B-A3B)
	// or 0.18 (gpt-oss); 0 = the architecture's published value (0.18 for
	// gpt-oss, 0.38 for the others).
	RouterReuse float32 `json:"router_reuse,omitempty"`
	// Pooling writes {arch}.pooling_type (none, mean, cls, last, rank) as
	// embedding models carry it (Qwen3-Embedding: last); "" writes nothing.
	Pooling string `json:"pooling,omitempty"`
	// Classifier: a rank-pooling classifier head as llama.cpp reads it:
	// bert as bge-reranker's, cls.weight/bias (n_embd × n_embd, tanh) and
	// cls.output.weight/bias (one score); qwen3 as Qwen3-Reranker's,
	// cls.output.weight alone with two labels (yes, no).
	Classifier bool `json:"classifier,omitempty"`
}

// encoder reports whether the architecture is an encoder (bert, nomic-bert).
func (a Arch) encoder() bool {
	s, ok := arch.Lookup(a.archName())
	return ok && s.Graph.Encoder
}

// Mixtral is the Arch.Name that writes a llama file with experts.
const Mixtral = "mixtral"

// moe reports whether the architecture has experts.
func (a Arch) moe() bool {
	return a.Name == "qwen3moe" || a.Name == "qwen2moe" || a.Name == Mixtral || a.Name == GPTOSS
}

// GPTOSS is gpt-oss's architecture name.
const GPTOSS = "gpt-oss"

// Archs are the architectures synth writes (mixtral: llama with experts).
func Archs() []string { return append(arch.Names(), Mixtral) }

// Progress is called after each chunk of rows with bytes of tensor data
// written so far, the total, and the tensor being written.
type Progress func(done, total uint64, tensor string)

// fileType maps a weight type to llama.cpp's general.file_type enum.
var fileType = map[ggml.Type]uint32{
	ggml.F32: 0, ggml.F16: 1, ggml.Q4_0: 2, ggml.Q4_1: 3, ggml.Q8_0: 7, ggml.Q5_0: 8, ggml.Q5_1: 9, ggml.BF16: 32,
	ggml.MXFP4: 38, // LLAMA_FTYPE_MOSTLY_MXFP4_MOE
}

// Types are the weight types synth can write.
func Types() []ggml.Type {
	return []ggml.Type{ggml.F32, ggml.F16, ggml.BF16, ggml.Q8_0, ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1, ggml.MXFP4}
}

func (c *Config) defaults() {
	if c.Gain == 0 {
		c.Gain = 12
	}
	if c.Noise == 0 {
		c.Noise = 1
	}
	if c.KVHeads == 0 {
		c.KVHeads = c.Heads
	}
	if c.Arch.Name == Mixtral && c.Arch.FFExp > 0 {
		c.FF = c.Arch.FFExp // llama's experts are feed_forward_length wide
	}
}

func (c Config) validate() error {
	switch {
	case c.Embd <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.KVHeads <= 0 || c.FF <= 0 || c.Ctx <= 0:
		return fmt.Errorf("synth: embd, layers, heads, kv-heads, ff and ctx must be positive (got %d %d %d %d %d %d)", c.Embd, c.Layers, c.Heads, c.KVHeads, c.FF, c.Ctx)
	case c.Arch.HeadDim == 0 && c.Embd%c.Heads != 0:
		return fmt.Errorf("synth: embd %d is not a multiple of heads %d (or give --head-dim)", c.Embd, c.Heads)
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("synth: heads %d is not a multiple of kv-heads %d", c.Heads, c.KVHeads)
	case c.Arch.HeadDim == 0 && (c.Embd/c.Heads)%2 != 0:
		return fmt.Errorf("synth: head dim %d must be even for RoPE", c.Embd/c.Heads)
	case c.RopeBase <= 0 || c.Eps <= 0:
		return fmt.Errorf("synth: rope base and eps must be positive")
	}
	if _, ok := fileType[c.Type]; !ok {
		return fmt.Errorf("synth: weight type %s is not supported (use one of %v)", c.Type, Types())
	}
	bs := uint64(c.Type.BlockSize())
	s, ac, err := c.archConfig(0)
	if err != nil {
		return err
	}
	if err := c.Arch.validate(s, ac); err != nil {
		return err
	}
	for _, n := range []int{c.Embd, c.FF, ac.NFFExp} {
		if uint64(n)%bs != 0 {
			return fmt.Errorf("synth: row length %d is not a multiple of the %s block size %d", n, c.Type, bs)
		}
	}
	if c.Quantize == nil && c.Type != ggml.F32 {
		return fmt.Errorf("synth: type %s needs Config.Quantize (kernels.Quantize)", c.Type)
	}
	if c.Vocab == nil && c.VocabSize < 259+26 {
		return fmt.Errorf("synth: synthetic vocab needs at least %d tokens, got %d", 259+26, c.VocabSize)
	}
	if ac.QDim()%int(bs) != 0 {
		return fmt.Errorf("synth: query width %d is not a multiple of the %s block size %d", ac.QDim(), c.Type, bs)
	}
	return nil
}

// archName is the architecture written ("" and mixtral mean llama).
func (a Arch) archName() string {
	if a.Name == "" || a.Name == Mixtral {
		return "llama"
	}
	return a.Name
}

// archConfig resolves the architecture options into the arch.Config a
// loader will read back, which fixes the tensor table.
func (c Config) archConfig(vocab int) (*arch.Spec, arch.Config, error) {
	a := c.Arch
	name := a.archName()
	s, ok := arch.Lookup(name)
	if !ok {
		return nil, arch.Config{}, fmt.Errorf("synth: unknown architecture %q (supported: %s)", name, strings.Join(Archs(), ", "))
	}
	hd := c.Embd / max(c.Heads, 1)
	if a.HeadDim > 0 {
		hd = a.HeadDim
	}
	rot := hd
	if a.Rot > 0 {
		rot = a.Rot
	}
	ac := arch.Config{Arch: name, NEmbd: c.Embd, NLayer: c.Layers, NHead: c.Heads, NHeadKV: c.KVHeads, HeadDim: hd,
		NFF: c.FF, NRot: rot, NVocab: vocab, NCtxTrain: c.Ctx}
	ac.TiedOutput = a.Tied
	for _, f := range []struct {
		on bool
		f  arch.Feature
	}{{a.Bias && !(a.FusedQKV || name == "phi3"), arch.QKVBias}, {a.FusedQKV || name == "phi3", arch.FusedQKV},
		{a.Bias && (a.FusedQKV || name == "phi3"), arch.FusedBias}, {a.RopeFreqs, arch.RopeFreqs},
		{name == "phi3" && !a.NoLongRope, arch.RopeFactors}, {a.Name == Mixtral, arch.MoE}} {
		if f.on {
			if !s.Offers(f.f) {
				return nil, arch.Config{}, fmt.Errorf("synth: architecture %s has no %s option", name, featureFlag[f.f])
			}
			ac.Enable(f.f)
		}
	}
	if s.Graph.Encoder {
		// Every bert file has token types (two); --bias gives the biases
		// a BERT has everywhere (the table's optional ones).
		ac.NTokTypes, ac.NClsOut = 2, 1
		ac.Enable(arch.TypeEmbd)
		for _, f := range []arch.Feature{arch.OutBias, arch.UpBias, arch.DownBias} {
			if a.Bias && s.Offers(f) {
				ac.Enable(f)
			}
		}
		if a.Classifier {
			for _, f := range []arch.Feature{arch.ClsDense, arch.ClsBias, arch.ClsOutput, arch.ClsOutBias} {
				if !s.Offers(f) {
					return nil, arch.Config{}, fmt.Errorf("synth: architecture %s has no classifier head", name)
				}
				ac.Enable(f)
			}
		}
	}
	if name == "qwen3" && a.Classifier {
		// Qwen3-Reranker's head: cls.output, one row per label (yes, no).
		ac.NClsOut = 2
		ac.Enable(arch.ClsOutput)
	}
	s.Defaults(&ac)
	if ac.MoE {
		ac.NExpert, ac.NExpertUsed = a.Experts, a.ExpertsUsed
		ac.NFFExp = c.FF
		if name != "llama" {
			ac.NFFExp = a.FFExp
			if ac.NFFExp == 0 && a.ExpertsUsed > 0 {
				ac.NFFExp = c.FF / a.ExpertsUsed
			}
		}
		if ac.SharedExpert {
			ac.NFFShexp = c.FF
		}
	}
	return s, ac, nil
}

var featureFlag = map[arch.Feature]string{arch.QKVBias: "--bias", arch.FusedBias: "--bias", arch.FusedQKV: "--fused-qkv", arch.RopeFreqs: "--rope-freqs",
	arch.RopeFactors: "LongRoPE", arch.MoE: "experts"}

func (a Arch) validate(s *arch.Spec, ac arch.Config) error {
	name := s.Name
	gemma := name == "gemma2" || name == "gemma3"
	swa := gemma || name == GPTOSS
	switch {
	case ac.HeadDim%2 != 0 || ac.HeadDim <= 0:
		return fmt.Errorf("synth: head dim %d must be even for RoPE", ac.HeadDim)
	case ac.NRot%2 != 0 || ac.NRot > ac.HeadDim:
		return fmt.Errorf("synth: rotated dims %d must be even and <= the head dim %d", ac.NRot, ac.HeadDim)
	case name == "qwen3" && ac.NRot != ac.HeadDim:
		return fmt.Errorf("synth: qwen3 rotates the whole head (--rot %d, head dim %d)", ac.NRot, ac.HeadDim)
	case name == "phi3" && ac.HeadDim*ac.NHead != ac.NEmbd:
		return fmt.Errorf("synth: phi3's query width is n_embd (head dim %d × %d heads != %d)", ac.HeadDim, ac.NHead, ac.NEmbd)
	case !swa && (a.Window != 0 || a.WindowPattern != 0 || a.RopeBaseSWA != 0):
		return fmt.Errorf("synth: sliding-window options apply to gemma2/gemma3/gpt-oss, not %s", name)
	case !gemma && (a.AttnSoftcap != 0 || a.FinalSoftcap != 0):
		return fmt.Errorf("synth: soft-caps apply to gemma2/gemma3, not %s", name)
	case name == "gemma3" && a.AttnSoftcap > 0:
		return fmt.Errorf("synth: gemma3 has no attention soft-cap")
	case name != "phi3" && (a.OrigCtx != 0 && !a.YaRN || a.NoLongRope):
		return fmt.Errorf("synth: LongRoPE options apply to phi3, not %s (--rope-orig-ctx also to --yarn)", name)
	case a.YaRN && (a.RopeScale <= 0 || name == "phi3"):
		return fmt.Errorf("synth: --yarn needs --rope-scale > 0 and an architecture without LongRoPE (not phi3)")
	case name == GPTOSS && ac.NRot != ac.HeadDim:
		return fmt.Errorf("synth: gpt-oss rotates the whole head (--rot %d, head dim %d)", ac.NRot, ac.HeadDim)
	case a.Window < 0 || a.WindowPattern < 0 || a.OrigCtx < 0 || a.RopeScale < 0 || a.RopeBaseSWA < 0:
		return fmt.Errorf("synth: window, pattern, original context, rope scale and rope base must be >= 0")
	case !a.moe() && (a.Experts != 0 || a.ExpertsUsed != 0 || a.FFExp != 0):
		return fmt.Errorf("synth: --experts, --experts-used and --ff-exp apply to qwen3moe, qwen2moe, mixtral and gpt-oss, not %s", name)
	case a.moe() && (a.Experts < 1 || a.Experts > arch.MaxExperts):
		return fmt.Errorf("synth: %s needs --experts in [1, %d] (got %d)", a.Name, arch.MaxExperts, a.Experts)
	case a.moe() && (a.ExpertsUsed < 1 || a.ExpertsUsed > a.Experts):
		return fmt.Errorf("synth: --experts-used %d must be in [1, --experts %d]", a.ExpertsUsed, a.Experts)
	case a.moe() && ac.NFFExp <= 0:
		return fmt.Errorf("synth: expert feed-forward length %d must be positive", ac.NFFExp)
	case a.RouterReuse != 0 && (!a.moe() || a.RouterReuse != 0.18 && a.RouterReuse != 0.38):
		return fmt.Errorf("synth: --router-reuse %v: the router models are tuned for 0.18 and 0.38 (mixture-of-experts files only)", a.RouterReuse)
	case a.FFExp < 0:
		return fmt.Errorf("synth: --ff-exp must be >= 0")
	case a.Classifier && name != "bert" && name != "qwen3":
		return fmt.Errorf("synth: --classifier applies to bert and qwen3, not %s", name)
	case a.Pooling != "" && !validPooling(a.Pooling):
		return fmt.Errorf("synth: --pooling %q: want none, mean, cls, last or rank", a.Pooling)
	case name == "qwen2moe" && ac.QDim() != ac.NEmbd:
		return fmt.Errorf("synth: qwen2moe's query width is n_embd (head dim %d × %d heads != %d)", ac.HeadDim, ac.NHead, ac.NEmbd)
	}
	return nil
}

// kind says how a tensor's rows are generated.
type kind int

const (
	kEmbd kind = iota
	kOutput
	kNorm
	kDense     // N(0, 1/fan_in)
	kResidual  // N(0, 1/fan_in) · 0.5/sqrt(layers)
	kBias      // N(0, 0.5²)
	kRopeFreqs // llama3 frequency divisors
	kRopeLong  // LongRoPE long-context divisors (1 .. 21, rising)
	kRopeShort // LongRoPE short-context divisors (1 .. 1.5)
	kSink      // attention sinks: N(0, 1.5²) logits, the size of the scores
	kExpBias   // gpt-oss gate/up expert biases: N(0, 2.5²), so some activations pass its clamp at ±7
)

type plan struct {
	info gguf.TensorInfo
	kind kind
}

func (c Config) plans(vocab int) []plan {
	s, ac, err := c.archConfig(vocab)
	if err != nil {
		panic(err) // validate passed
	}
	global, layer := s.Tensors(&ac)
	mk := func(name string, t arch.Tensor) plan {
		d := make([]uint64, len(t.Dims))
		for i, x := range t.Dims {
			d[i] = uint64(ac.Size(x))
		}
		typ := ggml.F32
		if t.Kind == arch.Matrix && t.Slot != arch.SlotGateInp && t.Slot != arch.SlotGateInpSh {
			typ = c.Type // routers stay F32, as llama.cpp's converter and quantizer leave them
		}
		return plan{gguf.TensorInfo{Name: name, Type: typ, Dims: d}, kindOf(t)}
	}
	// token_embd (and RoPE factors) first, then the blocks, then the output
	// norm and projection, as llama.cpp's converter orders them.
	var ps, tail []plan
	for _, t := range global {
		if strings.HasPrefix(t.Name, "output") {
			tail = append(tail, mk(t.Name, t))
		} else {
			ps = append(ps, mk(t.Name, t))
		}
	}
	for i := 0; i < c.Layers; i++ {
		for _, t := range layer {
			ps = append(ps, mk(arch.LayerName(i, t.Name), t))
		}
	}
	return append(ps, tail...)
}

// kindOf says how a table row's values are generated.
func kindOf(t arch.Tensor) kind {
	switch {
	case t.Name == arch.TokEmbdName:
		return kEmbd
	case t.Name == arch.OutputName:
		return kOutput
	case t.Name == arch.RopeFreqsName:
		return kRopeFreqs
	case t.Name == arch.RopeLongName:
		return kRopeLong
	case t.Name == arch.RopeShortName:
		return kRopeShort
	case t.Slot == arch.SlotSinks:
		return kSink
	case t.Name == arch.PosEmbdName || t.Name == arch.TypeEmbdName:
		return kBias // N(0, 0.5²): positions and the token type move every state
	case t.Slot == arch.SlotGateExpsB || t.Slot == arch.SlotUpExpsB:
		return kExpBias
	case t.Kind == arch.Vector && strings.HasSuffix(t.Name, ".bias"):
		return kBias
	case t.Kind == arch.Vector:
		return kNorm
	case t.Slot == arch.SlotO || t.Slot == arch.SlotDown || t.Slot == arch.SlotDownExps || t.Slot == arch.SlotDownSh:
		return kResidual
	}
	return kDense
}

// Write generates the model and streams it to w.
func Write(ctx context.Context, w io.Writer, c Config, progress Progress) error {
	c.defaults()
	gw, plans, vocab, types, err := c.header(w)
	if err != nil {
		return err
	}
	total := gw.DataSize()
	g := &gen{c: c, vocab: vocab, succ: successors(c.Seed, types)}
	g.buildPreimages()
	if c.Arch.moe() {
		g.shared = sharedDirection(c.Seed, c.Embd)
		g.topic = topics(g.succ(vocab))
	}
	var done uint64
	for _, p := range plans {
		if err := g.tensor(ctx, gw, p, func(n uint64) {
			done += n
			if progress != nil {
				progress(done, total, p.info.Name)
			}
		}); err != nil {
			return err
		}
	}
	if err := gw.Close(); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	return nil
}

// Header returns the bytes Write would emit before the tensor data (header,
// metadata, tensor table, padding) and the size of the complete file,
// without generating any weights: enough to inspect the model's layout.
func Header(c Config) ([]byte, int64, error) {
	var buf bytes.Buffer
	gw, _, _, _, err := c.header(&buf)
	if err != nil {
		return nil, 0, err
	}
	if err := gw.Flush(); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), int64(buf.Len()) + int64(gw.DataSize()), nil
}

func (c Config) header(w io.Writer) (*gguf.Writer, []plan, int, []int32, error) {
	c.defaults()
	if err := c.validate(); err != nil {
		return nil, nil, 0, nil, err
	}
	gw := gguf.NewWriter(w)
	vocab, types, err := c.addMetadata(gw)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	plans := c.plans(vocab)
	for i := range plans {
		info, err := gw.AddTensor(plans[i].info)
		if err != nil {
			return nil, nil, 0, nil, fmt.Errorf("synth: %w", err)
		}
		plans[i].info = info
	}
	if err := gw.WriteHeader(); err != nil {
		return nil, nil, 0, nil, fmt.Errorf("synth: %w", err)
	}
	return gw, plans, vocab, types, nil
}

// metadata is the architecture-specific <arch>.* keys (after the common
// ones), each only when the file needs it, so a plain llama file keeps its
// bytes.
func (a Arch) metadata(name string, ctx int, ac arch.Config) []struct {
	k string
	v any
} {
	var kv []struct {
		k string
		v any
	}
	put := func(k string, v any) {
		kv = append(kv, struct {
			k string
			v any
		}{k, v})
	}
	if a.HeadDim > 0 {
		put("attention.key_length", uint32(a.HeadDim))
		put("attention.value_length", uint32(a.HeadDim))
	}
	if a.RopeScale > 0 {
		if a.YaRN {
			put("rope.scaling.type", "yarn")
			put("rope.scaling.factor", a.RopeScale)
			put("rope.scaling.original_context_length", uint32(a.origCtx(ctx)))
		} else {
			put("rope.scaling.type", "linear")
			put("rope.scaling.factor", a.RopeScale)
		}
	}
	if name == GPTOSS {
		w := a.Window
		if w == 0 {
			w = 128
		}
		put("attention.sliding_window", uint32(w))
		if a.WindowPattern > 0 {
			put("attention.sliding_window_pattern", uint32(a.WindowPattern))
		}
		if a.RopeBaseSWA > 0 {
			put("rope.freq_base_swa", a.RopeBaseSWA)
		}
	}
	if name == "gemma2" || name == "gemma3" {
		attn, final := a.AttnSoftcap, a.FinalSoftcap
		if name == "gemma2" {
			if attn == 0 {
				attn = 50
			}
			if final == 0 {
				final = 30
			}
		}
		if attn > 0 {
			put("attn_logit_softcapping", attn)
		}
		if final > 0 {
			put("final_logit_softcapping", final)
		}
		if a.Window > 0 {
			put("attention.sliding_window", uint32(a.Window))
		}
		if a.WindowPattern > 0 {
			put("attention.sliding_window_pattern", uint32(a.WindowPattern))
		}
		if a.RopeBaseSWA > 0 {
			put("rope.freq_base_swa", a.RopeBaseSWA)
		}
	}
	if ac.MoE {
		put("expert_count", uint32(ac.NExpert))
		put("expert_used_count", uint32(ac.NExpertUsed))
		if name != "llama" {
			put("expert_feed_forward_length", uint32(ac.NFFExp))
		}
		if ac.SharedExpert {
			put("expert_shared_feed_forward_length", uint32(ac.NFFShexp))
		}
	}
	if a.Pooling != "" {
		p, _ := arch.ParsePooling(a.Pooling) // checked by validate
		put("pooling_type", uint32(p))
	}
	if name == "qwen3" && a.Classifier {
		put("classifier.output_labels", []string{"yes", "no"})
	}
	if ac.RopeFactors {
		orig := a.origCtx(ctx)
		put("rope.scaling.original_context_length", uint32(orig))
		// The converter's LongRoPE attention factor for a context extended
		// from orig to ctx.
		f := float32(1)
		if scale := float64(ctx) / float64(orig); scale > 1 {
			f = float32(math.Sqrt(1 + math.Log(scale)/math.Log(float64(orig))))
		}
		put("rope.scaling.attn_factor", f)
	}
	return kv
}

func validPooling(s string) bool {
	_, err := arch.ParsePooling(s)
	return err == nil
}

func (a Arch) origCtx(ctx int) int {
	if a.OrigCtx > 0 {
		return a.OrigCtx
	}
	return max(1, ctx/4)
}

// addMetadata writes the hyperparameters and tokenizer keys and
// returns the vocab size and token types.
func (c Config) addMetadata(gw *gguf.Writer) (int, []int32, error) {
	name := c.Name
	if name == "" {
		name = fmt.Sprintf("memvanta-synth-%dx%d-%s", c.Layers, c.Embd, c.Type)
		// The architecture stays out of the name: llama.cpp special-cases
		// vocabularies by model name (a "phi3" name expects Phi-3's tokens).
	}
	add := func(k string, x any) error {
		v, err := gguf.ValueOf(x)
		if err != nil {
			return err
		}
		return gw.AddKV(k, v)
	}
	a := c.Arch.archName()
	kvs := []struct {
		k string
		v any
	}{
		{"general.architecture", a},
		{"general.name", name},
		{"general.file_type", fileType[c.Type]},
		{"general.quantization_version", uint32(2)},
		{a + ".context_length", uint32(c.Ctx)},
		{a + ".embedding_length", uint32(c.Embd)},
		{a + ".block_count", uint32(c.Layers)},
		{a + ".feed_forward_length", uint32(c.FF)},
		{a + ".attention.head_count", uint32(c.Heads)},
		{a + ".attention.head_count_kv", uint32(c.KVHeads)},
		{a + ".rope.freq_base", c.RopeBase},
	}
	if c.Arch.encoder() {
		kvs = append(kvs, []struct {
			k string
			v any
		}{{a + ".attention.layer_norm_epsilon", c.Eps}, {a + ".attention.causal", false}}...)
	} else {
		kvs = append(kvs, struct {
			k string
			v any
		}{a + ".attention.layer_norm_rms_epsilon", c.Eps})
	}
	_, ac, err := c.archConfig(0)
	if err != nil {
		return 0, nil, err
	}
	kvs = append(kvs, struct {
		k string
		v any
	}{a + ".rope.dimension_count", uint32(ac.NRot)})
	for _, kv := range kvs {
		if err := add(kv.k, kv.v); err != nil {
			return 0, nil, fmt.Errorf("synth: %w", err)
		}
	}
	for _, kv := range c.Arch.metadata(a, c.Ctx, ac) {
		if err := add(a+"."+kv.k, kv.v); err != nil {
			return 0, nil, fmt.Errorf("synth: %w", err)
		}
	}
	var vocab int
	var types []int32
	if c.Vocab != nil {
		toks, err := c.Vocab.Strings("tokenizer.ggml.tokens")
		if err != nil {
			return 0, nil, fmt.Errorf("synth: vocab file: %w", err)
		}
		vocab = len(toks)
		types, _ = c.Vocab.Int32s("tokenizer.ggml.token_type")
		if err := add(a+".vocab_size", uint32(vocab)); err != nil {
			return 0, nil, err
		}
		for _, kv := range c.Vocab.KV {
			if strings.HasPrefix(kv.Key, "tokenizer.") {
				if err := gw.AddKV(kv.Key, kv.Value); err != nil {
					return 0, nil, fmt.Errorf("synth: copy %s: %w", kv.Key, err)
				}
			}
		}
	} else {
		toks, scores, tt := syntheticVocab(c.VocabSize)
		vocab, types = len(toks), tt
		for _, kv := range []struct {
			k string
			v any
		}{
			{a + ".vocab_size", uint32(vocab)},
			{"tokenizer.ggml.model", "llama"},
			{"tokenizer.ggml.tokens", toks},
			{"tokenizer.ggml.scores", scores},
			{"tokenizer.ggml.token_type", tt},
			{"tokenizer.ggml.bos_token_id", uint32(1)},
			{"tokenizer.ggml.eos_token_id", uint32(2)},
			{"tokenizer.ggml.unknown_token_id", uint32(0)},
			{"tokenizer.ggml.add_bos_token", true},
			{"tokenizer.ggml.add_eos_token", false},
		} {
			if err := add(kv.k, kv.v); err != nil {
				return 0, nil, fmt.Errorf("synth: %w", err)
			}
		}
	}
	if c.Arch.encoder() {
		has := false
		if c.Vocab != nil {
			_, has = c.Vocab.Get("tokenizer.ggml.token_type_count")
		}
		if !has {
			if err := add("tokenizer.ggml.token_type_count", uint32(2)); err != nil {
				return 0, nil, fmt.Errorf("synth: %w", err)
			}
		}
	}
	if len(types) != vocab {
		types = nil // treat every token as normal
	}
	return vocab, types, nil
}

// syntheticVocab is an SPM-style vocabulary: <unk>, <s>, </s>, the 256
// byte-fallback tokens, then distinct letter pieces with and without the
// word-start marker, scored so shorter pieces merge first.
func syntheticVocab(n int) ([]string, []float32, []int32) {
	toks := []string{"<unk>", "<s>", "</s>"}
	tt := []int32{2, 3, 3}
	for b := 0; b < 256; b++ {
		toks = append(toks, fmt.Sprintf("<0x%02X>", b))
		tt = append(tt, 6)
	}
	for i := 0; len(toks) < n; i++ {
		// i -> base-26 word: a, b, ..., z, aa, ab, ...
		var w []byte
		for k := i/2 + 1; k > 0; k = (k - 1) / 26 {
			w = append([]byte{byte('a' + (k-1)%26)}, w...)
		}
		piece := string(w)
		if i%2 == 0 {
			piece = "▁" + piece
		}
		toks = append(toks, piece)
		tt = append(tt, 1)
	}
	scores := make([]float32, len(toks))
	for i := range scores {
		if tt[i] == 1 {
			scores[i] = -float32(i)
		}
	}
	return toks, scores, tt
}

// successors maps every token to the normal token that should follow it:
// a seeded permutation on normal tokens (type 1, or all tokens when types
// are absent), and other tokens onto a seeded normal token.
func successors(seed uint64, types []int32) func(vocab int) []int32 {
	return func(vocab int) []int32 {
		var normal []int32
		for t := 0; t < vocab; t++ {
			if types == nil || types[t] == 1 {
				normal = append(normal, int32(t))
			}
		}
		if len(normal) == 0 {
			for t := 0; t < vocab; t++ {
				normal = append(normal, int32(t))
			}
		}
		perm := append([]int32(nil), normal...)
		r := newRNG(seed, "successors", 0)
		for i := len(perm) - 1; i > 0; i-- {
			j := int(r.next() % uint64(i+1))
			perm[i], perm[j] = perm[j], perm[i]
		}
		succ := make([]int32, vocab)
		for i := range succ {
			succ[i] = -1
		}
		for i, t := range normal {
			succ[t] = perm[i]
		}
		for t := range succ {
			if succ[t] < 0 {
				succ[t] = normal[r.next()%uint64(len(normal))]
			}
		}
		return succ
	}
}

type gen struct {
	c     Config
	vocab int
	succ  func(int) []int32
	pre   [][]int32 // pre[j] = tokens whose successor is j
	// shared is the direction every token embedding of a MoE file has in
	// common, which gives the routers' popularity (moe.go); nil otherwise.
	shared []float32
	topic  []int32 // each token's topic (moe.go)
}

func (g *gen) buildPreimages() {
	s := g.succ(g.vocab)
	g.pre = make([][]int32, g.vocab)
	for t, j := range s {
		g.pre[j] = append(g.pre[j], int32(t))
	}
}

// rowsPerChunk bounds the rows generated between writes (and so memory).
const rowsPerChunk = 64

func (g *gen) tensor(ctx context.Context, w io.Writer, p plan, progress func(uint64)) error {
	cols, rows := int(p.info.Dims[0]), 1
	for _, d := range p.info.Dims[1:] {
		rows *= int(d)
	}
	rowBytes, err := ggml.RowSize(p.info.Type, uint64(cols))
	if err != nil {
		return err
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	out := make([]byte, int(rowBytes)*min(rows, rowsPerChunk))
	scratch := make([][]float32, workers)
	for i := range scratch {
		scratch[i] = make([]float32, cols)
	}
	for r0 := 0; r0 < rows; r0 += rowsPerChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		r1 := min(rows, r0+rowsPerChunk)
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for wk := 0; wk < workers; wk++ {
			wg.Add(1)
			go func(wk int) {
				defer wg.Done()
				for r := r0 + wk; r < r1; r += workers {
					g.row(p, r, scratch[wk])
					dst := out[(r-r0)*int(rowBytes) : (r-r0+1)*int(rowBytes)]
					if err := g.quantize(p.info.Type, scratch[wk], dst); err != nil {
						errs[wk] = fmt.Errorf("synth: %s row %d: %w", p.info.Name, r, err)
						return
					}
				}
			}(wk)
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		n := (r1 - r0) * int(rowBytes)
		if _, err := w.Write(out[:n]); err != nil {
			return fmt.Errorf("synth: write %s: %w", p.info.Name, err)
		}
		progress(uint64(n))
	}
	return nil
}

func (g *gen) quantize(t ggml.Type, src []float32, dst []byte) error {
	if g.c.Quantize != nil {
		return g.c.Quantize(t, src, dst)
	}
	if t != ggml.F32 || len(dst) != 4*len(src) {
		return fmt.Errorf("no quantizer for %s", t)
	}
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
	return nil
}

// row fills x with row r of tensor p.
func (g *gen) row(p plan, r int, x []float32) {
	n := float64(len(x))
	switch p.kind {
	case kEmbd:
		g.embdRow(r, x)
		if g.shared != nil {
			g.moeEmbd(r, x)
		}
	case kNorm:
		rg := newRNG(g.c.Seed, p.info.Name, r)
		for i := range x {
			x[i] = 1 + 0.1*float32(2*rg.uniform()-1)
		}
	case kDense, kResidual:
		s := 1 / math.Sqrt(n)
		if p.kind == kResidual {
			s *= 0.5 / math.Sqrt(float64(g.c.Layers))
		}
		rg := newRNG(g.c.Seed, p.info.Name, r)
		for i := range x {
			x[i] = float32(s * rg.normal())
		}
	case kBias:
		rg := newRNG(g.c.Seed, p.info.Name, r)
		s := 0.5
		if g.c.Arch.reuse18() {
			s = biasScale18(p.info.Name)
		}
		for i := range x {
			x[i] = float32(s * rg.normal())
		}
	case kSink, kExpBias:
		s := 1.5
		if p.kind == kExpBias {
			s = 2.5
		}
		rg := newRNG(g.c.Seed, p.info.Name, r)
		for i := range x {
			x[i] = float32(s * rg.normal())
		}
	case kRopeFreqs:
		llama3Factors(float64(g.c.RopeBase), 2*len(x), g.c.Ctx, x)
	case kRopeLong, kRopeShort:
		// Smooth ramps over the frequency pairs like published LongRoPE
		// factors: the short ones stay near 1, the long ones grow to ~21
		// for the lowest frequencies.
		for i := range x {
			u := float64(i) / float64(max(1, len(x)-1))
			if p.kind == kRopeShort {
				x[i] = float32(1 + 0.5*u)
			} else {
				x[i] = float32(1 + 20*u*u)
			}
		}
	case kOutput:
		rg := newRNG(g.c.Seed, p.info.Name, r)
		s := float64(g.c.Noise) / math.Sqrt(n)
		for i := range x {
			x[i] = float32(s * rg.normal())
		}
		if len(g.pre[r]) > 0 {
			u := make([]float32, len(x))
			gain := g.c.Gain / float32(n)
			for _, t := range g.pre[r] {
				g.embdRow(int(t), u)
				for i := range x {
					x[i] += gain * u[i]
				}
			}
		}
	}
}

// biasScale18 is the standard deviation of a bias tensor's values under
// the 0.18 router model: 0.5, but small for the router bias and the biases
// every token adds to the residual stream, which would otherwise dominate
// the routing (moe.go).
func biasScale18(name string) float64 {
	switch {
	case strings.HasSuffix(name, "ffn_gate_inp.bias"):
		return 0.1
	case strings.HasSuffix(name, "attn_output.bias"), strings.HasSuffix(name, "ffn_down_exps.bias"):
		return 0.05
	}
	return 0.5
}

// llama3Factors fills x (n_rot/2 entries) with the frequency divisors
// llama.cpp's converter writes for a Llama 3.1 rope_scaling (factor 8,
// low_freq_factor 1, high_freq_factor 4), with the original context scaled
// to the model's as Llama 3.1's is to its 128k (8192 = 1/16): at the
// original 8192 only wavelengths beyond 2048 positions would be divided,
// which a short test sequence could not tell from no scaling.
func llama3Factors(base float64, rot, ctx int, x []float32) {
	const factor, low, high = 8.0, 1.0, 4.0
	old := math.Max(16, float64(ctx)/16)
	lowWave, highWave := old/low, old/high
	for i := range x {
		freq := 1 / math.Pow(base, float64(2*i)/float64(rot))
		wave := 2 * math.Pi / freq
		switch {
		case wave < highWave:
			x[i] = 1
		case wave > lowWave:
			x[i] = factor
		default:
			smooth := (old/wave - low) / (high - low)
			x[i] = float32(1 / ((1-smooth)/factor + smooth))
		}
	}
}

func (g *gen) embdRow(t int, x []float32) {
	rg := newRNG(g.c.Seed, arch.TokEmbdName, t)
	for i := range x {
		x[i] = float32(rg.normal())
	}
}

// rng is splitmix64 seeded from (seed, tensor name, row), so any row can be
// regenerated independently (the output matrix re-derives embedding rows).
type rng struct{ s uint64 }

func newRNG(seed uint64, name string, row int) *rng {
	h := fnv.New64a()
	h.Write([]byte(name))
	r := &rng{s: seed ^ h.Sum64() ^ uint64(row)*0x9E3779B97F4A7C15}
	r.next()
	return r
}

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (r *rng) uniform() float64 { return float64(r.next()>>11) / (1 << 53) }

// normal is an Irwin–Hall approximation of N(0,1): four 16-bit uniforms
// from one draw, centred and scaled to unit variance. Cheap and bounded
// (|x| < 3.47), which is all weights need.
func (r *rng) normal() float64 {
	v := r.next()
	s := float64(v&0xffff) + float64(v>>16&0xffff) + float64(v>>32&0xffff) + float64(v>>48)
	return (s/65536 - 2) * math.Sqrt(3)
}
