package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/internal/testmodel"
)

const modelID = "synth-test"

type fixture struct {
	url    string
	srv    *Server
	eng    *engine.Engine
	tok    *tokenizer.Tokenizer
	client openai.Client
}

// newFixture serves a synthetic model on a real loopback listener.
func newFixture(t *testing.T, cfg Config, opt engine.Options, wrap ...func(engine.Stepper) engine.Stepper) *fixture {
	t.Helper()
	m, tok := testmodel.New(t, 0)
	var st engine.Stepper = engine.Batched{M: m}
	for _, w := range wrap {
		st = w(st)
	}
	eng, err := engine.New(st, tok, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	tmpl, err := chat.Builtin(chat.Fallback)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ModelID = modelID
	s := New(cfg)
	s.Ready(&Backend{Engine: eng, Tokenizer: tok, Template: tmpl, NCtx: eng.SlotCtx()})
	hs := httptest.NewServer(s.Handler())
	// The engine stops first, so handlers waiting on it return and the
	// HTTP server can close.
	t.Cleanup(func() { cancel(); <-done; hs.Close() })
	opts := []option.RequestOption{option.WithBaseURL(hs.URL + "/v1/"), option.WithMaxRetries(0)}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	} else {
		opts = append(opts, option.WithAPIKey("unused"))
	}
	return &fixture{url: hs.URL, srv: s, eng: eng, tok: tok, client: openai.NewClient(opts...)}
}

func greedyCompletion(prompt string, n int64) openai.CompletionNewParams {
	return openai.CompletionNewParams{Model: modelID, Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String(prompt)},
		MaxTokens: openai.Int(n), Temperature: openai.Float(0)}
}

