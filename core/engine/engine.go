package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvanta/memvanta/core/grammar"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/core/tokenizer"
)

// Options size the engine.
type Options struct {
	Slots      int // concurrent sequences (-np); default 4
	Queue      int // requests waiting for a slot before Submit refuses; default 64
	CtxPerSlot int // context positions of each slot's cache; <= 0: the model's limit
	Chunk      int // prompt tokens a prefilling slot computes per step; default 64
	// StepTokens bounds the tokens one step computes (llama-server's
	// batch, vLLM's max_num_batched_tokens): every generating slot's token
	// first, then prompt chunks, oldest request first, in what is left (at
	// least one token, so prefill always advances). Set to the model's
	// matrix-multiply batch, a step is one pass over the weights, and a
	// burst of long prompts cannot stretch the step every generating
	// stream waits on. <= 0: no bound (each prefilling slot takes Chunk).
	StepTokens int
	// Spec, when set, turns on speculative decoding for every generating
	// slot (spec.go); the Stepper must fill Work.Rows.
	Spec *Spec
	// ContextShift turns on context shift for every request
	// (llama-server's --context-shift; Request.NKeep still applies) when
	// the model's cache can shift; a model that cannot (an encoder) keeps
	// ending requests at the context.
	ContextShift bool
}

// Stats is a snapshot for metrics.
type Stats struct {
	Slots, Running, Waiting int
	// KV positions: KVUsed are held by running requests; KVCached by idle
	// slots (finished requests' tokens, kept for prefix reuse: a new
	// request reuses or overwrites them, so they are not capacity in use);
	// KVCap is all slots' capacity.
	KVUsed, KVCached, KVCap int

	KVBytes      int64 // allocated cache pages
	PromptTokens int64 // prompt tokens computed
	CachedTokens int64 // prompt tokens reused from slot caches
	// ForkedTokens are cache positions copied from a request's first
	// choice into its other choices (n > 1) instead of being computed:
	// the prompt is computed once, but each choice's copy is memory,
	// counted in KVBytes and KVUsed.
	ForkedTokens int64
	GenTokens    int64
	Steps        int64
	Finished     map[string]int64 // by finish reason ("stop", "length", "cancelled", "error")
	Spec         SpecStats        // speculative decoding (all zero but Passes without it)
	// Shifts counts context shifts (Request.ContextShift); ShiftRecomputes
	// those the cache could not make in place (sliding-window rings that
	// lost the shifted window), done by computing the kept tokens again
	// (counted in PromptTokens).
	Shifts, ShiftRecomputes int64
}

// Engine runs requests over one model. Submit from any goroutine; Run the
// loop in one.
type Engine struct {
	st    Stepper
	tok   *tokenizer.Tokenizer
	opt   Options
	slots []*slot

	mu        sync.Mutex
	queue     []*job
	closed    bool
	wake      chan struct{}
	idle      chan struct{} // closed and replaced when the engine becomes idle
	stats     Stats
	running   int
	admits    uint64
	drainStop bool // Drain's deadline passed: stop running requests
	shiftable bool // the slots' caches can shift (Options.ContextShift)

	// Step's buffers, reused from step to step (only the goroutine that
	// steps the engine touches them).
	work                   []Work
	live, active, sampling []*slot
	verifying              []int              // indexes into active/work of verification passes
	gvocab                 *grammar.Vocab     // built for the first constrained request
	matchers               []*grammar.Matcher // idle, for later requests under their grammars (keepMatcher)
}

type job struct {
	req       Request
	ctx       context.Context
	h         *Handle
	submitted time.Time
	index     int    // the choice this job is (n > 1); 0 for the first
	members   []*job // the first choice's: the other choices, admitted with it
}

