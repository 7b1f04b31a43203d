package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/native/telemetry"
)

// genStats is what the stats line (and --json) reports. The seed is a
// string in JSON: it is a 64-bit value, and JSON numbers lose precision
// above 2^53 in JavaScript and other float64 readers.
type genStats struct {
	PromptTokens int     `json:"prompt_tokens"`
	PromptSec    float64 `json:"prompt_seconds"`
	GenTokens    int     `json:"generated_tokens"`
	GenSec       float64 `json:"generation_seconds"`
	PeakRSS      int64   `json:"peak_rss_bytes"`
	KVBytes      int64   `json:"kv_cache_bytes"`
	KVType       string  `json:"kv_type"` // "F16", or keys/values: "Q8_0/Q4_0"
	Kernels      string  `json:"kernels"`
	Seed         uint64  `json:"seed,string"`
	Stop         string  `json:"stop"` // "length", "eog", "stop", "grammar", "context", "interrupted"
	// Speculative decoding (with -md or --spec-type): tokens drafted and
	// accepted, and generated tokens per pass over the weights.
	DraftTokens   int64   `json:"draft_tokens,omitempty"`
	DraftAccepted int64   `json:"draft_accepted,omitempty"`
	AcceptRate    float64 `json:"draft_accept_rate,omitempty"`
	TokensPerPass float64 `json:"tokens_per_pass,omitempty"`
	// Context shifts (--context-shift).
	ContextShifts int64 `json:"context_shifts,omitempty"`
}

func tps(n int, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(n) / s
}

// lineSink streams text to stdout, flushing each piece, and remembers the
// first write error so a closed pipe stops generation.
type lineSink struct {
	w   *bufio.Writer
	err error
}

func (s *lineSink) write(text string) {
	if s.err != nil || text == "" {
		return
	}
	s.w.WriteString(text)
	s.err = s.w.Flush()
}

// closedPipe reports whether err means the reader of stdout went away.
func closedPipe(err error) bool { return errors.Is(err, syscall.EPIPE) || closedPipeOS(err) }

