package model

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/kernels"
)

// Options are the run-time choices that do not come from the file.
type Options struct {
	Threads int           // matmul worker threads; <= 0 means 1
	Batch   int           // prefill batch (tokens per matmul); <= 0 means 32
	Ctx     int           // context limit in positions; <= 0 means the model's training context
	KVType  ggml.Type     // KV cache key encoding (and value, unless KVTypeVSet): F32, F16 (the usual), Q8_0, Q4_0, Q4_1, Q5_0, Q5_1
	Kernels *kernels.Impl // nil means kernels.Select()
	// KVTypeV is the value encoding when KVTypeVSet (llama.cpp's -ctv);
	// otherwise values take KVType.
	KVTypeV    ggml.Type
	KVTypeVSet bool
	// SWAFull keeps the whole context in sliding-window layers too
	// (llama.cpp's --swa-full); by default they keep a ring of their
	// window plus SWASlack positions.
	SWAFull bool
	// SWASlack is how many positions past the window the rings keep: what
	// Truncate may drop without emptying the cache (speculative decoding's
	// rejected drafts). <= 0 means DefaultSWASlack; never less than Batch.
	SWASlack int
}

// DefaultSWASlack is the rings' default slack past the window: a
// benchmark's 128 generated tokens or a speculative draft can be
// truncated away, and it costs one page per sliding layer.
const DefaultSWASlack = PageSize

// Tensor slots of one layer: core/arch gives every per-layer tensor of
// every architecture's table a slot and spells its name; the shared blocks
// read their tensors by slot (these short names), and a layer group
// acquires the ones its file uses in table order.
const (
	sAttnNorm  = arch.SlotAttnNorm
	sQ         = arch.SlotQ
	sK         = arch.SlotK
	sV         = arch.SlotV
	sO         = arch.SlotO
	sFFNNorm   = arch.SlotFFNNorm
	sGate      = arch.SlotGate
	sUp        = arch.SlotUp
	sDown      = arch.SlotDown
	sBQ        = arch.SlotBQ
	sBK        = arch.SlotBK
	sBV        = arch.SlotBV
	sBO        = arch.SlotBO
	sQKV       = arch.SlotQKV
	sBQKV      = arch.SlotBQKV
	sQNorm     = arch.SlotQNorm
	sKNorm     = arch.SlotKNorm
	sPostAttn  = arch.SlotPostAttn
	sPostFFN   = arch.SlotPostFFN
	sGateInp   = arch.SlotGateInp
	sGateExps  = arch.SlotGateExps
	sUpExps    = arch.SlotUpExps
	sDownExps  = arch.SlotDownExps
	sGateInpSh = arch.SlotGateInpSh
	sGateSh    = arch.SlotGateSh
	sUpSh      = arch.SlotUpSh
	sDownSh    = arch.SlotDownSh
	sSinks     = arch.SlotSinks
	sGateInpB  = arch.SlotGateInpB
	sGateExpsB = arch.SlotGateExpsB
	sUpExpsB   = arch.SlotUpExpsB
	sDownExpsB = arch.SlotDownExpsB
	nSlots     = int(arch.NSlots)
)

// expertSlots are the 3-D expert tensors' slots in Group.Experts order.
var expertSlots = arch.ExpertSlots