type slot struct {
	admitted uint64 // admission order of the current request (oldest prefills first)
	seq      Seq
	tokens   []int32 // tokens in seq's cache, in order
	logits   []float32

	j       *job
	pending []int32 // prompt tokens not computed yet
	next    int32   // sampled token to append next step (-1: none)
	picked  int32   // pick's result, emitted by emitNext
	smp     *sample.Sampler
	dec     *tokenizer.Decoder
	held    string // decoded text not emitted yet (may start a stop string)
	gen     []int32
	counts  map[int32]int
	usage   Usage

	// fork is the slot of this request's first choice while this slot,
	// another choice, waits for its prompt (see SubmitN); nil otherwise.
	fork *slot
	// Log-probabilities (Request.LogProbs): the step's raw logits, kept
	// by pick before the bias and penalties change them, and the result.
	raw  []float32
	lp   TokenLogProb
	embd []float32   // an Embed request's vector, filled by its last prompt step
	con  *constraint // the request's grammar, if any
	spec *specSlot   // speculative decoding's state (Options.Spec)
	// shifted is where a context shift left the cache (its keep), -1 if
	// none did: the positions from there hold keys and values computed
	// with the discarded tokens in context, which a fresh prefill of
	// tokens would not give, so prefix reuse stops there.
	shifted int
}

// New makes an engine with opt.Slots sequences over st.
func New(st Stepper, tok *tokenizer.Tokenizer, opt Options) (*Engine, error) {
	if opt.Slots <= 0 {
		opt.Slots = 4
	}
	if opt.Queue <= 0 {
		opt.Queue = 64
	}
	if opt.Chunk <= 0 {
		opt.Chunk = 64
	}
	if opt.Spec != nil {
		sp := *opt.Spec
		if err := sp.Validate(); err != nil {
			return nil, err
		}
		opt.Spec = &sp
	}
	e := &Engine{st: st, tok: tok, opt: opt, wake: make(chan struct{}, 1), idle: make(chan struct{})}
	for i := 0; i < opt.Slots; i++ {
		s, err := st.NewSeq(opt.CtxPerSlot)
		if err != nil {
			return nil, fmt.Errorf("engine: slot %d: %w", i, err)
		}
		e.slots = append(e.slots, &slot{seq: s, logits: make([]float32, st.NVocab()), next: -1, shifted: -1})
	}
	if opt.Spec != nil {
		for _, s := range e.slots {
			var err error
			if s.spec, err = e.newSpecSlot(); err != nil {
				return nil, err
			}
		}
	}
	e.shiftable = e.canShift() == nil
	e.stats.Slots = opt.Slots
	e.stats.KVCap = opt.Slots * e.slots[0].seq.Cap()
	e.stats.Finished = map[string]int64{}
	return e, nil
}

// SlotCtx is each slot's context limit.
func (e *Engine) SlotCtx() int { return e.slots[0].seq.Cap() }

// ContextShifts reports whether every request shifts its context when its
// slot fills (Options.ContextShift, and a model whose cache can shift), so
// a server knows whether a request's n_keep can change anything.
func (e *Engine) ContextShifts() bool { return e.opt.ContextShift && e.shiftable }

// Submit queues a request. The request ends when ctx is cancelled (the
// slot is freed before the next step); its output is read from the Handle.
func (e *Engine) Submit(ctx context.Context, r Request) (*Handle, error) {
	r, err := e.checkEmbed(r)
	if err != nil {
		return nil, err
	}
	hs, err := e.SubmitN(ctx, r, 1)
	if err != nil {
		return nil, err
	}
	return hs[0], nil
}

func (e *Engine) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Stats returns a snapshot.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stats
	s.Running = e.running
	s.Finished = make(map[string]int64, len(e.stats.Finished))
	for k, v := range e.stats.Finished {
		s.Finished[k] = v
	}
	return s
}

// Drain stops accepting requests and waits until every queued and running
// one has finished, or until ctx ends; then the rest are stopped with
// ErrDrained.
func (e *Engine) Drain(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.signal()
	for {
		e.mu.Lock()
		busy := e.running > 0 || len(e.queue) > 0
		idle := e.idle
		e.mu.Unlock()
		if !busy {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			e.mu.Lock()
			q := e.queue
			e.queue = nil
			e.stats.Waiting = 0
			e.mu.Unlock()
			for _, j := range q {
				j.h.push(Event{Done: true, Err: ErrDrained})
			}
			// Running requests are stopped by the loop, which sees closed
			// and a done drain context through drainStop.
			e.mu.Lock()
			e.drainStop = true
			e.mu.Unlock()
			e.signal()
			return fmt.Errorf("engine: drain: %w", ctx.Err())
		}
	}
}

