package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/internal/testmodel"
)

func testModel(t testing.TB, ctx int) (*model.Model, *tokenizer.Tokenizer) {
	return testmodel.New(t, ctx)
}

// steppers are both forward strategies; scheduler tests run on each.
var steppers = []struct {
	name string
	make func(*model.Model) Stepper
}{
	{"perseq", func(m *model.Model) Stepper { return PerSeq{M: m} }},
	{"batched", func(m *model.Model) Stepper { return Batched{M: m} }},
}

func startEngine(t testing.TB, m *model.Model, tok *tokenizer.Tokenizer, opt Options) *Engine {
	return startWith(t, PerSeq{M: m}, tok, opt)
}

func startWith(t testing.TB, st Stepper, tok *tokenizer.Tokenizer, opt Options) *Engine {
	t.Helper()
	e, err := New(st, tok, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return e
}

func greedy(n int, prompt []int32) Request {
	return Request{Prompt: prompt, Sample: sample.Params{Temp: 0, RepeatPenalty: 1}, MaxTokens: n}
}

func run(t testing.TB, e *Engine, r Request) (string, Event) {
	t.Helper()
	h, err := e.Submit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	text, ev, err := h.Collect(context.Background())
	if err != nil || ev.Err != nil {
		t.Fatalf("collect: %v / %v", err, ev.Err)
	}
	return text, ev
}

// reference generates with the plain single-sequence loop (no engine).
func reference(t *testing.T, m *model.Model, tok *tokenizer.Tokenizer, prompt []int32, n int) string {
	t.Helper()
	kv, err := m.NewKV(0)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := m.SwapKV(kv)
	defer m.SwapKV(old)
	dec := tok.NewDecoder()
	var out strings.Builder
	logits, err := m.Forward(context.Background(), prompt)
	for i := 0; i < n && err == nil; i++ {
		best := int32(0)
		for j, v := range logits {
			if v > logits[best] {
				best = int32(j)
			}
		}
		out.WriteString(dec.Add(best))
		logits, err = m.Forward(context.Background(), []int32{best})
	}
	if err != nil {
		t.Fatal(err)
	}
	out.WriteString(dec.Flush())
	return out.String()
}

func TestConcurrentGreedyMatchesAlone(t *testing.T) {
	for _, sk := range steppers {
		t.Run(sk.name, func(t *testing.T) {
			m, tok := testModel(t, 0)
			prompt := tok.Encode("hello world of tests", true, false)
			want := reference(t, m, tok, prompt, 24)
			e := startWith(t, sk.make(m), tok, Options{Slots: 4, Chunk: 3})
			alone, ev := run(t, e, greedy(24, prompt))
			if alone != want || ev.Finish != "length" || ev.Usage.CompletionTokens != 24 {
				t.Fatalf("engine alone %q (%+v), reference %q", alone, ev, want)
			}
			var wg sync.WaitGroup
			got := make([]string, 6)
			for i := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Different prompt lengths interleave prefill and decoding.
					p := prompt
					if i%2 == 1 {
						p = tok.Encode(strings.Repeat("a b c ", i)+"hello world of tests", true, false)
						got[i] = "skip"
						_, _ = run(t, e, greedy(24, p))
						return
					}
					got[i], _ = run(t, e, greedy(24, p))
				}()
			}
			wg.Wait()
			for i, g := range got {
				if g != "skip" && g != want {
					t.Errorf("concurrent request %d: %q, alone %q", i, g, want)
				}
			}
		})
	}
}

