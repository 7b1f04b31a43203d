package model

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Multi-sequence forward passes: several independent sequences, each with
// its own KV cache, go through the layers together. Every matrix product
// runs once over all their rows (so each weight row is read once per step
// for all of them, as in a prefill batch); only RoPE, the cache stores and
// attention run per sequence, against that sequence's cache. A server's
// decoding step (one token for each of several sequences, perhaps with a
// chunk of another's prompt) is one such pass.

// SeqBatch is one sequence's share of a ForwardBatch call.
type SeqBatch struct {
	KV     *KVCache  // the sequence's cache (from NewKV); its tokens are appended
	Tokens []int32   // at least one
	Logits []float32 // len = vocabulary: receives the logits after the last token; nil = not wanted
	// Embd (len = n_embd) receives the output-normed hidden state after
	// the last token (last-token pooling); nil = not wanted.
	Embd []float32
}

// segment is one sequence's consecutive rows in the current batch.
type segment struct {
	kv          *KVCache
	r0, n, pos0 int // rows r0..r0+n-1 are positions pos0..pos0+n-1
}

// ForwardBatch appends each sequence's tokens to its cache and fills the
// wanted logits. Rows are packed into batches of up to Options.Batch (a
// sequence's tokens may span batches, in order). On error every sequence
// is left as it was before the call. The model's own cache (Forward's) is
// not touched.
func (m *Model) ForwardBatch(ctx context.Context, seqs []SeqBatch) (err error) {
	if m.Cfg.Encoder {
		return errEncoder(m.Cfg.Arch)
	}
	starts := make([]int, len(seqs))
	for i, s := range seqs {
		if len(s.Tokens) == 0 {
			return fmt.Errorf("model: ForwardBatch: sequence %d has no tokens", i)
		}
		if !m.sameGeometry(s.KV) {
			return fmt.Errorf("model: ForwardBatch: sequence %d: cache geometry does not match the model", i)
		}
		if s.Logits != nil && len(s.Logits) != m.Cfg.NVocab {
			return fmt.Errorf("model: ForwardBatch: sequence %d: logits buffer of %d, want %d", i, len(s.Logits), m.Cfg.NVocab)
		}
		if s.Embd != nil && len(s.Embd) != m.Cfg.NEmbd {
			return fmt.Errorf("model: ForwardBatch: sequence %d: embedding buffer of %d, want %d", i, len(s.Embd), m.Cfg.NEmbd)
		}
		for _, t := range s.Tokens {
			if t < 0 || int(t) >= m.Cfg.NVocab {
				return fmt.Errorf("model: token id %d outside vocabulary [0, %d)", t, m.Cfg.NVocab)
			}
		}
		for j := 0; j < i; j++ {
			if seqs[j].KV == s.KV {
				return fmt.Errorf("model: ForwardBatch: sequences %d and %d share a cache", j, i)
			}
		}
		starts[i] = s.KV.Len()
	}
	for i, s := range seqs {
		if err := s.KV.reserve(starts[i], len(s.Tokens)); err != nil {
			return fmt.Errorf("model: sequence %d: %w", i, err)
		}
	}
	own := m.kv
	undo := func() {
		m.kv, m.segs = own, m.segs[:0]
		for i, s := range seqs {
			s.KV.Truncate(starts[i])
		}
	}
	defer m.recoverFaultFunc(debug.SetPanicOnFault(true), undo, &err)

	done := make([]int, len(seqs))
	toks := make([]int32, 0, m.nb)
	for {
		toks, m.segs = toks[:0], m.segs[:0]
		var want []int // sequences whose last token is in this batch and want logits
		for i, s := range seqs {
			take := min(len(s.Tokens)-done[i], m.nb-len(toks))
			if take <= 0 {
				continue
			}
			m.segs = append(m.segs, segment{kv: s.KV, r0: len(toks), n: take, pos0: starts[i] + done[i]})
			toks = append(toks, s.Tokens[done[i]:done[i]+take]...)
			done[i] += take
			if done[i] == len(s.Tokens) && (s.Logits != nil || s.Embd != nil) {
				want = append(want, i)
			}
		}
		if len(toks) == 0 {
			break
		}
		if err := m.segmentBatch(ctx, toks, seqs, want); err != nil {
			undo()
			return err
		}
	}
	m.kv, m.segs = own, m.segs[:0]
	return nil
}

