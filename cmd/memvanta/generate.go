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

	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/core/tokenizer"
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
	Kernels      string  `json:"kernels"`
	Seed         uint64  `json:"seed,string"`
	Stop         string  `json:"stop"` // "length", "eog", "stop", "context", "interrupted"
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
	pf.register(c)
	pr.register(c, 128)
	sf.register(c)
	mf.register(c, "context size in tokens (0 = the model's training context)")
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

	l, err := openModel(ctx, &mf, stderr)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "memvanta generate: interrupted while loading the model")
			return exitInterrupted
		}
		return fail("%v", err)
	}
	defer l.Close()
	tok, err := tokenizer.FromGGUF(l.rt.File())
	if err != nil {
		return fail("%s: %v", mf.path, err)
	}
	smp, err := sf.build(l.cfg.NVocab, tok.IsEOG)
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	sampler, err := smp.newSampler()
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	// An empty prompt is BOS alone (llama.cpp does the same).
	ids := tok.Encode(prompt, !pf.noBOS, special)
	if len(ids) == 0 {
		return c.usageErr(stderr, "the prompt is empty and --no-bos leaves no token to start from")
	}
	if len(ids) >= l.m.KV().Cap() {
		return fail("prompt has %d tokens but the context holds %d (raise -c)", len(ids), l.m.KV().Cap())
	}

	st := genStats{PromptTokens: len(ids), Kernels: l.m.Kernels().Name, Seed: smp.params.Seed, Stop: "length"}
	sink := &lineSink{w: bufio.NewWriter(stdout)}
	var genIDs []int32
	var text []byte
	dec := tok.NewDecoder()
	stops := &stopper{}
	for _, st := range pr.stops {
		stops.stops = append(stops.stops, pf.unescape(st))
	}
	emit := func(s string) {
		if jsonOut {
			text = append(text, s...)
			return
		}
		sink.write(s)
	}
	status := exitOK
	t0 := time.Now()
	err = generate(ctx, l.m, sampler, smp.apply, ids, pr.n, func(id int32) bool {
		if tok.IsEOG(id) && !sf.ignoreEOS {
			st.Stop = "eog"
			return false
		}
		genIDs = append(genIDs, id)
		out, hit := stops.push(dec.Add(id))
		emit(out)
		if hit {
			st.Stop = "stop"
			return false
		}
		return sink.err == nil
	}, &st)
	if st.Stop != "stop" {
		out, _ := stops.push(dec.Flush())
		emit(out + stops.flush())
	}
	total := time.Since(t0).Seconds()
	st.GenSec = total - st.PromptSec
	st.GenTokens = len(genIDs)
	if sink.err != nil {
		if closedPipe(sink.err) {
			return exitPipe // the reader has all it wanted: end quietly
		}
		return fail("writing the output: %v", sink.err)
	}
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		st.Stop = "interrupted"
		status = exitInterrupted // the output so far is complete
	case errors.Is(err, model.ErrContextFull):
		st.Stop = "context"
	default:
		if !jsonOut {
			sink.write("\n")
		}
		fmt.Fprintf(stderr, "memvanta generate: %v\n", err)
		status = exitRuntime
	}
	st.PeakRSS = telemetry.PeakRSS()
	st.KVBytes = l.m.KV().Bytes()
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
		fmt.Fprintf(stderr, "memvanta generate: context limit of %d tokens reached; stopped (raise -c)\n", l.m.KV().Cap())
	}
	fmt.Fprintf(stderr, "prompt %d tok, %.2f tok/s | generated %d tok, %.2f tok/s | peak RSS %.1f MiB | kv %s %.1f MiB | kernels %s | seed %d | stop %s\n",
		st.PromptTokens, tps(st.PromptTokens, st.PromptSec), st.GenTokens, tps(st.GenTokens, st.GenSec),
		mib(st.PeakRSS), l.m.KV().Type(), mib(st.KVBytes), st.Kernels, st.Seed, st.Stop)
	return status
}

// generate runs the prompt, then samples up to n tokens (n < 0: until
// yield stops it or the context is full), handing each to yield (which
// returns false to stop). bias adjusts the logits before each draw. The
// prompt time lands in st.PromptSec.
func generate(ctx context.Context, m *model.Model, s *sample.Sampler, bias func([]float32), prompt []int32, n int,
	yield func(int32) bool, st *genStats) error {
	for _, t := range prompt {
		s.Accept(t)
	}
	if n == 0 {
		return nil
	}
	t0 := time.Now()
	logits, err := m.Forward(ctx, prompt)
	st.PromptSec = time.Since(t0).Seconds()
	if err != nil {
		return err
	}
	for i := 0; n < 0 || i < n; i++ {
		bias(logits)
		next := s.Sample(logits)
		s.Accept(next)
		if !yield(next) || i == n-1 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if logits, err = m.Forward(ctx, []int32{next}); err != nil {
			return err
		}
	}
	return nil
}
