package arch

import (
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
)

// Config is a model file resolved against its architecture's table: the
// hyperparameters, the graph options and which optional tensors are
// present. It is comparable; every field added since llama is zero for a
// plain llama file, and a zero option means "off" (or the default its
// comment names).
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

	// Tensor-implied options.
	FusedQKV    bool // attn_qkv.weight holds q, k and v rows (phi3)
	FusedBias   bool // attn_qkv.bias
	QKNorm      bool // attn_q_norm/attn_k_norm: RMSNorm per head before RoPE (qwen3, gemma3)
	PostNorms   bool // post_attention_norm/post_ffw_norm (gemma2/3)
	FusedUp     bool // ffn_up holds gate rows then up rows (phi3)
	OutputBias  bool // output.bias
	RopeFactors bool // rope_factors_long/short.weight (LongRoPE, phi3)

	// Graph options of the architecture (Spec.Graph).
	EmbedScale bool // token embeddings × sqrt(n_embd)
	ScaleQ     bool // q × AttnScale after RoPE, scores unscaled
	GeGLU      bool // gelu-gated feed-forward
	SwiGLUOAI  bool // gpt-oss's clamped SwiGLU in the experts

	// Metadata-driven options.
	AttnScale      float32 // with ScaleQ: the q scale; 0 = 1/sqrt(head_dim)
	AttnSoftcap    float32 // scores → c·tanh(scores/c); 0 = none
	FinalSoftcap   float32 // logits → c·tanh(logits/c); 0 = none
	SlidingWindow  int     // sliding layers see the last SlidingWindow positions; 0 = none
	SWAPattern     int     // with a window: layer l slides iff SWAPattern == 0 || l%SWAPattern < SWAPattern-1
	RopeBaseSWA    float32 // RoPE base of sliding layers (used only when SlidingWindow > 0)
	RopeScaleSWA   float32 // RoPE freq scale of sliding layers
	RopeAttnFactor float32 // rope.scaling.attn_factor: cos/sin multiplier (LongRoPE); 0 = 1
	RopeOrigCtx    int     // rope.scaling.original_context_length; LongRoPE uses the long factors beyond it, YaRN's correction dims derive from it; 0 = NCtxTrain
	// RopeYaRN: rope.scaling.type yarn. RoPE blends interpolated and
	// extrapolated angles per frequency pair (ext_factor 1, beta_fast 32,
	// beta_slow 1 as llama.cpp's defaults) and scales cos/sin by YaRN's
	// magnitude correction (core/model's rope.go computes both as ggml).
	RopeYaRN bool

	// Mixture of experts (every layer's feed-forward when MoE is on).
	MoE          bool    // ffn_gate_inp + ffn_{gate,up,down}_exps replace ffn_gate/up/down
	SharedExpert bool    // ffn_{gate,up,down}_shexp gated by sigmoid(ffn_gate_inp_shexp·x), added to the experts' sum
	NExpert      int     // <arch>.expert_count
	NExpertUsed  int     // <arch>.expert_used_count: experts each token runs (top-k)
	NFFExp       int     // one expert's feed-forward length
	NFFShexp     int     // the shared expert's feed-forward length
	ExpertGating Gating  // router probabilities from the logits
	ExpertNorm   bool    // the top-k weights are divided by their sum
	ExpertScale  float32 // the weights are multiplied by it; 0 = 1

	// gpt-oss.
	AttnSinks  bool // attn_sinks.weight: per-head logit added to the attention softmax's denominator
	ExpertBias bool // router bias and per-expert gate/up/down biases

	// Encoders (bert, nomic-bert): Graph.Encoder, NoRope, FFNGeLU, with
	// RMSEps holding attention.layer_norm_epsilon (the LayerNorms' eps).
	Encoder   bool
	NoRope    bool
	FFNGeLU   bool
	NonCausal bool // attention.causal = false: every token attends to the whole sequence
	NTokTypes int  // tokenizer.ggml.token_type_count (rows of token_types)
	NClsOut   int  // classifier outputs: the length of classifier.output_labels, 1 without it

	PosEmbd    bool // position_embd.weight
	TypeEmbd   bool // token_types.weight
	UpBias     bool // ffn_up.bias
	DownBias   bool // ffn_down.bias
	ClsDense   bool // cls.weight
	ClsBias    bool // cls.bias
	ClsOutput  bool // cls.output.weight
	ClsOutBias bool // cls.output.bias
}