// Model runs a decoder-only transformer over one sequence: the shared
// blocks (norms, attention, feed-forward, residual adds) composed as the
// file's architecture says (Config, from core/arch). It owns the KV cache
// and all scratch, so a forward pass allocates nothing once warmed up. Not
// safe for concurrent use.
type Model struct {
	Cfg  Config
	w    Weights
	k    *kernels.Impl
	pool *kernels.Pool
	kv   *KVCache
	nb   int // batch capacity

	kvSpec KVSpec // the caches' geometry (NewKV)

	plan        Plan
	slot        [nSlots]int // slot -> index in a layer group's tensors, -1 if absent
	types       []ggml.Type // layer*nSlots+slot -> that tensor's own type
	outType     ggml.Type
	outNormType ggml.Type
	outBiasType ggml.Type
	embName     string
	embType     ggml.Type
	embRow      []byte
	ropeFreqs   []float32
	embScale    float32 // gemma: sqrt(n_embd); 0 = none
	qScale      float32 // with Cfg.ScaleQ: q's scale after RoPE

	// scratch, sized for nb tokens
	x, xn, q, kk, vv, att, tmp, gate, up []float32
	normW, bias, qkNormW, outBiasW       []float32
	actBuf                               [3][]byte
	attn                                 []attnScratch
	logits                               []float32
	blogits                              []float32    // ForwardBatch's logits rows
	segs                                 []segment    // ForwardBatch's current batch; empty for Forward
	rope, ropeSWA                        kernels.Rope // global and sliding-window layers
	yarn, yarnSWA                        yarn         // their YaRN caches' parameters (Cfg.RopeYaRN)
	sinks                                []float32    // the current layer's attention sinks (Cfg.AttnSinks)
	ropeCS                               []float32
	fz                                   fusedMV // generation's fused dispatches
	moe                                  moeScratch
	aj                                   attnJob
	attnRun                              func(lo, hi int) // m.attnWork, bound once
	enc                                  encoderState     // Cfg.Encoder (encoder.go)
	exactRows                            bool             // ForwardRows: products bit-identical to MatVec (verify.go)
}

// New prepares a model over w for the configuration cfg (from
// ConfigFromGGUF) and declares its access plan to w.
func New(cfg Config, w Weights, opt Options) (*Model, error) {
	if opt.Threads <= 0 {
		opt.Threads = 1
	}
	if opt.Batch <= 0 {
		opt.Batch = 32
	}
	if opt.Ctx <= 0 {
		opt.Ctx = cfg.NCtxTrain
	}
	if opt.Kernels == nil {
		opt.Kernels = kernels.Select()
	}
	m := &Model{Cfg: cfg, w: w, k: opt.Kernels, nb: opt.Batch}
	m.enc.budget = opt.Batch
	m.kvSpec = KVSpec{K: opt.KVType, V: opt.KVType, NLayer: cfg.NLayer, NHeadKV: cfg.NHeadKV, HeadDim: cfg.HeadDim, MaxCtx: opt.Ctx}
	if opt.KVTypeVSet {
		m.kvSpec.V = opt.KVTypeV
	}
	if cfg.SlidingWindow > 0 && !opt.SWAFull {
		m.kvSpec.Window = cfg.SlidingWindow
		m.kvSpec.Sliding = make([]bool, cfg.NLayer)
		for l := range m.kvSpec.Sliding {
			m.kvSpec.Sliding[l] = cfg.Sliding(l)
		}
		m.kvSpec.Slack = max(opt.SWASlack, opt.Batch)
		if opt.SWASlack <= 0 {
			m.kvSpec.Slack = max(DefaultSWASlack, opt.Batch)
		}
	}
	kv, err := NewKVCacheSpec(m.kvSpec)
	if err != nil {
		return nil, err
	}
	m.kv = kv
	if err := m.buildPlan(); err != nil {
		return nil, err
	}
	if err := w.Declare(m.plan); err != nil {
		return nil, fmt.Errorf("model: declaring access plan: %w", err)
	}
	var ff []float32
	switch {
	case cfg.RopeFreqs:
		if ff, err = m.loadF32(ropeFreqsT); err != nil {
			return nil, err
		}
	case cfg.RopeFactors:
		// LongRoPE: the long-context factors when the context in use
		// exceeds the original one, as llama.cpp chooses by n_ctx.
		orig := cfg.RopeOrigCtx
		if orig == 0 {
			orig = cfg.NCtxTrain
		}
		name := ropeShortT
		if opt.Ctx > orig {
			name = ropeLongT
		}
		if ff, err = m.loadF32(name); err != nil {
			return nil, err
		}
	}
	m.ropeFreqs = ff
	m.rope = kernels.Rope{Dims: cfg.NRot, Base: cfg.RopeBase, Scale: cfg.RopeFreqScale,
		NeoX: cfg.RopeStyle == RopeNeoX, FreqFactors: ff, AttnFactor: cfg.RopeAttnFactor}
	if err := m.rope.Check(cfg.HeadDim); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m.ropeSWA = m.rope
	if cfg.SlidingWindow > 0 {
		// llama.cpp's sliding layers take their own base and scale and no
		// frequency factors.
		m.ropeSWA.Base, m.ropeSWA.Scale, m.ropeSWA.FreqFactors = cfg.RopeBaseSWA, cfg.RopeScaleSWA, nil
		if err := m.ropeSWA.Check(cfg.HeadDim); err != nil {
			return nil, fmt.Errorf("model: sliding layers: %w", err)
		}
	}
	if cfg.RopeYaRN {
		m.yarn, m.yarnSWA = newYaRN(cfg, m.rope), newYaRN(cfg, m.ropeSWA)
	}
	if cfg.EmbedScale {
		m.embScale = float32(math.Sqrt(float64(float32(cfg.NEmbd))))
	}
	if cfg.ScaleQ {
		m.qScale = cfg.AttnScale
		if m.qScale == 0 {
			m.qScale = 1 / float32(math.Sqrt(float64(float32(cfg.HeadDim))))
		}
	}
	if cfg.MoE {
		if err := m.expertSizes(); err != nil {
			return nil, err
		}
	}
	if cfg.Encoder {
		if err := m.initEncoder(); err != nil {
			return nil, err
		}
	}
	if n := max(cfg.NEmbd, cfg.NClsOut); cfg.ClsOutput {
		m.enc.clsX, m.enc.clsY = make([]float32, n), make([]float32, n)
	}
	m.alloc()
	m.pool = kernels.NewPool(opt.Threads)
	m.fz.k = m.k
	m.fz.run = m.fz.work
	m.attnRun = m.attnWork
	return m, nil
}

