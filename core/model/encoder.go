package model

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/ggml"
)

// Encoders (bert, nomic-bert: Cfg.Encoder) run llama.cpp's bert graph
// (src/models/bert.cpp) with the shared blocks: the whole input is one
// batch at positions 0..n-1 (attention over the whole sequence needs every
// key before the first query, which is also why llama.cpp refuses an input
// longer than its physical batch; here the batch grows to the input), each
// block post-norm with LayerNorms, attention over the batch's own k and v
// (no KV cache, as llama.cpp's encoders), and no output head: Embed pools
// the final hidden states (m.x) as pooling_type says.

// encoderState holds what New reads once for an encoder: the input
// LayerNorm, token type 0's row and a vector of ones (gelu through the
// gated kernel).
type encoderState struct {
	tokNormW, tokNormB []float32
	typeRow            []float32 // token_types row 0; nil without token_types
	posRow             []byte    // one position_embd row
	posType            ggml.Type
	normB              []float32 // a block LayerNorm's bias
	ones               []float32 // n_ff ones: GeLUMul(x, ones) is gelu(x)
	outGroup           int       // plan index of the classifier group; 0 = none
	clsSlots           [4]int    // index in the classifier group of cls, cls.bias, cls.output, cls.output.bias; -1 = absent
	clsTypes           [4]ggml.Type
	clsX, clsY         []float32
	att                encAttn
	attnRun, ropeRun   func(lo, hi int) // encoderAttnWork, encoderRope, bound once
	segs               []encSeg         // the current pass's inputs
	pos, seg           []int32          // per row: its position, its input
	budget             int              // rows EmbedBatch packs into one pass (Options.Batch)
}

// loadVector reads a whole 1-D tensor (a norm or bias) as f32.
func (m *Model) loadVector(name string, n int) ([]float32, error) {
	ti, ok := m.w.Info(name)
	if !ok {
		return nil, fmt.Errorf("model: tensor %s is missing", name)
	}
	rs, err := ggml.RowSize(ti.Type, uint64(n))
	if err != nil {
		return nil, fmt.Errorf("model: tensor %s: %w", name, err)
	}
	b := make([]byte, rs)
	if err := m.w.Row(context.Background(), name, 0, b); err != nil {
		return nil, fmt.Errorf("model: reading %s: %w", name, err)
	}
	v := make([]float32, n)
	if err := m.k.Dequantize(ti.Type, b, v); err != nil {
		return nil, fmt.Errorf("model: %s: %w", name, err)
	}
	return v, nil
}

// initEncoder reads the input norm and token type row (after Declare).
func (m *Model) initEncoder() error {
	c := m.Cfg
	e := &m.enc
	var err error
	if e.tokNormW, err = m.loadVector(arch.TokNormName, c.NEmbd); err != nil {
		return err
	}
	if e.tokNormB, err = m.loadVector(arch.TokNormBName, c.NEmbd); err != nil {
		return err
	}
	if c.TypeEmbd {
		if e.typeRow, err = m.loadVector(arch.TypeEmbdName, c.NEmbd); err != nil { // row 0
			return err
		}
	}
	if c.PosEmbd {
		ti, ok := m.w.Info(arch.PosEmbdName)
		if !ok {
			return fmt.Errorf("model: tensor %s is missing", arch.PosEmbdName)
		}
		rs, err := ggml.RowSize(ti.Type, uint64(c.NEmbd))
		if err != nil {
			return fmt.Errorf("model: tensor %s: %w", arch.PosEmbdName, err)
		}
		e.posRow, e.posType = make([]byte, rs), ti.Type
	}
	e.normB = make([]float32, c.NEmbd)
	e.ones = make([]float32, c.NFF)
	for i := range e.ones {
		e.ones[i] = 1
	}
	e.attnRun, e.ropeRun = m.encoderAttnWork, m.encoderRope
	e.clsX, e.clsY = make([]float32, max(c.NEmbd, c.NClsOut)), make([]float32, max(c.NEmbd, c.NClsOut))
	return nil
}

// encoderInput is an encoder's input group: the tables it reads by rows
// and its input norm.
func (m *Model) encoderInput() []string {
	c := m.Cfg
	input := []string{tokEmbd}
	if c.PosEmbd {
		input = append(input, arch.PosEmbdName)
	}
	if c.TypeEmbd {
		input = append(input, arch.TypeEmbdName)
	}
	return append(input, arch.TokNormName, arch.TokNormBName)
}