func TestOpenAICompletions(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 2})
	ctx := context.Background()
	resp, err := f.client.Completions.New(ctx, greedyCompletion("once upon a time", 12))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Text == "" || resp.Choices[0].FinishReason != "length" {
		t.Fatalf("response %+v", resp)
	}
	if resp.Usage.CompletionTokens != 12 || resp.Usage.PromptTokens == 0 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+12 {
		t.Errorf("usage %+v", resp.Usage)
	}
	full := resp.Choices[0].Text

	// Streaming gives the same text, chunk by chunk, then usage.
	p := greedyCompletion("once upon a time", 12)
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	st := f.client.Completions.NewStreaming(ctx, p)
	var sb strings.Builder
	var finish string
	var usage int64
	chunks := 0
	for st.Next() {
		c := st.Current()
		for _, ch := range c.Choices {
			sb.WriteString(ch.Text)
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
		if c.Usage.CompletionTokens > 0 {
			usage = c.Usage.CompletionTokens
		}
		chunks++
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if sb.String() != full || finish != "length" || usage != 12 || chunks < 3 {
		t.Errorf("stream %q finish %q usage %d chunks %d; non-stream %q", sb.String(), finish, usage, chunks, full)
	}

	// A stop string cuts the text before it.
	stop := full[4:7]
	p = greedyCompletion("once upon a time", 12)
	p.Stop = openai.CompletionNewParamsStopUnion{OfString: openai.String(stop)}
	resp, err = f.client.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := full[:strings.Index(full, stop)]; resp.Choices[0].Text != want || resp.Choices[0].FinishReason != "stop" {
		t.Errorf("stop %q: %q (%s), want %q", stop, resp.Choices[0].Text, resp.Choices[0].FinishReason, want)
	}
}

func TestOpenAIChat(t *testing.T) {
	f := newFixture(t, Config{APIKey: "sekret"}, engine.Options{Slots: 2})
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: modelID, Messages: []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("be brief"), openai.UserMessage("hello there")}, MaxTokens: openai.Int(10), Temperature: openai.Float(0)}
	resp, err := f.client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Message.Content == "" || resp.Choices[0].Message.Role != "assistant" ||
		resp.Choices[0].FinishReason != "length" || resp.Usage.CompletionTokens != 10 {
		t.Fatalf("chat response %+v", resp)
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	st := f.client.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	for st.Next() {
		acc.AddChunk(st.Current())
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.Choices[0].Message.Content != resp.Choices[0].Message.Content || acc.Usage.CompletionTokens != 10 {
		t.Errorf("streamed %q (usage %+v), non-streamed %q", acc.Choices[0].Message.Content, acc.Usage, resp.Choices[0].Message.Content)
	}
	// The second identical request reuses the first's cached prompt (all
	// but the last token, whose logits start the generation).
	if resp.Usage.PromptTokensDetails.CachedTokens != 0 || acc.Usage.PromptTokensDetails.CachedTokens != acc.Usage.PromptTokens-1 {
		t.Errorf("no prefix reuse: %+v", acc.Usage)
	}
	// Without the key: 401.
	noKey := openai.NewClient(option.WithBaseURL(f.url+"/v1/"), option.WithAPIKey("wrong"), option.WithMaxRetries(0))
	_, err = noKey.Chat.Completions.New(ctx, params)
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 401 {
		t.Errorf("wrong key: %v", err)
	}
}

func TestConcurrentIdenticalGreedy(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 4})
	ctx := context.Background()
	alone, err := f.client.Completions.New(ctx, greedyCompletion("the same prompt for all", 16))
	if err != nil {
		t.Fatal(err)
	}
	const n = 6
	var wg sync.WaitGroup
	texts := make([]string, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				r, err := f.client.Completions.New(ctx, greedyCompletion("the same prompt for all", 16))
				if err == nil {
					texts[i] = r.Choices[0].Text
				}
				errs[i] = err
				return
			}
			st := f.client.Completions.NewStreaming(ctx, greedyCompletion("the same prompt for all", 16))
			var sb strings.Builder
			for st.Next() {
				for _, c := range st.Current().Choices {
					sb.WriteString(c.Text)
				}
			}
			texts[i], errs[i] = sb.String(), st.Err()
		}()
	}
	wg.Wait()
	for i := range texts {
		if errs[i] != nil {
			t.Errorf("client %d: %v", i, errs[i])
		} else if texts[i] != alone.Choices[0].Text {
			t.Errorf("client %d: %q, alone %q", i, texts[i], alone.Choices[0].Text)
		}
	}
}

func TestCancelFreesSlot(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 1})
	ctx, cancel := context.WithCancel(context.Background())
	p := greedyCompletion("cancel this one", 100000) // runs until the context is full
	st := f.client.Completions.NewStreaming(ctx, p)
	if !st.Next() {
		t.Fatalf("no first chunk: %v", st.Err())
	}
	cancel()
	_ = st.Close()
	// The only slot must come free: a new request completes.
	deadline, dcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer dcancel()
	if _, err := f.client.Completions.New(deadline, greedyCompletion("next", 3)); err != nil {
		t.Fatalf("request after a cancelled one: %v", err)
	}
	if fin := f.eng.Stats().Finished["cancelled"]; fin != 1 {
		t.Errorf("cancelled count %d", fin)
	}
}