// buildPlan lists the groups in execution order: the input group (served
// by Row lookups only, never acquired whole), one group per layer (the
// tensors the architecture's table uses for this file, in table order), and
// the output group.
func (m *Model) buildPlan() error {
	c := m.Cfg
	spec, ok := arch.Lookup(c.Arch)
	if !ok {
		return unsupported("architecture %s", gguf.QuoteName(c.Arch))
	}
	m.embName = tokEmbd
	emb, ok := m.w.Info(tokEmbd)
	if !ok {
		return fmt.Errorf("model: tensor %s is missing", tokEmbd)
	}
	m.embType = emb.Type
	rs, err := ggml.RowSize(emb.Type, uint64(c.NEmbd))
	if err != nil {
		return fmt.Errorf("model: tensor %s: %w", tokEmbd, err)
	}
	m.embRow = make([]byte, rs)

	// Every tensor keeps its own type: llama.cpp's mixes (Q4_K_M and the
	// like) vary the type by layer and by slot, and each projection picks
	// its kernels from its own type.
	m.types = make([]ggml.Type, c.NLayer*nSlots)
	for s := range m.slot {
		m.slot[s] = -1
	}
	_, table := spec.Tensors(&c)
	// The expert tensors go to Group.Experts, and also to the end of
	// Tensors unless the Weights serves them one expert at a time.
	_, byExpert := m.w.(ExpertWeights)
	var names, experts []arch.Tensor
	for _, t := range table {
		if t.Slot <= arch.NoSlot || t.Slot >= arch.NSlots {
			return fmt.Errorf("model: %s's table names %s, which no graph block reads", c.Arch, t.Name)
		}
		if expertSlot(t.Slot) < 0 {
			m.slot[t.Slot] = len(names)
			names = append(names, t)
		}
	}
	if c.MoE {
		for _, s := range expertSlots {
			for _, t := range table {
				if t.Slot == s {
					experts = append(experts, t)
					m.moe.names[expertSlot(s)] = t.Name
				}
			}
		}
		if len(experts) != len(expertSlots) {
			return fmt.Errorf("model: %s's table has %d of the %d expert tensors", c.Arch, len(experts), len(expertSlots))
		}
		if !byExpert {
			for _, t := range experts {
				m.slot[t.Slot] = len(names)
				names = append(names, t)
			}
		}
	}
	groups := []Group{{Name: "input", Tensors: []string{tokEmbd}}}
	cls, err := m.classifierGroup()
	if err != nil {
		return err
	}
	if c.Encoder {
		groups[0].Tensors = m.encoderInput()
	}
	for i := 0; i < c.NLayer; i++ {
		g := Group{Name: fmt.Sprintf("blk.%d", i)}
		for _, t := range names {
			full := blk(i, t.Name)
			ti, ok := m.w.Info(full)
			if !ok {
				return fmt.Errorf("model: tensor %s is missing", full)
			}
			m.types[i*nSlots+int(t.Slot)] = ti.Type
			g.Tensors = append(g.Tensors, full)
		}
		for _, t := range experts {
			full := blk(i, t.Name)
			ti, ok := m.w.Info(full)
			if !ok {
				return fmt.Errorf("model: tensor %s is missing", full)
			}
			if err := checkExpertTensor(ti, c.NExpert); err != nil {
				return err
			}
			m.types[i*nSlots+int(t.Slot)] = ti.Type
			g.Experts = append(g.Experts, full)
		}
		if len(experts) > 0 {
			g.NExpert = c.NExpert
		}
		groups = append(groups, g)
	}
	if c.Encoder {
		// No output head: the hidden states are pooled, rank pooling
		// through the classifier group when the file has one.
		if cls != nil {
			m.enc.outGroup = len(groups)
			groups = append(groups, *cls)
		}
		m.plan = Plan{Groups: groups}
		return nil
	}
	out := outWeight
	if c.TiedOutput {
		out = tokEmbd
	}
	ot, ok := m.w.Info(out)
	if !ok {
		return fmt.Errorf("model: tensor %s is missing", out)
	}
	m.outType = ot.Type
	nt, ok := m.w.Info(outNorm)
	if !ok {
		return fmt.Errorf("model: tensor %s is missing", outNorm)
	}
	m.outNormType = nt.Type
	outG := Group{Name: "output", Tensors: []string{outNorm, out}}
	if c.OutputBias {
		bt, ok := m.w.Info(outBias)
		if !ok {
			return fmt.Errorf("model: tensor %s is missing", outBias)
		}
		m.outBiasType = bt.Type
		outG.Tensors = append(outG.Tensors, outBias)
	}
	groups = append(groups, outG)
	if cls != nil { // a reranker's head (qwen3), used by rank pooling only
		m.enc.outGroup = len(groups)
		groups = append(groups, *cls)
	}
	m.plan = Plan{Groups: groups}
	return nil
}

