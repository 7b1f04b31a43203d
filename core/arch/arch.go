// Package arch is the table of the model architectures memvanta executes.
// Each architecture is one file here (llama.go, qwen3.go, gemma2.go ...)
// holding everything that differs between architectures:
//
//   - the GGUF metadata keys it reads beyond the common ones (Spec.Read),
//   - its tensors: names, shapes in terms of the hyperparameters, whether
//     each is required, optional (an optional feature such as q/k/v biases)
//     or replaced by a fused alternative (Spec.Global, Spec.Layer),
//   - its graph, as the choice of shared blocks and their options
//     (Spec.Graph: RoPE pairing, embedding scale, where the attention
//     scale is applied, gated activation; plus what the tensors imply:
//     per-head q/k norms, post-norms, fused projections, biases; plus what
//     the metadata sets: soft-caps, sliding windows, RoPE scaling).
//
// Load resolves a file against its architecture's table into a Config,
// which is all core/model needs to build and run the graph. The package is
// free of kernels and model code, so core/inspect (linked into the
// sandboxed inspect-only guest) reads the same table the runtime executes.
package arch

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/memvanta/memvanta/core/gguf"
)

// ErrUnsupported marks a model this build cannot run (architecture, tensor
// type, scaling scheme); the CLI reports it as one line.
var ErrUnsupported = errors.New("unsupported model")

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, a...))
}

// Unsupported is an ErrUnsupported error with a formatted reason.
func Unsupported(format string, a ...any) error { return unsupported(format, a...) }

// RopeStyle says which elements RoPE rotates together: llama pairs adjacent
// elements (2i, 2i+1); GPT-NeoX style (qwen, gemma, phi3) pairs i with
// i+n_rot/2.
type RopeStyle int

const (
	RopeNormal RopeStyle = iota
	RopeNeoX
)

// Graph is an architecture's choice among the shared blocks' options that
// no tensor or metadata key expresses. The zero value is llama's graph:
// pre-norm RMSNorm blocks, adjacent-pair RoPE, scores scaled by
// 1/sqrt(head_dim), SwiGLU feed-forward.
type Graph struct {
	Rope RopeStyle
	// EmbedScale multiplies the token embeddings by sqrt(n_embd) (gemma).
	EmbedScale bool
	// ScaleQ multiplies q by the attention scale after RoPE and leaves the
	// scores unscaled, as llama.cpp's gemma and phi3 graphs do (the same
	// product, rounded at a different place).
	ScaleQ bool
	// GeGLU gates the feed-forward with gelu (tanh form) instead of silu.
	GeGLU bool
	// SwiGLUOAI is gpt-oss's clamped expert activation (llama.cpp's
	// LLM_FFN_SWIGLU_OAI_MOE): x = min(gate, 7), y = clamp(up, -7, 7),
	// x·sigmoid(1.702·x)·(y + 1).
	SwiGLUOAI bool
	// Encoder is a BERT-style encoder (llama.cpp's bert.cpp graph): the
	// token embedding plus token type 0 (plus learned positions without
	// RoPE) goes through a LayerNorm; each block is post-norm (attention,
	// residual add, LayerNorm; feed-forward, residual add, LayerNorm, all
	// LayerNorms with a bias and attention.layer_norm_epsilon); there is no
	// output norm nor output projection: the hidden states are pooled.
	Encoder bool
	// NoRope leaves q and k unrotated: positions come from the learned
	// position_embd table (bert).
	NoRope bool
	// FFNGeLU is a plain feed-forward, down(gelu(up·x + b) ) + b, without
	// a gate (bert's LLM_FFN_GELU, LLM_FFN_SEQ).
	FFNGeLU bool
}

// Dim is a tensor dimension in terms of the hyperparameters.
type Dim int

