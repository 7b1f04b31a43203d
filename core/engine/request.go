package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvanta/memvanta/core/grammar"
	"github.com/memvanta/memvanta/core/sample"
)

// Errors Submit and the handles report.
var (
	ErrQueueFull = errors.New("engine: queue is full")
	ErrClosed    = errors.New("engine: shutting down")
	ErrDrained   = errors.New("engine: stopped by shutdown before finishing")
	// ErrTooManyChoices: SubmitN asked for more choices than there are slots.
	ErrTooManyChoices = errors.New("engine: more choices than slots")
)

// MaxStops bounds the stop strings of one request (OpenAI allows 4).
const MaxStops = 16

// Request is one generation.
type Request struct {
	Prompt    []int32
	Sample    sample.Params
	MaxTokens int // tokens to generate at most; <= 0 means until the context is full
	Stop      []string
	// FrequencyPenalty and PresencePenalty are OpenAI's: subtracted from a
	// token's logit per previous occurrence / once if it occurred, counting
	// the tokens generated so far. In [-2, 2].
	FrequencyPenalty, PresencePenalty float32
	// LogitBias is added to the logits: any finite value (OpenAI's API
	// allows [-100, 100], llama.cpp any), or -inf to ban a token.
	LogitBias map[int32]float32
	IgnoreEOS bool
	// Keep lists control tokens whose text the reply keeps (they are
	// otherwise dropped from text): the markers a tool-call parser reads,
	// such as Mistral's [TOOL_CALLS] (llama.cpp's preserved_tokens).
	Keep []int32
	// LogProbs asks for each generated token's log-probability
	// (Event.LogProbs) and, with TopLogProbs > 0 (at most
	// MaxTopLogProbs), the most likely tokens of its step (see
	// TokenLogProb for which distribution).
	LogProbs    bool
	TopLogProbs int
	// Embed computes the prompt's last-token embedding instead of
	// generating: the request ends after its prompt with the vector in the
	// Done event's Embedding (the Stepper must implement Embedder).
	Embed bool
	// Grammar, when set, constrains the generated text to its language
	// (GBNF, a JSON schema, a tool call): tokens it refuses are never
	// sampled, the end-of-generation token only once it accepts, and the
	// request ends (CauseGrammar) when it allows nothing more.
	Grammar *grammar.Grammar
	// ContextShift: when prompt and reply fill the slot's context, the
	// request goes on instead of ending with CauseContext: the first NKeep
	// tokens stay, half of the ones after them are discarded, and the
	// rest move down in the cache with their keys re-rotated
	// (llama.cpp's --context-shift, model.Model.ShiftKV). NKeep counts
	// prompt tokens after BOS, as llama.cpp's n_keep: 0 keeps BOS alone,
	// -1 (or more than the prompt) the whole prompt. Submit refuses it
	// for a model whose cache cannot shift.
	ContextShift bool
	NKeep        int
}

// Validate checks the request against a vocabulary of nVocab tokens.
func (r *Request) Validate(nVocab int) error {
	if len(r.Prompt) == 0 {
		return errors.New("prompt is empty")
	}
	for _, t := range r.Prompt {
		if t < 0 || int(t) >= nVocab {
			return fmt.Errorf("prompt token %d outside the vocabulary [0, %d)", t, nVocab)
		}
	}
	if err := r.Sample.Validate(); err != nil {
		return err
	}
	if r.TopLogProbs < 0 || r.TopLogProbs > MaxTopLogProbs {
		return fmt.Errorf("top_logprobs %d: must be in [0, %d]", r.TopLogProbs, MaxTopLogProbs)
	}
	if r.TopLogProbs > 0 && !r.LogProbs {
		return errors.New("top_logprobs needs logprobs")
	}
	if len(r.Stop) > MaxStops {
		return fmt.Errorf("%d stop strings, at most %d", len(r.Stop), MaxStops)
	}
	for _, s := range r.Stop {
		if s == "" {
			return errors.New("empty stop string")
		}
	}
	for _, p := range []struct {
		name string
		v    float32
	}{{"frequency_penalty", r.FrequencyPenalty}, {"presence_penalty", r.PresencePenalty}} {
		if math.IsNaN(float64(p.v)) || p.v < -2 || p.v > 2 {
			return fmt.Errorf("%s %v: must be in [-2, 2]", p.name, p.v)
		}
	}
	for t, b := range r.LogitBias {
		if t < 0 || int(t) >= nVocab {
			return fmt.Errorf("logit_bias token %d outside the vocabulary [0, %d)", t, nVocab)
		}
		if math.IsNaN(float64(b)) || math.IsInf(float64(b), 1) {
			return fmt.Errorf("logit_bias %v for token %d: must be finite or -inf", b, t)
		}
	}
	return nil
}

