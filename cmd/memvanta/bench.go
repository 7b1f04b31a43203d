package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/native/telemetry"
)

// benchResult is one test (pp or tg) over all repetitions.
type benchResult struct {
	Test    string    `json:"test"` // "pp512", "tg128"
	Tokens  int       `json:"tokens"`
	Mean    float64   `json:"tps_mean"`
	Stdev   float64   `json:"tps_stdev"`
	Samples []float64 `json:"tps_samples"`
}

// runBench mirrors llama-bench's pp/tg tests so the figures compare
// one-to-one with `node ref.mjs bench`: a warm-up (one prompt run, one
// single-token generation), then per repetition a cleared cache and a timed
// prompt of -p tokens (BOS + seeded random ids) as batches, and a cleared
// cache and -n single-token steps from BOS with greedy picks.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs, 0)
	p := fs.Int("p", 512, "prompt `tokens` for the pp test (0 = skip)")
	n := fs.Int("n", 128, "generated `tokens` for the tg test (0 = skip)")
	reps := fs.Int("r", 5, "`repetitions` after the warm-up")
	jsonOut := fs.Bool("json", false, "print results as JSON on stdout")
	seed := fs.Uint64("seed", 1234, "`seed` for the random prompt tokens")
	if done, st := parseFlags(fs, args, stderr); done {
		return st
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memvanta bench: "+format+"\n", a...)
		return 1
	}
	// llama-bench defaults to 2 threads here too; -b defaults to the prompt
	// length (one batch) like llama-bench's n_batch=512/n_ubatch=512.
	if !flagSet(fs, "b") {
		mf.batch = max(1, min(*p, 512))
	}
	if err := mf.validate(); err != nil {
		return fail("%v", err)
	}
	if *p < 0 || *n < 0 || *reps < 1 {
		return fail("-p and -n must be >= 0 and -r >= 1")
	}
	if mf.ctx == 0 {
		mf.ctx = max(*p, *n, 1)
	}
	l, err := openModel(ctx, &mf)
	if err != nil {
		return fail("%v", err)
	}
	defer l.Close()
	f := l.rt.File()
	bos := int32(-1)
	if v, err := f.Uint32("tokenizer.ggml.bos_token_id"); err == nil && int(v) < l.cfg.NVocab {
		bos = int32(v)
		if add, err := f.Bool("tokenizer.ggml.add_bos_token"); err == nil && !add {
			bos = -1
		}
	}
	rng := sample.NewRNG(*seed)
	randTok := func() int32 { return int32(rng.Uint64() % uint64(l.cfg.NVocab)) }
	promptToks := func() []int32 {
		t := make([]int32, *p)
		for i := range t {
			if i == 0 && bos >= 0 {
				t[i] = bos
			} else {
				t[i] = randTok()
			}
		}
		return t
	}
	first := bos
	if first < 0 {
		first = randTok()
	}
	runPP := func() (time.Duration, error) {
		toks := promptToks()
		l.m.Reset()
		t0 := time.Now()
		_, err := l.m.Forward(ctx, toks)
		return time.Since(t0), err
	}
	runTG := func(count int) (time.Duration, error) {
		l.m.Reset()
		t0 := time.Now()
		next := first
		for i := 0; i < count; i++ {
			logits, err := l.m.Forward(ctx, []int32{next})
			if err != nil {
				return 0, err
			}
			next = int32(kernels.Argmax(logits))
		}
		return time.Since(t0), nil
	}
	fmt.Fprintf(stderr, "bench: %s, %d threads, kernels %s, warm-up...\n", mf.path, mf.threads, l.m.Kernels().Name)
	if *p > 0 {
		if _, err := runPP(); err != nil {
			return fail("warm-up: %v", err)
		}
	}
	if *n > 0 {
		if _, err := runTG(1); err != nil {
			return fail("warm-up: %v", err)
		}
	}
	var pp, tg []float64
	for r := 0; r < *reps; r++ {
		line := fmt.Sprintf("bench rep %d/%d:", r+1, *reps)
		if *p > 0 {
			d, err := runPP()
			if err != nil {
				return fail("pp%d: %v", *p, err)
			}
			pp = append(pp, float64(*p)/d.Seconds())
			line += fmt.Sprintf(" pp%d %.2f t/s", *p, pp[len(pp)-1])
		}
		if *n > 0 {
			d, err := runTG(*n)
			if err != nil {
				return fail("tg%d: %v", *n, err)
			}
			tg = append(tg, float64(*n)/d.Seconds())
			line += fmt.Sprintf(" tg%d %.2f t/s", *n, tg[len(tg)-1])
		}
		fmt.Fprintln(stderr, line)
	}
	var results []benchResult
	if *p > 0 {
		results = append(results, summarize(fmt.Sprintf("pp%d", *p), *p, pp))
	}
	if *n > 0 {
		results = append(results, summarize(fmt.Sprintf("tg%d", *n), *n, tg))
	}
	size := int64(0)
	if fi, err := os.Stat(mf.path); err == nil {
		size = fi.Size()
	}
	rss := telemetry.PeakRSS()
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{
			"model": mf.path, "model_size_bytes": size, "threads": mf.threads, "batch": mf.batch,
			"kernels": l.m.Kernels().Name, "kv_type": l.m.KV().Type().String(), "mem": mf.mem,
			"repetitions": *reps, "results": results, "peak_rss_bytes": rss,
			"telemetry": l.rt.Stats(),
		})
		return 0
	}
	fmt.Fprintf(stdout, "| %-28s | %9s | %7s | %7s | %7s | %20s |\n", "model", "size", "kernels", "threads", "test", "t/s")
	fmt.Fprintf(stdout, "| %s | %s | %s | %s | %s | %s |\n", dashes(28), dashes(9), dashes(7), dashes(7), dashes(7), dashes(20))
	for _, r := range results {
		fmt.Fprintf(stdout, "| %-28s | %5.0f MiB | %7s | %7d | %7s | %20s |\n", trimPath(mf.path, 28), mib(size),
			l.m.Kernels().Name, mf.threads, r.Test, fmt.Sprintf("%.2f ± %.2f", r.Mean, r.Stdev))
	}
	fmt.Fprintf(stdout, "peak RSS %.1f MiB (mem %s, kv %s)\n", mib(rss), mf.mem, l.m.KV().Type())
	st := l.rt.Stats()
	fmt.Fprintf(stdout, "weights: %.1f GiB touched, %.1f GiB moved, cache %d hits / %d misses / %d evictions, %d stalls (%.2f s), %d late, look-ahead %d; faults %d minor / %d major\n",
		float64(st.BytesTouched)/(1<<30), float64(st.BytesMoved)/(1<<30), st.CacheHits, st.CacheMisses, st.Evictions,
		st.Stalls, st.StallTime.Seconds(), st.LateArrivals, st.Depth, st.MinorFaults, st.MajorFaults)
	return 0
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

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
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
