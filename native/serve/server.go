package serve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/core/tokenizer"
)

// Config is the server's behaviour that does not come from the model.
type Config struct {
	ModelID          string        // the id /v1/models lists and requests must name (or omit)
	APIKey           string        // when set, every endpoint but /health and /metrics needs "Authorization: Bearer KEY"
	MaxBody          int64         // request body limit in bytes (default 4 MiB)
	Timeout          time.Duration // per-request deadline (default 10 min)
	DefaultMaxTokens int           // completions without max_tokens (default 16, as OpenAI); chat runs to the context limit
	// Defaults are the sampling settings for fields a request omits (the
	// seed excepted: a request without one gets a random seed). nil means
	// OpenAI's: temperature 1, top_p 1, no top-k, min-p or repeat penalty.
	Defaults *sample.Params
	// ReasoningFormat is the default of the reasoning_format request
	// field (--reasoning-format): whether thoughts go to
	// reasoning_content. The zero value is llama-server's default, auto.
	ReasoningFormat chat.ReasoningFormat
	// Models, when set, serves several models in one memory budget
	// (router.go): requests name one, which is loaded on demand, and
	// ModelID is unused. nil: the one model attached with Ready.
	Models *Router
}

// Backend is what the server needs once the model is loaded.
type Backend struct {
	Engine    *engine.Engine
	Tokenizer *tokenizer.Tokenizer
	Template  *chat.Template
	NCtx      int // per-slot context
	// Embeddings: the model pools its last token (pooling_type last, or
	// serve --pooling last), or is an encoder pooling by mean, CLS or last
	// token, so /v1/embeddings answers.
	Embeddings bool
	// Encoder, when the model is an encoder (bert, nomic-bert), computes
	// its embeddings and rerank scores (rerank.go) instead of the Engine.
	Encoder *Encoder
	// ID is the model's id in replies when a Router serves several (set
	// by the router); empty: Config.ModelID.
	ID string
}

// Server serves the HTTP API. It answers /health with 503 until Ready.
type Server struct {
	cfg     Config
	be      atomic.Pointer[Backend]
	metrics *metrics
	mux     *http.ServeMux
	created int64
	wg      sync.WaitGroup
	// grammars: recent requests' grammars by source, so a recurring
	// schema keeps its matcher's masks in the engine.
	grammars grammarCache
}

// New makes a server; the model is attached later with Ready.
func New(cfg Config) *Server {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 4 << 20
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	if cfg.DefaultMaxTokens <= 0 {
		cfg.DefaultMaxTokens = 16
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), created: time.Now().Unix()}
	s.metrics = newMetrics(s)
	s.mux.HandleFunc("GET /health", s.health)
	s.mux.Handle("GET /metrics", s.metrics.handler())
	s.mux.HandleFunc("GET /v1/models", s.auth(s.models))
	s.mux.HandleFunc("GET /models", s.auth(s.models))
	s.mux.HandleFunc("POST /v1/completions", s.auth(s.ready(s.completions)))
	s.mux.HandleFunc("POST /completions", s.auth(s.ready(s.completions)))
	s.mux.HandleFunc("POST /v1/chat/completions", s.auth(s.ready(s.chatCompletions)))
	s.mux.HandleFunc("POST /chat/completions", s.auth(s.ready(s.chatCompletions)))
	s.mux.HandleFunc("POST /v1/embeddings", s.auth(s.ready(s.embeddings)))
	s.mux.HandleFunc("POST /embeddings", s.auth(s.ready(s.embeddings)))
	for _, p := range []string{"/v1/rerank", "/rerank", "/v1/reranking", "/reranking"} {
		s.mux.HandleFunc("POST "+p, s.auth(s.ready(s.rerank)))
	}
	s.mux.HandleFunc("POST /tokenize", s.auth(s.ready(s.tokenize)))
	s.mux.HandleFunc("POST /detokenize", s.auth(s.ready(s.detokenize)))
	s.mux.HandleFunc("POST /apply-template", s.auth(s.ready(s.applyTemplate)))
	s.mux.HandleFunc("GET /api/ps", s.auth(s.ps))
	if cfg.Models != nil {
		s.mux.HandleFunc("POST /models/load", s.auth(s.modelsLoad))
		s.mux.HandleFunc("POST /models/unload", s.auth(s.modelsUnload))
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{status: http.StatusNotFound, Message: fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path), Type: "not_found_error"})
	})
	return s
}

// Ready attaches the loaded model; /health turns 200.
func (s *Server) Ready(b *Backend) { s.be.Store(b) }

