package engine

import (
	"fmt"
	"math"
	"slices"

	"github.com/memvanta/memvanta/core/grammar"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/core/tokenizer"
)

// CauseGrammar ends a request whose grammar is complete and allows nothing
// more: the reply is whole, so no step is spent waiting for the model to
// choose the end-of-generation token (the only token it could choose).
const CauseGrammar = "grammar"

// constraint is one request's grammar state: the matcher and the
// vocabulary index its masks come from.
type constraint struct {
	g     *grammar.Grammar
	m     *grammar.Matcher
	v     *grammar.Vocab
	tok   *tokenizer.Tokenizer
	err   error // set by pick (parallel), read by emitNext (serial)
	piece []byte
}

// GrammarVocab builds the vocabulary index grammar masks are computed
// from: every token's text as llama.cpp's grammar sampler sees it
// (token_to_piece with special=true), and its end-of-generation tokens.
func GrammarVocab(tok *tokenizer.Tokenizer) (*grammar.Vocab, error) {
	return grammar.NewVocab(tok.NVocab(), tok.PieceSpecial, tok.IsEOG)
}

// grammarVocab returns the engine's index, built on the first constrained
// request (start runs on the stepping goroutine, so no lock is needed).
func (e *Engine) grammarVocab() (*grammar.Vocab, error) {
	if e.gvocab == nil {
		v, err := GrammarVocab(e.tok)
		if err != nil {
			return nil, err
		}
		e.gvocab = v
	}
	return e.gvocab, nil
}

// maxIdleMatchers bounds the matchers kept between requests, one per
// grammar, the most recently used first.
const maxIdleMatchers = 4

func (e *Engine) newConstraint(g *grammar.Grammar) (*constraint, error) {
	v, err := e.grammarVocab()
	if err != nil {
		return nil, err
	}
	// A matcher kept from an earlier request under the same grammar
	// starts over with the states, automaton and masks it computed (see
	// grammar.Matcher.Restart): the masks of a recurring schema are
	// computed once, not per request.
	if i := slices.IndexFunc(e.matchers, func(m *grammar.Matcher) bool { return m.Grammar() == g }); i >= 0 {
		m := e.matchers[i]
		e.matchers = slices.Delete(e.matchers, i, i+1)
		if m.Restart() == nil {
			return &constraint{g: g, m: m, v: v, tok: e.tok}, nil
		}
	}
	m, err := grammar.NewMatcher(g)
	if err != nil {
		return nil, fmt.Errorf("engine: grammar: %w", err)
	}
	return &constraint{g: g, m: m, v: v, tok: e.tok}, nil
}

// keepMatcher keeps a finished request's matcher for the next request
// under its grammar (one per grammar, maxIdleMatchers in all, the least
// recently used dropped). A matcher that failed is dropped.
func (e *Engine) keepMatcher(c *constraint) {
	if c == nil || c.m.Err() != nil {
		return
	}
	e.matchers = slices.DeleteFunc(e.matchers, func(m *grammar.Matcher) bool { return m.Grammar() == c.g })
	if len(e.matchers) >= maxIdleMatchers {
		e.matchers = e.matchers[1:]
	}
	e.matchers = append(e.matchers, c.m)
}

// allows reports whether token t may come next.
func (c *constraint) allows(t int32) bool {
	if c.tok.IsEOG(t) {
		return c.m.Accepting()
	}
	c.piece = c.tok.AppendPieceSpecial(c.piece[:0], t)
	return c.m.Allows(c.piece)
}

// pick samples under the grammar as llama.cpp's common sampler does: the
// unconstrained choice is kept when the grammar allows it, so a model
// that follows the format costs one token check per step, not a mask.
// Otherwise the tokens the grammar refuses get -inf and the sampler runs
// again. The result has the masked distribution: a token t the grammar
// allows is drawn first with probability p(t), or after a refused first
// draw (probability 1-Z, Z the allowed mass) with p(t)/Z, p(t)/Z in all
// (top-k/top-p/min-p truncate before the mask on the first draw, as in
// llama.cpp).
func (c *constraint) pick(smp *sample.Sampler, lg []float32) int32 {
	if t := smp.Sample(lg); t >= 0 && c.allows(t) {
		return t
	}
	mask, err := c.m.Mask(c.v)
	if err != nil {
		c.err = err
		return -1
	}
	if !applyMask(lg, mask) {
		c.err = grammar.ErrNoToken
		return -1
	}
	return smp.Sample(lg)
}

// applyMask sets the logits of tokens outside mask to -inf and reports
// whether any token is left.
func applyMask(lg []float32, mask []uint64) bool {
	ninf := float32(math.Inf(-1))
	left := false
	for w, bits := range mask {
		base := w * 64
		if base >= len(lg) {
			break
		}
		end := min(base+64, len(lg))
		if bits == math.MaxUint64 && end-base == 64 {
			left = true
			continue
		}
		if bits != 0 {
			left = true
		}
		for i := base; i < end; i++ {
			if bits&(1<<(i-base)) == 0 {
				lg[i] = ninf
			}
		}
	}
	return left
}

// accept advances the grammar by the emitted token t.
func (c *constraint) accept(t int32) error {
	if c.tok.IsEOG(t) {
		return nil
	}
	c.piece = c.tok.AppendPieceSpecial(c.piece[:0], t)
	return c.m.Accept(c.piece)
}