// Gating is how a MoE router turns its logits into expert probabilities
// (llama.cpp's llama_expert_gating_func_type).
type Gating int

const (
	GatingSoftmax       Gating = iota // softmax over all experts, then top-k
	GatingSigmoid                     // sigmoid of each logit, then top-k
	GatingSoftmaxWeight               // top-k of the logits, softmax over the k chosen
)

// MaxExperts bounds expert_count as llama.cpp's LLAMA_MAX_EXPERTS does.
const MaxExperts = 512

// QDim is the length of a token's query vector (all heads).
func (c Config) QDim() int { return c.NHead * c.HeadDim }

// KVDim is the length of a token's key (or value) vector (all kv heads).
func (c Config) KVDim() int { return c.NHeadKV * c.HeadDim }

// Sliding reports whether layer l attends through the sliding window.
func (c Config) Sliding(l int) bool {
	if c.SlidingWindow <= 0 {
		return false
	}
	return c.SWAPattern == 0 || l%c.SWAPattern < c.SWAPattern-1
}

// Has reports whether feature f is on.
func (c *Config) Has(f Feature) bool { return *c.flag(f) }

func (c *Config) flag(f Feature) *bool {
	switch f {
	case QKVBias:
		return &c.QKVBias
	case OutBias:
		return &c.OutBias
	case FusedQKV:
		return &c.FusedQKV
	case FusedBias:
		return &c.FusedBias
	case QKNorm:
		return &c.QKNorm
	case PostNorms:
		return &c.PostNorms
	case FusedUp:
		return &c.FusedUp
	case OutputBias:
		return &c.OutputBias
	case RopeFreqs:
		return &c.RopeFreqs
	case RopeFactors:
		return &c.RopeFactors
	case MoE:
		return &c.MoE
	case SharedExpert:
		return &c.SharedExpert
	case AttnSinks:
		return &c.AttnSinks
	case ExpertBias:
		return &c.ExpertBias
	case PosEmbd:
		return &c.PosEmbd
	case TypeEmbd:
		return &c.TypeEmbd
	case UpBias:
		return &c.UpBias
	case DownBias:
		return &c.DownBias
	case ClsDense:
		return &c.ClsDense
	case ClsBias:
		return &c.ClsBias
	case ClsOutput:
		return &c.ClsOutput
	case ClsOutBias:
		return &c.ClsOutBias
	}
	panic(fmt.Sprintf("arch: feature %d has no flag", f))
}

// Used reports whether the graph reads t under c.
func (c *Config) Used(t Tensor) bool {
	if t.Unless != None && c.Has(t.Unless) {
		return false
	}
	switch {
	case t.Feature == Output:
		return !c.TiedOutput
	case t.Feature != None && t.Optional:
		return c.Has(t.Feature)
	}
	return true
}

// LayerName is a layer tensor's full name.
func LayerName(l int, name string) string { return fmt.Sprintf("blk.%d.%s", l, name) }

// Load reads f's hyperparameters as llama.cpp does and checks presence and
// shape of every tensor its architecture's graph uses, so a malformed file
// fails here naming the key or tensor instead of deep inside the graph.
// Tensor types are the caller's to check (they depend on the kernels).
func Load(f *gguf.File) (Config, *Spec, error) {
	name, err := f.String("general.architecture")
	if err != nil {
		return Config{}, nil, fmt.Errorf("model: general.architecture: %w", err)
	}
	s, ok := Lookup(name)
	if !ok {
		return Config{}, nil, errUnknown(name)
	}
	c := Config{Arch: name}
	r := Reader{f: f, arch: name}
	if err := c.readCommon(r, s.Graph.Encoder); err != nil {
		return Config{}, nil, err
	}
	if s.Read != nil {
		if err := s.Read(r, &c); err != nil {
			return Config{}, nil, err
		}
	}
	if err := c.resolve(f, s); err != nil {
		return Config{}, nil, err
	}
	if err := c.checkVocab(f, r); err != nil {
		return Config{}, nil, err
	}
	return c, s, nil
}