// Usage is a finished request's accounting.
type Usage struct {
	PromptTokens     int
	CachedTokens     int // prompt tokens reused from a slot's cache (not recomputed)
	CompletionTokens int
	Queued           time.Duration // submit to slot
	FirstToken       time.Duration // submit to first generated token
	Shifts           int           // context shifts (Request.ContextShift)
}

// Event is what a Handle yields: new text, then one final event.
type Event struct {
	Text   string
	Tokens []int32 // generated token ids this event covers (text may lag them)
	// LogProbs are the Tokens' log-probabilities, one each, when the
	// request asked (Request.LogProbs).
	LogProbs []TokenLogProb
	Done     bool
	Finish   string // "stop" or "length" when Done and Err is nil
	Cause    string // when Done and Err is nil, what ended it, finer than Finish: a Cause* constant
	Err      error  // when Done: cancellation, shutdown or a model failure
	Usage    Usage  // when Done
	// Embedding is an Embed request's output-normed last-token state
	// (not normalised), when Done and Err is nil.
	Embedding []float32
}

// Handle is a submitted request's output stream. Events accumulate without
// bound on the engine side only up to the request's own text, so a slow
// reader never stalls the scheduler.
type Handle struct {
	ctx    context.Context
	mu     sync.Mutex
	events []Event
	notify chan struct{}
	done   bool
	ended  atomic.Bool // End was called
}

// End asks the engine to stop generating for this request before its next
// step, finishing it with "stop" (the reader has all it wants: a complete
// tool call, say). Text of tokens already generated may still arrive.
func (h *Handle) End() {
	h.ended.Store(true)
}

func newHandle(ctx context.Context) *Handle {
	return &Handle{ctx: ctx, notify: make(chan struct{}, 1)}
}

func (h *Handle) push(e Event) {
	h.mu.Lock()
	if h.done {
		h.mu.Unlock()
		return
	}
	if e.Done {
		h.done = true
	}
	// Coalesce text while the reader is behind.
	if n := len(h.events); n > 0 && !e.Done && !h.events[n-1].Done {
		h.events[n-1].Text += e.Text
		h.events[n-1].Tokens = append(h.events[n-1].Tokens, e.Tokens...)
		h.events[n-1].LogProbs = append(h.events[n-1].LogProbs, e.LogProbs...)
	} else {
		h.events = append(h.events, e)
	}
	h.mu.Unlock()
	select {
	case h.notify <- struct{}{}:
	default:
	}
}

// Next returns the next event, waiting for it. After the Done event it
// keeps returning that event. ctx only bounds the wait; cancelling the
// request itself is done through the context given to Submit.
func (h *Handle) Next(ctx context.Context) (Event, error) {
	for {
		if e, ok := h.TryNext(); ok {
			return e, nil
		}
		select {
		case <-h.notify:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// TryNext returns the next event if there is one, without waiting (for a
// client that runs Engine.Step itself: a step's events are there when it
// returns).
func (h *Handle) TryNext() (Event, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.events) == 0 {
		return Event{}, false
	}
	e := h.events[0]
	if !e.Done || len(h.events) > 1 {
		h.events = h.events[1:]
	}
	return e, true
}

// Collect reads events until Done and returns the whole text and the final
// event, whose Tokens (and LogProbs) are all the generated ids'.
func (h *Handle) Collect(ctx context.Context) (string, Event, error) {
	var text []byte
	var toks []int32
	var lps []TokenLogProb
	for {
		e, err := h.Next(ctx)
		if err != nil {
			return string(text), e, err
		}
		text = append(text, e.Text...)
		toks = append(toks, e.Tokens...)
		lps = append(lps, e.LogProbs...)
		if e.Done {
			e.Tokens = toks
			e.LogProbs = lps
			return string(text), e, nil
		}
	}
}