func TestPrefixCacheReuse(t *testing.T) {
	for _, sk := range steppers {
		t.Run(sk.name, func(t *testing.T) {
			m, tok := testModel(t, 0)
			sys := tok.Encode("a long system prompt that every request repeats word for word", true, false)
			p1 := append(append([]int32{}, sys...), tok.Encode(" first question", false, false)...)
			p2 := append(append([]int32{}, sys...), tok.Encode(" second one", false, false)...)
			e := startWith(t, sk.make(m), tok, Options{Slots: 1})
			_, ev1 := run(t, e, greedy(8, p1))
			text2, ev2 := run(t, e, greedy(8, p2))
			if ev1.Usage.CachedTokens != 0 {
				t.Errorf("first request reused %d tokens", ev1.Usage.CachedTokens)
			}
			if ev2.Usage.CachedTokens < len(sys) {
				t.Errorf("second request reused %d tokens, want >= %d (the shared prefix)", ev2.Usage.CachedTokens, len(sys))
			}
			if want := reference(t, m, tok, p2, 8); text2 != want {
				t.Errorf("with reused prefix %q, fresh %q", text2, want)
			}
			st := e.Stats()
			if st.CachedTokens < int64(len(sys)) || st.PromptTokens != int64(len(p1)+len(p2)-ev2.Usage.CachedTokens) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestStopStrings(t *testing.T) {
	for _, sk := range steppers {
		t.Run(sk.name, func(t *testing.T) {
			m, tok := testModel(t, 0)
			prompt := tok.Encode("stop here", true, false)
			e := startWith(t, sk.make(m), tok, Options{Slots: 2})
			full, _ := run(t, e, greedy(30, prompt))
			if len(full) < 20 {
				t.Fatalf("output too short to test stops: %q", full)
			}
			stop := full[10:14]
			want := full[:strings.Index(full, stop)]
			r := greedy(30, prompt)
			r.Stop = []string{"\x00never", stop}
			got, ev := run(t, e, r)
			if got != want || ev.Finish != "stop" {
				t.Errorf("stop %q: got %q (%s), want %q", stop, got, ev.Finish, want)
			}
		})
	}
}

func TestCancelFreesSlot(t *testing.T) {
	m, tok := testModel(t, 0)
	e := startEngine(t, m, tok, Options{Slots: 1, Queue: 1})
	prompt := tok.Encode("cancel me", true, false)
	ctx, cancel := context.WithCancel(context.Background())
	h, err := e.Submit(ctx, greedy(0, prompt)) // unbounded: runs until cancelled
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := h.Next(context.Background()); err != nil || len(ev.Tokens) == 0 {
		t.Fatalf("first event %+v %v", ev, err)
	}
	// The queue holds one more; a third is refused.
	h2, err := e.Submit(context.Background(), greedy(2, prompt))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Submit(context.Background(), greedy(2, prompt)); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("third submit: %v, want ErrQueueFull", err)
	}
	cancel()
	_, ev, _ := h.Collect(context.Background())
	if !errors.Is(ev.Err, context.Canceled) {
		t.Errorf("cancelled request ended with %+v", ev)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	if _, ev, err := h2.Collect(wctx); err != nil || ev.Finish != "length" {
		t.Errorf("queued request after cancel: %+v %v", ev, err)
	}
}

func TestDrain(t *testing.T) {
	m, tok := testModel(t, 0)
	e := startEngine(t, m, tok, Options{Slots: 2})
	prompt := tok.Encode("drain", true, false)
	h, err := e.Submit(context.Background(), greedy(10, prompt))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ev, _ := h.Collect(context.Background()); ev.Finish != "length" || ev.Usage.CompletionTokens != 10 {
		t.Errorf("in-flight request during drain: %+v", ev)
	}
	if _, err := e.Submit(context.Background(), greedy(1, prompt)); !errors.Is(err, ErrClosed) {
		t.Errorf("submit after drain: %v", err)
	}
}

func TestValidate(t *testing.T) {
	m, tok := testModel(t, 64)
	e := startEngine(t, m, tok, Options{Slots: 1})
	ok := tok.Encode("x", true, false)
	for _, c := range []struct {
		name string
		mod  func(*Request)
	}{
		{"empty", func(r *Request) { r.Prompt = nil }},
		{"token", func(r *Request) { r.Prompt = []int32{9999} }},
		{"temp", func(r *Request) { r.Sample.Temp = -1 }},
		{"freq", func(r *Request) { r.FrequencyPenalty = 3 }},
		{"bias", func(r *Request) { r.LogitBias = map[int32]float32{-1: 1} }},
		{"stop", func(r *Request) { r.Stop = []string{""} }},
		{"too long", func(r *Request) { r.Prompt = make([]int32, 64) }},
	} {
		r := greedy(1, ok)
		c.mod(&r)
		if _, err := e.Submit(context.Background(), r); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	// A ban through logit_bias is honoured.
	r := greedy(1, ok)
	_, ev := run(t, e, r)
	r.LogitBias = map[int32]float32{ev.Tokens[0]: -100}
	if _, ev2 := run(t, e, r); len(ev2.Tokens) != 1 || ev2.Tokens[0] == ev.Tokens[0] {
		t.Errorf("logit_bias -100 on %d ignored: %v", ev.Tokens[0], ev2.Tokens)
	}
}

// recorder wraps a Stepper and records each step's work sizes.
type recorder struct {
	Stepper
	mu    sync.Mutex
	steps [][]int // tokens per work item
}

func (r *recorder) Step(ctx context.Context, ws []Work) error {
	var sizes []int
	for _, w := range ws {
		sizes = append(sizes, len(w.Tokens))
	}
	r.mu.Lock()
	r.steps = append(r.steps, sizes)
	r.mu.Unlock()
	return r.Stepper.Step(ctx, ws)
}

// TestChunkedPrefillInterleaves: while a long prompt is prefilled in
// chunks, a request that is already generating gets a token in every step.
func TestChunkedPrefillInterleaves(t *testing.T) {
	m, tok := testModel(t, 0)
	rec := &recorder{Stepper: Batched{M: m}}
	e := startWith(t, rec, tok, Options{Slots: 2, Chunk: 8})
	short := tok.Encode("short", true, false)
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	h1, err := e.Submit(ctx1, greedy(0, short)) // generates until cancelled
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h1.Next(context.Background()); err != nil { // generating now
		t.Fatal(err)
	}
	long := tok.Encode(strings.Repeat("many words in a long prompt ", 12), true, false)
	if len(long) < 40 {
		t.Fatalf("long prompt has only %d tokens", len(long))
	}
	h2, err := e.Submit(context.Background(), greedy(2, long))
	if err != nil {
		t.Fatal(err)
	}
	if _, ev, _ := h2.Collect(context.Background()); ev.Finish != "length" {
		t.Fatalf("long request: %+v", ev)
	}
	cancel1()
	_, _, _ = h1.Collect(context.Background())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	chunks := 0
	for _, s := range rec.steps {
		if len(s) == 2 && (s[0] == 8 || s[1] == 8) {
			chunks++
			if !(s[0] == 1 || s[1] == 1) {
				t.Errorf("a prefill chunk step without the decoding sequence's token: %v", s)
			}
		}
		for _, n := range s {
			if n > 8 {
				t.Errorf("step with %d tokens for one sequence, chunk is 8", n)
			}
		}
	}
	if chunks < len(long)/8-1 {
		t.Errorf("%d steps carried a full prefill chunk beside a decoding token, want about %d; steps %v", chunks, len(long)/8, rec.steps)
	}
}

// TestStepTokenBudget: with StepTokens set, no step computes more tokens
// than the budget (unless the generating slots alone exceed it), the
// generating sequence keeps its token in every step, prompts are chunked
// oldest first, and the outputs are those of an unbounded engine.
func TestStepTokenBudget(t *testing.T) {
	m, tok := testModel(t, 0)
	long1 := tok.Encode(strings.Repeat("many words in a long prompt ", 8), true, false)
	long2 := tok.Encode(strings.Repeat("other words for a second prompt ", 8), true, false)
	want1, want2 := reference(t, m, tok, long1, 4), reference(t, m, tok, long2, 4) // before the engine uses m
	rec := &recorder{Stepper: Batched{M: m}}
	const budget = 10
	e := startWith(t, rec, tok, Options{Slots: 3, Chunk: 8, StepTokens: budget})
	short := tok.Encode("short", true, false)
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	h1, err := e.Submit(ctx1, greedy(0, short)) // generates until cancelled
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h1.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	rec.steps = nil
	rec.mu.Unlock()
	h2, err := e.Submit(context.Background(), greedy(4, long1))
	if err != nil {
		t.Fatal(err)
	}
	h3, err := e.Submit(context.Background(), greedy(4, long2))
	if err != nil {
		t.Fatal(err)
	}
	got1, _, err1 := h2.Collect(context.Background())
	got2, _, err2 := h3.Collect(context.Background())
	if err1 != nil || err2 != nil || got1 != want1 || got2 != want2 {
		t.Errorf("budgeted outputs %q, %q (%v, %v); unbounded reference %q, %q", got1, got2, err1, err2, want1, want2)
	}
	cancel1()
	_, _, _ = h1.Collect(context.Background())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	full, first3 := 0, true
	for _, s := range rec.steps {
		if len(s) == 3 && first3 {
			first3 = false
			if s[1] != 8 || s[2] != 1 {
				t.Errorf("first step with both prompts %v: want the older prompt's full chunk (8) and 1 token of the newer", s)
			}
		}
		total := 0
		ones := 0
		for _, n := range s {
			total += n
			if n == 1 {
				ones++
			}
		}
		if total > budget {
			t.Errorf("step computed %d tokens, budget %d: %v", total, budget, s)
		}
		if total == budget {
			full++
		}
		if ones == 0 && len(s) > 0 {
			t.Errorf("a step without the generating sequence's token: %v", s)
		}
	}
	// While both prompts are pending, every step is full: 1 + 8 + 1.
	if min := len(long1)/9 - 1; full < min {
		t.Errorf("%d steps used the whole budget, want at least %d: %v", full, min, rec.steps)
	}
}

// Seeded temperature sampling with logit_bias and penalties gives the same
// text whether a request runs alone or beside others (the slots pick their
// tokens in parallel, each from its own logits and sampler).
func TestConcurrentSeededMatchesAlone(t *testing.T) {
	m, tok := testModel(t, 0)
	e := startWith(t, Batched{M: m}, tok, Options{Slots: 4})
	req := func(seed uint64) Request {
		return Request{Prompt: tok.Encode("seeded sampling test", true, false), MaxTokens: 20,
			Sample:           sample.Params{Temp: 1, TopP: 1, RepeatPenalty: 1, Seed: seed},
			FrequencyPenalty: 0.5, PresencePenalty: 0.3, LogitBias: map[int32]float32{5: 3, 7: -100}}
	}
	alone := map[uint64]string{}
	for _, seed := range []uint64{1, 2, 3, 4} {
		alone[seed], _ = run(t, e, req(seed))
	}
	if alone[1] == alone[2] && alone[2] == alone[3] {
		t.Fatalf("seeds do not change the text (%q): the test would not see mixed-up samplers", alone[1])
	}
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		got := map[uint64]string{}
		var mu sync.Mutex
		for _, seed := range []uint64{1, 2, 3, 4} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, _ := run(t, e, req(seed))
				mu.Lock()
				got[seed] = s
				mu.Unlock()
			}()
		}
		wg.Wait()
		for seed, s := range got {
			if s != alone[seed] {
				t.Errorf("round %d seed %d: concurrent %q, alone %q", round, seed, s, alone[seed])
			}
		}
	}
}

// TestKeepControlTokens: a control token's text is dropped from replies
// unless the request keeps it (tool-call markers such as [TOOL_CALLS]).
func TestKeepControlTokens(t *testing.T) {
	m, tok := testModel(t, 0)
	e := startEngine(t, m, tok, Options{Slots: 1})
	bos := tok.BOS()
	if !tok.IsControl(bos) || tok.IsEOG(bos) {
		t.Fatalf("test vocabulary: BOS %d is not a non-EOG control token", bos)
	}
	prompt := tok.Encode("hello", true, false)
	r := greedy(3, prompt)
	r.LogitBias = map[int32]float32{bos: 100} // every reply token is BOS
	if text, _ := run(t, e, r); text != "" {
		t.Errorf("without Keep: %q, want no text", text)
	}
	r.Keep = []int32{bos}
	want := strings.Repeat(tok.TokenText(bos), 3)
	if text, _ := run(t, e, r); text != want {
		t.Errorf("with Keep: %q, want %q", text, want)
	}
}

// TestEnd: Handle.End stops generation at the next step with "stop".
func TestEnd(t *testing.T) {
	m, tok := testModel(t, 0)
	e := startEngine(t, m, tok, Options{Slots: 1})
	r := greedy(500, tok.Encode("once upon a time", true, false))
	r.IgnoreEOS = true
	h, err := e.Submit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.End()
	_, ev, err := h.Collect(context.Background())
	if err != nil || ev.Err != nil || ev.Finish != "stop" || ev.Usage.CompletionTokens >= 500 {
		t.Errorf("after End: %v %v finish %q, %d tokens", err, ev.Err, ev.Finish, ev.Usage.CompletionTokens)
	}
	// The counters are updated just after the final event is pushed.
	for i := 0; e.Stats().Finished["stop"] == 0 && i < 2000; i++ {
		time.Sleep(time.Millisecond)
	}
	if s := e.Stats(); s.Finished["stop"] != 1 || s.Finished["cancelled"] != 0 {
		t.Errorf("finished %v", s.Finished)
	}
}

// holdBack never lets a stop string out, even split across pieces of text;
// text that only looked like its start is released.
func TestHoldBack(t *testing.T) {
	for _, c := range []struct {
		stops  []string
		pushes []string
		want   string
		hit    bool
	}{
		{nil, []string{"ab", "cd"}, "abcd", false},
		{[]string{"STOP"}, []string{"hello ST", "OP world"}, "hello ", true},
		{[]string{"STOP"}, []string{"hello ST", "ART"}, "hello START", false},
		{[]string{"xyz", "b"}, []string{"aaxy", "zb"}, "aa", true},
		{[]string{"\n\n"}, []string{"line\n", "\nnext"}, "line", true},
	} {
		got, held, hit := "", "", false
		for _, p := range c.pushes {
			var out string
			out, held, hit = holdBack(held+p, c.stops)
			got += out
			if hit {
				break
			}
		}
		if !hit {
			got += held
		}
		if got != c.want || hit != c.hit {
			t.Errorf("stops %q pushes %q: %q hit %v, want %q hit %v", c.stops, c.pushes, got, hit, c.want, c.hit)
		}
	}
}