// checkVocab requires the tokenizer's vocabulary (and <arch>.vocab_size,
// when given) to have exactly one token per embedding and output row, as
// llama.cpp does at load. Otherwise token ids past the table would be
// refused mid-generation (or rows never produced by the tokenizer would be
// sampled), which once showed up as empty output and a zero exit status.
func (c *Config) checkVocab(f *gguf.File, r Reader) error {
	rows := fmt.Sprintf("%s has %d rows", tokEmbd.Name, c.NVocab)
	if !c.TiedOutput {
		rows = fmt.Sprintf("%s and %s have %d rows", tokEmbd.Name, output.Name, c.NVocab)
	}
	if v, ok := f.Get("tokenizer.ggml.tokens"); ok {
		if n := v.Len(); n != c.NVocab {
			return fmt.Errorf("model: the tokenizer has %d tokens (tokenizer.ggml.tokens) but %s: vocabulary and weights disagree", n, rows)
		}
	}
	if r.Has("vocab_size") {
		n, err := f.Uint64(r.Key("vocab_size"))
		if err != nil {
			return fmt.Errorf("model: %s: %w", r.Key("vocab_size"), err)
		}
		if n != uint64(c.NVocab) {
			return fmt.Errorf("model: %s = %d but %s: vocabulary and weights disagree", r.Key("vocab_size"), n, rows)
		}
	}
	return nil
}

// readCommon reads the keys every architecture shares. Encoders' norms
// are LayerNorms whose eps is attention.layer_norm_epsilon (kept in RMSEps).
func (c *Config) readCommon(r Reader, encoder bool) error {
	var err error
	if c.NEmbd, err = r.Int("embedding_length"); err != nil {
		return err
	}
	if c.NLayer, err = r.Int("block_count"); err != nil {
		return err
	}
	if c.NHead, err = r.Int("attention.head_count"); err != nil {
		return err
	}
	if c.NHeadKV, err = r.OptInt("attention.head_count_kv", c.NHead); err != nil {
		return err
	}
	if c.NFF, err = r.Int("feed_forward_length"); err != nil {
		return err
	}
	if c.NCtxTrain, err = r.OptInt("context_length", 2048); err != nil {
		return err
	}
	if c.NHead%c.NHeadKV != 0 {
		return fmt.Errorf("model: head_count %d is not a multiple of head_count_kv %d", c.NHead, c.NHeadKV)
	}
	if !r.Has("attention.key_length") && c.NEmbd%c.NHead != 0 {
		return fmt.Errorf("model: embedding_length %d is not a multiple of head_count %d", c.NEmbd, c.NHead)
	}
	if c.HeadDim, err = r.OptInt("attention.key_length", c.NEmbd/c.NHead); err != nil {
		return err
	}
	vl, err := r.OptInt("attention.value_length", c.HeadDim)
	if err != nil {
		return err
	}
	if vl != c.HeadDim {
		return unsupported("attention.value_length %d differs from key_length %d", vl, c.HeadDim)
	}
	if c.NRot, err = r.OptInt("rope.dimension_count", c.HeadDim); err != nil {
		return err
	}
	if c.NRot > c.HeadDim || c.NRot%2 != 0 {
		return fmt.Errorf("model: rope.dimension_count %d must be even and <= head length %d", c.NRot, c.HeadDim)
	}
	if c.RopeBase, err = r.OptFloat("rope.freq_base", 10000); err != nil {
		return err
	}
	if c.RopeBase <= 0 {
		return fmt.Errorf("model: %s = %v: must be > 0", r.Key("rope.freq_base"), c.RopeBase)
	}
	epsKey := "attention.layer_norm_rms_epsilon"
	if encoder {
		epsKey = "attention.layer_norm_epsilon"
	}
	if !r.Has(epsKey) {
		return fmt.Errorf("model: %s: %w", r.Key(epsKey), gguf.ErrNotFound)
	}
	eps, err := r.OptFloat(epsKey, 0)
	if err != nil {
		return err
	}
	if eps < 0 {
		return fmt.Errorf("model: %s = %v: negative", r.Key(epsKey), eps)
	}
	c.RMSEps = eps
	if err := c.readRopeScaling(r); err != nil {
		return err
	}
	if r.Has("rope.scaling.attn_factor") {
		af, err := r.OptFloat("rope.scaling.attn_factor", 1)
		if err != nil {
			return err
		}
		if !(af > 0) {
			return fmt.Errorf("model: %s = %v: must be > 0", r.Key("rope.scaling.attn_factor"), af)
		}
		if af != 1 {
			c.RopeAttnFactor = af
		}
	}
	if r.Has("rope.scaling.original_context_length") {
		if c.RopeOrigCtx, err = r.Int("rope.scaling.original_context_length"); err != nil {
			return err
		}
	}
	return nil
}