const (
	Embd     Dim = iota + 1 // n_embd
	QDim                    // n_head × head_dim
	KVDim                   // n_head_kv × head_dim
	QKVDim                  // QDim + 2·KVDim (fused attn_qkv)
	FF                      // n_ff
	FF2                     // 2·n_ff (fused gate and up)
	HeadDim                 // head_dim (per-head q/k norms)
	RotHalf                 // n_rot/2 (RoPE frequency factors)
	Vocab                   // n_vocab (rows of token_embd)
	Expert                  // n_expert (experts of a MoE layer)
	FFExp                   // n_ff_exp (one expert's feed-forward length)
	FFShexp                 // n_ff_shexp (the shared expert's feed-forward length)
	Heads                   // n_head (one attention sink per query head)
	Ctx                     // n_ctx_train (rows of position_embd)
	TokTypes                // n_token_types (rows of token_types)
	ClsOut                  // n_cls_out (classifier outputs, rows of cls.output)
)

func (d Dim) size(c *Config) int {
	switch d {
	case Embd:
		return c.NEmbd
	case QDim:
		return c.QDim()
	case KVDim:
		return c.KVDim()
	case QKVDim:
		return c.QDim() + 2*c.KVDim()
	case FF:
		return c.NFF
	case FF2:
		return 2 * c.NFF
	case HeadDim:
		return c.HeadDim
	case RotHalf:
		return c.NRot / 2
	case Vocab:
		return c.NVocab
	case Expert:
		return c.NExpert
	case FFExp:
		return c.NFFExp
	case FFShexp:
		return c.NFFShexp
	case Heads:
		return c.NHead
	case Ctx:
		return c.NCtxTrain
	case TokTypes:
		return c.NTokTypes
	case ClsOut:
		return c.NClsOut
	}
	panic(fmt.Sprintf("arch: unknown dim %d", d))
}

// Kind is how the graph reads a tensor, which decides the types it may have.
type Kind int

const (
	Matrix Kind = iota // multiplied by the matmul kernels
	Vector             // norm weight or bias: decoded to f32
	F32                // RoPE frequency factors: stored as f32
)

// Feature is a graph option that a tensor's presence turns on.
type Feature int

const (
	None         Feature = iota
	QKVBias              // attn_q/k/v.bias added after the projections
	OutBias              // attn_output.bias
	FusedQKV             // one attn_qkv matrix instead of attn_q/k/v
	FusedBias            // attn_qkv.bias
	QKNorm               // per-head RMSNorm of q and k before RoPE
	PostNorms            // RMSNorm of the attention and FFN outputs before each residual add
	FusedUp              // ffn_up holds gate and up (2·n_ff rows), no ffn_gate
	Output               // a separate output.weight (else the logits reuse token_embd)
	OutputBias           // output.bias
	RopeFreqs            // rope_freqs.weight divides the RoPE frequencies (llama 3.x scaling)
	RopeFactors          // rope_factors_long/short.weight (LongRoPE)
	MoE                  // ffn_gate_inp router and ffn_{gate,up,down}_exps experts instead of ffn_gate/up/down
	SharedExpert         // ffn_{gate,up,down}_shexp with its sigmoid gate ffn_gate_inp_shexp (qwen2moe)
	AttnSinks            // attn_sinks.weight: one extra softmax logit per query head (gpt-oss)
	ExpertBias           // ffn_gate_inp.bias and ffn_{gate,up,down}_exps.bias (gpt-oss)
	PosEmbd              // position_embd.weight: learned absolute positions (bert)
	TypeEmbd             // token_types.weight: row 0 (token type "sentence A") added to every token
	UpBias               // ffn_up.bias
	DownBias             // ffn_down.bias
	ClsDense             // cls.weight: the rank-pooling classifier's dense layer (tanh)
	ClsBias              // cls.bias
	ClsOutput            // cls.output.weight: the classifier's output projection
	ClsOutBias           // cls.output.bias
)

// Slot is a layer tensor's role in the shared blocks: core/model finds a
// layer's tensors by slot, so only this table spells their names.
type Slot int