// classifierGroup is rank pooling's group: cls, cls.bias, cls.output,
// cls.output.bias as present (nil when none is); it records their places.
func (m *Model) classifierGroup() (*Group, error) {
	c := m.Cfg
	g := Group{Name: "classifier"}
	for i, t := range []struct {
		on   bool
		name string
	}{{c.ClsDense, arch.ClsName}, {c.ClsBias, arch.ClsBName}, {c.ClsOutput, arch.ClsOutName}, {c.ClsOutBias, arch.ClsOutBName}} {
		m.enc.clsSlots[i] = -1
		if !t.on {
			continue
		}
		ti, ok := m.w.Info(t.name)
		if !ok {
			return nil, fmt.Errorf("model: tensor %s is missing", t.name)
		}
		m.enc.clsSlots[i], m.enc.clsTypes[i] = len(g.Tensors), ti.Type
		g.Tensors = append(g.Tensors, t.name)
	}
	if len(g.Tensors) == 0 {
		return nil, nil
	}
	return &g, nil
}

// EmbedBatch pools several inputs as Embed does, packing them into
// passes of up to Options.Batch rows (an input longer than that is a pass
// of its own): every matrix product runs once over all the rows of a pass,
// while positions, attention and pooling stay within each input. Only
// encoders pack; other models run the inputs one by one.
func (m *Model) EmbedBatch(ctx context.Context, inputs [][]int32, p arch.Pooling) ([][]float32, error) {
	out := make([][]float32, len(inputs))
	if !m.Cfg.Encoder {
		for i, toks := range inputs {
			v, err := m.Embed(ctx, toks, p)
			if err != nil {
				return nil, fmt.Errorf("input %d: %w", i, err)
			}
			out[i] = v
		}
		return out, nil
	}
	budget := m.enc.budget
	for i := 0; i < len(inputs); {
		j, rows := i, 0
		for j < len(inputs) && (j == i || rows+len(inputs[j]) <= budget) {
			rows += len(inputs[j])
			j++
		}
		if err := m.encode(ctx, inputs[i:j]); err != nil {
			return nil, err
		}
		for k := range inputs[i:j] {
			v, err := m.encoderPool(ctx, k, p)
			if err != nil {
				return nil, err
			}
			out[i+k] = v
		}
		i = j
	}
	return out, nil
}

// embedAt writes the token embeddings of toks into the rows of m.x from
// r0 on (embed's lookup, for one input of a packed pass).
func (m *Model) embedAt(ctx context.Context, toks []int32, r0 int) error {
	E := m.Cfg.NEmbd
	for i, t := range toks {
		x := m.x[(r0+i)*E : (r0+i+1)*E]
		if err := m.w.Row(ctx, m.embName, int(t), m.embRow); err != nil {
			return fmt.Errorf("model: embedding of token %d: %w", t, err)
		}
		if err := m.k.Dequantize(m.embType, m.embRow, x); err != nil {
			return fmt.Errorf("model: embedding of token %d: %w", t, err)
		}
	}
	return nil
}

// encSeg is one input's rows r0..r0+n-1 in an encoder pass.
type encSeg struct{ r0, n int }

// encode runs the inputs as fresh sequences through the encoder in one
// pass, leaving each token's final hidden state in its row of m.x (the
// inputs' rows one after another, m.enc.segs saying where).
func (m *Model) encode(ctx context.Context, inputs [][]int32) error {
	c := m.Cfg
	e := &m.enc
	e.segs = e.segs[:0]
	n := 0
	for i, toks := range inputs {
		if len(toks) == 0 {
			return fmt.Errorf("model: input %d has no tokens", i)
		}
		if len(toks) > m.kv.Cap() {
			return fmt.Errorf("model: input %d of %d tokens: %w (%d positions)", i, len(toks), ErrContextFull, m.kv.Cap())
		}
		for _, t := range toks {
			if t < 0 || int(t) >= c.NVocab {
				return fmt.Errorf("model: token id %d outside vocabulary [0, %d)", t, c.NVocab)
			}
		}
		e.segs = append(e.segs, encSeg{n, len(toks)})
		n += len(toks)
	}
	if n > m.nb {
		// An input is one batch whatever its length (see above); each is
		// bounded by the context just above, a pass by EmbedBatch's budget.
		m.nb = n
		m.alloc()
	}
	if cap(e.pos) < n {
		e.pos, e.seg = make([]int32, n), make([]int32, n)
	}
	e.pos, e.seg = e.pos[:n], e.seg[:n]
	E := c.NEmbd
	for si, sg := range e.segs {
		if err := m.embedAt(ctx, inputs[si], sg.r0); err != nil {
			return err
		}
		for i := 0; i < sg.n; i++ {
			e.pos[sg.r0+i], e.seg[sg.r0+i] = int32(i), int32(si)
		}
	}
	for b := 0; b < n; b++ {
		x := m.x[b*E : (b+1)*E]
		if e.typeRow != nil {
			m.k.Add(x, e.typeRow)
		}
		if e.posRow != nil {
			pos := int(e.pos[b])
			if err := m.w.Row(ctx, arch.PosEmbdName, pos, e.posRow); err != nil {
				return fmt.Errorf("model: position embedding %d: %w", pos, err)
			}
			if err := m.k.Dequantize(e.posType, e.posRow, m.xn[:E]); err != nil {
				return fmt.Errorf("model: position embedding %d: %w", pos, err)
			}
			m.k.Add(x, m.xn[:E])
		}
		layerNorm(x, x, e.tokNormW, e.tokNormB, c.RMSEps)
	}
	for l := 0; l < c.NLayer; l++ {
		g := 1 + l
		ts, err := m.w.Acquire(ctx, g)
		if err != nil {
			return fmt.Errorf("model: acquiring %s: %w", m.plan.Groups[g].Name, err)
		}
		err = m.encoderLayer(l, ts, n)
		m.w.Release(g)
		if err != nil {
			return fmt.Errorf("model: %s: %w", m.plan.Groups[g].Name, err)
		}
	}
	return nil
}