// Run is the scheduling loop; it returns when ctx ends (stopping every
// request) or after Drain once idle.
func (e *Engine) Run(ctx context.Context) error {
	defer e.failQueued()
	for {
		if e.Step(ctx) {
			continue
		}
		e.mu.Lock()
		closed, queued := e.closed, len(e.queue)
		e.running = 0
		close(e.idle)
		e.idle = make(chan struct{})
		e.mu.Unlock()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if closed && queued == 0 {
			return nil
		}
		if queued > 0 {
			continue
		}
		select {
		case <-e.wake:
		case <-ctx.Done():
		}
	}
}

// Step runs one scheduling step on the caller's goroutine: it admits
// queued requests, computes a prompt chunk or one token for every active
// slot and emits their output before it returns. It reports whether any
// slot was active. Run is Step in a loop. A client that owns an engine
// (generate's one slot) calls Step itself instead of Run: it reads each
// token's output before the next token is computed, so a cancellation
// seen between tokens computes no further token, and no goroutine hands
// each token over. Step must not run concurrently with Run or itself.
func (e *Engine) Step(ctx context.Context) bool {
	e.admit()
	e.active = e.active[:0]
	e.work = e.work[:0]
	e.mu.Lock()
	stop := e.drainStop
	e.mu.Unlock()
	e.live = e.live[:0]
	decoding := 0
	for _, s := range e.slots {
		if s.j == nil {
			continue
		}
		if err := s.j.ctx.Err(); err != nil || stop || ctx.Err() != nil {
			if err == nil {
				err = ErrDrained
			}
			e.finish(s, causeCancelled, err)
			continue
		}
		if s.j.h.ended.Load() {
			e.finish(s, CauseEnded, nil)
			continue
		}
		if s.fork != nil {
			continue // waits for its first choice's prompt
		}
		if len(s.pending) == 0 && len(s.tokens)+1 >= s.seq.Cap() {
			// A full cache: only a request that shifts gets here
			// (emitNext ends the others).
			cause, err := CauseContext, error(nil)
			if e.shifts(&s.j.req) {
				cause, err = e.shift(s)
			}
			if cause != "" {
				e.finish(s, cause, err)
				continue
			}
		}
		e.live = append(e.live, s)
		if len(s.pending) == 0 {
			decoding++
		}
	}
	slices.SortFunc(e.live, func(a, b *slot) int { return cmp.Compare(a.admitted, b.admitted) })
	budget := -1 // prompt tokens this step may still take; -1: no bound
	if e.opt.StepTokens > 0 {
		budget = max(e.opt.StepTokens-decoding, 1)
	}
	for _, s := range e.live {
		w := Work{Seq: s.seq}
		if len(s.pending) > 0 {
			n := min(len(s.pending), e.opt.Chunk)
			if budget >= 0 {
				n = min(n, budget)
				budget -= n
			}
			if n == 0 {
				continue // waits for a step with room
			}
			w.Tokens = s.pending[:n]
			if n == len(s.pending) {
				w.Logits = s.logits
				if s.j.req.Embed {
					w.Logits, w.Embd = nil, e.embdBuf(s)
				}
			}
		} else {
			w.Tokens = []int32{s.next}
			w.Logits = s.logits
			if s.spec != nil {
				if err := e.specWork(ctx, s, &w); err != nil {
					cause := causeError
					if ctx.Err() != nil || s.j.ctx.Err() != nil {
						cause = causeCancelled
					}
					e.finish(s, cause, err)
					continue
				}
			}
		}
		e.active = append(e.active, s)
		e.work = append(e.work, w)
	}
	if len(e.active) == 0 {
		return false
	}
	if err := e.st.Step(ctx, e.work); err != nil {
		cause := causeError
		if ctx.Err() != nil {
			cause = causeCancelled
		}
		for _, s := range e.active {
			e.finish(s, cause, err)
		}
		return true
	}
	var prompt, gen, passes int64
	for i, s := range e.active {
		w := &e.work[i]
		if w.Err != nil {
			if errors.Is(w.Err, model.ErrContextFull) {
				e.finish(s, CauseContext, nil)
			} else {
				e.finish(s, causeError, w.Err)
			}
			continue
		}
		if w.Rows != nil {
			e.verifying = append(e.verifying, i)
			continue
		}
		s.tokens = append(s.tokens, w.Tokens...)
		if len(s.pending) > 0 {
			prompt += int64(len(w.Tokens))
			s.pending = s.pending[len(w.Tokens):]
		}
		if w.Embd != nil {
			e.finish(s, CauseEmbedded, nil)
			continue
		}
		if w.Logits != nil {
			gen++
			passes++
			e.sampling = append(e.sampling, s)
			if s.j.members != nil && len(s.gen) == 0 {
				e.forkMembers(s)
			}
		}
	}
	// Picking a token reads only the slot's own logits and sampler,
	// so the slots pick in parallel (a full-vocabulary sort, as
	// temperature sampling without top-k does, costs milliseconds per
	// sequence); emitting and finishing stay serial, in slot order.
	pickAll(e.sampling)
	for _, s := range e.sampling {
		e.emitNext(s)
	}
	e.sampling = e.sampling[:0]
	// Verifications pick serially, row after row (each pick depends on
	// the one before).
	for _, i := range e.verifying {
		gen += int64(e.acceptDraft(e.active[i], &e.work[i]))
		passes++
	}
	e.verifying = e.verifying[:0]
	e.mu.Lock()
	e.stats.Steps++
	e.stats.PromptTokens += prompt
	e.stats.GenTokens += gen
	e.stats.Spec.Passes += passes
	e.updateKVLocked()
	e.mu.Unlock()
	return true
}

