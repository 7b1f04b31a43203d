package model

import (
	"context"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
)

// The mixture-of-experts feed-forward block (qwen3moe, qwen2moe, Mixtral),
// as llama.cpp's build_moe_ffn computes it:
//
//  1. router logits ffn_gate_inp · x (n_expert per token);
//  2. probabilities: softmax over all experts (or sigmoid, or the logits
//     themselves for softmax-over-top-k);
//  3. the n_expert_used most probable experts, most probable first (ties:
//     lower index first; ggml's top-k leaves tie order unspecified, which
//     with f32 router logits never matters);
//  4. their weights: the chosen probabilities (softmax over them for
//     softmax-over-top-k), divided by their sum when the architecture
//     renormalises (the sum clamped below at 2^-14 as ggml does), times a
//     scale when it has one;
//  5. each chosen expert's SwiGLU, down(silu(gate·x) ⊙ up·x), with the
//     expert's slices of the 3-D ffn_{gate,up,down}_exps;
//  6. the weighted sum w0·y0 + w1·y1 + w2·y2 + ..., each product rounded to
//     f32 and the sum taken in that order, which is ggml's order (its top-k
//     swaps the first two slots, and the first addition commutes);
//  7. plus, with a shared expert, its SwiGLU output times
//     sigmoid(ffn_gate_inp_shexp · x).
//
// A batch runs each chosen expert once, over the rows of the tokens that
// chose it (gathered, multiplied, scattered back: llama.cpp's mul_mat_id),
// so prefill reads each selected expert's weights once per batch. One token
// (generation) runs its experts one after the other, each through the
// dense path's fused gate/up dispatch and a down MatVec, so the pool splits
// every expert matrix's rows as it does a dense one's.
//
// With a Weights that implements ExpertWeights the graph acquires experts
// one at a time in first-use order after telling the store which it will
// need (see ExpertWeights); otherwise it slices them out of the whole 3-D
// tensors in the layer group. The arithmetic is the same either way.

// moeScratch is the MoE block's buffers, sized for a full batch.
type moeScratch struct {
	logits []float32    // nb × n_expert: router logits, then probabilities
	sel    []int32      // nb × k: each token's experts, most probable first
	wts    []float32    // nb × k: their weights
	out    []float32    // nb × k × n_embd: the output of each (token, slot)'s expert
	cnt    []int32      // per expert: rows of the batch that chose it
	start  []int32      // per expert: its first entry in pairs
	order  []int        // the distinct chosen experts, in first-use order
	pairs  []int32      // token·k + slot, grouped by expert in order
	xg     []float32    // nb × n_embd: one expert's rows, gathered
	g, u   []float32    // nb × max(n_ff_exp, n_ff_shexp)
	y      []float32    // nb × n_embd: one expert's outputs before scattering
	shGate []float32    // nb: the shared expert's gate logits
	sh     []float32    // nb × n_embd: the shared expert's outputs
	bias   [3][]float32 // one expert's gate, up and down biases (Cfg.ExpertBias)
	views  [3][]byte    // one expert's slices, for Weights without ExpertWeights
	names  [3]string    // the expert tensors' names after "blk.N.", in Group.Experts order
	ps     [2]proj      // the router (and shared expert gate) projections
	// size[l*3+i] is the bytes of one expert of layer l's Experts[i].
	size []int
	// hook, when set (tests, measurements), sees each layer's routing:
	// sel holds k experts per batch row.
	hook func(l int, sel []int32)
	// top holds one row's k+1 best experts, so route learns the margin
	// of its choice (the (k+1)-th) from the same insertion pass.
	top []int32
	// margin is the smallest routing margin since the last reset (see
	// RouterMargin).
	margin float32
}

