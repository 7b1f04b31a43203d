package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/native/serve"
	"github.com/memvanta/memvanta/native/telemetry"
)

// benchServeResult is what bench-serve reports.
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
	RSSBefore   int64   `json:"rss_after_warmup_bytes"`
	PeakRSS     int64   `json:"peak_rss_bytes"`
	KVBytes     int64   `json:"kv_cache_bytes"`
	Kernels     string  `json:"kernels"`
	EngineSteps int64   `json:"engine_steps"`
}

func runBenchServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("bench-serve", "bench-serve -m MODEL [--clients 8] [-np N] [-n 128] [-p 32] [--json]",
		"Serve the model on a loopback port and drive K concurrent streaming clients through the\n"+
			"OpenAI completions endpoint (greedy, end-of-text ignored, each with a different prompt).\n"+
			"After one untimed warm-up request, reports aggregate generated tok/s, time to first token p50/p99 and peak RSS. Run one K per\n"+
			"process so peak RSS belongs to that K.")
	var mf modelFlags
	var clients, slots, n, p int
	var jsonOut bool
	c.group("Load")
	c.intVar(&clients, "clients", "K", 8, "concurrent streaming clients")
	c.intVar(&slots, "np|parallel", "N", 0, "server slots (0 = --clients)")
	c.intVar(&n, "n|predict", "N", 128, "tokens each client generates")
	c.intVar(&p, "p|prompt-tokens", "N", 32, "approximate prompt tokens per client")
	c.boolVar(&jsonOut, "json", "print one JSON document")
	mf.register(c, "total context, divided among the slots (0 = enough for every slot's prompt and generation)")
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	if err := mf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if clients < 1 || clients > 256 || n < 1 || p < 1 || slots < 0 {
		return c.usageErr(stderr, "--clients in [1, 256], -n >= 1, -p >= 1, -np >= 0")
	}
	if slots == 0 {
		slots = clients
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memvanta bench-serve: "+format+"\n", a...)
		return exitRuntime
	}
	total := mf.ctx
	mf.ctx = 0
	l, err := openModel(ctx, &mf, stderr)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return exitInterrupted
		}
		return fail("%v", err)
	}
	defer l.Close()
	tok, err := tokenizer.FromGGUF(l.rt.File())
	if err != nil {
		return fail("%v", err)
	}
	perSlot := (p + n) * 2
	if total > 0 {
		perSlot = total / slots
	}
	eng, err := engine.New(engine.Batched{M: l.m}, tok, engine.Options{Slots: slots, Queue: clients + 1, CtxPerSlot: perSlot})
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

	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven small birds sing about rivers mountains and stars")
	prompt := func(i int) string {
		var sb strings.Builder
		fmt.Fprintf(&sb, "client %d:", i)
		for j := 0; j < p; j++ {
			sb.WriteString(" " + words[(i*7+j*3)%len(words)])
		}
		return sb.String()
	}
	ttft := make([]float64, clients)
	gen := make([]int, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(map[string]any{"prompt": prompt(i), "max_tokens": n, "stream": true, "ignore_eos": true,
				"stream_options": map[string]bool{"include_usage": true}})
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
	fmt.Fprintf(stdout, "clients %d, slots %d: generated %d tok in %.2f s = %.2f tok/s aggregate (%.2f per stream) | TTFT p50 %.3f s p99 %.3f s | RSS after warm-up %.1f MiB, peak %.1f MiB, kv %.1f MiB | kernels %s | %d steps\n",
		r.Clients, r.Slots, r.GenTok, r.WallSec, r.AggTokS, r.PerStream, r.TTFTp50, r.TTFTp99,
		mib(r.RSSBefore), mib(r.PeakRSS), mib(r.KVBytes), r.Kernels, r.EngineSteps)
	return exitOK
}
