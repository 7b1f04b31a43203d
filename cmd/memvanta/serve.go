package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/native/serve"
	"github.com/memvanta/memvanta/native/telemetry"
	"github.com/memvanta/memvanta/native/weights"
)

// serveFlags are the server's own options (llama-server's spellings).
type serveFlags struct {
	host, apiKey, template    string
	aliases                   []string
	reasoningFormat           string
	port, slots, queue, chunk int
	stepTokens                int
	timeout, drain            int
	maxBody                   int
	embeddings, reranking     bool
	shift                     shiftFlags
	pooling                   string

	// Several models (serve_models.go).
	modelsDir, keepAlive string
	loadWait             int
}

func (f *serveFlags) register(c *cli) {
	c.group("Server")
	c.stringVar(&f.host, "host", "ADDR", "127.0.0.1", "address to listen on")
	c.intVar(&f.port, "port", "N", 8080, "TCP port to listen on (0 = any free port, printed)")
	c.intVar(&f.slots, "np|parallel", "N", 4, "slots: requests generated concurrently; -c is divided among them")
	c.intVar(&f.queue, "max-queue", "N", 64, "requests waiting for a slot before new ones get 429")
	c.intVar(&f.chunk, "prefill-chunk", "N", 64, "prompt tokens a slot computes per scheduler step (long prompts interleave with decoding)")
	c.intVar(&f.stepTokens, "step-tokens", "N", 0, "tokens one scheduler step computes at most: every generating slot's token, then prompt chunks, oldest first (0 = -b, one pass over the weights; llama-server's -b, vLLM's max_num_batched_tokens)")
	c.stringVar(&f.apiKey, "api-key", "KEY", "", "require \"Authorization: Bearer KEY\" on every endpoint but /health and /metrics (also read from MEMVANTA_API_KEY)")
	c.listVar(&f.aliases, "a|alias", "NAME", "model id in /v1/models and requests (default: the file name without .gguf); with several -m, one per -m in order")
	c.stringVar(&f.template, "chat-template", "NAME|FILE", "", "chat template: a built-in name ("+strings.Join(chat.Builtins(), ", ")+") or a Jinja file (default: the model's own, else "+chat.Fallback+")")
	c.intVar(&f.timeout, "to|timeout", "SECONDS", 600, "per-request deadline")
	c.intVar(&f.drain, "drain-timeout", "SECONDS", 30, "on SIGTERM/Ctrl-C, how long in-flight requests may take to finish")
	c.intVar(&f.maxBody, "max-body", "BYTES", 4<<20, "largest request body accepted")
	c.stringVar(&f.reasoningFormat, "reasoning-format", "FORMAT", "auto", "where a reasoning model's <think> thoughts go: none (left in content), deepseek (message.reasoning_content), auto (deepseek when the chat template writes <think>); requests may override with reasoning_format")
	c.boolVar(&f.embeddings, "embedding|embeddings", "accepted for llama-server command lines: /v1/embeddings answers whenever the model pools (pooling_type or --pooling)")
	c.stringVar(&f.pooling, "pooling", "TYPE", "", "pooling for /v1/embeddings when the file names none, or to override it: last (decoder embedding models); mean, cls, last or rank (encoders: bert, nomic-bert)")
	c.boolVar(&f.reranking, "reranking|rerank", "serve /v1/rerank (llama-server's flag): rank pooling, for an encoder with a classifier head (bge-reranker)")
	f.shift.register(c, false)
	c.group("Several models (more than one -m, --models-dir, or no -m: the pulled models)")
	c.stringVar(&f.modelsDir, "models-dir", "DIR", "", "serve every GGUF file under DIR, each loaded on its first request (id: the file name without .gguf)")
	c.stringVar(&f.keepAlive, "keep-alive", "DURATION", "5m", "how long a model stays loaded after its last request (a request's keep_alive overrides it; 0 = unload at once, negative = until memory is needed)")
	c.intVar(&f.loadWait, "load-timeout", "SECONDS", 120, "how long a request for a model that does not fit in --mem-budget waits for other models' requests to finish before a 503")
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("serve", "serve -m MODEL [--host 127.0.0.1] [--port 8080] [-np 4] [-c N] [--api-key KEY] [flags]",
		"Serve the model over an OpenAI-compatible HTTP API (/v1/completions, /v1/chat/completions,\n"+
			"/v1/models), llama-server's /tokenize, /detokenize, /apply-template and /health, and\n"+
			"Prometheus metrics at /metrics. Sampling flags are the defaults for fields a request omits.")
	mf := modelFlags{multi: true}
	var sf samplingFlags
	var f serveFlags
	f.register(c)
	sf.register(c)
	mf.register(c, "total context in tokens, divided among the -np slots (0 = the model's training context)")
	var spf specFlags
	spf.register(c)
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	several := len(mf.paths) != 1 || f.modelsDir != ""
	var budget int64
	if several {
		if mf.mem == "budget" || mf.memStream != "" {
			return c.usageErr(stderr, "with several models --mem-budget bounds all loaded models' weights and KV caches together (weights stay mapped); --mem budget and --mem-stream are for one -m")
		}
		if mf.memBudget != "" {
			b, err := weights.ParseSize(mf.memBudget)
			if err != nil {
				return c.usageErr(stderr, "--mem-budget %q: %v", mf.memBudget, err)
			}
			budget, mf.memBudget = b, ""
		}
		if spf.enabled() {
			return c.usageErr(stderr, "speculative decoding (-md, --spec-type) is for one -m: with several models each would need its own draft")
		}
		if len(f.aliases) > len(mf.paths) {
			return c.usageErr(stderr, "%d --alias for %d -m: aliases name the -m files in order", len(f.aliases), len(mf.paths))
		}
	} else {
		mf.path = mf.paths[0]
		if len(f.aliases) > 1 {
			return c.usageErr(stderr, "one --alias for one -m")
		}
	}
	if f.pooling != "" {
		if _, err := arch.ParsePooling(f.pooling); err != nil {
			return c.usageErr(stderr, "--%v", err)
		}
	}
	if f.reranking {
		if f.pooling != "" && f.pooling != "rank" {
			return c.usageErr(stderr, "--reranking with --pooling %s: reranking pools by rank", f.pooling)
		}
		f.pooling = "rank"
	}
	if err := mf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if err := spf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	switch {
	case f.port < 0 || f.port > 65535:
		return c.usageErr(stderr, "--port %d: must be in [0, 65535]", f.port)
	case f.slots < 1 || f.slots > 256:
		return c.usageErr(stderr, "-np %d: must be in [1, 256]", f.slots)
	case f.queue < 1:
		return c.usageErr(stderr, "--max-queue %d: must be >= 1", f.queue)
	case f.chunk < 1:
		return c.usageErr(stderr, "--prefill-chunk %d: must be >= 1", f.chunk)
	case f.stepTokens < 0:
		return c.usageErr(stderr, "--step-tokens %d: must be >= 0", f.stepTokens)
	case f.timeout < 1 || f.drain < 0 || f.maxBody < 1024:
		return c.usageErr(stderr, "--timeout must be >= 1, --drain-timeout >= 0, --max-body >= 1024")
	}
	smp, err := sf.build(0, nil)
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	rf, err := chat.ParseReasoningFormat(f.reasoningFormat)
	if err != nil {
		return c.usageErr(stderr, "--reasoning-format: %v", err)
	}
	if len(smp.biases) > 0 || sf.ignoreEOS {
		return c.usageErr(stderr, "--logit-bias and --ignore-eos are per request in serve (logit_bias, ignore_eos fields)")
	}
	if f.apiKey == "" {
		f.apiKey = os.Getenv("MEMVANTA_API_KEY")
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memvanta serve: "+format+"\n", a...)
		return exitRuntime
	}
	if several {
		return runServeModels(ctx, c, &mf, &f, smp.params, rf, budget, stderr)
	}
	var id string
	if len(f.aliases) == 1 {
		id = f.aliases[0]
	}
	if id == "" {
		id = strings.TrimSuffix(filepath.Base(mf.path), ".gguf")
	}
	defaults := smp.params
	srv := serve.New(serve.Config{ModelID: id, APIKey: f.apiKey, MaxBody: int64(f.maxBody),
		Timeout: time.Duration(f.timeout) * time.Second, Defaults: &defaults, ReasoningFormat: rf})

	// Listen before loading, so /health answers 503 while the model loads.
	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		return fail("%v", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	fmt.Fprintf(stderr, "memvanta serve: listening on http://%s (loading %s)\n", ln.Addr(), mf.path)

	slotCtx := mf.ctx
	mf.ctx = 0
	l, status := openModel(ctx, &mf, stderr)
	if status != exitOK {
		hs.Close()
		return status
	}
	defer l.Close()
	spec, closeDraft, status := spf.open(ctx, &mf, l, stderr)
	if status != exitOK {
		hs.Close()
		return status
	}
	defer closeDraft()
	if f.stepTokens == 0 {
		f.stepTokens = mf.batch
	}
	be, eng, err := newBackend(l, &f, slotCtx, spec, stderr)
	if err != nil {
		hs.Close()
		var ue slotsError
		if errors.As(err, &ue) {
			return c.usageErr(stderr, "%v", err)
		}
		return fail("%v", err)
	}
	perSlot, tmpl := be.NCtx, be.Template
	engCtx, stopEngine := context.WithCancel(context.Background())
	engDone := make(chan struct{})
	go func() { _ = eng.Run(engCtx); close(engDone) }()
	srv.Ready(be)
	fmt.Fprintf(stderr, "memvanta serve: model %q ready: %d slots x %d tokens, template %s, kernels %s\n",
		id, f.slots, perSlot, tmpl.Name(), l.m.Kernels().Name)

	status = exitOK
	select {
	case err := <-serveErr:
		stopEngine()
		<-engDone
		return fail("%v", err)
	case <-ctx.Done():
	}
	// Drain: stop accepting, let in-flight requests finish within the
	// drain timeout, then stop the rest with an error event (never a
	// silently truncated response).
	fmt.Fprintf(stderr, "memvanta serve: shutting down; draining in-flight requests (up to %ds)\n", f.drain)
	dctx, dcancel := context.WithTimeout(context.Background(), time.Duration(f.drain)*time.Second)
	defer dcancel()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(dctx) }()
	if err := eng.Drain(dctx); err != nil {
		fmt.Fprintf(stderr, "memvanta serve: %v; stopping the remaining requests\n", err)
		status = exitInterrupted
	}
	stopEngine()
	<-engDone
	if err := <-shut; err != nil {
		hs.Close()
	}
	st := eng.Stats()
	fmt.Fprintf(stderr, "memvanta serve: stopped | prompt %d tok (+%d reused) | generated %d tok%s%s | peak RSS %.1f MiB | kv %.1f MiB\n",
		st.PromptTokens, st.CachedTokens, st.GenTokens, specLine(st), shiftLine(f.shift.enabled(), st), mib(telemetry.PeakRSS()), mib(st.KVBytes))
	return status
}

