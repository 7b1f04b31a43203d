package model

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/kernels"
)

// RopeStyle says which elements RoPE rotates together: llama pairs adjacent
// elements (2i, 2i+1); qwen2 (GPT-NeoX style) pairs i with i+n_rot/2.
type RopeStyle int

const (
	RopeNormal RopeStyle = iota
	RopeNeoX
)

// Config is the shape and numerics of a llama-family model, read from GGUF
// metadata the way llama.cpp reads it.
type Config struct {
	Arch      string
	NEmbd     int
	NLayer    int
	NHead     int
	NHeadKV   int
	HeadDim   int // per-head length of q, k and v
	NFF       int
	NRot      int // leading elements of each head that RoPE rotates
	NVocab    int
	NCtxTrain int

	RopeBase      float32
	RopeFreqScale float32 // 1/linear scaling factor; 1 = none
	RopeStyle     RopeStyle
	RopeFreqs     bool // rope_freqs.weight divides the per-pair frequencies (llama3 scaling)
	RMSEps        float32

	QKVBias    bool // attn_q/k/v.bias present (qwen2; optional in llama)
	OutBias    bool // attn_output.bias present
	TiedOutput bool // no output.weight: the logits reuse token_embd.weight
}

// QDim is the length of a token's query vector (all heads).
func (c Config) QDim() int { return c.NHead * c.HeadDim }

// KVDim is the length of a token's key (or value) vector (all kv heads).
func (c Config) KVDim() int { return c.NHeadKV * c.HeadDim }

// ErrUnsupported marks a model this build cannot run (architecture, tensor
// type, scaling scheme); the CLI reports it as one line.
var ErrUnsupported = errors.New("unsupported model")

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, a...))
}

// ConfigFromGGUF reads the hyper-parameters of a llama or qwen2 model and
// checks every tensor the graph will use against them, so a malformed file
// fails here with the tensor's name instead of deep inside a kernel.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	arch, err := f.String("general.architecture")
	if err != nil {
		return Config{}, fmt.Errorf("model: general.architecture: %w", err)
	}
	c := Config{Arch: arch}
	switch arch {
	case "llama":
		c.RopeStyle = RopeNormal
	case "qwen2":
		c.RopeStyle = RopeNeoX
	default:
		return Config{}, unsupported("architecture %s (supported: llama, qwen2)", gguf.QuoteName(arch))
	}
	key := func(s string) string { return arch + "." + s }
	req := func(name string) (int, error) {
		v, err := f.Uint64(key(name))
		if err != nil {
			return 0, fmt.Errorf("model: %s: %w", key(name), err)
		}
		if v == 0 || v > 1<<24 {
			return 0, fmt.Errorf("model: %s = %d: out of range", key(name), v)
		}
		return int(v), nil
	}
	opt := func(name string, def int) (int, error) {
		if _, ok := f.Get(key(name)); !ok {
			return def, nil
		}
		return req(name)
	}
	optF := func(name string, def float32) (float32, error) {
		if _, ok := f.Get(key(name)); !ok {
			return def, nil
		}
		v, err := f.Float32(key(name))
		if err != nil {
			return 0, fmt.Errorf("model: %s: %w", key(name), err)
		}
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0, fmt.Errorf("model: %s = %v: not finite", key(name), v)
		}
		return v, nil
	}
	if c.NEmbd, err = req("embedding_length"); err != nil {
		return Config{}, err
	}
	if c.NLayer, err = req("block_count"); err != nil {
		return Config{}, err
	}
	if c.NHead, err = req("attention.head_count"); err != nil {
		return Config{}, err
	}
	if c.NHeadKV, err = opt("attention.head_count_kv", c.NHead); err != nil {
		return Config{}, err
	}
	if c.NFF, err = req("feed_forward_length"); err != nil {
		return Config{}, err
	}
	if c.NCtxTrain, err = opt("context_length", 2048); err != nil {
		return Config{}, err
	}
	if c.NEmbd%c.NHead != 0 {
		return Config{}, fmt.Errorf("model: embedding_length %d is not a multiple of head_count %d", c.NEmbd, c.NHead)
	}
	if c.NHead%c.NHeadKV != 0 {
		return Config{}, fmt.Errorf("model: head_count %d is not a multiple of head_count_kv %d", c.NHead, c.NHeadKV)
	}
	if c.HeadDim, err = opt("attention.key_length", c.NEmbd/c.NHead); err != nil {
		return Config{}, err
	}
	vl, err := opt("attention.value_length", c.HeadDim)
	if err != nil {
		return Config{}, err
	}
	if vl != c.HeadDim {
		return Config{}, unsupported("attention.value_length %d differs from key_length %d", vl, c.HeadDim)
	}
	if c.NRot, err = opt("rope.dimension_count", c.HeadDim); err != nil {
		return Config{}, err
	}
	if c.NRot > c.HeadDim || c.NRot%2 != 0 {
		return Config{}, fmt.Errorf("model: rope.dimension_count %d must be even and <= head length %d", c.NRot, c.HeadDim)
	}
	if c.RopeBase, err = optF("rope.freq_base", 10000); err != nil {
		return Config{}, err
	}
	if c.RopeBase <= 0 {
		return Config{}, fmt.Errorf("model: %s = %v: must be > 0", key("rope.freq_base"), c.RopeBase)
	}
	if _, ok := f.Get(key("attention.layer_norm_rms_epsilon")); !ok {
		return Config{}, fmt.Errorf("model: %s: %w", key("attention.layer_norm_rms_epsilon"), gguf.ErrNotFound)
	}
	eps, err := optF("attention.layer_norm_rms_epsilon", 0)
	if err != nil {
		return Config{}, err
	}
	if eps < 0 {
		return Config{}, fmt.Errorf("model: %s = %v: negative", key("attention.layer_norm_rms_epsilon"), eps)
	}
	c.RMSEps = eps
	if err := c.readRopeScaling(f, key); err != nil {
		return Config{}, err
	}
	if err := c.checkTensors(f); err != nil {
		return Config{}, err
	}
	if err := c.checkVocab(f, key); err != nil {
		return Config{}, err
	}
	return c, nil
}