// failQueued ends every queued request when the loop stops.
func (e *Engine) failQueued() {
	e.mu.Lock()
	q := e.queue
	e.queue = nil
	e.closed = true
	e.stats.Waiting = 0
	e.mu.Unlock()
	for _, j := range q {
		j.h.push(Event{Done: true, Err: ErrDrained})
	}
}

// admit moves queued requests into free slots, each into the free slot
// whose cached tokens share the longest prefix with its prompt.
func (e *Engine) admit() {
	for {
		e.mu.Lock()
		if len(e.queue) == 0 {
			e.mu.Unlock()
			return
		}
		var free []*slot
		for _, s := range e.slots {
			if s.j == nil {
				free = append(free, s)
			}
		}
		// A request for n choices waits for n free slots (first come,
		// first served: a later request does not overtake it).
		if len(free) == 0 || len(free) < 1+len(e.queue[0].members) {
			e.mu.Unlock()
			return
		}
		j := e.queue[0]
		e.queue = e.queue[1:]
		e.stats.Waiting = len(e.queue)
		e.running += 1 + len(j.members)
		e.mu.Unlock()
		if err := j.ctx.Err(); err != nil {
			for _, m := range append([]*job{j}, j.members...) {
				m.h.push(Event{Done: true, Err: err})
			}
			e.mu.Lock()
			e.running -= 1 + len(j.members)
			e.stats.Finished["cancelled"] += int64(1 + len(j.members))
			e.mu.Unlock()
			continue
		}
		best, bestN := free[0], -1
		for _, s := range free {
			if n := s.reusable(j.req.Prompt); n > bestN {
				best, bestN = s, n
			}
		}
		e.start(best, j, bestN)
		if len(j.members) > 0 {
			e.admitMembers(best, j, free)
		}
	}
}

// reusable is how many of prompt's first tokens s's cache holds as a
// prefill of them would compute them: the common prefix, up to a context
// shift's keep.
func (s *slot) reusable(prompt []int32) int {
	n := commonPrefix(s.tokens, prompt)
	if s.shifted >= 0 {
		n = min(n, s.shifted)
	}
	return n
}

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func (e *Engine) start(s *slot, j *job, reuse int) {
	// At least the last prompt token is computed: its logits start the
	// generation.
	reuse = min(reuse, len(j.req.Prompt)-1)
	s.seq.Truncate(reuse)
	// A cache with sliding-window rings empties itself when it cannot go
	// back that far (model.KVCache.Truncate).
	reuse = min(reuse, s.seq.Len())
	s.tokens = s.tokens[:reuse]
	s.shifted = -1 // reuse stopped at the shift
	e.admits++
	s.j, s.admitted = j, e.admits
	s.pending = j.req.Prompt[reuse:]
	s.next = -1
	s.fork = nil
	smp, err := sample.New(j.req.Sample)
	if err != nil { // validated in Submit
		e.finish(s, causeError, err)
		return
	}
	for _, t := range j.req.Prompt {
		smp.Accept(t)
	}
	s.smp = smp
	s.con = nil
	if j.req.Grammar != nil {
		if s.con, err = e.newConstraint(j.req.Grammar); err != nil {
			e.finish(s, causeError, err)
			return
		}
	}
	s.dec = e.tok.NewDecoder()
	s.held = ""
	s.gen = s.gen[:0]
	if s.counts == nil {
		s.counts = map[int32]int{}
	}
	clear(s.counts)
	s.usage = Usage{PromptTokens: len(j.req.Prompt), CachedTokens: reuse, Queued: time.Since(j.submitted)}
	e.mu.Lock()
	e.stats.CachedTokens += int64(reuse)
	e.updateKVLocked()
	e.mu.Unlock()
}