func post(t *testing.T, url, body string, hdr ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func TestErrors(t *testing.T) {
	f := newFixture(t, Config{MaxBody: 4096}, engine.Options{Slots: 1})
	u := f.url + "/v1/completions"
	for _, c := range []struct {
		name, body string
		status     int
	}{
		{"malformed", `{"prompt": "x"`, 400},
		{"not an object", `[1,2]`, 400},
		{"negative max_tokens", `{"prompt":"x","max_tokens":-1}`, 400},
		{"unknown model", `{"model":"gpt-9","prompt":"x"}`, 400},
		{"bad temperature", `{"prompt":"x","temperature":9}`, 400},
		{"bad type", `{"prompt":"x","max_tokens":"many"}`, 400},
		{"no prompt", `{"max_tokens":1}`, 400},
		{"bad token id", `{"prompt":[999999]}`, 400},
		{"n", `{"prompt":"x","n":2}`, 400},
		{"bad logit_bias", `{"prompt":"x","logit_bias":{"abc":1}}`, 400},
		{"logit_bias out of range", `{"prompt":"x","logit_bias":{"5":100.5}}`, 400},
		{"oversized", `{"prompt":"` + strings.Repeat("x", 5000) + `"}`, 400},
		{"prompt too long", `{"prompt":"` + strings.Repeat("a b ", 600) + `"}`, 400},
	} {
		code, m := post(t, u, c.body)
		if code != c.status {
			t.Errorf("%s: status %d, want %d (%v)", c.name, code, c.status, m)
			continue
		}
		e, _ := m["error"].(map[string]any)
		if e == nil || e["message"] == "" || e["type"] == nil {
			t.Errorf("%s: body %v is not an OpenAI error", c.name, m)
		}
	}
	code, m := post(t, f.url+"/v1/chat/completions", `{"messages":[{"content":"no role"}]}`)
	if code != 400 {
		t.Errorf("chat without role: %d %v", code, m)
	}
}

// gate holds every step until released, so a test can keep slots busy.
type gate struct {
	engine.Stepper
	open chan struct{}
}

func (g gate) Step(ctx context.Context, w []engine.Work) error {
	select {
	case <-g.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Stepper.Step(ctx, w)
}

func TestQueueFull(t *testing.T) {
	open := make(chan struct{})
	f := newFixture(t, Config{}, engine.Options{Slots: 1, Queue: 1}, func(s engine.Stepper) engine.Stepper { return gate{s, open} })
	results := make(chan int, 2)
	send := func() {
		go func() {
			code, _ := post(t, f.url+"/v1/completions", `{"prompt":"hold","max_tokens":2}`)
			results <- code
		}()
	}
	waitFor := func(what string, cond func(engine.Stats) bool) {
		for i := 0; !cond(f.eng.Stats()); i++ {
			if i > 10000 {
				t.Fatalf("%s never happened: %+v", what, f.eng.Stats())
			}
			time.Sleep(time.Millisecond)
		}
	}
	// One request holds the slot (its step waits at the gate), one waits.
	send()
	waitFor("first request running", func(s engine.Stats) bool { return s.Running == 1 && s.Waiting == 0 })
	send()
	waitFor("second request queued", func(s engine.Stats) bool { return s.Waiting == 1 })
	code, m := post(t, f.url+"/v1/completions", `{"prompt":"third","max_tokens":1}`)
	if code != 429 {
		t.Errorf("queue full: %d %v", code, m)
	}
	close(open)
	for i := 0; i < 2; i++ {
		if c := <-results; c != 200 {
			t.Errorf("held request finished with %d", c)
		}
	}
}

func TestUtilityEndpoints(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 1})
	code, m := post(t, f.url+"/tokenize", `{"content":"hello world","add_special":true}`)
	toks, _ := m["tokens"].([]any)
	if code != 200 || len(toks) < 2 {
		t.Fatalf("tokenize: %d %v", code, m)
	}
	b, _ := json.Marshal(map[string]any{"tokens": toks[1:]})
	code, m = post(t, f.url+"/detokenize", string(b))
	if code != 200 || strings.TrimSpace(m["content"].(string)) != "hello world" {
		t.Errorf("detokenize: %d %v", code, m)
	}
	code, m = post(t, f.url+"/apply-template", `{"messages":[{"role":"user","content":"hi"}]}`)
	if code != 200 || m["prompt"] != "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n" {
		t.Errorf("apply-template: %d %v", code, m)
	}
	resp, err := http.Get(f.url + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("health: %v %v", resp, err)
	}
	models, err := f.client.Models.List(context.Background())
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != modelID {
		t.Errorf("models: %+v %v", models, err)
	}
	// Metrics after one generation.
	cmpl, err := f.client.Completions.New(context.Background(), greedyCompletion("count me", 3))
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{NumRequestsWaiting + " 0", NumRequestsRunning + " 0", KVCacheUsage + " 0",
		"memvanta:generation_tokens_total 3", `memvanta:request_finished_total{finish_reason="length"} 1`, "memvanta:time_to_first_token_seconds_count 1"} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	// The idle slot keeps the prompt and the generated tokens but the last
	// (sampled, never fed back) in its cache: free capacity, shown apart.
	held := int(cmpl.Usage.PromptTokens) + 3 - 1
	want := float64(held) / float64(f.eng.SlotCtx())
	var got float64
	for _, l := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(l, KVCacheIdleCached+" "); ok {
			got, _ = strconv.ParseFloat(v, 64)
		}
	}
	if got != want {
		t.Errorf("%s %v, want %d/%d = %v", KVCacheIdleCached, got, held, f.eng.SlotCtx(), want)
	}
}