// checkVocab requires the tokenizer's vocabulary (and <arch>.vocab_size,
// when given) to have exactly one token per embedding and output row, as
// llama.cpp does at load. Otherwise token ids past the table would be
// refused mid-generation (or rows never produced by the tokenizer would be
// sampled), which once showed up as empty output and a zero exit status.
func (c *Config) checkVocab(f *gguf.File, key func(string) string) error {
	rows := fmt.Sprintf("%s has %d rows", tokEmbd, c.NVocab)
	if !c.TiedOutput {
		rows = fmt.Sprintf("%s and %s have %d rows", tokEmbd, outWeight, c.NVocab)
	}
	if v, ok := f.Get("tokenizer.ggml.tokens"); ok {
		if n := v.Len(); n != c.NVocab {
			return fmt.Errorf("model: the tokenizer has %d tokens (tokenizer.ggml.tokens) but %s: vocabulary and weights disagree", n, rows)
		}
	}
	if _, ok := f.Get(key("vocab_size")); ok {
		n, err := f.Uint64(key("vocab_size"))
		if err != nil {
			return fmt.Errorf("model: %s: %w", key("vocab_size"), err)
		}
		if n != uint64(c.NVocab) {
			return fmt.Errorf("model: %s = %d but %s: vocabulary and weights disagree", key("vocab_size"), n, rows)
		}
	}
	return nil
}

// readRopeScaling applies llama.cpp's rules: linear scaling divides positions
// by the factor (freq_scale = 1/factor); yarn and longrope need extra
// machinery this build does not have.
func (c *Config) readRopeScaling(f *gguf.File, key func(string) string) error {
	c.RopeFreqScale = 1
	typ := "linear"
	if _, ok := f.Get(key("rope.scaling.type")); ok {
		s, err := f.String(key("rope.scaling.type"))
		if err != nil {
			return fmt.Errorf("model: %s: %w", key("rope.scaling.type"), err)
		}
		typ = s
	}
	factor := float32(0)
	for _, k := range []string{"rope.scaling.factor", "rope.scale_linear"} {
		if _, ok := f.Get(key(k)); ok {
			v, err := f.Float32(key(k))
			if err != nil {
				return fmt.Errorf("model: %s: %w", key(k), err)
			}
			factor = v
			break
		}
	}
	switch typ {
	case "none", "":
		return nil
	case "linear":
		if factor != 0 && factor != 1 {
			if !(factor > 0) || math.IsInf(float64(factor), 0) {
				return fmt.Errorf("model: rope scaling factor %v: must be > 0", factor)
			}
			c.RopeFreqScale = 1 / factor
		}
		return nil
	default:
		if factor == 0 || factor == 1 {
			return nil // declared but inactive
		}
		return unsupported("rope scaling type %s", gguf.QuoteName(typ))
	}
}

// Tensor names the graph uses.
const (
	tokEmbd    = "token_embd.weight"
	outNorm    = "output_norm.weight"
	outWeight  = "output.weight"
	ropeFreqsT = "rope_freqs.weight"
)

func blk(i int, s string) string { return fmt.Sprintf("blk.%d.%s", i, s) }