// pickAll runs pick for every slot, over up to GOMAXPROCS goroutines.
func pickAll(slots []*slot) {
	workers := min(len(slots), runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for _, s := range slots {
			s.pick()
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(slots)); i = next.Add(1) - 1 {
				slots[i].pick()
			}
		}()
	}
	wg.Wait()
}

// pick samples s's next token from s.logits into s.picked: logit_bias and
// OpenAI's penalties applied in place, then the request's sampler. It
// touches only s's own state.
func (s *slot) pick() {
	r := &s.j.req
	lg := s.logits
	if r.LogProbs {
		s.raw = append(s.raw[:0], lg...)
	}
	for t, b := range r.LogitBias {
		lg[t] += b
	}
	if r.FrequencyPenalty != 0 || r.PresencePenalty != 0 {
		for t, c := range s.counts {
			lg[t] -= float32(c)*r.FrequencyPenalty + r.PresencePenalty
		}
	}
	if s.con != nil {
		s.picked = s.con.pick(s.smp, lg)
	} else {
		s.picked = s.smp.Sample(lg)
	}
	if r.LogProbs && s.picked >= 0 {
		logZ, top := logSoftmaxTop(s.raw, r.TopLogProbs, nil)
		s.lp = TokenLogProb{ID: s.picked, LogProb: logProbOf(s.raw[s.picked], logZ), Top: top}
	}
}

// emitNext takes the token pick chose, emits its text and ends the request
// when it is done.
func (e *Engine) emitNext(s *slot) {
	r := &s.j.req
	tok := s.picked
	if s.con != nil {
		err := s.con.err
		if err == nil {
			err = s.con.accept(tok)
		}
		if err != nil {
			e.finish(s, causeError, fmt.Errorf("engine: grammar: %w", err))
			return
		}
	}
	s.smp.Accept(tok)
	if len(s.gen) == 0 {
		s.usage.FirstToken = time.Since(s.j.submitted)
	}
	s.gen = append(s.gen, tok)
	s.counts[tok]++
	if !r.IgnoreEOS && e.tok.IsEOG(tok) {
		e.finish(s, CauseEOG, nil)
		return
	}
	if slices.Contains(r.Keep, tok) {
		s.held += s.dec.Flush() + string(e.tok.PieceSpecial(tok))
	} else {
		s.held += s.dec.Add(tok)
	}
	ev := Event{Tokens: []int32{tok}}
	if r.LogProbs {
		ev.LogProbs = []TokenLogProb{s.lp}
	}
	s.j.h.push(ev)
	if e.emitHeld(s) {
		e.finish(s, CauseStopString, nil)
		return
	}
	if s.con != nil && s.con.m.Exhausted() {
		e.finish(s, CauseGrammar, nil)
		return
	}
	if r.MaxTokens > 0 && len(s.gen) >= r.MaxTokens {
		e.finish(s, CauseMaxTokens, nil)
		return
	}
	if len(s.tokens)+1 >= s.seq.Cap() && !e.shifts(r) {
		e.finish(s, CauseContext, nil)
		return
	}
	s.next = tok
}

// emitHeld sends the held text that cannot be part of a stop string and
// reports whether a stop string was found (the text before it is sent).
func (e *Engine) emitHeld(s *slot) bool {
	out, held, hit := holdBack(s.held, s.j.req.Stop)
	if out != "" {
		s.j.h.push(Event{Text: out})
	}
	s.held = held
	return hit
}