// sameGeometry reports whether kv can serve this model: the same rows as
// the model's own cache, and rings (if any) on the sliding layers with room
// for a whole batch (a batch's first token still sees its window while the
// last is stored).
func (m *Model) sameGeometry(kv *KVCache) bool {
	if kv == nil || !kv.sameRows(m.kv) {
		return false
	}
	if kv.ringCap == 0 {
		return true
	}
	if kv.window != m.Cfg.SlidingWindow || kv.ringCap-kv.reach+1 < m.nb {
		return false
	}
	for l, r := range kv.ring {
		if r && !m.Cfg.Sliding(l) {
			return false
		}
	}
	return true
}

// segmentBatch runs the rows of m.segs through every layer and computes
// the logits of the sequences in want (each at its last row).
func (m *Model) segmentBatch(ctx context.Context, toks []int32, seqs []SeqBatch, want []int) error {
	c := m.Cfg
	nb, E := len(toks), c.NEmbd
	if err := m.embed(ctx, toks); err != nil {
		return err
	}
	for l := 0; l < c.NLayer; l++ {
		g := 1 + l
		ts, err := m.w.Acquire(ctx, g)
		if err != nil {
			return fmt.Errorf("model: acquiring %s: %w", m.plan.Groups[g].Name, err)
		}
		err = m.layer(ctx, l, ts, nb, 0)
		m.w.Release(g)
		if err != nil {
			return fmt.Errorf("model: %s: %w", m.plan.Groups[g].Name, err)
		}
	}
	for _, s := range m.segs {
		s.kv.n = s.pos0 + s.n
	}
	if len(want) == 0 {
		return nil
	}
	g := c.NLayer + 1
	ts, err := m.w.Acquire(ctx, g)
	if err != nil {
		return fmt.Errorf("model: acquiring output: %w", err)
	}
	defer m.w.Release(g)
	if err := m.k.Dequantize(m.outNormType, ts[0], m.normW); err != nil {
		return fmt.Errorf("model: %s: %w", outNorm, err)
	}
	// The last row of each wanting sequence, normed into consecutive rows
	// of xn, goes through the output projection together.
	k := 0
	for _, s := range m.segs {
		for _, i := range want {
			if seqs[i].KV == s.kv {
				last := s.r0 + s.n - 1
				m.k.RMSNorm(m.xn[k*E:(k+1)*E], m.x[last*E:(last+1)*E], m.normW, c.RMSEps)
				if seqs[i].Embd != nil {
					copy(seqs[i].Embd, m.xn[k*E:(k+1)*E])
				}
				k++
			}
		}
	}
	if need := len(want) * c.NVocab; len(m.blogits) < need {
		m.blogits = make([]float32, m.nb*c.NVocab)
	}
	if err := m.project(m.xn[:k*E], k, E, proj{m.outType, ts[1], c.NVocab, m.blogits}); err != nil {
		return err
	}
	own := m.logits
	defer func() { m.logits = own }()
	k = 0
	for _, s := range m.segs {
		for _, i := range want {
			if seqs[i].KV == s.kv {
				m.logits = m.blogits[k*c.NVocab : (k+1)*c.NVocab]
				if err := m.logitsOut(ts); err != nil {
					return err
				}
				if seqs[i].Logits != nil {
					copy(seqs[i].Logits, m.logits)
				}
				k++
			}
		}
	}
	return nil
}

// ropeAttend rotates and stores the batch's keys and values and runs
// attention: over m.kv for a single-sequence batch (pos0 is its first
// position), or per segment, each against its own cache.
func (m *Model) ropeAttend(l, nb, pos0 int) error {
	if len(m.segs) == 0 {
		return m.ropeAttendRows(l, pos0, 0, nb)
	}
	own := m.kv
	defer func() { m.kv = own }()
	for _, s := range m.segs {
		m.kv = s.kv
		if err := m.ropeAttendRows(l, s.pos0, s.r0, s.n); err != nil {
			return err
		}
	}
	return nil
}

// ropeAttendRows handles rows r0..r0+n-1 at positions pos0.. of m.kv.
// RoPE and the cache store of the first row run here, so that a store
// error is returned; the other rows have the same geometry and cannot
// fail, and in prefill they are spread over the pool.
func (m *Model) ropeAttendRows(l, pos0, r0, n int) error {
	p0 := pos0 - r0 // ropeStore's row b is at position p0+b
	if l == 0 {
		m.kv.writing(pos0, n)
	}
	if err := m.ropeStore(l, p0, r0); err != nil {
		return err
	}
	if n > 1 {
		m.pool.Run(n-1, 1, func(lo, hi int) {
			for b := lo + 1; b <= hi; b++ {
				_ = m.ropeStore(l, p0, r0+b)
			}
		})
	}
	m.attendBatch(l, pos0, r0, n)
	return nil
}
