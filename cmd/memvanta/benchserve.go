package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/native/serve"
	"github.com/memvanta/memvanta/native/telemetry"
)

// benchServeResult is what bench-serve reports for one K.
type benchServeResult struct {
	Clients     int     `json:"clients"`
	Slots       int     `json:"slots"`
	PromptTok   int     `json:"prompt_tokens_per_request"`
	GenTok      int     `json:"generated_tokens"`
	WallSec     float64 `json:"wall_seconds"`
	AggTokS     float64 `json:"aggregate_tok_per_s"`
	PerStream   float64 `json:"per_stream_tok_per_s"`
	TTFTp50     float64 `json:"ttft_p50_seconds"`
	TTFTp99     float64 `json:"ttft_p99_seconds"`
	CPUSec      float64 `json:"cpu_seconds"`      // process user+system time of the timed run
	CPUPerTok   float64 `json:"cpu_ms_per_token"` // CPUSec per generated token
	RSSBefore   int64   `json:"rss_after_warmup_bytes"`
	PeakRSS     int64   `json:"peak_rss_bytes"`
	KVBytes     int64   `json:"kv_cache_bytes"`
	Kernels     string  `json:"kernels"`
	EngineSteps int64   `json:"engine_steps"`
	Round       int     `json:"round,omitempty"`
}

func runBenchServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("bench-serve", "bench-serve -m MODEL [--clients 8 | --clients 1,8 --rounds 3] [-np N] [-n 128] [-p 32] [--json]",
		"Serve the model on a loopback port and drive K concurrent streaming clients through the\n"+
			"OpenAI completions endpoint (greedy unless --temp, end-of-text ignored, each with a different prompt), with\n"+
			"serve's scheduling (a step computes at most --step-tokens, default -b, tokens).\n"+
			"After one untimed warm-up request, reports aggregate generated tok/s, time to first token p50/p99,\n"+
			"the process CPU time per generated token and peak RSS.\n\n"+
			"With several K (--clients 1,8) or --rounds R, every (round, K) runs in a fresh process of its own\n"+
			"(so peak RSS belongs to that K), alternating K within each round, and a summary gives the\n"+
			"medians and the per-round ratios of aggregate tok/s against the first K: on a shared machine only\n"+
			"such side-by-side ratios mean much. The clients run in the server's process; their share of the\n"+
			"CPU profile (--cpuprofile) is below 1%.")
	var mf modelFlags
	var clientList string
	var slots, n, p, rounds, stepTokens int
	var temp float32
	var jsonOut bool
	var cpuProfile string
	c.group("Load")
	c.stringVar(&clientList, "clients", "K[,K...]", "8", "concurrent streaming clients; a list runs each K in turn")
	c.intVar(&rounds, "rounds", "R", 1, "rounds over the --clients list, each K in its own process")
	c.intVar(&slots, "np|parallel", "N", 0, "server slots (0 = the number of clients)")
	c.intVar(&n, "n|predict", "N", 128, "tokens each client generates")
	c.intVar(&p, "p|prompt-tokens", "N", 32, "approximate prompt tokens per client")
	c.intVar(&stepTokens, "step-tokens", "N", 0, "tokens one scheduler step computes at most, as serve's (0 = -b)")
	c.float32Var(&temp, "temp|temperature", "T", 0, "sampling temperature of every request (0 = greedy; > 0 samples the whole vocabulary, as OpenAI's defaults do)")
	c.boolVar(&jsonOut, "json", "print JSON (one document per run; with several runs, the runs and the summary)")
	c.stringVar(&cpuProfile, "cpuprofile", "FILE", "", "write a Go CPU profile of the timed run (server and clients) to FILE (one K, one round)")
	mf.register(c, "total context, divided among the slots (0 = enough for every slot's prompt and generation)")
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	if err := mf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	var ks []int
	for _, f := range strings.Split(clientList, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > 256 {
			return c.usageErr(stderr, "--clients %q: want numbers in [1, 256], comma-separated", clientList)
		}
		ks = append(ks, k)
	}
	if n < 1 || p < 1 || slots < 0 || rounds < 1 || rounds > 100 || !(temp >= 0 && temp <= 2) || stepTokens < 0 {
		return c.usageErr(stderr, "-n >= 1, -p >= 1, -np >= 0, --rounds in [1, 100], --temp in [0, 2], --step-tokens >= 0")
	}
	if len(ks) > 1 || rounds > 1 {
		if cpuProfile != "" {
			return c.usageErr(stderr, "--cpuprofile needs one K and one round")
		}
		return benchServeRounds(ctx, args, ks, rounds, jsonOut, stdout, stderr)
	}
	clients := ks[0]
	if slots == 0 {
		slots = clients
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memvanta bench-serve: "+format+"\n", a...)
		return exitRuntime
	}
	total := mf.ctx
	mf.ctx = 0
	l, status := openModel(ctx, &mf, stderr)
	if status != exitOK {
		return status
	}
	defer l.Close()
	tok := l.tok
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven small birds sing about rivers mountains and stars")
	prompt := func(i int) string {
		var sb strings.Builder
		fmt.Fprintf(&sb, "client %d:", i)
		for j := 0; j < p; j++ {
			sb.WriteString(" " + words[(i*7+j*3)%len(words)])
		}
		return sb.String()
	}
	// Each slot holds its prompt and n generated tokens (the engine ends a
	// request one position before the slot is full).
	perSlot := 0
	for i := 0; i < clients; i++ {
		perSlot = max(perSlot, len(tok.Encode(prompt(i), true, false))+n+2)
	}
	if total > 0 {
		perSlot = total / slots
	}
	eng, err := engine.New(engine.Batched{M: l.m}, tok, engine.Options{Slots: slots, Queue: clients + 1, CtxPerSlot: perSlot, StepTokens: cmp.Or(stepTokens, mf.batch)})
	if err != nil {
		return fail("%v", err)
	}
	ectx, stopEng := context.WithCancel(ctx)
	engDone := make(chan struct{})
	go func() { _ = eng.Run(ectx); close(engDone) }()
	defer func() { stopEng(); <-engDone }()
	tmpl, _ := chat.Builtin(chat.Fallback)
	greedy := sample.Params{Temp: 0, TopP: 1, RepeatPenalty: 1}
	srv := serve.New(serve.Config{ModelID: "bench", Defaults: &greedy})
	srv.Ready(&serve.Backend{Engine: eng, Tokenizer: tok, Template: tmpl, NCtx: perSlot})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail("%v", err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	url := "http://" + ln.Addr().String() + "/v1/completions"
	// Warm-up: one short request touches every weight page (the mapping is
	// faulted in once) so the timed run measures steady-state serving.
	if h, err := eng.Submit(ctx, engine.Request{Prompt: tok.Encode("warm up", true, false), Sample: greedy, MaxTokens: 2}); err == nil {
		_, _, _ = h.Collect(ctx)
	}
	rssBefore, _ := telemetry.CurrentRSS()

	ttft := make([]float64, clients)
	gen := make([]int, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	u0, _ := telemetry.Rusage()
	if cpuProfile != "" {
		stop, err := startCPUProfile(cpuProfile)
		if err != nil {
			return fail("%v", err)
		}
		defer stop()
	}
	start := time.Now()
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(map[string]any{"prompt": prompt(i), "max_tokens": n, "stream": true, "ignore_eos": true,
				"temperature": temp, "seed": i, "stream_options": map[string]bool{"include_usage": true}})
			t0 := time.Now()
			req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				line := strings.TrimPrefix(sc.Text(), "data: ")
				if line == "" || line == "[DONE]" {
					continue
				}
				var ev struct {
					Choices []struct{ Text string } `json:"choices"`
					Usage   *struct {
						CompletionTokens int `json:"completion_tokens"`
					} `json:"usage"`
					Error *struct{ Message string } `json:"error"`
				}
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					errs[i] = err
					return
				}
				if ev.Error != nil {
					errs[i] = errors.New(ev.Error.Message)
					return
				}
				if ttft[i] == 0 && len(ev.Choices) > 0 && ev.Choices[0].Text != "" {
					ttft[i] = time.Since(t0).Seconds()
				}
				if ev.Usage != nil {
					gen[i] = ev.Usage.CompletionTokens
				}
			}
			errs[i] = sc.Err()
		}()
	}
	wg.Wait()
	wall := time.Since(start).Seconds()
	u1, _ := telemetry.Rusage()
	for i, err := range errs {
		if err != nil {
			return fail("client %d: %v", i, err)
		}
	}
	r := benchServeResult{Clients: clients, Slots: slots, PromptTok: p, WallSec: wall, RSSBefore: rssBefore,
		PeakRSS: telemetry.PeakRSS(), Kernels: l.m.Kernels().Name}
	for _, g := range gen {
		r.GenTok += g
	}
	r.AggTokS = float64(r.GenTok) / wall
	r.CPUSec = (u1.CPU - u0.CPU).Seconds()
	if r.GenTok > 0 {
		r.CPUPerTok = 1000 * r.CPUSec / float64(r.GenTok)
	}
	r.PerStream = r.AggTokS / float64(clients)
	sort.Float64s(ttft)
	r.TTFTp50 = ttft[(len(ttft)-1)/2]
	r.TTFTp99 = ttft[min(len(ttft)-1, int(float64(len(ttft))*0.99))]
	st := eng.Stats()
	r.KVBytes, r.EngineSteps = st.KVBytes, st.Steps
	if jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(r)
		return exitOK
	}
	fmt.Fprintln(stdout, r.line())
	return exitOK
}

func (r *benchServeResult) line() string {
	return fmt.Sprintf("clients %d, slots %d: generated %d tok in %.2f s = %.2f tok/s aggregate (%.2f per stream) | TTFT p50 %.3f s p99 %.3f s | CPU %.1f ms/tok | RSS after warm-up %.1f MiB, peak %.1f MiB, kv %.1f MiB | kernels %s | %d steps",
		r.Clients, r.Slots, r.GenTok, r.WallSec, r.AggTokS, r.PerStream, r.TTFTp50, r.TTFTp99, r.CPUPerTok,
		mib(r.RSSBefore), mib(r.PeakRSS), mib(r.KVBytes), r.Kernels, r.EngineSteps)
}

