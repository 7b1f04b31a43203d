package model

import (
	"context"
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
// block post-norm with LayerNorms, and no output head: Embed pools the
// final hidden states (m.x) as pooling_type says.

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
	e.clsX, e.clsY = make([]float32, max(c.NEmbd, c.NClsOut)), make([]float32, max(c.NEmbd, c.NClsOut))
	return nil
}

// encoderGroups are the input group's tensors (read by rows) and the
// classifier group (cls, cls.bias, cls.output, cls.output.bias as present).
func (m *Model) encoderGroups() (input []string, cls *Group, err error) {
	c := m.Cfg
	input = []string{tokEmbd}
	if c.PosEmbd {
		input = append(input, arch.PosEmbdName)
	}
	if c.TypeEmbd {
		input = append(input, arch.TypeEmbdName)
	}
	input = append(input, arch.TokNormName, arch.TokNormBName)
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
			return nil, nil, fmt.Errorf("model: tensor %s is missing", t.name)
		}
		m.enc.clsSlots[i], m.enc.clsTypes[i] = len(g.Tensors), ti.Type
		g.Tensors = append(g.Tensors, t.name)
	}
	if len(g.Tensors) == 0 {
		return input, nil, nil
	}
	return input, &g, nil
}

// encode runs tokens as a fresh sequence through the encoder, leaving each
// token's final hidden state in its row of m.x.
func (m *Model) encode(ctx context.Context, tokens []int32) error {
	c := m.Cfg
	n := len(tokens)
	if n == 0 {
		return fmt.Errorf("model: encoding no tokens")
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= c.NVocab {
			return fmt.Errorf("model: token id %d outside vocabulary [0, %d)", t, c.NVocab)
		}
	}
	m.Reset()
	if err := m.kv.reserve(0, n); err != nil {
		return err
	}
	if n > m.nb {
		// The whole input is one batch (see above); kv.reserve bounded n
		// by the context.
		m.nb = n
		m.alloc()
	}
	if err := m.embed(ctx, tokens); err != nil {
		return err
	}
	E := c.NEmbd
	e := &m.enc
	for b := range tokens {
		x := m.x[b*E : (b+1)*E]
		if e.typeRow != nil {
			m.k.Add(x, e.typeRow)
		}
		if e.posRow != nil {
			if err := m.w.Row(ctx, arch.PosEmbdName, b, e.posRow); err != nil {
				return fmt.Errorf("model: position embedding %d: %w", b, err)
			}
			if err := m.k.Dequantize(e.posType, e.posRow, m.xn[:E]); err != nil {
				return fmt.Errorf("model: position embedding %d: %w", b, err)
			}
			m.k.Add(x, m.xn[:E])
		}
		layerNorm(x, x, e.tokNormW, e.tokNormB, c.RMSEps)
	}
	for l := 0; l < c.NLayer; l++ {
		g := 1 + l
		ts, err := m.w.Acquire(ctx, g)
		if err != nil {
			m.kv.Truncate(0)
			return fmt.Errorf("model: acquiring %s: %w", m.plan.Groups[g].Name, err)
		}
		err = m.encoderLayer(l, ts, n)
		m.w.Release(g)
		if err != nil {
			m.kv.Truncate(0)
			return fmt.Errorf("model: %s: %w", m.plan.Groups[g].Name, err)
		}
	}
	m.kv.n = n
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
	if err := m.ropeAttend(l, nb, 0); err != nil {
		return err
	}
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

// encoderPool pools the n rows of m.x after encode.
func (m *Model) encoderPool(ctx context.Context, n int, p arch.Pooling) ([]float32, error) {
	c := m.Cfg
	E := c.NEmbd
	switch p {
	case arch.PoolNone:
		return append([]float32(nil), m.x[:n*E]...), nil
	case arch.PoolMean:
		// llama.cpp multiplies the states by a column of 1/n (a matmul).
		out := make([]float32, E)
		inv := 1 / float32(n)
		for i := range out {
			var s float64
			for b := 0; b < n; b++ {
				s += float64(m.x[b*E+i] * inv)
			}
			out[i] = float32(s)
		}
		return out, nil
	case arch.PoolCLS:
		return append([]float32(nil), m.x[:E]...), nil
	case arch.PoolLast:
		return append([]float32(nil), m.x[(n-1)*E:n*E]...), nil
	case arch.PoolRank:
		return m.classify(ctx, m.x[:E])
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
