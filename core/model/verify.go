package model

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/kernels"
)

// Verification passes (speculative decoding): a drafted continuation is
// checked by running it through the model as one batch and reading the
// logits after every token. For speculative output to equal plain
// generation token for token, each row of such a pass must compute exactly
// what generating that token alone computes. Everything per row already
// does (norms, RoPE, the F16 attention routines are row-invariant, the
// fused and unfused projections call the same dot routines); the one
// difference is the matrix product: from a per-type batch size up
// (kernels' minBatch: 2 for Q4_0/Q8_0 on amd64), MatMul takes the packed
// kernels, whose f32 sums run in another order than the one-row dot's
// (integer block sums exact, each dot within (n+1)·2⁻²⁴ of its terms'
// magnitude, kernels/gemm_test.go; through the layers' re-quantized
// activations that grows to ~1e-2 on logits, see forward_test.go).
//
// ForwardRows with exact set multiplies with the dot routines over the
// whole batch instead (Dot4 over four activation rows, bit-identical to
// four Dot calls and so to MatVec; each weight row is still read once).
// That is bit-identical but not fast: the one-row routines spend as much
// arithmetic per activation row as generation does, and on the 2-core
// AVX-512 machine a 16-row exact pass over TinyLlama-shaped Q4_0 matrices
// cost ~15 one-token steps against ~4 for the packed pass, which leaves
// speculation nothing to gain. So the packed pass is the default and
// exact is the opt-in (engine.Spec.Exact, --spec-exact) for when the
// output must be plain generation's bit for bit.

// ForwardRows appends tokens to the sequence and writes, for every token
// i, the logits that predict the token after it into out[i*NVocab :
// (i+1)*NVocab]. With exact, each row is bit-identical to what Forward
// returns when the tokens are fed one at a time (TestForwardRowsExact, and
// over every architecture fixture, experts included,
// TestArchForwardRowsExact); without, the products take the packed
// kernels as prefill does. On error or cancellation the sequence is left
// as it was.
func (m *Model) ForwardRows(ctx context.Context, tokens []int32, out []float32, exact bool) (err error) {
	V := m.Cfg.NVocab
	if len(tokens) == 0 {
		return fmt.Errorf("model: ForwardRows with no tokens")
	}
	if len(out) != len(tokens)*V {
		return fmt.Errorf("model: ForwardRows: logits buffer of %d, want %d tokens × %d", len(out), len(tokens), V)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= V {
			return fmt.Errorf("model: token id %d outside vocabulary [0, %d)", t, V)
		}
	}
	start := m.kv.Len()
	defer m.recoverFault(debug.SetPanicOnFault(true), start, &err)
	if err := m.kv.reserve(start, len(tokens)); err != nil {
		return err
	}
	m.exactRows = exact
	defer func() { m.exactRows = false }()
	for i := 0; i < len(tokens); i += m.nb {
		end := min(i+m.nb, len(tokens))
		if err := m.batchRows(ctx, tokens[i:end], out[i*V:end*V]); err != nil {
			m.kv.Truncate(start)
			return err
		}
	}
	return nil
}

// batchRows is batch with the logits of every row.
func (m *Model) batchRows(ctx context.Context, toks []int32, out []float32) error {
	c := m.Cfg
	nb, E, V := len(toks), c.NEmbd, c.NVocab
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
	g := c.NLayer + 1
	ts, err := m.w.Acquire(ctx, g)
	if err != nil {
		return fmt.Errorf("model: acquiring output: %w", err)
	}
	defer m.w.Release(g)
	if err := m.k.Dequantize(m.outNormType, ts[0], m.normW); err != nil {
		return fmt.Errorf("model: %s: %w", outNorm, err)
	}
	for b := 0; b < nb; b++ {
		m.k.RMSNorm(m.xn[b*E:(b+1)*E], m.x[b*E:(b+1)*E], m.normW, c.RMSEps)
	}
	if err := m.project(m.xn[:nb*E], nb, E, proj{m.outType, ts[1], V, out}); err != nil {
		return err
	}
	own := m.logits
	defer func() { m.logits = own }()
	for b := 0; b < nb; b++ {
		m.logits = out[b*V : (b+1)*V]
		if err := m.logitsOut(ts); err != nil {
			return err
		}
	}
	copy(own, out[(nb-1)*V:])
	return nil
}

// matMulRows is MatMul through the one-row dot routines only (Dot4 over
// groups of four activation rows, Dot for the rest), so every output is
// bit-identical to MatVec's; each weight row is read once for the batch.
func (m *Model) matMulRows(t ggml.Type, rows, cols int, w, a []byte, nb int, y []float32) {
	dot, dot4 := m.k.Dot(t), m.k.Dot4(t)
	rs, _ := ggml.RowSize(t, uint64(cols)) // checked at load
	ws, as := int(rs), len(a)/nb
	m.pool.Run(rows, kernels.MatVecGrain(rows, ws, m.pool.Threads()), func(lo, hi int) {
		var o [4]float32
		for r := lo; r < hi; r++ {
			wr := w[r*ws : (r+1)*ws]
			b := 0
			if dot4 != nil {
				for ; b+4 <= nb; b += 4 {
					dot4(cols, wr, a[b*as:(b+4)*as], as, &o)
					y[b*rows+r], y[(b+1)*rows+r], y[(b+2)*rows+r], y[(b+3)*rows+r] = o[0], o[1], o[2], o[3]
				}
			}
			for ; b < nb; b++ {
				y[b*rows+r] = dot(cols, wr, a[b*as:(b+1)*as])
			}
		}
	})
}