// holdBack splits text into what may be emitted now and what is held
// back because it could be the start of a stop string, so a stop string
// is never emitted, even when it arrives split across tokens. hit reports
// that one was found: out is the text before the first, and nothing after
// it may be emitted.
func holdBack(text string, stops []string) (out, held string, hit bool) {
	if len(stops) == 0 {
		return text, "", false
	}
	first := -1
	for _, st := range stops {
		if i := strings.Index(text, st); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first >= 0 {
		return text[:first], "", true
	}
	keep := 0
	for _, st := range stops {
		for k := min(len(st)-1, len(text)); k > keep; k-- {
			if strings.HasSuffix(text, st[:k]) {
				keep = k
				break
			}
		}
	}
	return text[:len(text)-keep], text[len(text)-keep:], false
}

// flush emits the decoder's and the held text at the end of a request.
func (e *Engine) flush(s *slot) {
	if s.dec == nil {
		return
	}
	s.held += s.dec.Flush()
	if e.emitHeld(s) {
		return
	}
	if s.held != "" {
		s.j.h.push(Event{Text: s.held})
		s.held = ""
	}
}

// Causes of a request's end, reported in Event.Cause. The ones without an
// exported name end with an error (Event.Err) and finish reasons
// "cancelled" and "error".
const (
	CauseEOG        = "eog"         // an end-of-generation token (not emitted)
	CauseStopString = "stop-string" // a stop string (not emitted)
	CauseEnded      = "ended"       // Handle.End
	CauseMaxTokens  = "max-tokens"  // Request.MaxTokens generated
	CauseContext    = "context"     // the slot's context is full
	CauseEmbedded   = "embedded"    // an Embed request's vector is ready
	causeCancelled  = "cancelled"
	causeError      = "error"
)

// finishReason maps a cause to the coarser reason of Event.Finish and
// Stats.Finished (OpenAI's finish_reason values).
func finishReason(cause string) string {
	switch cause {
	case CauseEOG, CauseStopString, CauseEnded, CauseEmbedded, CauseGrammar:
		return "stop"
	case CauseMaxTokens, CauseContext:
		return "length"
	}
	return cause
}

// finish ends s's request and frees the slot; its cache keeps the tokens
// for a later request with the same prefix. The text still held (by the
// decoder, or as a possible start of a stop string) is emitted first,
// unless a stop string ended the request: the output so far is complete
// whether the request ran out, was cancelled or failed.
func (e *Engine) finish(s *slot, cause string, err error) {
	if s.j == nil {
		return
	}
	if s.j.members != nil && s.j.index == 0 {
		e.endMembers(s, cause, err)
	}
	if cause != CauseStopString {
		e.flush(s)
	}
	reason := finishReason(cause)
	s.usage.CompletionTokens = len(s.gen)
	ev := Event{Done: true, Usage: s.usage, Err: err}
	if err == nil {
		ev.Finish, ev.Cause = reason, cause
		if cause == CauseEmbedded {
			ev.Embedding = s.embd
		}
	}
	s.embd = nil
	s.j.h.push(ev)
	s.j = nil
	s.fork = nil
	s.pending = nil
	s.smp = nil
	e.keepMatcher(s.con)
	s.con = nil
	s.dec = nil
	// Positions not matched by s.tokens (a failed step) are dropped.
	if s.seq.Len() != len(s.tokens) {
		n := min(s.seq.Len(), len(s.tokens))
		s.seq.Truncate(n)
		n = min(n, s.seq.Len()) // a ring may have emptied the cache
		s.tokens = s.tokens[:n]
	}
	e.mu.Lock()
	e.running--
	e.stats.Finished[reason]++
	e.updateKVLocked()
	e.mu.Unlock()
}

func (e *Engine) updateKVLocked() {
	used, cached, bytes := 0, 0, int64(0)
	running := 0
	for _, s := range e.slots {
		bytes += s.seq.Bytes()
		if s.j != nil {
			used += s.seq.Len()
			running++
		} else {
			cached += s.seq.Len()
		}
	}
	e.stats.KVUsed, e.stats.KVCached, e.stats.KVBytes, e.stats.Running = used, cached, bytes, running
}