// RouterMargin is the smallest routing margin of the forward passes since
// the last call (every row, every layer): the router-logit difference
// between the last expert a row chose and the best one it did not. Replay
// tests read it because a margin below the two engines' difference in
// router logits (summation order, activation quantization) lets them pick
// different experts for the same token, which moves the logits by more
// than any kernel bound and is not a defect of either. It is +Inf for
// models without experts and after it is read.
func (m *Model) RouterMargin() float32 {
	v := m.moe.margin
	m.moe.margin = float32(math.Inf(1))
	return v
}

func (m *Model) allocMoE() {
	c, nb := m.Cfg, m.nb
	E, N, K := c.NEmbd, c.NExpert, c.NExpertUsed
	F := max(c.NFFExp, c.NFFShexp)
	ms := &m.moe
	ms.logits = make([]float32, nb*N)
	ms.sel = make([]int32, nb*K)
	ms.top = make([]int32, min(K+1, N))
	ms.wts = make([]float32, nb*K)
	ms.out = make([]float32, nb*K*E)
	ms.cnt = make([]int32, N)
	ms.start = make([]int32, N)
	ms.order = make([]int, 0, N)
	ms.pairs = make([]int32, nb*K)
	ms.xg = make([]float32, nb*E)
	ms.g = make([]float32, nb*F)
	ms.u = make([]float32, nb*F)
	ms.y = make([]float32, nb*E)
	if c.SharedExpert {
		ms.shGate = make([]float32, nb)
		ms.sh = make([]float32, nb*E)
	}
	if c.ExpertBias {
		ms.bias = [3][]float32{make([]float32, c.NFFExp), make([]float32, c.NFFExp), make([]float32, E)}
	}
}

// expertSlot is the position of slot s in Group.Experts, or -1.
func expertSlot(s arch.Slot) int {
	for i, e := range expertSlots {
		if e == s {
			return i
		}
	}
	return -1
}

// checkExpertTensor checks that a 3-D expert tensor splits into nExpert
// whole matrices (the loader checked its shape; this is the byte view the
// contract's slices rest on).
func checkExpertTensor(ti gguf.TensorInfo, nExpert int) error {
	if len(ti.Dims) != 3 || ti.Dims[2] != uint64(nExpert) {
		return fmt.Errorf("model: tensor %s has shape %v, want [cols, rows, %d experts]", ti.Name, ti.Dims, nExpert)
	}
	rs, err := ggml.RowSize(ti.Type, ti.Dims[0])
	if err != nil {
		return fmt.Errorf("model: tensor %s: %w", ti.Name, err)
	}
	if ti.Size != rs*ti.Dims[1]*ti.Dims[2] {
		return fmt.Errorf("model: tensor %s: %d bytes, want %d experts of %d x %d-byte rows", ti.Name, ti.Size, nExpert, ti.Dims[1], rs)
	}
	return nil
}

// expertSizes records the byte size of one expert of every expert tensor.
func (m *Model) expertSizes() error {
	c := m.Cfg
	m.moe.size = make([]int, c.NLayer*len(expertSlots))
	for l := 0; l < c.NLayer; l++ {
		for i, n := range m.moe.names {
			ti, ok := m.w.Info(blk(l, n))
			if !ok {
				return fmt.Errorf("model: tensor %s is missing", blk(l, n))
			}
			rs, err := ggml.RowSize(ti.Type, ti.Dims[0])
			if err != nil {
				return fmt.Errorf("model: tensor %s: %w", ti.Name, err)
			}
			m.moe.size[l*len(expertSlots)+i] = int(rs * ti.Dims[1])
		}
	}
	return nil
}