// benchServeRounds runs every (round, K) as a child bench-serve process,
// alternating K within a round, and summarises.
func benchServeRounds(ctx context.Context, args []string, ks []int, rounds int, jsonOut bool, stdout, stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "memvanta bench-serve: %v\n", err)
		return exitRuntime
	}
	var runs []benchServeResult
	byK := map[int][]benchServeResult{}
	for round := 1; round <= rounds; round++ {
		for _, k := range ks {
			// The flag layer keeps the last value of a repeated option.
			cargs := append(append([]string{"bench-serve"}, args...), "--clients", strconv.Itoa(k), "--rounds", "1", "--json")
			cmd := exec.CommandContext(ctx, exe, cargs...)
			cmd.Stderr = stderr
			out, err := cmd.Output()
			if ctx.Err() != nil {
				return exitInterrupted
			}
			if err != nil {
				fmt.Fprintf(stderr, "memvanta bench-serve: round %d, %d clients: %v\n", round, k, err)
				return exitRuntime
			}
			var r benchServeResult
			if err := json.Unmarshal(out, &r); err != nil {
				fmt.Fprintf(stderr, "memvanta bench-serve: round %d, %d clients: reading the result: %v\n", round, k, err)
				return exitRuntime
			}
			r.Round = round
			runs = append(runs, r)
			byK[k] = append(byK[k], r)
			if !jsonOut {
				fmt.Fprintf(stdout, "round %d/%d  %s\n", round, rounds, r.line())
			}
		}
	}
	type kSummary struct {
		Clients       int       `json:"clients"`
		AggTokS       float64   `json:"aggregate_tok_per_s_median"`
		TTFTp50       float64   `json:"ttft_p50_seconds_median"`
		TTFTp99       float64   `json:"ttft_p99_seconds_median"`
		CPUPerTok     float64   `json:"cpu_ms_per_token_median"`
		PeakRSS       int64     `json:"peak_rss_bytes_max"`
		KVBytes       int64     `json:"kv_cache_bytes"`
		Ratio         []float64 `json:"aggregate_ratio_per_round,omitempty"` // against the first K, same round
		RatioMedian   float64   `json:"aggregate_ratio_median,omitempty"`
		CPURatioMedia float64   `json:"cpu_per_token_ratio_median,omitempty"` // first K's CPU per token over this K's
	}
	median := func(rs []benchServeResult, f func(benchServeResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		return medianOf(v)
	}
	var sum []kSummary
	base := byK[ks[0]]
	seen := map[int]bool{}
	for _, k := range ks {
		if seen[k] {
			continue
		}
		seen[k] = true
		rs := byK[k]
		s := kSummary{Clients: k,
			AggTokS:   median(rs, func(r benchServeResult) float64 { return r.AggTokS }),
			TTFTp50:   median(rs, func(r benchServeResult) float64 { return r.TTFTp50 }),
			TTFTp99:   median(rs, func(r benchServeResult) float64 { return r.TTFTp99 }),
			CPUPerTok: median(rs, func(r benchServeResult) float64 { return r.CPUPerTok })}
		for _, r := range rs {
			s.PeakRSS = max(s.PeakRSS, r.PeakRSS)
			s.KVBytes = r.KVBytes
		}
		if k != ks[0] {
			var cpu []float64
			for i := range rs {
				if i < len(base) && base[i].AggTokS > 0 && rs[i].CPUPerTok > 0 {
					s.Ratio = append(s.Ratio, rs[i].AggTokS/base[i].AggTokS)
					cpu = append(cpu, base[i].CPUPerTok/rs[i].CPUPerTok)
				}
			}
			s.RatioMedian, s.CPURatioMedia = medianOf(s.Ratio), medianOf(cpu)
		}
		sum = append(sum, s)
	}
	if jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"runs": runs, "summary": sum})
		return exitOK
	}
	fmt.Fprintf(stdout, "\nmedians over %d round(s), each K in its own process, K alternating within a round:\n", rounds)
	fmt.Fprintf(stdout, "%8s %12s %10s %10s %12s %14s %10s\n", "clients", "agg tok/s", "TTFT p50", "TTFT p99", "CPU ms/tok", "peak RSS MiB", "KV MiB")
	for _, s := range sum {
		fmt.Fprintf(stdout, "%8d %12.2f %10.3f %10.3f %12.1f %14.1f %10.1f\n", s.Clients, s.AggTokS, s.TTFTp50, s.TTFTp99, s.CPUPerTok, mib(s.PeakRSS), mib(s.KVBytes))
	}
	for _, s := range sum[1:] {
		rs := make([]string, len(s.Ratio))
		for i, v := range s.Ratio {
			rs[i] = fmt.Sprintf("%.2f", v)
		}
		fmt.Fprintf(stdout, "%d vs %d clients: aggregate tok/s ratio per round %s (median %.2fx); CPU time per token %.2fx less\n",
			s.Clients, ks[0], strings.Join(rs, ", "), s.RatioMedian, s.CPURatioMedia)
	}
	return exitOK
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = append([]float64(nil), v...)
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