// Global tensors read once at New.
const (
	ropeFreqsT = arch.RopeFreqsName
	ropeLongT  = arch.RopeLongName
	ropeShortT = arch.RopeShortName
)

// loadF32 reads a small F32 tensor (RoPE factors) whole.
func (m *Model) loadF32(name string) ([]float32, error) {
	ti, ok := m.w.Info(name)
	if !ok || ti.Type != ggml.F32 {
		return nil, fmt.Errorf("model: tensor %s missing or not F32", name)
	}
	b := make([]byte, ti.Size)
	if err := m.w.Row(context.Background(), name, 0, b); err != nil {
		return nil, fmt.Errorf("model: reading %s: %w", name, err)
	}
	v := make([]float32, ti.Elements())
	if err := m.k.Dequantize(ggml.F32, b, v); err != nil {
		return nil, fmt.Errorf("model: %s: %w", name, err)
	}
	return v, nil
}

func (m *Model) alloc() {
	c, nb := m.Cfg, m.nb
	m.x = make([]float32, nb*c.NEmbd)
	m.xn = make([]float32, nb*c.NEmbd)
	m.tmp = make([]float32, nb*c.NEmbd)
	m.q = make([]float32, nb*c.QDim())
	m.att = make([]float32, nb*c.QDim())
	m.kk = make([]float32, nb*c.KVDim())
	m.vv = make([]float32, nb*c.KVDim())
	if !c.MoE {
		m.gate = make([]float32, nb*c.NFF)
		m.up = make([]float32, nb*c.NFF)
	}
	m.normW = make([]float32, c.NEmbd)
	m.bias = make([]float32, max(c.QDim()+2*c.KVDim(), c.NEmbd, c.NExpert, c.NClsOut))
	if c.UpBias {
		m.bias = make([]float32, max(len(m.bias), c.NFF))
	}
	if c.AttnSinks {
		m.sinks = make([]float32, c.NHead)
	}
	m.qkNormW = make([]float32, 2*c.HeadDim)
	if c.OutputBias {
		m.outBiasW = make([]float32, c.NVocab)
	}
	m.logits = make([]float32, c.NVocab)
	m.ropeCS = make([]float32, nb*c.NRot) // one cos/sin cache per batch token
	widest := max(c.NEmbd, c.QDim(), c.NFF, c.NFFExp, c.NFFShexp)
	m.moe.margin = float32(math.Inf(1))
	if c.MoE {
		m.allocMoE()
	}
	for i := range m.actBuf {
		m.actBuf[i] = make([]byte, nb*actRowBytes(ggml.F32, widest)) // F32 is the widest encoding
	}
}