func TestHealthWhileLoading(t *testing.T) {
	s := New(Config{ModelID: "x"})
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	for _, path := range []string{"/health", "/v1/completions"} {
		method := "GET"
		if path != "/health" {
			method = "POST"
		}
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(`{"prompt":"x"}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 503 {
			t.Errorf("%s while loading: %d", path, resp.StatusCode)
		}
	}
}

// TestSSEFormat reads the raw stream: every event is a data: line, the last
// is [DONE].
func TestSSEFormat(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 1})
	resp, err := http.Post(f.url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"stream":true,"temperature":0}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var last string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "data: ") {
			t.Fatalf("line %q", line)
		}
		last = line
	}
	if last != "data: [DONE]" {
		t.Errorf("last event %q", last)
	}
}

// FuzzRequestDecoding sends arbitrary bodies to every POST endpoint: any
// status is fine, a panic (500 from the recover wrapper) is not.
func FuzzRequestDecoding(f *testing.F) {
	for _, s := range []string{`{"prompt":"x","max_tokens":2}`, `{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"max_tokens":1}`,
		`{"prompt":[1,2,3],"stop":["a","b"],"logit_bias":{"5":-100},"stream":true}`, `{"content":"x","with_pieces":true}`, `{"tokens":[1,-1]}`, `null`, `{"prompt":{"a":1}}`} {
		f.Add(s)
	}
	m, tok := testmodel.New(f, 128)
	eng, err := engine.New(engine.Batched{M: m}, tok, engine.Options{Slots: 1, Queue: 4})
	if err != nil {
		f.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = eng.Run(ctx) }()
	tmpl, _ := chat.Builtin(chat.Fallback)
	s := New(Config{ModelID: modelID, MaxBody: 1 << 16})
	s.Ready(&Backend{Engine: eng, Tokenizer: tok, Template: tmpl, NCtx: eng.SlotCtx()})
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/completions", "/v1/chat/completions", "/tokenize", "/detokenize", "/apply-template"} {
			// Keep generation short whatever the body asks.
			rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
			req := httptest.NewRequest("POST", path, strings.NewReader(body)).WithContext(rctx)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			rcancel()
			if rec.Code == 500 {
				t.Fatalf("%s %q: 500 %s", path, body, rec.Body.String())
			}
		}
	})
}

func TestDeadline(t *testing.T) {
	f := newFixture(t, Config{Timeout: 20 * time.Millisecond}, engine.Options{Slots: 1})
	code, m := post(t, f.url+"/v1/completions", `{"prompt":"long","max_tokens":100000}`)
	e, _ := m["error"].(map[string]any)
	if code != 504 || e == nil || e["code"] != "timeout" {
		t.Errorf("deadline: %d %v", code, m)
	}
	// The slot is free again and the request counted as cancelled.
	for i := 0; f.eng.Stats().Running != 0 || f.eng.Stats().Finished["cancelled"] != 1; i++ {
		if i > 5000 {
			t.Fatalf("slot not freed after the deadline: %+v", f.eng.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}