// checkTensors verifies presence, shape and type of every tensor the graph
// reads, naming the first bad one.
func (c *Config) checkTensors(f *gguf.File) error {
	want := func(name string, typeOK func(ggml.Type) bool, dims ...int) error {
		ti, ok := f.Tensor(name)
		if !ok {
			return fmt.Errorf("model: tensor %s is missing", name)
		}
		if len(ti.Dims) < len(dims) {
			return fmt.Errorf("model: tensor %s has shape %v, want %v", name, ti.Dims, dims)
		}
		for i, d := range ti.Dims {
			w := 1
			if i < len(dims) {
				w = dims[i]
			}
			if d != uint64(w) {
				return fmt.Errorf("model: tensor %s has shape %v, want %v", name, ti.Dims, dims)
			}
		}
		if !typeOK(ti.Type) {
			return unsupportedType(name, ti.Type)
		}
		return nil
	}
	emb, ok := f.Tensor(tokEmbd)
	if !ok {
		return fmt.Errorf("model: tensor %s is missing", tokEmbd)
	}
	// Trailing dimensions of 1 are checked by want, as for every tensor.
	if len(emb.Dims) < 2 || emb.Dims[1] == 0 || emb.Dims[1] > 1<<24 {
		return fmt.Errorf("model: tensor %s has shape %v, want [%d, n_vocab]", tokEmbd, emb.Dims, c.NEmbd)
	}
	c.NVocab = int(emb.Dims[1])
	if err := want(tokEmbd, dequantizable, c.NEmbd, c.NVocab); err != nil {
		return err
	}
	if err := want(outNorm, dequantizable, c.NEmbd); err != nil {
		return err
	}
	if _, ok := f.Tensor(outWeight); ok {
		if err := want(outWeight, matmulType, c.NEmbd, c.NVocab); err != nil {
			return err
		}
	} else {
		c.TiedOutput = true
		if !matmulType(emb.Type) {
			return unsupportedType(tokEmbd+" (tied output projection)", emb.Type)
		}
	}
	if _, ok := f.Tensor(ropeFreqsT); ok {
		c.RopeFreqs = true
		if err := want(ropeFreqsT, isF32, c.NRot/2); err != nil {
			return err
		}
	}
	if _, ok := f.Tensor(blk(0, "ffn_gate_inp.weight")); ok {
		return unsupported("mixture-of-experts layers (%s)", blk(0, "ffn_gate_inp.weight"))
	}
	_, c.QKVBias = f.Tensor(blk(0, "attn_q.bias"))
	_, c.OutBias = f.Tensor(blk(0, "attn_output.bias"))
	if c.Arch == "qwen2" && !c.QKVBias {
		return fmt.Errorf("model: tensor %s is missing (qwen2 needs q/k/v biases)", blk(0, "attn_q.bias"))
	}
	q, kv := c.QDim(), c.KVDim()
	type check struct {
		name string
		ok   func(ggml.Type) bool
		dims []int
	}
	for i := 0; i < c.NLayer; i++ {
		checks := []check{
			{"attn_norm.weight", dequantizable, []int{c.NEmbd}},
			{"attn_q.weight", matmulType, []int{c.NEmbd, q}},
			{"attn_k.weight", matmulType, []int{c.NEmbd, kv}},
			{"attn_v.weight", matmulType, []int{c.NEmbd, kv}},
			{"attn_output.weight", matmulType, []int{q, c.NEmbd}},
			{"ffn_norm.weight", dequantizable, []int{c.NEmbd}},
			{"ffn_gate.weight", matmulType, []int{c.NEmbd, c.NFF}},
			{"ffn_up.weight", matmulType, []int{c.NEmbd, c.NFF}},
			{"ffn_down.weight", matmulType, []int{c.NFF, c.NEmbd}},
		}
		if c.QKVBias {
			checks = append(checks,
				check{"attn_q.bias", dequantizable, []int{q}},
				check{"attn_k.bias", dequantizable, []int{kv}},
				check{"attn_v.bias", dequantizable, []int{kv}})
		}
		if c.OutBias {
			checks = append(checks, check{"attn_output.bias", dequantizable, []int{c.NEmbd}})
		}
		for _, ch := range checks {
			if err := want(blk(i, ch.name), ch.ok, ch.dims...); err != nil {
				return err
			}
		}
	}
	return nil
}

func isF32(t ggml.Type) bool { return t == ggml.F32 }

// unsupportedType is the load-time refusal of a tensor whose type no kernel
// path can execute (IQ1/IQ2/IQ3, TQ, MXFP4, integer types ...): one line
// naming the tensor, its type and the types this build runs.
func unsupportedType(name string, t ggml.Type) error {
	var ok []string
	for _, u := range ggml.All() {
		if matmulType(u) {
			ok = append(ok, u.String())
		}
	}
	return unsupported("tensor %s has type %s, which this build cannot execute (executable types: %s)",
		name, t, strings.Join(ok, " "))
}

// matmulType reports whether every kernel path can multiply by t.
func matmulType(t ggml.Type) bool { return kernels.Scalar().Dot(t) != nil }

// dequantizable reports whether norms, biases and embeddings of type t can
// be decoded to f32 (the executable types all can).
func dequantizable(t ggml.Type) bool { return matmulType(t) }