func actRowBytes(t ggml.Type, n int) int {
	rs, err := ggml.RowSize(kernels.ActType(t), uint64(n))
	if err != nil {
		return 4 * n
	}
	return int(rs)
}

// Close stops the worker pool.
func (m *Model) Close() {
	if m.pool != nil {
		m.pool.Close()
		m.pool = nil
	}
}

// Pos is the number of tokens in the sequence so far.
func (m *Model) Pos() int { return m.kv.Len() }

// KV exposes the cache for statistics.
func (m *Model) KV() *KVCache { return m.kv }

// Kernels is the dispatch path in use.
func (m *Model) Kernels() *kernels.Impl { return m.k }

// Reset starts a new sequence.
func (m *Model) Reset() { m.kv.Reset() }

// Forward appends tokens to the sequence and returns the logits that
// predict the next token (valid until the next call). The tokens run in
// batches of up to Options.Batch; on error or cancellation the sequence is
// left as it was before the call.
//
// A memory fault while reading the weights (a mapped model file truncated
// during the run) is returned as an error wrapping ErrWeightsFault (see
// fault.go), not a crash.
func (m *Model) Forward(ctx context.Context, tokens []int32) (logits []float32, err error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("model: Forward with no tokens")
	}
	if m.Cfg.Encoder {
		return nil, errEncoder(m.Cfg.Arch)
	}
	start := m.kv.Len()
	defer m.recoverFault(debug.SetPanicOnFault(true), start, &err)
	if err := m.kv.reserve(start, len(tokens)); err != nil {
		return nil, err
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= m.Cfg.NVocab {
			return nil, fmt.Errorf("model: token id %d outside vocabulary [0, %d)", t, m.Cfg.NVocab)
		}
	}
	for i := 0; i < len(tokens); i += m.nb {
		end := min(i+m.nb, len(tokens))
		if err := m.batch(ctx, tokens[i:end], end == len(tokens)); err != nil {
			m.kv.Truncate(start)
			return nil, err
		}
	}
	return m.logits, nil
}

// embed writes the embedding of each token into its row of m.x: one row
// of the table per token.
func (m *Model) embed(ctx context.Context, toks []int32) error {
	E := m.Cfg.NEmbd
	for b, t := range toks {
		if err := m.w.Row(ctx, m.embName, int(t), m.embRow); err != nil {
			return fmt.Errorf("model: embedding of token %d: %w", t, err)
		}
		if err := m.k.Dequantize(m.embType, m.embRow, m.x[b*E:(b+1)*E]); err != nil {
			return fmt.Errorf("model: embedding of token %d: %w", t, err)
		}
		if m.embScale != 0 {
			m.k.Scale(m.x[b*E:(b+1)*E], m.embScale)
		}
	}
	return nil
}

