package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/memvanta/memvanta/core/model"
)

// MaxChoices bounds SubmitN's n (OpenAI's n). Each choice holds a slot, so
// a request may not ask for more than the engine has either.
const MaxChoices = 16

// Forker is a Seq that can take another sequence's cached positions
// without computing them: several choices of one request (n > 1) then
// share one prefill. A Stepper whose Seqs are not Forkers still serves
// n > 1, each choice computing the prompt itself.
type Forker interface {
	// CopyFrom makes the sequence hold src's positions [0, n); the
	// positions below from are the caller's promise that they are equal
	// already (a common prefix), and are not copied.
	CopyFrom(src Seq, from, n int) error
}

// CopyFrom copies src's cache pages (see model.KVCache.CopyFrom).
func (s kvSeq) CopyFrom(src Seq, from, n int) error {
	o, ok := src.(kvSeq)
	if !ok {
		return fmt.Errorf("engine: cannot copy a %T into a KV cache", src)
	}
	return s.kv.CopyFrom(o.kv, from, n)
}

// SubmitN queues one request for n choices (OpenAI's n): n independent
// generations from the same prompt, each its own Handle, each choice
// holding a slot. The request waits until n slots are free at once; the
// first choice computes the prompt (reusing a slot's cached prefix as
// Submit does), and when its prompt is done the others copy its cache and
// its last logits and go their own ways from the first generated token.
// Choice i samples with its own seed stream, derived from Sample.Seed
// (choice 0 uses Sample.Seed itself, so n = 1 is Submit). Cancelling ctx
// ends every choice; Handle.End ends one.
func (e *Engine) SubmitN(ctx context.Context, r Request, n int) ([]*Handle, error) {
	if n < 1 || n > MaxChoices {
		return nil, fmt.Errorf("engine: %d choices asked, must be in [1, %d]", n, MaxChoices)
	}
	if n > len(e.slots) {
		return nil, fmt.Errorf("engine: %d choices asked but the engine has %d slots (each choice needs one): %w", n, len(e.slots), ErrTooManyChoices)
	}
	if err := r.Validate(e.st.NVocab()); err != nil {
		return nil, err
	}
	if r.ContextShift && !r.Embed {
		if err := e.canShift(); err != nil {
			return nil, err
		}
	}
	if len(r.Prompt) >= e.SlotCtx() {
		return nil, fmt.Errorf("prompt has %d tokens but a slot's context holds %d: %w", len(r.Prompt), e.SlotCtx(), model.ErrContextFull)
	}
	now := time.Now()
	j := &job{req: r, ctx: ctx, h: newHandle(ctx), submitted: now}
	hs := []*Handle{j.h}
	for i := 1; i < n; i++ {
		m := &job{req: r, ctx: ctx, h: newHandle(ctx), submitted: now, index: i}
		m.req.Sample.Seed = choiceSeed(r.Sample.Seed, i)
		j.members = append(j.members, m)
		hs = append(hs, m.h)
	}
	e.mu.Lock()
	switch {
	case e.closed:
		e.mu.Unlock()
		return nil, ErrClosed
	case len(e.queue) >= e.opt.Queue:
		e.mu.Unlock()
		return nil, ErrQueueFull
	}
	e.queue = append(e.queue, j)
	e.stats.Waiting = len(e.queue)
	e.mu.Unlock()
	e.signal()
	return hs, nil
}

// choiceSeed is choice i's seed: choice 0 keeps the request's, the others
// get seeds scrambled by splitmix64 of i, so their RNG streams (seeded
// through splitmix64 themselves) do not overlap the way seed+i's would.
func choiceSeed(seed uint64, i int) uint64 {
	if i == 0 {
		return seed
	}
	z := uint64(i) * 0xd1b54a32d192ed03
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return seed ^ z ^ (z >> 31)
}

// admitMembers places a group's other choices into free slots (those
// whose cache shares the longest prefix with the prompt first: less to
// copy). They wait, not stepped, until the first choice's prompt is done.
func (e *Engine) admitMembers(primary *slot, j *job, free []*slot) {
	for _, m := range j.members {
		best, bestN := -1, -1
		for i, s := range free {
			if s == primary || s.j != nil {
				continue
			}
			if n := s.reusable(j.req.Prompt); n > bestN {
				best, bestN = i, n
			}
		}
		s := free[best] // admit checked that there are enough
		e.start(s, m, bestN)
		s.fork = primary
		s.pending = nil
	}
}

// forkMembers gives the choices waiting on p (whose prompt is done: its
// cache holds the prompt and its logits the first step's) a copy of both,
// and adds them to the slots that pick a token this step.
func (e *Engine) forkMembers(p *slot) {
	for _, m := range e.slots {
		if m.fork != p || m.j == nil {
			continue
		}
		m.fork = nil
		f, ok := m.seq.(Forker)
		if !ok {
			// Not forkable: this choice computes the prompt itself.
			reuse := min(commonPrefix(m.tokens, m.j.req.Prompt), len(m.j.req.Prompt)-1)
			m.seq.Truncate(reuse)
			reuse = min(reuse, m.seq.Len()) // a ring may have emptied the cache
			m.tokens = m.tokens[:reuse]
			m.pending = m.j.req.Prompt[reuse:]
			continue
		}
		from := min(commonPrefix(m.tokens, p.tokens), m.seq.Len())
		if err := f.CopyFrom(p.seq, from, len(p.tokens)); err != nil {
			e.finish(m, causeError, fmt.Errorf("engine: sharing the prompt with choice %d: %w", m.j.index, err))
			continue
		}
		m.tokens = append(m.tokens[:0], p.tokens...)
		copy(m.logits, p.logits)
		m.usage.CachedTokens = m.usage.PromptTokens // computed once, by choice 0
		e.mu.Lock()
		e.stats.ForkedTokens += int64(len(p.tokens) - from)
		e.mu.Unlock()
		e.sampling = append(e.sampling, m)
	}
}

// endMembers ends the choices still waiting on p when p ends before its
// prompt is done (cancelled, failed, out of context): they end the same way.
func (e *Engine) endMembers(p *slot, cause string, err error) {
	for _, m := range e.slots {
		if m.fork == p && m.j != nil {
			m.fork = nil
			e.finish(m, cause, err)
		}
	}
}