// encoderLayer is one post-norm block of llama.cpp's bert graph on the nb
// rows of m.x: x = LN(x + o(attn(qkv(x)))), x = LN(x + ffn(x)).
func (m *Model) encoderLayer(l int, ts [][]byte, nb int) error {
	c := m.Cfg
	E, Q := c.NEmbd, c.QDim()
	ty := m.types[l*nSlots : (l+1)*nSlots]
	copy(m.xn[:nb*E], m.x[:nb*E])
	if err := m.qkv(ty, ts, nb); err != nil {
		return err
	}
	if !c.NoRope {
		m.pool.Run(nb, 1, m.enc.ropeRun)
	}
	m.encoderAttend(nb)
	if err := m.project(m.att, nb, Q, proj{ty[sO], m.t(ts, sO), E, m.tmp}); err != nil {
		return err
	}
	if c.OutBias {
		if err := m.addBias(m.tmp, nb, ty[sBO], m.t(ts, sBO), E); err != nil {
			return err
		}
	}
	m.residual(nb)
	if err := m.layerNormRows(ty, ts, arch.SlotAttnOutNorm, arch.SlotAttnOutNormB, nb); err != nil {
		return err
	}
	copy(m.xn[:nb*E], m.x[:nb*E])
	if c.FFNGeLU {
		if err := m.ffnGeLU(ty, ts, nb); err != nil {
			return err
		}
	} else if err := m.ffn(ty, ts, nb); err != nil {
		return err
	}
	m.residual(nb)
	return m.layerNormRows(ty, ts, arch.SlotLayerOutNorm, arch.SlotLayerOutNormB, nb)
}

// encoderRope rotates q and k of batch rows lo..hi-1 (each at its
// position in its input).
func (m *Model) encoderRope(lo, hi int) {
	c := m.Cfg
	Q, KV := c.QDim(), c.KVDim()
	for b := lo; b < hi; b++ {
		cs := m.ropeCS[b*c.NRot : (b+1)*c.NRot]
		pos := int(m.enc.pos[b])
		if c.RopeYaRN {
			m.yarn.cache(&m.rope, pos, cs)
		} else {
			m.rope.Cache(pos, cs)
		}
		m.rope.ApplyCache(m.q[b*Q:(b+1)*Q], c.HeadDim, cs)
		m.rope.ApplyCache(m.kk[b*KV:(b+1)*KV], c.HeadDim, cs)
	}
}

// encAttn is the encoder attention's state: the layer's keys gathered per
// kv head (n rows of head_dim, f32 bytes), its values transposed per kv
// head (head_dim rows of n), and one scratch set per pool chunk.
type encAttn struct {
	kb, vt   []byte
	scr      []encScratch
	n, grain int
	scale    float32
}

type encScratch struct {
	s      []float32 // one query head's scores
	sb, qb []byte    // the scores and the query as f32 activation rows
}

