package model

import (
	"context"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/ggml"
)

// The shared blocks every architecture's graph is composed of. A layer is
// always: RMSNorm → attention (q/k/v projections, optional biases and
// per-head q/k norms, RoPE, optional q scaling, causal attention with
// optional soft-cap and sliding window, output projection) → optional
// post-norm → residual add; RMSNorm → gated feed-forward (SwiGLU or GeGLU,
// gate and up separate or fused; or a mixture of experts, moe.go) →
// optional post-norm → residual add. The
// options come from the file's Config (core/arch): an architecture chooses
// among them rather than adding branches here. With every option off, the
// sequence of operations is the llama graph's, operation for operation.

// layer runs one transformer block on the batch in m.x, in place.
func (m *Model) layer(ctx context.Context, l int, ts [][]byte, nb, pos0 int) error {
	c := m.Cfg
	E, Q := c.NEmbd, c.QDim()
	ty := m.types[l*nSlots : (l+1)*nSlots]

	// Attention block.
	if err := m.norm(ty[sAttnNorm], m.t(ts, sAttnNorm), nb); err != nil {
		return err
	}
	if err := m.qkv(ty, ts, nb); err != nil {
		return err
	}
	if c.QKNorm {
		if err := m.qkNorm(ty, ts, nb); err != nil {
			return err
		}
	}
	if c.AttnSinks {
		if err := m.k.Dequantize(ty[sSinks], m.t(ts, sSinks), m.sinks); err != nil {
			return err
		}
	}
	if err := m.ropeAttend(l, nb, pos0); err != nil {
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
	if c.PostNorms {
		if err := m.postNorm(ty[sPostAttn], m.t(ts, sPostAttn), nb); err != nil {
			return err
		}
	}
	m.residual(nb)

	// Feed-forward block: down(act(gate(x)) * up(x)).
	if err := m.norm(ty[sFFNNorm], m.t(ts, sFFNNorm), nb); err != nil {
		return err
	}
	if c.MoE {
		if err := m.moeFFN(ctx, l, ty, ts, nb); err != nil {
			return err
		}
	} else if err := m.ffn(ty, ts, nb); err != nil {
		return err
	}
	if c.PostNorms {
		if err := m.postNorm(ty[sPostFFN], m.t(ts, sPostFFN), nb); err != nil {
			return err
		}
	}
	m.residual(nb)
	return nil
}

// t is slot s's tensor bytes in a layer group.
func (m *Model) t(ts [][]byte, s arch.Slot) []byte { return ts[m.slot[s]] }

// rowViews splits a fused matrix of type t (rows of cols) into consecutive
// row ranges: fused attn_qkv is q, k, v rows; fused ffn_up is gate then up
// rows. Each view is multiplied exactly as the whole matrix would be, row
// by row.
func rowViews(t ggml.Type, w []byte, cols int, rows ...int) ([3][]byte, error) {
	var out [3][]byte
	rs, err := ggml.RowSize(t, uint64(cols))
	if err != nil {
		return out, err
	}
	off := 0
	for i, r := range rows {
		end := off + r*int(rs)
		if end > len(w) {
			return out, fmt.Errorf("model: fused weight of %d bytes is shorter than %d rows of %d", len(w), end/int(rs), rs)
		}
		out[i] = w[off:end:end]
		off = end
	}
	return out, nil
}

// qkv projects the normalised batch m.xn into m.q, m.kk and m.vv (from
// attn_q/k/v or the rows of a fused attn_qkv) and adds the biases.
func (m *Model) qkv(ty []ggml.Type, ts [][]byte, nb int) error {
	c := m.Cfg
	E, Q, KV := c.NEmbd, c.QDim(), c.KVDim()
	var qp, kp, vp proj
	if c.FusedQKV {
		t := ty[sQKV]
		v, err := rowViews(t, m.t(ts, sQKV), E, Q, KV, KV)
		if err != nil {
			return err
		}
		qp, kp, vp = proj{t, v[0], Q, m.q}, proj{t, v[1], KV, m.kk}, proj{t, v[2], KV, m.vv}
	} else {
		qp, kp, vp = proj{ty[sQ], m.t(ts, sQ), Q, m.q}, proj{ty[sK], m.t(ts, sK), KV, m.kk}, proj{ty[sV], m.t(ts, sV), KV, m.vv}
	}
	if nb == 1 {
		if err := m.fusedMatVec(m.xn, E, qp, kp, vp); err != nil {
			return err
		}
	} else if err := m.project(m.xn, nb, E, qp, kp, vp); err != nil {
		return err
	}
	if c.QKVBias {
		for _, s := range []struct {
			slot arch.Slot
			y    []float32
			n    int
		}{{sBQ, m.q, Q}, {sBK, m.kk, KV}, {sBV, m.vv, KV}} {
			if err := m.addBias(s.y, nb, ty[s.slot], m.t(ts, s.slot), s.n); err != nil {
				return err
			}
		}
	}
	if c.FusedBias {
		b := m.bias[:Q+2*KV]
		if err := m.k.Dequantize(ty[sBQKV], m.t(ts, sBQKV), b); err != nil {
			return err
		}
		for i := 0; i < nb; i++ {
			m.k.Add(m.q[i*Q:(i+1)*Q], b[:Q])
			m.k.Add(m.kk[i*KV:(i+1)*KV], b[Q:Q+KV])
			m.k.Add(m.vv[i*KV:(i+1)*KV], b[Q+KV:])
		}
	}
	return nil
}

// qkNorm applies RMSNorm with attn_q_norm/attn_k_norm (head_dim weights)
// to every q and k head of the batch, before RoPE (qwen3, gemma3).
func (m *Model) qkNorm(ty []ggml.Type, ts [][]byte, nb int) error {
	c := m.Cfg
	hd := c.HeadDim
	wq, wk := m.qkNormW[:hd], m.qkNormW[hd:2*hd]
	if err := m.k.Dequantize(ty[sQNorm], m.t(ts, sQNorm), wq); err != nil {
		return err
	}
	if err := m.k.Dequantize(ty[sKNorm], m.t(ts, sKNorm), wk); err != nil {
		return err
	}
	if nb == 1 {
		m.qkNormRows(0, 1)
		return nil
	}
	m.pool.Run(nb, 1, m.qkNormRows)
	return nil
}

func (m *Model) qkNormRows(lo, hi int) {
	c := m.Cfg
	hd := c.HeadDim
	wq, wk := m.qkNormW[:hd], m.qkNormW[hd:2*hd]
	for h := lo * c.NHead; h < hi*c.NHead; h++ {
		x := m.q[h*hd : (h+1)*hd]
		m.k.RMSNorm(x, x, wq, c.RMSEps)
	}
	for h := lo * c.NHeadKV; h < hi*c.NHeadKV; h++ {
		x := m.kk[h*hd : (h+1)*hd]
		m.k.RMSNorm(x, x, wk, c.RMSEps)
	}
}

// ffn runs the gated feed-forward on m.xn into m.tmp: SwiGLU or GeGLU,
// gate and up from ffn_gate/ffn_up or from the two halves of a fused
// ffn_up (phi3).
func (m *Model) ffn(ty []ggml.Type, ts [][]byte, nb int) error {
	c := m.Cfg
	E, F := c.NEmbd, c.NFF
	var gp, up proj
	if c.FusedUp {
		t := ty[sUp]
		v, err := rowViews(t, m.t(ts, sUp), E, F, F)
		if err != nil {
			return err
		}
		gp, up = proj{t, v[0], F, m.gate}, proj{t, v[1], F, m.up}
	} else {
		gp, up = proj{ty[sGate], m.t(ts, sGate), F, m.gate}, proj{ty[sUp], m.t(ts, sUp), F, m.up}
	}
	if nb == 1 {
		a, err := m.fusedGLU(m.xn, E, gp, up, ty[sDown], c.GeGLU)
		if err != nil {
			return err
		}
		m.k.MatVec(m.pool, ty[sDown], E, F, m.t(ts, sDown), a, m.tmp[:E])
		return nil
	}
	if err := m.project(m.xn, nb, E, gp, up); err != nil {
		return err
	}
	if c.GeGLU {
		m.pool.Run(nb, 1, func(lo, hi int) { m.k.GeLUMul(m.gate[lo*F:hi*F], m.up[lo*F:hi*F]) })
	} else {
		m.pool.Run(nb, 1, func(lo, hi int) { m.k.SiLUMul(m.gate[lo*F:hi*F], m.up[lo*F:hi*F]) })
	}
	return m.project(m.gate, nb, F, proj{ty[sDown], m.t(ts, sDown), E, m.tmp})
}

// addBias adds a bias vector (stored in any dequantizable type) to each of
// nb rows of y.
func (m *Model) addBias(y []float32, nb int, t ggml.Type, b []byte, n int) error {
	if err := m.k.Dequantize(t, b, m.bias[:n]); err != nil {
		return err
	}
	for i := 0; i < nb; i++ {
		m.k.Add(y[i*n:(i+1)*n], m.bias[:n])
	}
	return nil
}

// norm writes RMSNorm(x)*w for nb rows into xn, w being a norm tensor.
func (m *Model) norm(t ggml.Type, w []byte, nb int) error {
	E := m.Cfg.NEmbd
	if err := m.k.Dequantize(t, w, m.normW); err != nil {
		return err
	}
	if nb == 1 {
		m.k.RMSNorm(m.xn[:E], m.x[:E], m.normW, m.Cfg.RMSEps)
		return nil
	}
	m.pool.Run(nb, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			m.k.RMSNorm(m.xn[b*E:(b+1)*E], m.x[b*E:(b+1)*E], m.normW, m.Cfg.RMSEps)
		}
	})
	return nil
}