const (
	NoSlot Slot = iota // global tensors, which core/model reads by the names below
	SlotAttnNorm
	SlotQ
	SlotK
	SlotV
	SlotO
	SlotFFNNorm
	SlotGate
	SlotUp // both halves when FusedUp
	SlotDown
	SlotBQ
	SlotBK
	SlotBV
	SlotBO
	SlotQKV
	SlotBQKV
	SlotQNorm
	SlotKNorm
	SlotPostAttn
	SlotPostFFN
	SlotGateInp   // MoE router
	SlotGateExps  // 3-D expert tensors
	SlotUpExps    //
	SlotDownExps  //
	SlotGateInpSh // shared expert's gate
	SlotGateSh
	SlotUpSh
	SlotDownSh
	SlotSinks         // attention sinks, one per query head
	SlotGateInpB      // router bias
	SlotGateExpsB     // 2-D expert biases: row e is expert e's
	SlotUpExpsB       //
	SlotDownExpsB     //
	SlotAttnOutNorm   // encoders: LayerNorm after the attention's residual add
	SlotAttnOutNormB  //
	SlotLayerOutNorm  // encoders: LayerNorm after the feed-forward's residual add
	SlotLayerOutNormB //
	SlotBUp           // ffn_up.bias
	SlotBDown         // ffn_down.bias
	NSlots            // length of per-slot arrays
)

// Names of the global tensors, which core/model reads by name.
const (
	TokEmbdName    = "token_embd.weight"
	OutNormName    = "output_norm.weight"
	OutputName     = "output.weight"
	OutputBiasName = "output.bias"
	RopeFreqsName  = "rope_freqs.weight"
	RopeLongName   = "rope_factors_long.weight"
	RopeShortName  = "rope_factors_short.weight"
	PosEmbdName    = "position_embd.weight"
	TypeEmbdName   = "token_types.weight"
	TokNormName    = "token_embd_norm.weight"
	TokNormBName   = "token_embd_norm.bias"
	ClsName        = "cls.weight"
	ClsBName       = "cls.bias"
	ClsOutName     = "cls.output.weight"
	ClsOutBName    = "cls.output.bias"
)

// Tensor is one row of an architecture's tensor table.
type Tensor struct {
	Name string // full name for global tensors; after "blk.N." for layer tensors
	Slot Slot   // a layer tensor's slot; NoSlot for global tensors
	Dims []Dim
	Kind Kind
	// Feature is the graph option the tensor serves (None for the plain
	// blocks). A required tensor turns its feature on; an optional one
	// turns it on when present (in layer 0 for layer tensors), and then
	// every tensor of that feature is required in every layer.
	Feature  Feature
	Optional bool
	// Unless: the tensor is not used (nor required) when this feature is
	// on, e.g. attn_q/k/v when a fused attn_qkv is present.
	Unless Feature
}

// Spec is one architecture: its table and graph.
type Spec struct {
	Name   string
	Graph  Graph
	Global []Tensor // token_embd, output_norm, output, RoPE factors
	Layer  []Tensor // per block, in the order the graph acquires them
	// Keys are the <arch>.* metadata keys Read uses beyond the common
	// ones (shown by inspect).
	Keys []string
	// Read reads the architecture's own metadata into c after the common
	// keys; nil if there are none.
	Read func(r Reader, c *Config) error
}

// registry holds every architecture; each file adds its Spec in init, so
// an architecture is one file. It is not changed after package init.
var registry = map[string]*Spec{}

func register(s *Spec) {
	if _, dup := registry[s.Name]; dup {
		panic("arch: " + s.Name + " registered twice")
	}
	registry[s.Name] = s
}

// Lookup returns the architecture named by general.architecture.
func Lookup(name string) (*Spec, bool) {
	s, ok := registry[name]
	return s, ok
}