// encoderAttend is attention over the whole batch (no mask, no cache:
// llama.cpp's encoders attend over the batch's f32 k and v): for each
// query head and row, scores against every key (one kernel dot each,
// scaled by 1/sqrt(head_dim)), softmax, then each output element one dot
// of the scores with a transposed value row. Items are (head, block of
// query rows), spread over the pool.
func (m *Model) encoderAttend(nb int) {
	c := m.Cfg
	hd, KV := c.HeadDim, c.KVDim()
	a := &m.enc.att
	if need := c.NHeadKV * nb * hd * 4; len(a.kb) < need {
		a.kb, a.vt = make([]byte, need), make([]byte, need)
	}
	for b := 0; b < nb; b++ {
		for g := 0; g < c.NHeadKV; g++ {
			k := m.kk[b*KV+g*hd : b*KV+(g+1)*hd]
			v := m.vv[b*KV+g*hd : b*KV+(g+1)*hd]
			kd := a.kb[(g*nb+b)*hd*4:]
			for d, x := range k {
				binary.LittleEndian.PutUint32(kd[4*d:], math.Float32bits(x))
			}
			for d, x := range v {
				binary.LittleEndian.PutUint32(a.vt[((g*hd+d)*nb+b)*4:], math.Float32bits(x))
			}
		}
	}
	const qb = 16
	blocks := (nb + qb - 1) / qb
	items := c.NHead * blocks
	chunks := min(items, 4*m.pool.Threads())
	a.grain = (items + chunks - 1) / chunks
	chunks = (items + a.grain - 1) / a.grain
	for len(a.scr) < chunks {
		a.scr = append(a.scr, encScratch{qb: make([]byte, 4*hd)})
	}
	for i := range a.scr[:chunks] {
		if len(a.scr[i].s) < nb {
			a.scr[i].s, a.scr[i].sb = make([]float32, nb), make([]byte, 4*nb)
		}
	}
	a.n, a.scale = nb, float32(1/math.Sqrt(float64(hd)))
	m.pool.Run(items, a.grain, m.enc.attnRun)
}

// encoderAttnWork runs items lo..hi-1 of encoderAttend.
func (m *Model) encoderAttnWork(lo, hi int) {
	c := m.Cfg
	a := &m.enc.att
	hd, Q, n := c.HeadDim, c.QDim(), a.n
	group := c.NHead / c.NHeadKV
	const qb = 16
	blocks := (n + qb - 1) / qb
	sc := &a.scr[lo/a.grain]
	dot := m.k.Dot(ggml.F32)
	for it := lo; it < hi; it++ {
		h, blk := it/blocks, it%blocks
		g := h / group
		kb := a.kb[g*n*hd*4 : (g+1)*n*hd*4]
		vt := a.vt[g*hd*n*4 : (g+1)*hd*n*4]
		for b := blk * qb; b < min((blk+1)*qb, n); b++ {
			// Row b sees the keys of its own input, rows r0..r0+nv-1:
			// all of them, or up to itself for a causal file.
			sg := m.enc.segs[m.enc.seg[b]]
			r0, nv := sg.r0, sg.n
			if !c.NonCausal {
				nv = int(m.enc.pos[b]) + 1
			}
			s := sc.s[:nv]
			_ = m.k.QuantizeAct(ggml.F32, m.q[b*Q+h*hd:b*Q+(h+1)*hd], sc.qb) // geometry fixed
			for r := range s {
				s[r] = dot(hd, kb[(r0+r)*hd*4:(r0+r+1)*hd*4], sc.qb) * a.scale
			}
			m.k.Softmax(s)
			_ = m.k.QuantizeAct(ggml.F32, s, sc.sb[:4*nv])
			out := m.att[b*Q+h*hd : b*Q+(h+1)*hd]
			for d := range out {
				o := (d*n + r0) * 4
				out[d] = dot(nv, vt[o:o+nv*4], sc.sb[:4*nv])
			}
		}
	}
}

// ffnGeLU is bert's feed-forward on m.xn into m.tmp:
// down(gelu(up·x + up bias)) + down bias, gelu as ggml's (the f16 table
// of kernels.GeLUMul, times one).
func (m *Model) ffnGeLU(ty []ggml.Type, ts [][]byte, nb int) error {
	c := m.Cfg
	E, F := c.NEmbd, c.NFF
	if err := m.project(m.xn, nb, E, proj{ty[sUp], m.t(ts, sUp), F, m.gate}); err != nil {
		return err
	}
	if c.UpBias {
		if err := m.addBias(m.gate, nb, ty[arch.SlotBUp], m.t(ts, arch.SlotBUp), F); err != nil {
			return err
		}
	}
	m.pool.Run(nb, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			m.k.GeLUMul(m.gate[b*F:(b+1)*F], m.enc.ones)
		}
	})
	if err := m.project(m.gate, nb, F, proj{ty[sDown], m.t(ts, sDown), E, m.tmp}); err != nil {
		return err
	}
	if c.DownBias {
		return m.addBias(m.tmp, nb, ty[arch.SlotBDown], m.t(ts, arch.SlotBDown), E)
	}
	return nil
}

