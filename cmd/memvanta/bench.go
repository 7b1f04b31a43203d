package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/native/telemetry"
)

// benchResult is one test (pp or tg at one depth and thread count) over
// all repetitions measured.
type benchResult struct {
	Test    string    `json:"test"` // "pp512", "tg128"
	Tokens  int       `json:"tokens"`
	Depth   int       `json:"depth"` // tokens already in the context when the test starts
	Threads int       `json:"threads"`
	Mean    float64   `json:"tps_mean"`
	Stdev   float64   `json:"tps_stdev"`
	Samples []float64 `json:"tps_samples"`
	// KVBytes is the KV cache's memory for the test's positions (depth +
	// tokens; sliding-window rings capped at their size).
	KVBytes int64 `json:"kv_bytes"`
	// Speculative tg tests (-md, --spec-type): "spec" true, drafted tokens
	// accepted over all repetitions, generated tokens per pass.
	Spec          bool    `json:"spec,omitempty"`
	AcceptRate    float64 `json:"draft_accept_rate,omitempty"`
	TokensPerPass float64 `json:"tokens_per_pass,omitempty"`
}

// label is the test's name in the table, as llama-bench prints it.
func (r benchResult) label() string {
	t := r.Test
	if r.Spec {
		t += " spec"
	}
	if r.Depth > 0 {
		return fmt.Sprintf("%s @ d%d", t, r.Depth)
	}
	return t
}

// parseIntList reads llama-bench's comma lists ("128,256,512").
func parseIntList(flag, s string, lo int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < lo {
			return nil, fmt.Errorf("%s %q: want comma-separated integers >= %d", flag, s, lo)
		}
		out = append(out, v)
	}
	return out, nil
}