// Handler is the HTTP handler, with panics turned into 500s.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				writeError(w, &apiError{status: 500, Message: fmt.Sprintf("internal error: %v", p), Type: "server_error"})
			}
		}()
		s.mux.ServeHTTP(w, r)
	})
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if s.be.Load() == nil && s.cfg.Models == nil {
		writeError(w, &apiError{status: http.StatusServiceUnavailable, Message: "Loading model", Type: "unavailable_error", Code: 503})
		return
	}
	writeJSON(w, 200, map[string]string{"status": "ok"})
}

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	if s.cfg.APIKey == "" {
		return h
	}
	want := []byte("Bearer " + s.cfg.APIKey)
	return func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			s.metrics.rejected.WithLabelValues("401").Inc()
			writeError(w, &apiError{status: http.StatusUnauthorized, Message: "invalid or missing API key", Type: "authentication_error", Code: "invalid_api_key"})
			return
		}
		h(w, r)
	}
}

func (s *Server) ready(h func(http.ResponseWriter, *http.Request, *Backend)) http.HandlerFunc {
	if s.cfg.Models != nil {
		return s.routed(h)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		b := s.be.Load()
		if b == nil {
			s.metrics.rejected.WithLabelValues("503").Inc()
			writeError(w, &apiError{status: http.StatusServiceUnavailable, Message: "Loading model", Type: "unavailable_error", Code: 503})
			return
		}
		h(w, r, b)
	}
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Models != nil {
		s.routedModels(w, r)
		return
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": []any{map[string]any{
		"id": s.cfg.ModelID, "object": "model", "created": s.created, "owned_by": "memvanta",
	}}})
}

// buildRequest validates the shared generation fields.
func (s *Server) buildRequest(f *samplingFields, defMax int, b *Backend) (engine.Request, *apiError) {
	var r engine.Request
	if f.Model != nil && *f.Model != "" && *f.Model != s.idOf(b) {
		return r, &apiError{status: 400, Message: fmt.Sprintf("model %q is not served here (have %q)", *f.Model, s.idOf(b)), Type: "invalid_request_error", Code: "model_not_found", Param: strp("model")}
	}
	if b.Encoder != nil {
		// An encoder has no causal next-token head: it serves embeddings
		// and rerank only, and says so rather than failing mid-generation.
		return r, &apiError{status: 400, Message: fmt.Sprintf("model %q is an encoder (embeddings and rerank only): it does not generate text", s.idOf(b)), Type: "invalid_request_error", Param: strp("model")}
	}
	if f.N != nil && (*f.N < 1 || *f.N > engine.MaxChoices) {
		return r, invalid("n", "n must be in [1, %d], got %d", engine.MaxChoices, *f.N)
	}
	r.MaxTokens = defMax
	for _, mt := range []struct {
		name string
		v    *int
	}{{"max_tokens", f.MaxTokens}, {"max_completion_tokens", f.MaxCompletion}} {
		if mt.v == nil {
			continue
		}
		if *mt.v < 0 {
			return r, invalid(mt.name, "%s must be >= 0, got %d", mt.name, *mt.v)
		}
		r.MaxTokens = *mt.v
	}
	if r.MaxTokens == 0 && (f.MaxTokens != nil || f.MaxCompletion != nil) {
		return r, invalid("max_tokens", "max_tokens must be >= 1")
	}
	p := sample.Params{Temp: 1, TopK: 0, TopP: 1, MinP: 0, RepeatPenalty: 1, RepeatLastN: 64}
	if s.cfg.Defaults != nil {
		p = *s.cfg.Defaults
	}
	floats := []struct {
		name   string
		v      *float64
		dst    *float32
		lo, hi float64
	}{
		{"temperature", f.Temperature, &p.Temp, 0, 2},
		{"top_p", f.TopP, &p.TopP, 0, 1},
		{"min_p", f.MinP, &p.MinP, 0, 1},
		{"repeat_penalty", f.RepeatPenalty, &p.RepeatPenalty, 1e-3, 10},
		{"frequency_penalty", f.FrequencyPenalty, &r.FrequencyPenalty, -2, 2},
		{"presence_penalty", f.PresencePenalty, &r.PresencePenalty, -2, 2},
	}
	for _, x := range floats {
		if x.v == nil {
			continue
		}
		if !finite(*x.v) || *x.v < x.lo || *x.v > x.hi {
			return r, invalid(x.name, "%s must be in [%g, %g], got %v", x.name, x.lo, x.hi, *x.v)
		}
		*x.dst = float32(*x.v)
	}
	if f.TopK != nil {
		if *f.TopK < 0 {
			return r, invalid("top_k", "top_k must be >= 0")
		}
		p.TopK = *f.TopK
	}
	if f.RepeatLastN != nil {
		if *f.RepeatLastN < 0 || *f.RepeatLastN > 1<<16 {
			return r, invalid("repeat_last_n", "repeat_last_n must be in [0, 65536]")
		}
		p.RepeatLastN = *f.RepeatLastN
	}
	if f.Seed != nil {
		p.Seed = uint64(*f.Seed)
	} else {
		var rb [8]byte
		_, _ = rand.Read(rb[:])
		for _, c := range rb {
			p.Seed = p.Seed<<8 | uint64(c)
		}
	}
	r.Sample = p
	stops, e := parseStop(f.Stop)
	if e != nil {
		return r, e
	}
	r.Stop = stops
	if r.LogitBias, e = parseLogitBias(f.LogitBias); e != nil {
		return r, e
	}
	r.IgnoreEOS = f.IgnoreEOS
	if f.NKeep != nil {
		switch {
		case *f.NKeep < -1:
			return r, invalid("n_keep", "n_keep must be -1 (the whole prompt) or >= 0, got %d", *f.NKeep)
		case *f.NKeep != 0 && !b.Engine.ContextShifts():
			// Without a shift nothing is ever discarded, so a keep would
			// be answered as if honoured while changing nothing.
			return r, invalid("n_keep", "n_keep %d has no effect: this server does not shift the context when a slot fills (start it with --context-shift)", *f.NKeep)
		}
		r.NKeep = *f.NKeep
	}
	return r, nil
}