// postNorm normalises a block's output m.tmp in place before the residual
// add (gemma's post_attention_norm and post_ffw_norm).
func (m *Model) postNorm(t ggml.Type, w []byte, nb int) error {
	E := m.Cfg.NEmbd
	if err := m.k.Dequantize(t, w, m.normW); err != nil {
		return err
	}
	if nb == 1 {
		m.k.RMSNorm(m.tmp[:E], m.tmp[:E], m.normW, m.Cfg.RMSEps)
		return nil
	}
	m.pool.Run(nb, 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			m.k.RMSNorm(m.tmp[b*E:(b+1)*E], m.tmp[b*E:(b+1)*E], m.normW, m.Cfg.RMSEps)
		}
	})
	return nil
}

// residual adds the block output m.tmp into m.x for nb rows, spread over
// the pool in prefill.
func (m *Model) residual(nb int) {
	E := m.Cfg.NEmbd
	if nb == 1 {
		m.k.Add(m.x[:E], m.tmp[:E])
		return
	}
	m.pool.Run(nb, 1, func(lo, hi int) { m.k.Add(m.x[lo*E:hi*E], m.tmp[lo*E:hi*E]) })
}

// ropeStore rotates batch token b's q and k (at position pos0+b, with the
// sliding layers' RoPE on those), scales q when the architecture scales q
// rather than the scores, and stores its k and v in the cache for layer l.
func (m *Model) ropeStore(l, pos0, b int) error {
	c := m.Cfg
	Q, KV := c.QDim(), c.KVDim()
	pos := pos0 + b
	r, y := &m.rope, &m.yarn
	if c.Sliding(l) {
		r, y = &m.ropeSWA, &m.yarnSWA
	}
	cs := m.ropeCS[b*c.NRot : (b+1)*c.NRot]
	if c.RopeYaRN {
		y.cache(r, pos, cs)
	} else {
		r.Cache(pos, cs)
	}
	q := m.q[b*Q : (b+1)*Q]
	r.ApplyCache(q, c.HeadDim, cs)
	r.ApplyCache(m.kk[b*KV:(b+1)*KV], c.HeadDim, cs)
	if c.ScaleQ {
		m.k.Scale(q, m.qScale)
	}
	return m.kv.store(m.k, l, pos, m.kk[b*KV:(b+1)*KV], m.vv[b*KV:(b+1)*KV])
}

