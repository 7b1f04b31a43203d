package engine

import (
	"errors"

	"github.com/memvanta/memvanta/core/sample"
)

// Embedder is implemented by Steppers that can hand back a sequence's
// last-token hidden state (Work.Embd), which Embed requests need.
type Embedder interface {
	NEmbd() int
}

// NEmbd is the hidden-state length.
func (p PerSeq) NEmbd() int { return p.M.Cfg.NEmbd }

// NEmbd is the hidden-state length.
func (b Batched) NEmbd() int { return b.M.Cfg.NEmbd }

// ErrNoEmbeddings is returned by Submit for an Embed request when the
// Stepper cannot produce hidden states.
var ErrNoEmbeddings = errors.New("engine: this stepper computes no embeddings")

// checkEmbed refuses an Embed request the stepper cannot serve and gives
// it neutral sampling settings (it samples nothing; the scheduler still
// builds a sampler for every request).
func (e *Engine) checkEmbed(r Request) (Request, error) {
	if !r.Embed {
		return r, nil
	}
	if _, ok := e.st.(Embedder); !ok {
		return r, ErrNoEmbeddings
	}
	r.Sample = sample.Params{Temp: 0, RepeatPenalty: 1}
	return r, nil
}

// embdBuf gives an Embed request's slot a fresh vector (it leaves with the
// Done event, so it is never reused).
func (e *Engine) embdBuf(s *slot) []float32 {
	s.embd = make([]float32, e.st.(Embedder).NEmbd())
	return s.embd
}