// readRopeScaling applies llama.cpp's rules: linear scaling divides positions
// by the factor (freq_scale = 1/factor); yarn does too and adds YaRN's
// per-pair blend and magnitude correction (RopeYaRN); longrope and the
// others need machinery this build does not have (LongRoPE's factor
// tensors are read without a scaling type, as llama.cpp's phi3 files have
// none).
func (c *Config) readRopeScaling(r Reader) error {
	c.RopeFreqScale = 1
	typ := "linear"
	if r.Has("rope.scaling.type") {
		s, err := r.f.String(r.Key("rope.scaling.type"))
		if err != nil {
			return fmt.Errorf("model: %s: %w", r.Key("rope.scaling.type"), err)
		}
		typ = s
	}
	factor, key := float32(0), ""
	for _, k := range []string{"rope.scaling.factor", "rope.scale_linear"} {
		if r.Has(k) {
			v, err := r.f.Float32(r.Key(k))
			if err != nil {
				return fmt.Errorf("model: %s: %w", r.Key(k), err)
			}
			factor, key = v, r.Key(k)
			break
		}
	}
	// scale sets freq_scale = 1/factor (llama.cpp: a factor of 0 or an
	// absent one means 1).
	scale := func() error {
		if factor == 0 || factor == 1 {
			return nil
		}
		if !(factor > 0) || math.IsInf(float64(factor), 0) {
			return fmt.Errorf("model: %s = %v: the rope scaling factor must be > 0 and finite", key, factor)
		}
		c.RopeFreqScale = 1 / factor
		return nil
	}
	switch typ {
	case "none", "":
		return nil
	case "linear":
		return scale()
	case "yarn":
		c.RopeYaRN = true
		if key != "" && factor == 0 {
			// llama.cpp reads 0 as "no scaling"; a yarn file that says
			// so explicitly is malformed rather than unscaled.
			return fmt.Errorf("model: %s = 0 with rope.scaling.type yarn: the factor must be > 0", key)
		}
		return scale()
	default:
		if factor == 0 || factor == 1 {
			return nil // declared but inactive
		}
		return unsupported("rope scaling type %s", gguf.QuoteName(typ))
	}
}

