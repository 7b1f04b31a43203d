package engine

import (
	"errors"
	"fmt"

	"github.com/memvanta/memvanta/core/model"
)

// Context shift (Request.ContextShift), as llama.cpp's: when a generating
// slot's cache is full, the first keep tokens stay, half of the n_left
// tokens after them are discarded, and the rest move down (n_discard =
// n_left/2; llama-server's update_slots, llama-cli's main loop).

// ErrNoShift: a request asked for context shift on a model whose cache
// cannot shift (model.ErrShiftUnsupported says why).
var ErrNoShift = errors.New("engine: context shift not available")

// Shifter is a Seq whose cache can drop positions [keep, keep+n) and move
// the later ones down by n.
type Shifter interface {
	CanShift() error
	Shift(keep, n int) error
}

// CanShift reports why the model's cache cannot shift (nil: it can).
func (s kvSeq) CanShift() error {
	if s.m == nil {
		return model.ErrShiftUnsupported
	}
	return s.m.CanShift()
}

// Shift is model.Model.ShiftKV on the sequence's cache.
func (s kvSeq) Shift(keep, n int) error {
	if s.m == nil {
		return model.ErrShiftUnsupported
	}
	return s.m.ShiftKV(s.kv, keep, n)
}

// shifts reports whether r's context shifts when full.
func (e *Engine) shifts(r *Request) bool {
	return r.ContextShift || e.opt.ContextShift && e.shiftable && !r.Embed
}

// canShift checks that the slots' sequences can shift.
func (e *Engine) canShift() error {
	sh, ok := e.slots[0].seq.(Shifter)
	if !ok {
		return fmt.Errorf("%w: the stepper's sequences cannot shift", ErrNoShift)
	}
	if err := sh.CanShift(); err != nil {
		return fmt.Errorf("%w: %w", ErrNoShift, err)
	}
	return nil
}

// shiftKeep is how many leading tokens of s's request a shift keeps:
// Request.NKeep after BOS (llama.cpp adds BOS to n_keep), the whole prompt
// for -1 or more than it, and never so many that fewer than 4 positions
// are left to shift (llama-server's n_ctx - 4).
func (e *Engine) shiftKeep(s *slot) int {
	r := &s.j.req
	keep := r.NKeep
	if keep < 0 || keep > len(r.Prompt) {
		keep = len(r.Prompt)
	} else if e.tok != nil && e.tok.AddBOS() && r.Prompt[0] == e.tok.BOS() {
		keep++
	}
	return max(0, min(keep, s.seq.Cap()-4, len(s.tokens)))
}

// shift makes room in s's full cache for the next token. It returns a
// cause to finish the request with when it cannot: no request shifts
// whose keep leaves nothing to discard (CauseContext), and a cache error
// fails it. When the sliding-window rings cannot shift in place
// (model.ErrShiftWindow), the kept tokens are computed again instead: the
// slot prefills them, and the next token after them, from an empty cache.
func (e *Engine) shift(s *slot) (string, error) {
	keep := e.shiftKeep(s)
	n := (len(s.tokens) - keep) / 2
	sh, ok := s.seq.(Shifter)
	if n < 1 || !ok {
		return CauseContext, nil
	}
	err := sh.Shift(keep, n)
	recompute := errors.Is(err, model.ErrShiftWindow)
	if err != nil && !recompute {
		return causeError, fmt.Errorf("engine: context shift: %w", err)
	}
	s.tokens = append(s.tokens[:keep], s.tokens[keep+n:]...)
	if recompute {
		s.seq.Truncate(0)
		s.pending = append(append([]int32(nil), s.tokens...), s.next)
		s.tokens = s.tokens[:0]
		s.next = -1
		s.shifted = -1
	} else {
		s.shifted = keep
	}
	s.usage.Shifts++
	e.mu.Lock()
	e.stats.Shifts++
	if recompute {
		e.stats.ShiftRecomputes++
	}
	e.mu.Unlock()
	return "", nil
}