// Names lists the supported architectures, sorted.
func Names() []string {
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// errUnknown is the one-line refusal of an architecture not in the table.
func errUnknown(name string) error {
	return unsupported("architecture %s (supported: %s)", gguf.QuoteName(name), strings.Join(Names(), ", "))
}

// Common tensor rows, shared by the architecture files.
var (
	tokEmbd    = Tensor{Name: TokEmbdName, Dims: []Dim{Embd, Vocab}, Kind: Matrix}
	outNorm    = Tensor{Name: OutNormName, Dims: []Dim{Embd}, Kind: Vector}
	output     = Tensor{Name: OutputName, Dims: []Dim{Embd, Vocab}, Kind: Matrix, Feature: Output, Optional: true}
	outputBias = Tensor{Name: OutputBiasName, Dims: []Dim{Vocab}, Kind: Vector, Feature: OutputBias, Optional: true}
	ropeFreqs  = Tensor{Name: RopeFreqsName, Dims: []Dim{RotHalf}, Kind: F32, Feature: RopeFreqs, Optional: true}
	ropeLong   = Tensor{Name: RopeLongName, Dims: []Dim{RotHalf}, Kind: F32, Feature: RopeFactors, Optional: true}
	ropeShort  = Tensor{Name: RopeShortName, Dims: []Dim{RotHalf}, Kind: F32, Feature: RopeFactors, Optional: true}

	attnNorm = Tensor{Name: "attn_norm.weight", Slot: SlotAttnNorm, Dims: []Dim{Embd}, Kind: Vector}
	attnQ    = Tensor{Name: "attn_q.weight", Slot: SlotQ, Dims: []Dim{Embd, QDim}, Kind: Matrix, Unless: FusedQKV}
	attnK    = Tensor{Name: "attn_k.weight", Slot: SlotK, Dims: []Dim{Embd, KVDim}, Kind: Matrix, Unless: FusedQKV}
	attnV    = Tensor{Name: "attn_v.weight", Slot: SlotV, Dims: []Dim{Embd, KVDim}, Kind: Matrix, Unless: FusedQKV}
	attnOut  = Tensor{Name: "attn_output.weight", Slot: SlotO, Dims: []Dim{QDim, Embd}, Kind: Matrix}
	ffnNorm  = Tensor{Name: "ffn_norm.weight", Slot: SlotFFNNorm, Dims: []Dim{Embd}, Kind: Vector}
	ffnGate  = Tensor{Name: "ffn_gate.weight", Slot: SlotGate, Dims: []Dim{Embd, FF}, Kind: Matrix}
	ffnUp    = Tensor{Name: "ffn_up.weight", Slot: SlotUp, Dims: []Dim{Embd, FF}, Kind: Matrix}
	ffnDown  = Tensor{Name: "ffn_down.weight", Slot: SlotDown, Dims: []Dim{FF, Embd}, Kind: Matrix}

	biasQ   = Tensor{Name: "attn_q.bias", Slot: SlotBQ, Dims: []Dim{QDim}, Kind: Vector, Feature: QKVBias, Optional: true, Unless: FusedQKV}
	biasK   = Tensor{Name: "attn_k.bias", Slot: SlotBK, Dims: []Dim{KVDim}, Kind: Vector, Feature: QKVBias, Optional: true, Unless: FusedQKV}
	biasV   = Tensor{Name: "attn_v.bias", Slot: SlotBV, Dims: []Dim{KVDim}, Kind: Vector, Feature: QKVBias, Optional: true, Unless: FusedQKV}
	biasOut = Tensor{Name: "attn_output.bias", Slot: SlotBO, Dims: []Dim{Embd}, Kind: Vector, Feature: OutBias, Optional: true}

	// llama.cpp accepts a fused attn_qkv in place of attn_q/k/v for every
	// architecture here (create_tensor_qkv).
	attnQKV  = Tensor{Name: "attn_qkv.weight", Slot: SlotQKV, Dims: []Dim{Embd, QKVDim}, Kind: Matrix, Feature: FusedQKV, Optional: true}
	biasQKV  = Tensor{Name: "attn_qkv.bias", Slot: SlotBQKV, Dims: []Dim{QKVDim}, Kind: Vector, Feature: FusedBias, Optional: true}
	qNorm    = Tensor{Name: "attn_q_norm.weight", Slot: SlotQNorm, Dims: []Dim{HeadDim}, Kind: Vector, Feature: QKNorm}
	kNorm    = Tensor{Name: "attn_k_norm.weight", Slot: SlotKNorm, Dims: []Dim{HeadDim}, Kind: Vector, Feature: QKNorm}
	postAttn = Tensor{Name: "post_attention_norm.weight", Slot: SlotPostAttn, Dims: []Dim{Embd}, Kind: Vector, Feature: PostNorms}
	postFFN  = Tensor{Name: "post_ffw_norm.weight", Slot: SlotPostFFN, Dims: []Dim{Embd}, Kind: Vector, Feature: PostNorms}

	// Mixture of experts: the router (n_expert rows, F32 in every file
	// llama.cpp writes: its quantizer leaves it alone) and the three 3-D
	// expert tensors, expert e being the e-th ne0 x ne1 matrix of each.
	gateInp  = Tensor{Name: "ffn_gate_inp.weight", Slot: SlotGateInp, Dims: []Dim{Embd, Expert}, Kind: Matrix, Feature: MoE}
	gateExps = Tensor{Name: "ffn_gate_exps.weight", Slot: SlotGateExps, Dims: []Dim{Embd, FFExp, Expert}, Kind: Matrix, Feature: MoE}
	upExps   = Tensor{Name: "ffn_up_exps.weight", Slot: SlotUpExps, Dims: []Dim{Embd, FFExp, Expert}, Kind: Matrix, Feature: MoE}
	downExps = Tensor{Name: "ffn_down_exps.weight", Slot: SlotDownExps, Dims: []Dim{FFExp, Embd, Expert}, Kind: Matrix, Feature: MoE}
	// The shared expert: an ordinary SwiGLU block whose output is scaled
	// by sigmoid(ffn_gate_inp_shexp · x), one weight row.
	gateInpSh = Tensor{Name: "ffn_gate_inp_shexp.weight", Slot: SlotGateInpSh, Dims: []Dim{Embd}, Kind: Matrix, Feature: SharedExpert}
	gateSh    = Tensor{Name: "ffn_gate_shexp.weight", Slot: SlotGateSh, Dims: []Dim{Embd, FFShexp}, Kind: Matrix, Feature: SharedExpert}
	upSh      = Tensor{Name: "ffn_up_shexp.weight", Slot: SlotUpSh, Dims: []Dim{Embd, FFShexp}, Kind: Matrix, Feature: SharedExpert}
	downSh    = Tensor{Name: "ffn_down_shexp.weight", Slot: SlotDownSh, Dims: []Dim{FFShexp, Embd}, Kind: Matrix, Feature: SharedExpert}

	// gpt-oss: per-head attention sinks (F32: they join the softmax as
	// logits), the router's bias and each expert's biases, row e of a 2-D
	// bias being expert e's (llama.cpp's ggml_add_id).
	attnSinks = Tensor{Name: "attn_sinks.weight", Slot: SlotSinks, Dims: []Dim{Heads}, Kind: F32, Feature: AttnSinks}
	gateInpB  = Tensor{Name: "ffn_gate_inp.bias", Slot: SlotGateInpB, Dims: []Dim{Expert}, Kind: Vector, Feature: ExpertBias}
	gateExpsB = Tensor{Name: "ffn_gate_exps.bias", Slot: SlotGateExpsB, Dims: []Dim{FFExp, Expert}, Kind: Vector, Feature: ExpertBias}
	upExpsB   = Tensor{Name: "ffn_up_exps.bias", Slot: SlotUpExpsB, Dims: []Dim{FFExp, Expert}, Kind: Vector, Feature: ExpertBias}
	downExpsB = Tensor{Name: "ffn_down_exps.bias", Slot: SlotDownExpsB, Dims: []Dim{Embd, Expert}, Kind: Vector, Feature: ExpertBias}
)

// Encoder rows (bert, nomic-bert; llama.cpp's names). token_types is read
// as f32 rows (llama.cpp adds row 0 to the embeddings with a plain add,
// which it cannot do from a quantized or f16 table; its converter keeps
// it f32).
var (
	posEmbd  = Tensor{Name: PosEmbdName, Dims: []Dim{Embd, Ctx}, Kind: Matrix, Feature: PosEmbd}
	typeEmbd = Tensor{Name: TypeEmbdName, Dims: []Dim{Embd, TokTypes}, Kind: Vector, Feature: TypeEmbd, Optional: true}
	tokNorm  = Tensor{Name: TokNormName, Dims: []Dim{Embd}, Kind: Vector}
	tokNormB = Tensor{Name: TokNormBName, Dims: []Dim{Embd}, Kind: Vector}
	clsDense = Tensor{Name: ClsName, Dims: []Dim{Embd, Embd}, Kind: Matrix, Feature: ClsDense, Optional: true}
	clsB     = Tensor{Name: ClsBName, Dims: []Dim{Embd}, Kind: Vector, Feature: ClsBias, Optional: true}
	clsOut   = Tensor{Name: ClsOutName, Dims: []Dim{Embd, ClsOut}, Kind: Matrix, Feature: ClsOutput, Optional: true}
	clsOutB  = Tensor{Name: ClsOutBName, Dims: []Dim{ClsOut}, Kind: Vector, Feature: ClsOutBias, Optional: true}

	attnOutNorm   = Tensor{Name: "attn_output_norm.weight", Slot: SlotAttnOutNorm, Dims: []Dim{Embd}, Kind: Vector}
	attnOutNormB  = Tensor{Name: "attn_output_norm.bias", Slot: SlotAttnOutNormB, Dims: []Dim{Embd}, Kind: Vector}
	layerOutNorm  = Tensor{Name: "layer_output_norm.weight", Slot: SlotLayerOutNorm, Dims: []Dim{Embd}, Kind: Vector}
	layerOutNormB = Tensor{Name: "layer_output_norm.bias", Slot: SlotLayerOutNormB, Dims: []Dim{Embd}, Kind: Vector}
	biasUp        = Tensor{Name: "ffn_up.bias", Slot: SlotBUp, Dims: []Dim{FF}, Kind: Vector, Feature: UpBias, Optional: true}
	biasDown      = Tensor{Name: "ffn_down.bias", Slot: SlotBDown, Dims: []Dim{Embd}, Kind: Vector, Feature: DownBias, Optional: true}
)

// ExpertSlots are the 3-D expert tensors' slots in the order core/model's
// plan lists them (Group.Experts).
var ExpertSlots = [3]Slot{SlotGateExps, SlotUpExps, SlotDownExps}

// Size is dimension d under c.
func (c *Config) Size(d Dim) int { return d.size(c) }

// Enable turns feature f on (writers of synthetic files choose options).
func (c *Config) Enable(f Feature) {
	if f == Output {
		c.TiedOutput = false
		return
	}
	*c.flag(f) = true
}

// Offers reports whether s's table has tensors for feature f.
func (s *Spec) Offers(f Feature) bool {
	for _, ts := range [][]Tensor{s.Global, s.Layer} {
		for _, t := range ts {
			if t.Feature == f {
				return true
			}
		}
	}
	return false
}

// Defaults sets s's graph options on c and turns on the features of its
// required tensors (unless a fused alternative already chosen replaces
// them), as Load does for a file.
func (s *Spec) Defaults(c *Config) {
	c.RopeStyle, c.EmbedScale, c.ScaleQ, c.GeGLU = s.Graph.Rope, s.Graph.EmbedScale, s.Graph.ScaleQ, s.Graph.GeGLU
	c.SwiGLUOAI = s.Graph.SwiGLUOAI
	c.Encoder, c.NoRope, c.FFNGeLU = s.Graph.Encoder, s.Graph.NoRope, s.Graph.FFNGeLU
	if !s.Offers(Output) {
		c.TiedOutput = true
	}
	for _, ts := range [][]Tensor{s.Global, s.Layer} {
		for _, t := range ts {
			if t.Feature != None && !t.Optional && !(t.Unless != None && c.Has(t.Unless)) {
				*c.flag(t.Feature) = true
			}
		}
	}
}

// required returns t with its feature always on (qwen2's biases).
func required(t Tensor) Tensor {
	t.Optional = false
	return t
}

// optional returns t turned on by its presence in layer 0 (llama's experts).
func optional(t Tensor) Tensor {
	t.Optional = true
	return t
}

// unless returns t, unused when feature f is on (llama's dense
// feed-forward when the file has experts).
func unless(t Tensor, f Feature) Tensor {
	t.Unless = f
	return t
}