// moeFFN runs the mixture-of-experts feed-forward of layer l on m.xn into
// m.tmp.
func (m *Model) moeFFN(ctx context.Context, l int, ty []ggml.Type, ts [][]byte, nb int) error {
	c, ms := m.Cfg, &m.moe
	E, N, K := c.NEmbd, c.NExpert, c.NExpertUsed
	g := 1 + l
	ms.ps[0] = proj{ty[sGateInp], m.t(ts, sGateInp), N, ms.logits}
	ps := ms.ps[:1]
	if c.SharedExpert {
		ms.ps[1] = proj{ty[sGateInpSh], m.t(ts, sGateInpSh), 1, ms.shGate}
		ps = ms.ps[:2]
	}
	if nb == 1 {
		if err := m.fusedMatVec(m.xn, E, ps...); err != nil {
			return err
		}
	} else if err := m.project(m.xn, nb, E, ps...); err != nil {
		return err
	}
	if c.ExpertBias {
		if err := m.addBias(ms.logits, nb, ty[sGateInpB], m.t(ts, sGateInpB), N); err != nil {
			return err
		}
	}
	for b := 0; b < nb; b++ {
		m.route(b)
	}
	if ms.hook != nil {
		ms.hook(l, ms.sel[:nb*K])
	}
	m.groupExperts(nb)

	ew, byExpert := m.w.(ExpertWeights)
	if byExpert {
		ew.WillNeedExperts(g, ms.order)
	}
	for _, e := range ms.order {
		var views [][]byte
		if byExpert {
			v, err := ew.AcquireExpert(ctx, g, e)
			if err != nil {
				return fmt.Errorf("model: acquiring expert %d of %s: %w", e, m.plan.Groups[g].Name, err)
			}
			views = v
		} else {
			views = ms.views[:]
		}
		err := m.expertViews(l, ts, e, views, byExpert)
		if err == nil {
			err = m.runExpert(ty, ts, views, e, nb)
		}
		if byExpert {
			ew.ReleaseExpert(g, e)
		}
		if err != nil {
			return err
		}
	}
	if c.SharedExpert {
		if err := m.sharedExpert(ty, ts, nb); err != nil {
			return err
		}
	}
	if nb == 1 {
		m.combine(0, 1)
	} else {
		m.pool.Run(nb, 1, m.combine)
	}
	return nil
}

// expertViews fills (plain Weights) or checks (ExpertWeights) views with
// expert e's slices of layer l's expert tensors.
func (m *Model) expertViews(l int, ts [][]byte, e int, views [][]byte, acquired bool) error {
	if len(views) != len(expertSlots) {
		return fmt.Errorf("model: expert %d of %s: %d tensor slices, want %d", e, m.plan.Groups[1+l].Name, len(views), len(expertSlots))
	}
	for i, s := range expertSlots {
		sz := m.moe.size[l*len(expertSlots)+i]
		if acquired {
			if len(views[i]) != sz {
				return fmt.Errorf("model: expert %d of %s: %d bytes, want %d", e, blk(l, m.moe.names[i]), len(views[i]), sz)
			}
			continue
		}
		w := m.t(ts, s)
		if len(w) < (e+1)*sz {
			return fmt.Errorf("model: tensor %s: %d bytes, too short for expert %d of %d bytes", blk(l, m.moe.names[i]), len(w), e, sz)
		}
		views[i] = w[e*sz : (e+1)*sz : (e+1)*sz]
	}
	return nil
}

// route turns batch row b's router logits into its experts and weights.
func (m *Model) route(b int) {
	c, ms := m.Cfg, &m.moe
	N, K := c.NExpert, c.NExpertUsed
	p := ms.logits[b*N : (b+1)*N]
	switch c.ExpertGating {
	case arch.GatingSoftmax:
		m.k.Softmax(p)
	case arch.GatingSigmoid:
		for i, v := range p {
			p[i] = 1 / (1 + float32(math.Exp(float64(-v))))
		}
	}
	sel, w := ms.sel[b*K:(b+1)*K], ms.wts[b*K:(b+1)*K]
	// topK keeps index order among equals, so the first k of the k+1
	// best are the k best.
	topK(p, ms.top)
	copy(sel, ms.top)
	if len(ms.top) > K {
		ms.margin = min(ms.margin, routerLogitGap(c.ExpertGating, p[ms.top[K-1]], p[ms.top[K]]))
	}
	for s, e := range sel {
		w[s] = p[e]
	}
	if c.ExpertGating == arch.GatingSoftmaxWeight {
		m.k.Softmax(w)
	}
	if c.ExpertNorm {
		// ggml's sum_rows accumulates in double; the quotient is f32.
		sum := 0.0
		for _, v := range w {
			sum += float64(v)
		}
		s := max(float32(sum), 6.103515625e-5)
		for i := range w {
			w[i] /= s
		}
	}
	if sc := c.ExpertScale; sc != 0 && sc != 1 {
		for i := range w {
			w[i] *= sc
		}
	}
}