// resolve decides the optional features from the tensors present, then
// checks every tensor the graph will read.
func (c *Config) resolve(f *gguf.File, s *Spec) error {
	emb, ok := f.Tensor(tokEmbd.Name)
	if !ok {
		return fmt.Errorf("model: tensor %s is missing", tokEmbd.Name)
	}
	// Trailing dimensions of 1 are checked by check, as for every tensor.
	if len(emb.Dims) < 2 || emb.Dims[1] == 0 || emb.Dims[1] > 1<<24 {
		return fmt.Errorf("model: tensor %s has shape %v, want [%d, n_vocab]", tokEmbd.Name, emb.Dims, c.NEmbd)
	}
	c.NVocab = int(emb.Dims[1])
	if _, ok := f.Tensor(LayerName(0, gateInp.Name)); ok && !s.Offers(MoE) {
		return unsupported("mixture-of-experts layers in a %s file (%s)", c.Arch, LayerName(0, gateInp.Name))
	}
	// Optional features: on when their first tensor is present (layer 0).
	c.TiedOutput = true
	decide := func(ts []Tensor, name func(string) string) {
		for _, t := range ts {
			if t.Feature == None || !t.Optional {
				continue
			}
			if _, ok := f.Tensor(name(t.Name)); !ok {
				continue
			}
			if t.Feature == Output {
				c.TiedOutput = false
			} else {
				*c.flag(t.Feature) = true
			}
		}
	}
	global := func(n string) string { return n }
	layer0 := func(n string) string { return LayerName(0, n) }
	decide(s.Global, global)
	decide(s.Layer, layer0)
	// Required tensors turn their feature on unless a fused alternative
	// replaces them.
	s.Defaults(c)
	if err := c.checkExperts(f); err != nil {
		return err
	}
	for _, t := range s.Global {
		if c.Used(t) {
			if err := c.check(f, t, t.Name); err != nil {
				return err
			}
		}
	}
	for l := 0; l < c.NLayer; l++ {
		for _, t := range s.Layer {
			if c.Used(t) {
				if err := c.check(f, t, LayerName(l, t.Name)); err != nil {
					if t.Feature == QKVBias && l == 0 && !t.Optional {
						return fmt.Errorf("%w (%s needs q/k/v biases)", err, c.Arch)
					}
					return err
				}
			}
		}
	}
	return nil
}

// checkExperts requires the expert counts exactly when the file has
// experts, so every expert tensor's shape is checked against them.
func (c *Config) checkExperts(f *gguf.File) error {
	router := LayerName(0, gateInp.Name)
	switch {
	case c.MoE && c.NExpert == 0:
		if _, ok := f.Tensor(router); !ok {
			return fmt.Errorf("model: tensor %s is missing (%s has experts in every layer)", router, c.Arch)
		}
		return fmt.Errorf("model: %s.expert_count is missing or 0 but the file has experts (%s)", c.Arch, router)
	case !c.MoE && c.NExpert > 0:
		return fmt.Errorf("model: %s.expert_count = %d but the file has no router (%s)", c.Arch, c.NExpert, router)
	}
	return nil
}

// readExperts reads the expert counts every MoE architecture shares, as
// llama.cpp checks them: expert_count <= MaxExperts, 0 < expert_used_count
// <= expert_count (both 0 for a dense file). ffExp is the metadata key of
// one expert's feed-forward length ("" = feed_forward_length, as llama's
// Mixtral files use); when absent it defaults to n_ff / n_expert_used.
func (r Reader) readExperts(c *Config, ffExp string) error {
	var err error
	if c.NExpert, err = r.OptCount("expert_count", 0); err != nil {
		return err
	}
	if c.NExpertUsed, err = r.OptCount("expert_used_count", 0); err != nil {
		return err
	}
	switch {
	case c.NExpert > MaxExperts:
		return fmt.Errorf("model: %s = %d: more than the %d experts llama.cpp accepts", r.Key("expert_count"), c.NExpert, MaxExperts)
	case c.NExpert == 0 && c.NExpertUsed != 0:
		return fmt.Errorf("model: %s = %d without %s", r.Key("expert_used_count"), c.NExpertUsed, r.Key("expert_count"))
	case c.NExpert > 0 && (c.NExpertUsed == 0 || c.NExpertUsed > c.NExpert):
		return fmt.Errorf("model: %s = %d: must be in [1, %s = %d]", r.Key("expert_used_count"), c.NExpertUsed, r.Key("expert_count"), c.NExpert)
	}
	if c.NExpert == 0 {
		return nil
	}
	c.NFFExp = c.NFF
	if ffExp != "" {
		if c.NFFExp, err = r.OptInt(ffExp, c.NFF/c.NExpertUsed); err != nil {
			return err
		}
		if c.NFFExp == 0 {
			return fmt.Errorf("model: %s is missing and %s / %s = %d / %d is 0", r.Key(ffExp), r.Key("feed_forward_length"),
				r.Key("expert_used_count"), c.NFF, c.NExpertUsed)
		}
	}
	return nil
}