func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("generate", "generate -m MODEL -p PROMPT [flags]",
		"Generate text from a prompt, streamed to stdout; statistics go to stderr.\n"+
			"Flags follow llama.cpp (llama-cli / llama-completion) where the concept matches.")
	var mf modelFlags
	var pf promptFlags
	var pr predictFlags
	var sf samplingFlags
	var gf grammarFlags
	var spf specFlags
	var shf shiftFlags
	pf.register(c)
	pr.register(c, 128)
	sf.register(c)
	gf.register(c)
	mf.register(c, "context size in tokens (0 = the model's training context)")
	spf.register(c)
	shf.register(c, true)
	c.group("Output")
	var jsonOut, noCnv, special bool
	c.boolVar(&special, "special|parse-special", "parse control-token text in the prompt (<|im_start|>, <s>) into those tokens, as a chat template's output is; by default it is plain text")
	c.boolVar(&jsonOut, "json", "print one JSON document (prompt ids, generated ids, text, stats) instead of streaming text")
	c.boolVar(&noCnv, "-no-cnv|no-conversation", "accepted for llama-cli command lines, no effect: generate never enters conversation mode")
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memvanta generate: "+format+"\n", a...)
		return exitRuntime
	}
	if err := mf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if err := pr.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if err := spf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if err := shf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	prompt, given, err := pf.text(c)
	switch {
	case !given:
		return c.usageErr(stderr, "-p PROMPT or -f FILE is required (-p \"\" starts from BOS alone)")
	case errors.Is(err, errBothPrompts):
		return c.usageErr(stderr, "%v", err)
	case err != nil:
		return fail("%v", err)
	}
	if _, err := sf.build(0, nil); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	gram, err := gf.build()
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}

	l, status := openModel(ctx, &mf, stderr)
	if status != exitOK {
		return status
	}
	defer l.Close()
	spec, closeDraft, status := spf.open(ctx, &mf, l, stderr)
	if status != exitOK {
		return status
	}
	defer closeDraft()
	tok := l.tok
	smp, err := sf.build(l.cfg.NVocab, tok.IsEOG)
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	bias, err := smp.biasMap()
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	// An empty prompt is BOS alone (llama.cpp does the same).
	ids := tok.Encode(prompt, !pf.noBOS, special)
	if len(ids) == 0 {
		return c.usageErr(stderr, "the prompt is empty and --no-bos leaves no token to start from")
	}
	kvCap := l.m.KV().Cap()
	if len(ids) >= kvCap {
		return fail("prompt has %d tokens but the context holds %d (raise -c)", len(ids), kvCap)
	}
	var stops []string
	for _, st := range pr.stops {
		stops = append(stops, pf.unescape(st))
	}
	if len(stops) > engine.MaxStops {
		return c.usageErr(stderr, "%d stop strings, at most %d", len(stops), engine.MaxStops)
	}
	// One slot, stepped here (engine.Step), so each token's text is written
	// before the next token is computed. The whole prompt is one chunk: one
	// Forward, batched by -b. The engine ends a request when prompt and
	// reply fill the slot (llama-server's rule); generate keeps llama-cli's,
	// in which the last token, sampled from a full cache, needs no position
	// of its own: so the slot has one position more than -c, which the
	// engine never fills.
	eng, err := engine.New(engine.PerSeq{M: l.m}, tok, engine.Options{Slots: 1, Queue: 1, CtxPerSlot: kvCap + 1, Chunk: kvCap, Spec: spec})
	if err != nil {
		return fail("%v", err)
	}
	req := engine.Request{Prompt: ids, Sample: smp.params, MaxTokens: max(pr.n, 0), Stop: stops, LogitBias: bias, IgnoreEOS: sf.ignoreEOS, Grammar: gram}
	shf.apply(&req)

	st := genStats{PromptTokens: len(ids), Kernels: l.m.Kernels().Name, Seed: smp.params.Seed, Stop: "length"}
	sink := &lineSink{w: bufio.NewWriter(stdout)}
	var genIDs []int32
	var text []byte
	emit := func(s string) {
		if jsonOut {
			text = append(text, s...)
			return
		}
		sink.write(s)
	}
	status = exitOK
	t0 := time.Now()
	var end engine.Event
	if pr.n != 0 {
		end, err = stepOne(ctx, eng, req, func(ev engine.Event) bool {
			if len(genIDs) == 0 && len(ev.Tokens) > 0 {
				st.PromptSec = time.Since(t0).Seconds()
			}
			genIDs = append(genIDs, ev.Tokens...)
			emit(ev.Text)
			return sink.err == nil
		})
		if err != nil {
			return fail("%v", err)
		}
	}
	total := time.Since(t0).Seconds()
	if len(genIDs) == 0 {
		st.PromptSec = total
	}
	st.GenSec = total - st.PromptSec
	st.GenTokens = len(genIDs)
	if sink.err != nil {
		if closedPipe(sink.err) {
			return exitPipe // the reader has all it wanted: end quietly
		}
		return fail("writing the output: %v", sink.err)
	}
	switch {
	case errors.Is(end.Err, context.Canceled):
		st.Stop = "interrupted"
		status = exitInterrupted // the output so far is complete
	case end.Err != nil:
		if !jsonOut {
			sink.write("\n")
		}
		fmt.Fprintf(stderr, "memvanta generate: %v\n", end.Err)
		status = exitRuntime
	case end.Cause == engine.CauseEOG:
		st.Stop = "eog"
	case end.Cause == engine.CauseStopString:
		st.Stop = "stop"
	case end.Cause == engine.CauseGrammar:
		st.Stop = "grammar"
	case end.Cause == engine.CauseContext:
		st.Stop = "context"
	}
	st.PeakRSS = telemetry.PeakRSS()
	es := eng.Stats()
	st.KVBytes, st.KVType = es.KVBytes, l.m.KV().TypeName()
	if spec != nil {
		st.DraftTokens, st.DraftAccepted = es.Spec.Drafted, es.Spec.Accepted
		st.AcceptRate, st.TokensPerPass = es.Spec.AcceptRate(), tokPerPass(es)
	}
	st.ContextShifts = es.Shifts
	if jsonOut {
		b, _ := json.MarshalIndent(struct {
			PromptTokens []int32  `json:"prompt_token_ids"`
			Tokens       []int32  `json:"tokens"`
			Text         string   `json:"text"`
			Stats        genStats `json:"stats"`
		}{ids, genIDs, string(text), st}, "", "  ")
		sink.write(string(b) + "\n")
	} else {
		sink.write("\n")
	}
	if sink.err != nil {
		if closedPipe(sink.err) {
			return exitPipe
		}
		return fail("writing the output: %v", sink.err)
	}
	if st.Stop == "context" && pr.n >= 0 {
		fmt.Fprintf(stderr, "memvanta generate: context limit of %d tokens reached; stopped (raise -c)\n", kvCap)
	}
	fmt.Fprintf(stderr, "prompt %d tok, %.2f tok/s | generated %d tok, %.2f tok/s%s%s | peak RSS %.1f MiB | kv %s %.1f MiB | kernels %s | seed %d | stop %s%s\n",
		st.PromptTokens, tps(st.PromptTokens, st.PromptSec), st.GenTokens, tps(st.GenTokens, st.GenSec), specLine(es), shiftLine(shf.enabled(), es),
		mib(st.PeakRSS), l.m.KV().TypeName(), mib(st.KVBytes), st.Kernels, st.Seed, st.Stop, expertStats(l.rt.Stats()))
	return status
}

// stepOne runs req alone on eng, which nothing else steps or runs, handing
// each event but the last to yield as soon as the step that made it
// returns (yield returns false to stop: the request is left unfinished).
// It returns the final event, whose Err says whether ctx was cancelled or
// the model failed.
func stepOne(ctx context.Context, eng *engine.Engine, req engine.Request, yield func(engine.Event) bool) (engine.Event, error) {
	h, err := eng.Submit(ctx, req)
	if err != nil {
		return engine.Event{}, err
	}
	for {
		busy := eng.Step(ctx)
		for {
			ev, ok := h.TryNext()
			if !ok {
				break
			}
			if ev.Done {
				return ev, nil
			}
			if !yield(ev) {
				return ev, nil
			}
		}
		if !busy {
			return engine.Event{}, errors.New("engine: the request ended without a final event")
		}
	}
}