// routerLogitGap is a-b in router logits, a and b being two experts'
// scores after gating (probabilities for softmax and sigmoid gating, whose
// logits differ by log(a/b) and by logit(a)-logit(b)).
func routerLogitGap(g arch.Gating, a, b float32) float32 {
	x, y := float64(a), float64(b)
	switch g {
	case arch.GatingSoftmax:
		return float32(math.Log(x) - math.Log(y))
	case arch.GatingSigmoid:
		return float32(math.Log(x/(1-x)) - math.Log(y/(1-y)))
	}
	return a - b
}

// topK writes to sel the indices of the len(sel) largest values of p, the
// largest first; equal values keep index order (an insertion that moves
// only past strictly smaller values). NaNs sort last.
func topK(p []float32, sel []int32) {
	// above: v sorts before w (a NaN w is below every number).
	above := func(v, w float32) bool { return v > w || (w != w && v == v) }
	k, n := len(sel), 0
	for i, v := range p {
		j := n
		if n < k {
			n++
		} else if above(v, p[sel[k-1]]) {
			j = k - 1
		} else {
			continue
		}
		for j > 0 && above(v, p[sel[j-1]]) {
			sel[j] = sel[j-1]
			j--
		}
		sel[j] = int32(i)
	}
}

// groupExperts lists the distinct experts the batch chose in first-use
// order (ms.order) and, per expert, the (token, slot) entries that chose
// it in token order (ms.pairs from ms.start).
func (m *Model) groupExperts(nb int) {
	ms := &m.moe
	K := m.Cfg.NExpertUsed
	sel := ms.sel[:nb*K]
	ms.order = ms.order[:0]
	clear(ms.cnt)
	for _, e := range sel {
		if ms.cnt[e] == 0 {
			ms.order = append(ms.order, int(e))
		}
		ms.cnt[e]++
	}
	off := int32(0)
	for _, e := range ms.order {
		ms.start[e] = off
		off += ms.cnt[e]
		ms.cnt[e] = 0
	}
	for i, e := range sel {
		ms.pairs[ms.start[e]+ms.cnt[e]] = int32(i)
		ms.cnt[e]++
	}
}