// check verifies presence and shape of one tensor, and that RoPE factors
// are F32 (the graph reads them as such).
func (c *Config) check(f *gguf.File, t Tensor, name string) error {
	ti, ok := f.Tensor(name)
	if !ok {
		return fmt.Errorf("model: tensor %s is missing", name)
	}
	want := make([]int, len(t.Dims))
	for i, d := range t.Dims {
		want[i] = d.size(c)
	}
	if len(ti.Dims) < len(want) {
		return fmt.Errorf("model: tensor %s has shape %v, want %v", name, ti.Dims, want)
	}
	for i, d := range ti.Dims {
		w := 1
		if i < len(want) {
			w = want[i]
		}
		if d != uint64(w) {
			return fmt.Errorf("model: tensor %s has shape %v, want %v", name, ti.Dims, want)
		}
	}
	if t.Kind == F32 && ti.Type != ggml.F32 {
		return unsupported("tensor %s has type %s, want F32", name, ti.Type)
	}
	return nil
}

// Tensors returns the tensors of s the graph reads under c, global ones by
// full name and layer ones by their name after "blk.N.", in table order.
func (s *Spec) Tensors(c *Config) (global, layer []Tensor) {
	for _, t := range s.Global {
		if c.Used(t) {
			global = append(global, t)
		}
	}
	for _, t := range s.Layer {
		if c.Used(t) {
			layer = append(layer, t)
		}
	}
	return global, layer
}

// Reader reads <arch>.* metadata keys with llama.cpp's defaults and range
// checks.
type Reader struct {
	f    *gguf.File
	arch string
}

// Key is the full name of an <arch>.* key.
func (r Reader) Key(k string) string { return r.arch + "." + k }

// Has reports whether the key is present.
func (r Reader) Has(k string) bool {
	_, ok := r.f.Get(r.Key(k))
	return ok
}

// Int reads a required count in [1, 2^24].
func (r Reader) Int(k string) (int, error) {
	v, err := r.f.Uint64(r.Key(k))
	if err != nil {
		return 0, fmt.Errorf("model: %s: %w", r.Key(k), err)
	}
	if v == 0 || v > 1<<24 {
		return 0, fmt.Errorf("model: %s = %d: out of range", r.Key(k), v)
	}
	return int(v), nil
}

// OptInt is Int with a default when the key is absent.
func (r Reader) OptInt(k string, def int) (int, error) {
	if !r.Has(k) {
		return def, nil
	}
	return r.Int(k)
}

// OptCount reads a count that may be 0 (sliding_window), default def.
func (r Reader) OptCount(k string, def int) (int, error) {
	if !r.Has(k) {
		return def, nil
	}
	v, err := r.f.Uint64(r.Key(k))
	if err != nil {
		return 0, fmt.Errorf("model: %s: %w", r.Key(k), err)
	}
	if v > 1<<24 {
		return 0, fmt.Errorf("model: %s = %d: out of range", r.Key(k), v)
	}
	return int(v), nil
}

// OptFloat reads a finite float, default def.
func (r Reader) OptFloat(k string, def float32) (float32, error) {
	if !r.Has(k) {
		return def, nil
	}
	v, err := r.f.Float32(r.Key(k))
	if err != nil {
		return 0, fmt.Errorf("model: %s: %w", r.Key(k), err)
	}
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return 0, fmt.Errorf("model: %s = %v: not finite", r.Key(k), v)
	}
	return v, nil
}

// softcap reads a soft-cap value (0 or absent = none; negative is refused).
func (r Reader) softcap(k string, def float32) (float32, error) {
	v, err := r.OptFloat(k, def)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("model: %s = %v: must be >= 0", r.Key(k), v)
	}
	return v, nil
}

// invSqrt is 1/sqrtf(n) in f32 as llama.cpp computes attention scales.
func invSqrt(n int) float32 { return 1 / float32(math.Sqrt(float64(float32(n)))) }