// runBench mirrors llama-bench's pp/tg tests so the figures compare
// one-to-one with `node ref.mjs bench` and llama-bench: per thread count, a
// warm-up (one prompt run, one single-token generation), then per depth an
// untimed prefill of -d random tokens and, for each repetition and test,
// the timed test on the cache cut back to those -d tokens: a prompt of -p
// tokens (BOS + seeded random ids) as batches, or -n single-token steps
// with greedy picks. Lists (-p 128,512) give one row per value, crossed
// with -d and -t.
//
// Ctrl-C stops at once; the repetitions already measured are reported
// and the exit status is 130.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("bench", "bench -m MODEL [-p 512] [-n 128] [-d 0] [-r 5] [-t 2] [flags]",
		"Measure prompt processing (pp) and generation (tg) throughput like llama-bench:\n"+
			"per thread count one warm-up, then -r repetitions of each test, reported as mean ± sd tok/s\n"+
			"with peak RSS. -p, -n, -d and -t take comma lists (one result row per combination).")
	var mf modelFlags
	mf.threadList = true
	mf.register(c, "context size in tokens (0 = just what the tests need: max depth + max(-p, -n))")
	c.defaultText("b", "the largest -p or -d, at most 512")
	var spf specFlags
	spf.register(c)
	c.group("Tests")
	var pArg, nArg, dArg, seedStr string
	var reps int
	var jsonOut bool
	c.stringVar(&pArg, "p|n-prompt", "N[,N...]", "512", "prompt tokens for the pp test (0 = skip)")
	c.stringVar(&nArg, "n|n-gen", "N[,N...]", "128", "generated tokens for the tg test (0 = skip)")
	c.stringVar(&dArg, "d|n-depth", "N[,N...]", "0", "tokens already in the context (prefilled, untimed) before each test")
	c.intVar(&reps, "r|repetitions", "N", 5, "repetitions after the warm-up")
	c.stringVar(&seedStr, "seed", "SEED", "1234", "seed for the random prompt tokens")
	c.boolVar(&jsonOut, "json", "print results as JSON on stdout")
	var outFmt, cpuProfile string
	c.stringVar(&outFmt, "o|output", "FORMAT", "md", "llama-bench's output format: md (the table) or json (same as --json)")
	c.stringVar(&cpuProfile, "cpuprofile", "FILE", "", "write a Go CPU profile of the whole run (load, warm-ups, tests) to FILE, for go tool pprof")
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memvanta bench: "+format+"\n", a...)
		return exitRuntime
	}
	switch outFmt {
	case "md":
	case "json":
		jsonOut = true
	default:
		return c.usageErr(stderr, "-o %q: md or json (csv, jsonl and sql are not supported)", outFmt)
	}
	seed, err := strconv.ParseUint(seedStr, 10, 64)
	if err != nil {
		return c.usageErr(stderr, "--seed %q: must be an integer from 0 to 2^64-1", seedStr)
	}
	ps, err := parseIntList("-p", pArg, 0)
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	ns, err := parseIntList("-n", nArg, 0)
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	ds, err := parseIntList("-d", dArg, 0)
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if reps < 1 {
		return c.usageErr(stderr, "-r %d: must be >= 1", reps)
	}
	maxP, maxN, maxD := 0, 0, 0
	for _, v := range ps {
		maxP = max(maxP, v)
	}
	for _, v := range ns {
		maxN = max(maxN, v)
	}
	for _, v := range ds {
		maxD = max(maxD, v)
	}
	// -b defaults to the prompt length (one batch) like llama-bench's
	// n_batch=512/n_ubatch=512; the depth prefill runs in batches of it too,
	// so a depth with no prompt test (-p 0 -d 2048) is not decoded token by
	// token.
	if !c.isSet("b") {
		mf.batch = max(1, min(max(maxP, maxD), 512))
		if spf.enabled() {
			// A verification pass is one batch of the draft and the token
			// before it, not one pass per row.
			mf.batch = max(mf.batch, spf.draftMax+1)
		}
	}
	if err := mf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if err := spf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if mf.ctx == 0 {
		mf.ctx = max(maxD+max(maxP, maxN), 1)
	}

	// The profile starts once the flags are valid, so a usage error leaves
	// no file behind.
	if cpuProfile != "" {
		stop, err := startCPUProfile(cpuProfile)
		if err != nil {
			return fail("%v", err)
		}
		defer stop()
	}
	// The speculative tg test runs through the engine, which decodes text.
	mf.noTokenizer = !spf.enabled()
	var results []benchResult
	var last *loaded
	interrupted := false
	for _, threads := range mf.threadsAll {
		mf.threads = threads
		l, st := openModel(ctx, &mf, stderr)
		if st == exitInterrupted && last != nil {
			interrupted = true
			break
		}
		if st != exitOK {
			return st
		}
		if last != nil {
			last.Close()
		}
		last = l
		spec, closeDraft, st := spf.open(ctx, &mf, l, stderr)
		if st != exitOK {
			return st
		}
		rs, err := benchModel(ctx, l, spec, &mf, ps, ns, ds, reps, seed, stderr)
		closeDraft()
		results = append(results, rs...)
		if errors.Is(err, context.Canceled) {
			interrupted = true
			break
		}
		if err != nil {
			return fail("%v", err)
		}
	}
	defer last.Close()
	if interrupted {
		fmt.Fprintf(stderr, "memvanta bench: interrupted; reporting the %d test(s) with at least one measured repetition\n", len(results))
	}
	size := int64(0)
	if fi, err := os.Stat(mf.path); err == nil {
		size = fi.Size()
	}
	rss := telemetry.PeakRSS()
	kvk, kvv := last.m.KV().Types()
	_, ring := last.m.KV().Window()
	w := bufio.NewWriter(stdout)
	if jsonOut {
		b, _ := json.MarshalIndent(map[string]any{
			"model": mf.path, "model_size_bytes": size, "batch": mf.batch, "ctx": mf.ctx,
			"kernels": last.m.Kernels().Name, "kv_type": last.m.KV().TypeName(), "kv_type_k": kvk.String(), "kv_type_v": kvv.String(),
			"kv_bytes": last.m.KV().Bytes(), "kv_swa_ring": ring, "mem": mf.mem,
			"repetitions": reps, "interrupted": interrupted, "results": results, "peak_rss_bytes": rss,
			"telemetry": last.rt.Stats(),
		}, "", "  ")
		w.Write(append(b, '\n'))
	} else {
		fmt.Fprintf(w, "| %-28s | %9s | %7s | %7s | %15s | %20s |\n", "model", "size", "kernels", "threads", "test", "t/s")
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", dashes(28), dashes(9), dashes(7), dashes(7), dashes(15), dashes(20))
		for _, r := range results {
			fmt.Fprintf(w, "| %-28s | %5.0f MiB | %7s | %7d | %15s | %20s |\n", trimPath(mf.path, 28), mib(size),
				last.m.Kernels().Name, r.Threads, r.label(), fmt.Sprintf("%.2f ± %.2f", r.Mean, r.Stdev))
		}
		fmt.Fprintf(w, "peak RSS %.1f MiB (mem %s, kv %s, %.1f MiB)\n", mib(rss), mf.mem, last.m.KV().TypeName(), mib(last.m.KV().Bytes()))
		st := last.rt.Stats()
		fmt.Fprintf(w, "weights: %.1f GiB touched, %.1f GiB moved, cache %d hits / %d misses / %d evictions, %d stalls (%.2f s), %d late, look-ahead %d; faults %d minor / %d major\n",
			float64(st.BytesTouched)/(1<<30), float64(st.BytesMoved)/(1<<30), st.CacheHits, st.CacheMisses, st.Evictions,
			st.Stalls, st.StallTime.Seconds(), st.LateArrivals, st.Depth, st.MinorFaults, st.MajorFaults)
		if s := expertStats(st); s != "" {
			fmt.Fprintln(w, strings.TrimPrefix(s, " | "))
		}
	}
	if st := finishOutput(w, c.name, stderr); st != exitOK {
		return st
	}
	if interrupted {
		return exitInterrupted
	}
	return exitOK
}