// runExpert computes expert e (its slices in views) for every batch row
// that chose it, into those rows' slots of ms.out.
func (m *Model) runExpert(ty []ggml.Type, ts, views [][]byte, e, nb int) error {
	c, ms := m.Cfg, &m.moe
	E, F, K := c.NEmbd, c.NFFExp, c.NExpertUsed
	gp := proj{ty[sGateExps], views[0], F, ms.g}
	up := proj{ty[sUpExps], views[1], F, ms.u}
	dt := ty[sDownExps]
	pairs := ms.pairs[ms.start[e] : ms.start[e]+ms.cnt[e]]
	plain := !c.ExpertBias && !c.SwiGLUOAI
	if nb == 1 && plain {
		slot := int(pairs[0])
		a, err := m.fusedGLU(m.xn[:E], E, gp, up, dt, false)
		if err != nil {
			return err
		}
		return m.matVecAct(proj{dt, views[2], E, ms.out[slot*E : (slot+1)*E]}, F, a)
	}
	n := len(pairs)
	x := m.xn[:E]
	if nb > 1 {
		for j, p := range pairs {
			t := int(p) / K
			copy(ms.xg[j*E:(j+1)*E], m.xn[t*E:(t+1)*E])
		}
		x = ms.xg
	}
	if plain {
		if err := m.swiglu(x, n, E, gp, up); err != nil {
			return err
		}
	} else {
		if err := m.projectRows(x, n, E, gp, up); err != nil {
			return err
		}
		if c.ExpertBias {
			if err := m.expertBias(ty, ts, e, n, ms.g, ms.u); err != nil {
				return err
			}
		}
		if n == 1 {
			m.expertAct(0, 1) // generation: no dispatch, no closure
		} else {
			m.pool.Run(n, 1, m.expertAct)
		}
	}
	if err := m.projectRows(ms.g, n, F, proj{dt, views[2], E, ms.y}); err != nil {
		return err
	}
	if c.ExpertBias {
		b := ms.bias[2]
		for j := 0; j < n; j++ {
			m.k.Add(ms.y[j*E:(j+1)*E], b)
		}
	}
	for j, p := range pairs {
		copy(ms.out[int(p)*E:(int(p)+1)*E], ms.y[j*E:(j+1)*E])
	}
	return nil
}

// projectRows is project, with one row (generation) through the fused
// dispatch, which allocates nothing.
func (m *Model) projectRows(x []float32, n, cols int, ps ...proj) error {
	if n == 1 {
		return m.fusedMatVec(x, cols, ps...)
	}
	return m.project(x, n, cols, ps...)
}

// expertAct applies the experts' activation to rows [lo, hi) of ms.g
// (gate) and ms.u (up), into ms.g.
func (m *Model) expertAct(lo, hi int) {
	F, ms := m.Cfg.NFFExp, &m.moe
	g, u := ms.g[lo*F:hi*F], ms.u[lo*F:hi*F]
	if m.Cfg.SwiGLUOAI {
		swigluOAI(g, u)
	} else {
		m.k.SiLUMul(g, u)
	}
}

// expertBias decodes expert e's rows of the layer's 2-D expert biases
// (ms.bias; the down bias is added by the caller) and adds the gate and up
// biases to n rows of g and u, as llama.cpp's ggml_add_id.
func (m *Model) expertBias(ty []ggml.Type, ts [][]byte, e, n int, g, u []float32) error {
	ms := &m.moe
	for i, s := range [3]arch.Slot{sGateExpsB, sUpExpsB, sDownExpsB} {
		b := ms.bias[i]
		rs, err := ggml.RowSize(ty[s], uint64(len(b)))
		if err != nil {
			return err
		}
		w := m.t(ts, s)
		if len(w) < (e+1)*int(rs) {
			return fmt.Errorf("model: expert bias of %d bytes is too short for expert %d", len(w), e)
		}
		if err := m.k.Dequantize(ty[s], w[e*int(rs):(e+1)*int(rs)], b); err != nil {
			return err
		}
	}
	F := len(ms.bias[0])
	for j := 0; j < n; j++ {
		m.k.Add(g[j*F:(j+1)*F], ms.bias[0])
		m.k.Add(u[j*F:(j+1)*F], ms.bias[1])
	}
	return nil
}

// swigluOAI is gpt-oss's clamped SwiGLU in place (ggml_swiglu_oai with
// alpha 1.702, limit 7): x = min(gate, 7), y = clamp(up, -7, 7),
// gate = x / (1 + e^(-1.702·x)) · (y + 1), in f32 as ggml computes it.
// NaNs pass through as in ggml's std::min and std::clamp.
func swigluOAI(gate, up []float32) {
	const alpha, limit = 1.702, 7
	for i, g := range gate {
		x := g
		if limit < x {
			x = limit
		}
		y := up[i]
		if y < -limit {
			y = -limit
		} else if limit < y {
			y = limit
		}
		glu := x / (1 + float32(math.Exp(float64(float32(alpha)*-x))))
		gate[i] = glu * (y + 1)
	}
}