// layerNormRows replaces the nb rows of m.x by their LayerNorm with the
// weight and bias in slots w and b.
func (m *Model) layerNormRows(ty []ggml.Type, ts [][]byte, w, b arch.Slot, nb int) error {
	E := m.Cfg.NEmbd
	if err := m.k.Dequantize(ty[w], m.t(ts, w), m.normW); err != nil {
		return err
	}
	if err := m.k.Dequantize(ty[b], m.t(ts, b), m.enc.normB); err != nil {
		return err
	}
	m.pool.Run(nb, 1, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			x := m.x[r*E : (r+1)*E]
			layerNorm(x, x, m.normW, m.enc.normB, m.Cfg.RMSEps)
		}
	})
	return nil
}

// layerNorm is llama.cpp's LLM_NORM with weight and bias: ggml_norm
// (mean summed in f64 and rounded to f32, the centred squares summed in
// f64, scale 1/sqrtf(var+eps)), then a separate multiply by w and add of
// b, each rounded to f32. out may alias x.
func layerNorm(out, x, w, b []float32, eps float32) {
	n := len(x)
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mean := float32(sum) / float32(n)
	var sq float64
	for i, v := range x {
		d := v - mean
		out[i] = d
		sq += float64(d * d)
	}
	variance := float32(sq / float64(n))
	scale := 1 / float32(math.Sqrt(float64(variance+eps)))
	for i := range out[:n] {
		out[i] = float32(out[i]*scale)*w[i] + b[i]
	}
}

// encoderPool pools input k's rows of m.x after encode.
func (m *Model) encoderPool(ctx context.Context, k int, p arch.Pooling) ([]float32, error) {
	c := m.Cfg
	E := c.NEmbd
	sg := m.enc.segs[k]
	x := m.x[sg.r0*E : (sg.r0+sg.n)*E]
	n := sg.n
	switch p {
	case arch.PoolNone:
		return append([]float32(nil), x...), nil
	case arch.PoolMean:
		// llama.cpp multiplies the states by a column of 1/n (a matmul).
		out := make([]float32, E)
		inv := 1 / float32(n)
		for i := range out {
			var s float64
			for b := 0; b < n; b++ {
				s += float64(x[b*E+i] * inv)
			}
			out[i] = float32(s)
		}
		return out, nil
	case arch.PoolCLS:
		return append([]float32(nil), x[:E]...), nil
	case arch.PoolLast:
		return append([]float32(nil), x[(n-1)*E:]...), nil
	case arch.PoolRank:
		return m.classify(ctx, x[:E])
	}
	return nil, unsupported("pooling %s", p)
}

// classify is rank pooling's classifier head on the first token's state x
// (llama.cpp's build_pooling for LLAMA_POOLING_TYPE_RANK):
// tanh(cls·x + cls.bias), then cls.output·y + cls.output.bias; each step
// only when its tensors are present, so a file without a head returns x.
func (m *Model) classify(ctx context.Context, x []float32) ([]float32, error) {
	c := m.Cfg
	e := &m.enc
	if e.outGroup == 0 {
		return append([]float32(nil), x...), nil
	}
	ts, err := m.w.Acquire(ctx, e.outGroup)
	if err != nil {
		return nil, fmt.Errorf("model: acquiring the classifier: %w", err)
	}
	defer m.w.Release(e.outGroup)
	cur := append(e.clsX[:0], x...)
	step := func(wi, bi, rows int, act func([]float32)) error {
		if e.clsSlots[wi] < 0 {
			return nil
		}
		y := e.clsY[:rows]
		if err := m.project(cur, 1, len(cur), proj{e.clsTypes[wi], ts[e.clsSlots[wi]], rows, y}); err != nil {
			return err
		}
		if e.clsSlots[bi] >= 0 {
			if err := m.k.Dequantize(e.clsTypes[bi], ts[e.clsSlots[bi]], m.bias[:rows]); err != nil {
				return err
			}
			m.k.Add(y, m.bias[:rows])
		}
		if act != nil {
			act(y)
		}
		cur = append(e.clsX[:0], y...)
		return nil
	}
	tanh := func(y []float32) {
		for i, v := range y {
			y[i] = float32(math.Tanh(float64(v)))
		}
	}
	if err := step(0, 1, c.NEmbd, tanh); err != nil {
		return nil, err
	}
	if err := step(2, 3, c.NClsOut, nil); err != nil {
		return nil, err
	}
	return append([]float32(nil), cur...), nil
}