// attnParams are one layer's attention options: the score scale (already
// divided by the soft-cap, as ggml's flash attention does), the soft-cap
// and the sliding window (0: none).
func (m *Model) attnParams(l int) (scale, softcap float32, window int) {
	c := m.Cfg
	scale = float32(1 / math.Sqrt(float64(c.HeadDim)))
	if c.ScaleQ {
		scale = 1
	}
	if softcap = c.AttnSoftcap; softcap != 0 {
		scale /= softcap
	}
	if c.Sliding(l) {
		window = c.SlidingWindow
	}
	return scale, softcap, window
}

// capMask soft-caps the scores s of the query at position pos (s[i] for
// cached position lo+i <= pos) and masks the positions outside its window.
func capMask(s []float32, lo, pos int, softcap float32, window int) {
	if softcap != 0 {
		for i, v := range s[:pos-lo+1] {
			s[i] = softcap * float32(math.Tanh(float64(v)))
		}
	}
	if window > 0 {
		for i := 0; lo+i <= pos-window; i++ {
			s[i] = float32(math.Inf(-1))
		}
	}
}

// softmax normalises one query head's scores s (masked positions -Inf),
// with head h's attention sink when the layer has sinks: a logit that
// joins the denominator and attends to nothing, so
// p_i = e^(s_i-m) / (Σ_j e^(s_j-m) + e^(sink-m)). The row goes through the
// kernels' softmax, whose largest entry is 1/Σ_j e^(s_j-m); the sink's term
// then rescales every probability by 1/(1 + e^(sink-m)·p_max), which is
// ggml's sink-corrected softmax up to rounding.
func (m *Model) softmax(s []float32, h int) {
	if m.aj.sinks == nil {
		m.k.Softmax(s)
		return
	}
	mi, mx := 0, float32(math.Inf(-1))
	for i, v := range s {
		if v > mx {
			mi, mx = i, v
		}
	}
	m.k.Softmax(s)
	if math.IsInf(float64(mx), -1) {
		return
	}
	f := 1 / (1 + math.Exp(float64(m.aj.sinks[h]-mx))*float64(s[mi]))
	m.k.Scale(s, float32(f))
}

// logitsOut finishes the logits: output bias, then the final soft-cap
// (logits/c, tanh, ×c, as llama.cpp's gemma graphs do).
func (m *Model) logitsOut(ts [][]byte) error {
	c := m.Cfg
	if c.OutputBias {
		if err := m.k.Dequantize(m.outBiasType, ts[2], m.outBiasW); err != nil {
			return fmt.Errorf("model: %s: %w", outBias, err)
		}
		m.k.Add(m.logits, m.outBiasW)
	}
	if cp := c.FinalSoftcap; cp != 0 {
		inv := 1 / cp
		for i, v := range m.logits {
			m.logits[i] = float32(math.Tanh(float64(v*inv))) * cp
		}
	}
	return nil
}