// swiglu computes silu(gate·x) ⊙ (up·x) for n rows of x into gate.y.
func (m *Model) swiglu(x []float32, n, cols int, gate, up proj) error {
	if err := m.project(x, n, cols, gate, up); err != nil {
		return err
	}
	F := gate.rows
	g, u := gate.y, up.y
	m.pool.Run(n, 1, func(lo, hi int) { m.k.SiLUMul(g[lo*F:hi*F], u[lo*F:hi*F]) })
	return nil
}

// matVecAct multiplies one activation row a, already encoded for p's type
// (fusedGLU's output), by p's matrix in one pool dispatch that allocates
// nothing.
func (m *Model) matVecAct(p proj, cols int, a []byte) error {
	f := &m.fz
	f.swiglu = false
	f.segs = f.segs[:0]
	grain, err := f.setMat(&f.mats[0], p, cols, a, m.pool.Threads())
	if err != nil {
		return err
	}
	for lo := 0; lo < p.rows; lo += grain {
		f.segs = append(f.segs, fusedSeg{0, lo, min(lo+grain, p.rows)})
	}
	m.pool.Run(len(f.segs), 1, f.run)
	return nil
}

// sharedExpert computes the shared expert's SwiGLU for every batch row
// into ms.sh (its gate logits are in ms.shGate, from the router dispatch).
func (m *Model) sharedExpert(ty []ggml.Type, ts [][]byte, nb int) error {
	c, ms := m.Cfg, &m.moe
	E, F := c.NEmbd, c.NFFShexp
	gp := proj{ty[sGateSh], m.t(ts, sGateSh), F, ms.g}
	up := proj{ty[sUpSh], m.t(ts, sUpSh), F, ms.u}
	down := proj{ty[sDownSh], m.t(ts, sDownSh), E, ms.sh}
	if nb == 1 {
		a, err := m.fusedGLU(m.xn[:E], E, gp, up, down.t, false)
		if err != nil {
			return err
		}
		return m.matVecAct(down, F, a)
	}
	if err := m.swiglu(m.xn, nb, E, gp, up); err != nil {
		return err
	}
	return m.project(ms.g, nb, F, down)
}

// combine writes the weighted sum of the experts' outputs (plus the gated
// shared expert) of batch rows [lo, hi) into m.tmp, in ggml's order and
// rounding (see the top of the file).
func (m *Model) combine(lo, hi int) {
	c, ms := m.Cfg, &m.moe
	E, K := c.NEmbd, c.NExpertUsed
	for b := lo; b < hi; b++ {
		dst := m.tmp[b*E : (b+1)*E]
		w := ms.wts[b*K : (b+1)*K]
		o := ms.out[b*K*E : (b+1)*K*E]
		y0, w0 := o[:E], w[0]
		if K == 1 {
			for i, v := range y0 {
				dst[i] = float32(v * w0)
			}
		} else {
			y1, w1 := o[E:2*E], w[1]
			for i := range dst {
				dst[i] = float32(y0[i]*w0) + float32(y1[i]*w1)
			}
			for s := 2; s < K; s++ {
				ys, ws := o[s*E:(s+1)*E], w[s]
				for i := range dst {
					dst[i] += float32(ys[i] * ws)
				}
			}
		}
		if c.SharedExpert {
			// llama.cpp's qwen2moe gate is silu(x)/x, which is sigmoid(x)
			// rounded differently (and NaN at 0, where sigmoid is 1/2).
			x := ms.shGate[b]
			gate := float32(0.5)
			if x != 0 {
				gate = x / (1 + float32(math.Exp(float64(-x)))) / x
			}
			sh := ms.sh[b*E : (b+1)*E]
			for i := range dst {
				dst[i] += float32(sh[i] * gate)
			}
		}
	}
}