// batch runs nb tokens at positions kv.Len().. through every layer; the
// output group runs only when logits are wanted (the last batch).
func (m *Model) batch(ctx context.Context, toks []int32, wantLogits bool) error {
	c := m.Cfg
	nb, E := len(toks), c.NEmbd
	pos0 := m.kv.Len()

	if err := m.embed(ctx, toks); err != nil {
		return err
	}
	for l := 0; l < c.NLayer; l++ {
		g := 1 + l
		ts, err := m.w.Acquire(ctx, g)
		if err != nil {
			return fmt.Errorf("model: acquiring %s: %w", m.plan.Groups[g].Name, err)
		}
		err = m.layer(ctx, l, ts, nb, pos0)
		m.w.Release(g)
		if err != nil {
			return fmt.Errorf("model: %s: %w", m.plan.Groups[g].Name, err)
		}
	}
	m.kv.n = pos0 + nb
	if !wantLogits {
		return nil
	}
	g := c.NLayer + 1
	ts, err := m.w.Acquire(ctx, g)
	if err != nil {
		return fmt.Errorf("model: acquiring output: %w", err)
	}
	defer m.w.Release(g)
	last := m.x[(nb-1)*E : nb*E]
	if err := m.k.Dequantize(m.outNormType, ts[0], m.normW); err != nil {
		return fmt.Errorf("model: %s: %w", outNorm, err)
	}
	m.k.RMSNorm(m.xn[:E], last, m.normW, c.RMSEps)
	if err := m.project(m.xn[:E], 1, E, proj{m.outType, ts[1], c.NVocab, m.logits}); err != nil {
		return err
	}
	return m.logitsOut(ts)
}

// proj is one weight matrix applied to a batch: rows outputs per token.
type proj struct {
	t    ggml.Type
	w    []byte
	rows int
	y    []float32 // nb*rows, token-major
}

// actEncodings are the distinct activation encodings of one input already
// made for a group of projections (at most three: q/k/v or gate/up), so
// projections that share an encoding share one quantized copy (actBuf[i]).
type actEncodings struct {
	types [3]ggml.Type
	n     int
}

// slot returns the actBuf index for encoding at, and whether it is new
// (the caller then fills it).
func (e *actEncodings) slot(at ggml.Type) (idx int, fresh bool) {
	for i := 0; i < e.n; i++ {
		if e.types[i] == at {
			return i, false
		}
	}
	e.types[e.n] = at
	e.n++
	return e.n - 1, true
}

// project multiplies nb activation rows x (each cols long) by each weight
// matrix. The activations are quantized once per distinct encoding, so q, k
// and v (or gate and up) share the work, and each weight row is read once
// for the whole batch.
func (m *Model) project(x []float32, nb, cols int, ps ...proj) error {
	var encs actEncodings
	for _, p := range ps {
		at := kernels.ActType(p.t)
		idx, fresh := encs.slot(at)
		arb := actRowBytes(p.t, cols)
		if fresh {
			buf := m.actBuf[idx]
			if err := m.k.QuantizeAct(at, x[:cols], buf[:arb]); err != nil {
				return err
			}
			// The other rows have the same geometry, so they cannot fail;
			// in prefill they are spread over the pool.
			if nb > 1 {
				m.pool.Run(nb-1, 1, func(lo, hi int) {
					for b := lo + 1; b <= hi; b++ {
						_ = m.k.QuantizeAct(at, x[b*cols:(b+1)*cols], buf[b*arb:(b+1)*arb])
					}
				})
			}
		}
		a := m.actBuf[idx][:nb*arb]
		if nb == 1 {
			m.k.MatVec(m.pool, p.t, p.rows, cols, p.w, a, p.y[:p.rows])
		} else if m.exactRows {
			m.matMulRows(p.t, p.rows, cols, p.w, a, nb, p.y[:nb*p.rows])
		} else {
			m.k.MatMul(m.pool, p.t, p.rows, cols, p.w, a, nb, p.y[:nb*p.rows])
		}
	}
	return nil
}

// attnBlock is how many batch tokens share one pass over a kv head's
// cached rows: with GQA group 8 that is 64 query rows per key/value row read,
// and the scores (64 × context floats) stay in L2.
const attnBlock = 8

// attnAlign is the alignment of a sliding window's first scored position:
// the SIMD softmax takes a row 8 or 16 entries at a time from its start, so
// a row that starts on a multiple of 16 groups its entries as the full row
// does, and the skipped (zero) entries leave its sums bit-identical.
const attnAlign = 16