// benchModel runs every (depth, pp/tg) test on one opened model and
// returns the results measured so far, with ctx's error if interrupted.
func benchModel(ctx context.Context, l *loaded, spec *engine.Spec, mf *modelFlags, ps, ns, ds []int, reps int, seed uint64, stderr io.Writer) ([]benchResult, error) {
	f := l.rt.File()
	bos := int32(-1)
	if v, err := f.Uint32("tokenizer.ggml.bos_token_id"); err == nil && int(v) < l.cfg.NVocab {
		bos = int32(v)
		if add, err := f.Bool("tokenizer.ggml.add_bos_token"); err == nil && !add {
			bos = -1
		}
	}
	rng := sample.NewRNG(seed)
	randTok := func() int32 { return int32(rng.Uint64() % uint64(l.cfg.NVocab)) }
	// randToks returns n tokens, the first BOS when start is set.
	randToks := func(n int, start bool) []int32 {
		t := make([]int32, n)
		for i := range t {
			if i == 0 && start && bos >= 0 {
				t[i] = bos
			} else {
				t[i] = randTok()
			}
		}
		return t
	}
	// prefill leaves exactly depth positions in the cache (untimed). The
	// depth tokens are decoded once per depth and the cache is cut back to
	// them before every test (positions below depth are never rewritten),
	// so each timed run starts from the same context as llama-bench's,
	// which re-decodes them before every test, at the cost of one prefill
	// per depth instead of one per test and repetition.
	filled := -1 // depth of the prefix in the cache, -1 = none
	prefill := func(depth int) error {
		if depth > 0 && filled == depth && l.m.Pos() >= depth {
			l.m.KV().Truncate(depth)
			return nil
		}
		l.m.Reset()
		filled = -1
		if depth == 0 {
			return nil
		}
		if _, err := l.m.Forward(ctx, randToks(depth, true)); err != nil {
			return err
		}
		filled = depth
		return nil
	}
	runPP := func(p, depth int) (time.Duration, error) {
		if err := prefill(depth); err != nil {
			return 0, err
		}
		toks := randToks(p, depth == 0)
		t0 := time.Now()
		_, err := l.m.Forward(ctx, toks)
		return time.Since(t0), err
	}
	runTG := func(n, depth int) (time.Duration, error) {
		if err := prefill(depth); err != nil {
			return 0, err
		}
		next := bos
		if next < 0 || depth > 0 {
			next = randTok()
		}
		t0 := time.Now()
		for i := 0; i < n; i++ {
			logits, err := l.m.Forward(ctx, []int32{next})
			if err != nil {
				return 0, err
			}
			next = int32(kernels.Argmax(logits))
		}
		return time.Since(t0), nil
	}
	// The speculative tg test: greedy generation of n tokens through a
	// one-slot engine with speculation, after the prompt (BOS and the
	// depth's random tokens; its pass and the first token are not timed),
	// interleaved with the plain tests so their ratio comes from one run.
	var eng *engine.Engine
	if spec != nil {
		var err error
		if eng, err = engine.New(engine.PerSeq{M: l.m}, l.tok, engine.Options{Slots: 1, Queue: 1, CtxPerSlot: mf.ctx + 3, Spec: spec}); err != nil {
			return nil, err
		}
	}
	runSpec := func(n, depth int) (time.Duration, engine.SpecStats, error) {
		prompt := randToks(max(depth, 1), true)
		req := engine.Request{Prompt: prompt, Sample: sample.Params{RepeatPenalty: 1}, MaxTokens: n + 1, IgnoreEOS: true}
		before := eng.Stats()
		var t0 time.Time
		end, err := stepOne(ctx, eng, req, func(ev engine.Event) bool {
			if t0.IsZero() && len(ev.Tokens) > 0 {
				t0 = time.Now()
			}
			return true
		})
		if err == nil {
			err = end.Err
		}
		d := time.Since(t0)
		after := eng.Stats()
		ss := engine.SpecStats{Drafted: after.Spec.Drafted - before.Spec.Drafted, Accepted: after.Spec.Accepted - before.Spec.Accepted,
			Passes: after.Spec.Passes - before.Spec.Passes, Verified: after.Spec.Verified - before.Spec.Verified}
		return d, ss, err
	}
	fmt.Fprintf(stderr, "bench: %s, %d threads, kernels %s, warm-up...\n", mf.path, mf.threads, l.m.Kernels().Name)
	maxP, maxN := 0, 0
	for _, p := range ps {
		maxP = max(maxP, p)
	}
	for _, n := range ns {
		maxN = max(maxN, n)
	}
	if maxP > 0 {
		if _, err := runPP(min(maxP, 512), 0); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	if maxN > 0 {
		if _, err := runTG(1, 0); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	type test struct {
		name      string
		tokens, d int
		run       func() (time.Duration, error)
		samples   []float64
		spec      bool
		ss        engine.SpecStats // the speculative test's counts over its runs
	}
	var tests []*test
	for _, d := range ds {
		for _, p := range ps {
			if p > 0 {
				tests = append(tests, &test{name: fmt.Sprintf("pp%d", p), tokens: p, d: d,
					run: func() (time.Duration, error) { return runPP(p, d) }})
			}
		}
		for _, n := range ns {
			if n > 0 {
				tests = append(tests, &test{name: fmt.Sprintf("tg%d", n), tokens: n, d: d,
					run: func() (time.Duration, error) { return runTG(n, d) }})
				if eng != nil {
					t := &test{name: fmt.Sprintf("tg%d", n), tokens: n, d: d, spec: true}
					t.run = func() (time.Duration, error) {
						dur, ss, err := runSpec(n, d)
						t.ss.Drafted += ss.Drafted
						t.ss.Accepted += ss.Accepted
						t.ss.Passes += ss.Passes - 1 // the prompt's pass is not timed
						t.ss.Verified += ss.Verified
						return dur, err
					}
					tests = append(tests, t)
				}
			}
		}
	}
	collect := func() []benchResult {
		var out []benchResult
		for _, t := range tests {
			if len(t.samples) > 0 {
				r := summarize(t.name, t.tokens, t.samples)
				r.Depth, r.Threads = t.d, mf.threads
				r.KVBytes = l.m.KV().BytesFor(t.d + t.tokens)
				if t.spec {
					r.Spec, r.AcceptRate = true, t.ss.AcceptRate()
					if t.ss.Passes > 0 {
						r.TokensPerPass = float64(t.tokens*len(t.samples)) / float64(t.ss.Passes)
					}
				}
				out = append(out, r)
			}
		}
		return out
	}
	// Depth outer, repetitions inner: each depth's prefix is decoded once.
	for i := 0; i < len(tests); {
		j := i
		for j < len(tests) && tests[j].d == tests[i].d {
			j++
		}
		for r := 0; r < reps; r++ {
			line := fmt.Sprintf("bench rep %d/%d:", r+1, reps)
			for _, t := range tests[i:j] {
				d, err := t.run()
				if err != nil {
					if errors.Is(err, context.Canceled) {
						return collect(), err
					}
					return collect(), fmt.Errorf("%s at depth %d: %w", t.name, t.d, err)
				}
				t.samples = append(t.samples, float64(t.tokens)/d.Seconds())
				label := t.name
				if t.spec {
					label += " spec"
				}
				if t.d > 0 {
					label += fmt.Sprintf("@d%d", t.d)
				}
				line += fmt.Sprintf(" %s %.2f t/s", label, t.samples[len(t.samples)-1])
			}
			fmt.Fprintln(stderr, line)
		}
		i = j
	}
	return collect(), nil
}

func summarize(test string, tokens int, s []float64) benchResult {
	m := 0.0
	for _, v := range s {
		m += v
	}
	m /= float64(len(s))
	sd := 0.0
	if len(s) > 1 {
		for _, v := range s {
			sd += (v - m) * (v - m)
		}
		sd = math.Sqrt(sd / float64(len(s)-1))
	}
	return benchResult{Test: test, Tokens: tokens, Mean: m, Stdev: sd, Samples: s}
}

func dashes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '-'
	}
	return string(b)
}

func trimPath(p string, n int) string {
	if len(p) <= n {
		return p
	}
	return "…" + p[len(p)-n+1:]
}