// slotsError is a -c too small for -np: a usage error.
type slotsError struct{ ctx, slots, perSlot int }

func (e slotsError) Error() string {
	return fmt.Sprintf("-c %d over -np %d leaves %d positions per slot", e.ctx, e.slots, e.perSlot)
}

// newBackend builds the serving side of a loaded model: its chat template,
// its slots' share of the context (slotCtx 0: the model's), the pooling
// /v1/embeddings and /v1/rerank use, the encoder when the model is one, and
// the engine (not yet running) with speculative decoding when spec is set.
func newBackend(l *loaded, f *serveFlags, slotCtx int, spec *engine.Spec, stderr io.Writer) (*serve.Backend, *engine.Engine, error) {
	tmpl, err := chat.Resolve(f.template, l.rt.File(), os.ReadFile, chat.Limits{})
	if err != nil {
		return nil, nil, err
	}
	if slotCtx == 0 {
		slotCtx = l.m.KV().Cap()
	}
	perSlot := slotCtx / f.slots
	if perSlot < 2 {
		return nil, nil, slotsError{slotCtx, f.slots, perSlot}
	}
	pool, pooled, err := arch.PoolingOf(l.rt.File())
	if err != nil {
		return nil, nil, err
	}
	if f.pooling != "" {
		pooled = true
		if pool, err = arch.ParsePooling(f.pooling); err != nil { // checked with the flags
			return nil, nil, fmt.Errorf("--%w", err)
		}
	}
	encoder := l.m.Cfg.Encoder
	embeddings := pooled && (pool == arch.PoolLast || encoder && (pool == arch.PoolMean || pool == arch.PoolCLS))
	if f.embeddings && !embeddings {
		fmt.Fprintf(stderr, "memvanta serve: warning: --embeddings: this build serves last-token pooled embeddings of decoders and mean, cls or last pooled ones of encoders (the model pools %v); /v1/embeddings will refuse requests\n", pool)
	}
	var enc *serve.Encoder
	if encoder {
		// An encoder runs outside the scheduler (serve.Encoder), on the
		// whole context; generation requests are refused by the model.
		enc = serve.NewEncoder(l.m, pool)
		if pool == arch.PoolNone || !pooled {
			fmt.Fprintf(stderr, "memvanta serve: warning: the model is an encoder pooling nothing (pooling_type none or absent): give --pooling mean|cls|last, or --reranking\n")
		}
	}
	if f.reranking && !(encoder && l.m.Cfg.ClsOutput) {
		fmt.Fprintf(stderr, "memvanta serve: warning: --reranking: the model is not an encoder with a classifier head (cls.output); /v1/rerank refuses a decoder and scores by the first hidden-state value of an encoder without one (as llama.cpp)\n")
	}
	nctx := perSlot
	if encoder {
		nctx = slotCtx // the model's own context, not a slot's
	}
	eng, err := engine.New(engine.Batched{M: l.m}, l.tok, engine.Options{Slots: f.slots, Queue: f.queue, CtxPerSlot: perSlot, Chunk: f.chunk, StepTokens: f.stepTokens, Spec: spec,
		ContextShift: f.shift.enabled()})
	if err != nil {
		return nil, nil, err
	}
	return &serve.Backend{Engine: eng, Tokenizer: l.tok, Template: tmpl, NCtx: nctx, Embeddings: embeddings, Encoder: enc}, eng, nil
}