// windowStart is the first position the pass for a token at pos scores on
// a layer with window w: its window's start rounded down to attnAlign, and
// at least attnAlign entries long (shorter rows take the portable softmax).
// It is never more than attnReach(w) positions before pos+1.
func windowStart(pos, w int) int {
	lo := max(0, pos-w+1) &^ (attnAlign - 1)
	if pos+1-lo < attnAlign {
		lo = max(0, lo-attnAlign)
	}
	return lo
}

// attnReach is how many positions up to and including a token attention
// reads on a layer with window w (windowStart's bound): what a ring must
// hold for it.
func attnReach(w int) int { return max(w+attnAlign-1, 2*attnAlign) }

// attnScratch is one worker's attention buffers.
type attnScratch struct {
	scores []float32 // [query rows][positions]
	q, out []float32 // [query rows][head dim]
	kvs    kernels.KVScratch
}

// attendBatch runs causal attention for the nb batch rows r0.. (at
// positions pos0.. of the sequence in m.kv), spreading (token block, kv
// head) pairs over the pool. Each pool chunk owns one scratch set, sized
// for the longest row.
func (m *Model) attendBatch(l, pos0, r0, nb int) {
	c := m.Cfg
	hd := c.HeadDim
	group := c.NHead / c.NHeadKV
	tb := min(nb, attnBlock)
	nblk := (nb + tb - 1) / tb
	items := nblk * c.NHeadKV
	chunks := min(items, 4*m.pool.Threads())
	grain := (items + chunks - 1) / chunks
	chunks = (items + grain - 1) / grain
	for len(m.attn) < chunks {
		m.attn = append(m.attn, attnScratch{q: make([]float32, attnBlock*group*hd), out: make([]float32, attnBlock*group*hd)})
	}
	need := tb * group * (pos0 + nb)
	for i := range m.attn[:chunks] {
		if len(m.attn[i].scores) < need {
			m.attn[i].scores = make([]float32, max(need, 2*len(m.attn[i].scores)))
		}
	}
	m.aj = attnJob{l: l, pos0: pos0, r0: r0, nb: nb, tb: tb, grain: grain}
	m.aj.scale, m.aj.softcap, m.aj.window = m.attnParams(l)
	m.aj.sinks = nil
	if c.AttnSinks {
		m.aj.sinks = m.sinks
	}
	m.pool.Run(items, grain, m.attnRun)
}

// attnJob is the current attendBatch call, read by attnWork on the pool
// (a bound method, so dispatching allocates nothing), with the layer's
// attention options (attnParams).
type attnJob struct {
	l, pos0, r0, nb, tb, grain int
	scale, softcap             float32
	window                     int
	sinks                      []float32 // per query head; nil = none
}

func (m *Model) attnWork(lo, hi int) {
	c, j := m.Cfg, m.aj
	sc := &m.attn[lo/j.grain]
	p0 := j.pos0 - j.r0 // row b is at position p0+b
	for it := lo; it < hi; it++ {
		blk, g := it/c.NHeadKV, it%c.NHeadKV
		b0 := j.r0 + blk*j.tb
		b1 := min(b0+j.tb, j.r0+j.nb)
		m.attendBlock(j.l, p0, b0, b1, g, sc)
	}
}

