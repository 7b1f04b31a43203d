package engine

import (
	"context"
	"fmt"

	"github.com/memvanta/memvanta/core/model"
)

// Seq is one sequence's state in a Stepper (its KV cache).
type Seq interface {
	// Len is the number of positions the sequence holds.
	Len() int
	// Truncate forgets positions >= n; a cache that cannot go back that
	// far (sliding-window rings) empties itself, so callers read Len after.
	Truncate(n int)
	// Cap is the sequence's context limit.
	Cap() int
	// Bytes is the memory its cache holds.
	Bytes() int64
}

// Work is one sequence's share of a step: tokens to append, and whether the
// logits after the last of them are wanted (copied into Logits).
type Work struct {
	Seq    Seq
	Tokens []int32
	Logits []float32 // nil: not wanted; else len = vocabulary
	Err    error     // set by Step for a sequence that failed alone
	// Embd (len = Embedder.NEmbd) receives the last token's output-normed
	// hidden state; nil = not wanted.
	Embd []float32
	// Rows (len = len(Tokens) × vocabulary), when set instead of Logits,
	// receives the logits after every token (speculative verification,
	// model.ForwardRows); with Exact each row bit-identical to a one-token
	// step's.
	Rows  []float32
	Exact bool
}

// Stepper runs the forward work of one scheduler step.
type Stepper interface {
	NewSeq(maxCtx int) (Seq, error)
	// Step appends each work's tokens to its sequence and fills the wanted
	// logits. A failure confined to one sequence (its context is full) is
	// set in that Work's Err; a returned error fails the whole step.
	Step(ctx context.Context, w []Work) error
	NVocab() int
}

// PerSeq is the Stepper that runs each sequence through Model.Forward in
// turn, installing its cache first.
type PerSeq struct{ M *model.Model }

// kvSeq is a sequence's cache and the model that fills it (which knows
// how to shift it).
type kvSeq struct {
	kv *model.KVCache
	m  *model.Model
}

func (s kvSeq) Len() int       { return s.kv.Len() }
func (s kvSeq) Truncate(n int) { s.kv.Truncate(n) }
func (s kvSeq) Cap() int       { return s.kv.Cap() }
func (s kvSeq) Bytes() int64   { return s.kv.Bytes() }

// NewSeq makes a sequence with its own cache.
func (p PerSeq) NewSeq(maxCtx int) (Seq, error) {
	kv, err := p.M.NewKV(maxCtx)
	if err != nil {
		return nil, err
	}
	return kvSeq{kv, p.M}, nil
}

// NVocab is the logits length.
func (p PerSeq) NVocab() int { return p.M.Cfg.NVocab }

// Step runs each sequence's tokens through the model.
func (p PerSeq) Step(ctx context.Context, ws []Work) error {
	for i := range ws {
		w := &ws[i]
		old, err := p.M.SwapKV(w.Seq.(kvSeq).kv)
		if err != nil {
			return err
		}
		var logits []float32
		if w.Rows != nil {
			err = p.M.ForwardRows(ctx, w.Tokens, w.Rows, w.Exact)
		} else {
			logits, err = p.M.Forward(ctx, w.Tokens)
		}
		if _, err2 := p.M.SwapKV(old); err2 != nil {
			return err2
		}
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			w.Err = err
			continue
		}
		if w.Logits != nil {
			copy(w.Logits, logits)
		}
		if w.Embd != nil {
			copy(w.Embd, p.M.Hidden())
		}
	}
	return nil
}

// Batched is the Stepper that runs all sequences of a step through one
// Model.ForwardBatch: the matrix products run once over every sequence's
// rows (each weight row is read once per step, not once per sequence);
// RoPE, cache stores and attention run per sequence.
type Batched struct{ M *model.Model }

// NewSeq makes a sequence with its own cache.
func (b Batched) NewSeq(maxCtx int) (Seq, error) { return PerSeq(b).NewSeq(maxCtx) }

// NVocab is the logits length.
func (b Batched) NVocab() int { return b.M.Cfg.NVocab }

// Step runs every work item in one batched pass; a sequence whose tokens
// would not fit its context fails alone with model.ErrContextFull.
// Verifications (Work.Rows) run each in a pass of its own after it
// (model.ForwardRows, which gives every row's logits).
func (b Batched) Step(ctx context.Context, ws []Work) error {
	sb := make([]model.SeqBatch, 0, len(ws))
	var rows []int
	for i := range ws {
		kv := ws[i].Seq.(kvSeq).kv
		if kv.Len()+len(ws[i].Tokens) > kv.Cap() {
			ws[i].Err = fmt.Errorf("engine: %w: %d positions needed, the slot holds %d", model.ErrContextFull, kv.Len()+len(ws[i].Tokens), kv.Cap())
			continue
		}
		if ws[i].Rows != nil {
			rows = append(rows, i)
			continue
		}
		sb = append(sb, model.SeqBatch{KV: kv, Tokens: ws[i].Tokens, Logits: ws[i].Logits, Embd: ws[i].Embd})
	}
	if len(sb) > 0 {
		if err := b.M.ForwardBatch(ctx, sb); err != nil {
			return err
		}
	}
	if len(rows) == 0 {
		return nil
	}
	vs := make([]Work, len(rows))
	for j, i := range rows {
		vs[j] = ws[i]
	}
	if err := PerSeq(b).Step(ctx, vs); err != nil {
		return err
	}
	for j, i := range rows {
		ws[i].Err = vs[j].Err
	}
	return nil
}