func strp(s string) *string { return &s }

// encodePrompt tokenizes text, parsing special tokens when asked, and adds
// BOS as the model's metadata says unless the text already starts with it.
func encodePrompt(tok *tokenizer.Tokenizer, text string, special bool) ([]int32, error) {
	ids, err := tok.EncodeChecked(text, false, special)
	if err != nil {
		return nil, err
	}
	if tok.AddBOS() && (len(ids) == 0 || ids[0] != tok.BOS()) {
		ids = append([]int32{tok.BOS()}, ids...)
	}
	return ids, nil
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request, b *Backend) {
	var req completionRequest
	if e := decodeBody(r, w, s.cfg.MaxBody, &req, completionRules); e != nil {
		s.reject(w, e)
		return
	}
	er, e := s.buildRequest(&req.samplingFields, s.cfg.DefaultMaxTokens, b)
	if e != nil {
		s.reject(w, e)
		return
	}
	prompt, e := s.parsePrompt(req.Prompt, b)
	if e != nil {
		s.reject(w, e)
		return
	}
	er.Prompt = prompt
	if er.Grammar, e = grammarOf(&req.constraintFields, &s.grammars); e != nil {
		s.reject(w, e)
		return
	}
	if req.LogProbs != nil && *req.LogProbs > 0 {
		if *req.LogProbs > engine.MaxTopLogProbs {
			s.reject(w, invalid("logprobs", "logprobs must be in [0, %d], got %d", engine.MaxTopLogProbs, *req.LogProbs))
			return
		}
		er.LogProbs, er.TopLogProbs = true, *req.LogProbs
	}
	s.generate(w, r, b, er, &req.samplingFields, outputSpec{n: choicesOf(&req.samplingFields), logprobs: er.LogProbs})
}

// parsePrompt accepts a string, a one-element array of strings, or an array
// of token ids.
func (s *Server) parsePrompt(raw json.RawMessage, b *Backend) ([]int32, *apiError) {
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		ids, err := encodePrompt(b.Tokenizer, text, false)
		if err != nil {
			return nil, invalid("prompt", "%v", err)
		}
		return ids, nil
	}
	var texts []string
	if err := json.Unmarshal(raw, &texts); err == nil {
		if len(texts) != 1 {
			return nil, invalid("prompt", "prompt arrays must hold exactly one string (batched prompts are not supported)")
		}
		ids, err := encodePrompt(b.Tokenizer, texts[0], false)
		if err != nil {
			return nil, invalid("prompt", "%v", err)
		}
		return ids, nil
	}
	var ids []int32
	if err := json.Unmarshal(raw, &ids); err == nil && len(ids) > 0 {
		return ids, nil
	}
	return nil, invalid("prompt", "prompt must be a string, an array of one string, or an array of token ids")
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request, b *Backend) {
	var req chatRequest
	if e := decodeBody(r, w, s.cfg.MaxBody, &req, chatRules); e != nil {
		s.reject(w, e)
		return
	}
	var err error
	er, e := s.buildRequest(&req.samplingFields, 0, b)
	if e != nil {
		s.reject(w, e)
		return
	}
	vars, e := templateVars(b.Template, &req)
	if e != nil {
		s.reject(w, e)
		return
	}
	text, e := s.render(b, req.Messages, req.Tools, vars)
	if e != nil {
		s.reject(w, e)
		return
	}
	spec := outputSpec{chat: true, n: choicesOf(&req.samplingFields)}
	if spec.logprobs, er.TopLogProbs, e = chatLogProbs(&req); e != nil {
		s.reject(w, e)
		return
	}
	er.LogProbs = spec.logprobs
	rf := s.cfg.ReasoningFormat
	if req.ReasoningFormat != nil {
		if rf, err = chat.ParseReasoningFormat(*req.ReasoningFormat); err != nil {
			s.reject(w, invalid("reasoning_format", "reasoning_format: %v", err))
			return
		}
	}
	spec.reasoning = rf.Splits(b.Template)
	spec.forcedOpen = spec.reasoning && chat.ThinkingForcedOpen(text)
	ids, err := encodePrompt(b.Tokenizer, text, true)
	if err != nil {
		s.reject(w, invalid("messages", "%v", err))
		return
	}
	er.Prompt = ids
	format, force, e := toolFormat(b, req.Tools, req.ToolChoice)
	if e != nil {
		s.reject(w, e)
		return
	}
	harmony := b.Template.Harmony()
	gs, e := grammarSource(&req.constraintFields)
	if e != nil {
		s.reject(w, e)
		return
	}
	if gs != nil {
		if harmony {
			gs = harmonyFinal(gs)
		}
		if er.Grammar, e = gs.parse(&s.grammars); e != nil {
			s.reject(w, e)
			return
		}
	}
	if force.required || force.name != "" {
		if er.Grammar != nil {
			s.reject(w, invalid("tool_choice", "tool_choice %s cannot be combined with grammar, json_schema or response_format", force))
			return
		}
		if er.Grammar, e = toolGrammar(format, req.Tools, force, &s.grammars); e != nil {
			s.reject(w, e)
			return
		}
	}
	markers := format.Markers()
	switch {
	case harmony:
		// Channels and calls are parsed together, with or without tools.
		markers = chat.HarmonyMarkers()
		spec.harmony, spec.forcedOpen = true, false
	case spec.reasoning:
		markers = append(markers, chat.ThinkOpen, chat.ThinkClose)
	}
	er.Keep = MarkerTokens(b.Tokenizer, markers)
	spec.tools = format
	s.generate(w, r, b, er, &req.samplingFields, spec)
}