// attendBlock computes causal attention for the batch tokens b0..b1-1 (at
// positions pos0+b) and kv head g: all their query heads that share kv head
// g (token-major, nq rows) go through each cached key and value row in one
// pass. Positions up to the block's first token are seen by every row;
// each later position p is seen only by the tokens at or after it, which
// are a suffix of the rows, so the causal mask is a shorter row range
// rather than -Inf scores. Values accumulate in position order per output.
//
// On a sliding-window layer the pass starts at the first token's window
// (lo, see windowStart): earlier positions would be masked to -Inf for
// every row, a zero weight in the softmax and the value sum, so skipping
// them changes no result (the sums add the same non-zero terms in the same
// order) and a ring that no longer holds them serves the same tokens.
// Scores are indexed from lo.
//
// Keys: an F16 cache takes ScoresF16 with the queries rounded to F16 (as
// llama.cpp converts Q for an F16 cache, so every product is exact); other
// types take ScoresQ with the f32 queries against the decoded keys. Values:
// AccumF16 or AccumQ.
func (m *Model) attendBlock(l, pos0, b0, b1, g int, sc *attnScratch) {
	c, kv := m.Cfg, m.kv
	hd, Q := c.HeadDim, c.QDim()
	group := c.NHead / c.NHeadKV
	nt := b1 - b0
	nq := nt * group
	lo := 0
	if w := m.aj.window; w > 0 {
		lo = windowStart(pos0+b0, w)
	}
	hi := pos0 + b1          // one past the last position seen
	ws := hi - lo            // score row stride
	nShared := pos0 + b0 + 1 // positions [lo, nShared) are seen by every row
	scale := m.aj.scale
	S := sc.scores[:nq*ws]

	kt, vt := kv.Types()
	if kt == ggml.F16 {
		qs := sc.q[:nq*hd]
		for t := 0; t < nt; t++ {
			src := m.q[(b0+t)*Q+g*group*hd : (b0+t)*Q+(g+1)*group*hd]
			m.k.RoundF16(qs[t*group*hd:(t+1)*group*hd], src)
		}
		for p := lo; p < nShared; {
			rows, cnt := kv.headSpan(&kv.k, l, g, p, nShared-p)
			m.k.ScoresF16(qs, nq, hd, rows, kv.k.headB, cnt, scale, S[p-lo:], ws)
			p += cnt
		}
		for p := nShared; p < hi; p++ {
			j0 := (p - pos0 - b0) * group
			m.k.ScoresF16(qs[j0*hd:], nq-j0, hd, kv.keyHead(l, p, g), kv.k.headB, 1, scale, S[j0*ws+p-lo:], ws)
		}
	} else {
		qs := sc.q[:nq*hd]
		for t := 0; t < nt; t++ {
			copy(qs[t*group*hd:(t+1)*group*hd], m.q[(b0+t)*Q+g*group*hd:(b0+t)*Q+(g+1)*group*hd])
		}
		for p := lo; p < nShared; {
			rows, cnt := kv.headSpan(&kv.k, l, g, p, nShared-p)
			m.k.ScoresQ(kt, qs, nq, hd, rows, kv.k.headB, cnt, scale, S[p-lo:], ws, &sc.kvs)
			p += cnt
		}
		for p := nShared; p < hi; p++ {
			j0 := (p - pos0 - b0) * group
			m.k.ScoresQ(kt, qs[j0*hd:], nq-j0, hd, kv.keyHead(l, p, g), kv.k.headB, 1, scale, S[j0*ws+p-lo:], ws, &sc.kvs)
		}
	}
	for j := 0; j < nq; j++ {
		pos := pos0 + b0 + j/group
		row := S[j*ws : j*ws+pos-lo+1]
		if m.aj.softcap != 0 || m.aj.window > 0 {
			capMask(row, lo, pos, m.aj.softcap, m.aj.window)
		}
		m.softmax(row, g*group+j%group)
	}
	out := sc.out[:nq*hd]
	clear(out)
	for p := lo; p < nShared; {
		rows, cnt := kv.headSpan(&kv.v, l, g, p, nShared-p)
		if vt == ggml.F16 {
			m.k.AccumF16(out, nq, hd, S[p-lo:], ws, rows, kv.v.headB, cnt)
		} else {
			m.k.AccumQ(vt, out, nq, hd, S[p-lo:], ws, rows, kv.v.headB, cnt, &sc.kvs)
		}
		p += cnt
	}
	for p := nShared; p < hi; p++ {
		j0 := (p - pos0 - b0) * group
		if vt == ggml.F16 {
			m.k.AccumF16(out[j0*hd:], nq-j0, hd, S[j0*ws+p-lo:], ws, kv.valueHead(l, p, g), kv.v.headB, 1)
		} else {
			m.k.AccumQ(vt, out[j0*hd:], nq-j0, hd, S[j0*ws+p-lo:], ws, kv.valueHead(l, p, g), kv.v.headB, 1, &sc.kvs)
		}
	}
	for t := 0; t < nt; t++ {
		copy(m.att[(b0+t)*Q+g*group*hd:(b0+t)*Q+(g+1)*group*hd], out[t*group*hd:(t+1)*group*hd])
	}
}