func (s *Server) render(b *Backend, msgsRaw, tools json.RawMessage, vars map[string]json.RawMessage) (string, *apiError) {
	if len(msgsRaw) == 0 {
		return "", invalid("messages", "messages is required")
	}
	msgs, err := chat.ParseMessages(msgsRaw)
	if err != nil {
		return "", invalid("messages", "%v", err)
	}
	if len(msgs) == 0 {
		return "", invalid("messages", "messages must not be empty")
	}
	if b.Template.Harmony() {
		msgs = chat.HarmonyHistory(msgs)
	}
	if t := strings.TrimSpace(string(tools)); t == "null" || t == "" {
		tools = nil
	}
	text, err := b.Template.Render(msgs, chat.Options{AddGenerationPrompt: true,
		BOS: b.Tokenizer.TokenText(b.Tokenizer.BOS()), EOS: b.Tokenizer.TokenText(b.Tokenizer.EOS()), Tools: tools, Vars: vars})
	if err != nil {
		return "", invalid("messages", "%v", err)
	}
	return text, nil
}

func (s *Server) reject(w http.ResponseWriter, e *apiError) {
	s.metrics.rejected.WithLabelValues(fmt.Sprint(e.status)).Inc()
	writeError(w, e)
}

func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

type usageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func usageOf(u engine.Usage) *usageJSON {
	j := &usageJSON{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
	j.PromptTokensDetails.CachedTokens = u.CachedTokens
	return j
}

func genError(err error) *apiError {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &apiError{status: http.StatusGatewayTimeout, Message: "request deadline exceeded", Type: "timeout_error", Code: "timeout"}
	case errors.Is(err, context.Canceled):
		return &apiError{status: 499, Message: "request cancelled", Type: "cancelled", Code: "cancelled"}
	case errors.Is(err, engine.ErrDrained):
		return &apiError{status: http.StatusServiceUnavailable, Message: "server shut down before the request finished", Type: "unavailable_error", Code: 503}
	}
	return &apiError{status: 500, Message: err.Error(), Type: "server_error"}
}

func (s *Server) observe(ev engine.Event, start time.Time) {
	if !ev.Done {
		return
	}
	if ev.Usage.FirstToken > 0 {
		s.metrics.ttft.Observe(ev.Usage.FirstToken.Seconds())
	}
	s.metrics.e2e.Observe(time.Since(start).Seconds())
}

// Wait blocks until every generation handler has returned (after the HTTP
// server stopped accepting), or ctx ends.
func (s *Server) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sseWriter writes server-sent events, flushing each.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newSSE(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(200)
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

func (s *sseWriter) send(v any) {
	b, _ := json.Marshal(v)
	_, _ = fmt.Fprintf(s.w, "data: %s\n\n", b)
	_ = s.rc.Flush()
}

func (s *sseWriter) done() {
	_, _ = fmt.Fprint(s.w, "data: [DONE]\n\n")
	_ = s.rc.Flush()
}
