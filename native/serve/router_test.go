package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/internal/testmodel"
)

// routerFixture serves synthetic models through a Router on a loopback
// listener. Each model costs the same: the file's bytes plus its KV
// caches at capacity, so budgets are written in models.
type routerFixture struct {
	url    string
	srv    *Server
	r      *Router
	cost   int64
	mu     sync.Mutex
	timers []fakeTimer
	gate   map[string]chan struct{} // a Load for this id blocks until the channel closes
}

type fakeTimer struct {
	d       time.Duration
	f       func()
	stopped *bool
}

const (
	fixSlots   = 2
	fixPerSlot = 256
)

func newRouterFixture(t *testing.T, ids []string, budgetModels int, mod func(*RouterConfig)) *routerFixture {
	t.Helper()
	file := testmodel.Bytes(t)
	f, err := gguf.Parse(bytes.NewReader(file), int64(len(file)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	mc, err := model.ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := KVCapacityBytes(mc, ggml.F16, ggml.F16, fixSlots, fixPerSlot)
	if err != nil {
		t.Fatal(err)
	}
	fx := &routerFixture{cost: int64(len(file)) + kv, gate: map[string]chan struct{}{}}
	var specs []ModelSpec
	for _, id := range ids {
		specs = append(specs, ModelSpec{ID: id, Path: "/models/" + id + ".gguf"})
	}
	load := func(ctx context.Context, m ModelSpec) (*Loaded, error) {
		fx.mu.Lock()
		g := fx.gate[m.ID]
		fx.mu.Unlock()
		if g != nil {
			<-g
		}
		w, err := model.MemWeightsFromBytes(f, file)
		if err != nil {
			return nil, err
		}
		md, err := model.New(mc, w, model.Options{Threads: 1, KVType: ggml.F16})
		if err != nil {
			return nil, err
		}
		tok, err := tokenizer.FromGGUF(f)
		if err != nil {
			return nil, err
		}
		eng, err := engine.New(engine.Batched{M: md}, tok, engine.Options{Slots: fixSlots, CtxPerSlot: fixPerSlot})
		if err != nil {
			return nil, err
		}
		tmpl, err := chat.Builtin(chat.Fallback)
		if err != nil {
			return nil, err
		}
		ectx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = eng.Run(ectx); close(done) }()
		return &Loaded{Backend: &Backend{Engine: eng, Tokenizer: tok, Template: tmpl, NCtx: eng.SlotCtx()},
			WeightBytes: int64(len(file)), KVBytes: kv,
			Close: func() { cancel(); <-done; md.Close() }}, nil
	}
	cfg := RouterConfig{Models: specs, Budget: int64(budgetModels) * fx.cost, KeepAlive: -1, LoadWait: time.Hour,
		Cost: func(context.Context, ModelSpec) (int64, error) { return fx.cost, nil }, Load: load,
		afterFunc: func(d time.Duration, f func()) func() bool {
			fx.mu.Lock()
			defer fx.mu.Unlock()
			stopped := new(bool)
			fx.timers = append(fx.timers, fakeTimer{d, f, stopped})
			return func() bool {
				fx.mu.Lock()
				defer fx.mu.Unlock()
				was := !*stopped
				*stopped = true
				return was
			}
		}}
	if mod != nil {
		mod(&cfg)
	}
	r, err := NewRouter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fx.r = r
	fx.srv = New(Config{Models: r})
	hs := httptest.NewServer(fx.srv.Handler())
	t.Cleanup(func() { hs.Close(); r.Close() })
	fx.url = hs.URL
	return fx
}

func (fx *routerFixture) status(t *testing.T) map[string]string {
	t.Helper()
	resp, err := http.Get(fx.url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct {
		Data []struct {
			ID     string     `json:"id"`
			Status statusJSON `json:"status"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range l.Data {
		out[d.ID] = d.Status.Value
	}
	return out
}

func (fx *routerFixture) complete(t *testing.T, model string, extra string) (int, map[string]any) {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"prompt":"once upon a time","max_tokens":4,"temperature":0%s}`, model, extra)
	return post(t, fx.url+"/v1/completions", body)
}

// waitFor polls cond: it synchronises with work the server finishes after
// the response is written (a release after the handler returns), and
// asserts nothing about time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i > 20000 {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func wantStatus(t *testing.T, fx *routerFixture, want map[string]string) {
	t.Helper()
	got := fx.status(t)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("model %s: status %q, want %q (all: %v)", id, got[id], w, got)
		}
	}
}

func TestRouterLoadsOnDemand(t *testing.T) {
	fx := newRouterFixture(t, []string{"a", "b"}, 0, nil)
	wantStatus(t, fx, map[string]string{"a": "unloaded", "b": "unloaded"})
	code, m := fx.complete(t, "a", "")
	if code != 200 || m["model"] != "a" {
		t.Fatalf("a: %d %v", code, m)
	}
	wantStatus(t, fx, map[string]string{"a": "loaded", "b": "unloaded"})
	// A model-less request is ambiguous with two models; an unknown one
	// is not found.
	if code, m := post(t, fx.url+"/v1/completions", `{"prompt":"x","max_tokens":1}`); code != 400 {
		t.Errorf("no model: %d %v", code, m)
	}
	if code, m := fx.complete(t, "nope", ""); code != 404 {
		t.Errorf("unknown model: %d %v", code, m)
	}
	// Chat and the utility endpoints route too (?model= where the body
	// has no model field).
	code, m = post(t, fx.url+"/v1/chat/completions", `{"model":"b","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`)
	if code != 200 || m["model"] != "b" {
		t.Fatalf("chat b: %d %v", code, m)
	}
	if code, m := post(t, fx.url+"/tokenize?model=b", `{"content":"hello"}`); code != 200 {
		t.Errorf("tokenize: %d %v", code, m)
	}
	wantStatus(t, fx, map[string]string{"a": "loaded", "b": "loaded"})

	// Per-model series, labelled as vLLM labels them. The engine counts a
	// request's tokens and frees its slot after the response is written,
	// so the scrape is retried until it shows them (waitFor's bound).
	wants := []string{`memvanta:generation_tokens_total{model_name="a"} 4`, `memvanta:generation_tokens_total{model_name="b"} 2`,
		`memvanta:num_requests_waiting{model_name="a"} 0`, `memvanta:kv_cache_usage_perc{model_name="b"} 0`,
		`memvanta:request_finished_total{finish_reason="length",model_name="a"} 1`,
		fmt.Sprintf(`memvanta:model_memory_bytes{model_name="a"} %d`, fx.cost), `memvanta:model_loads_total{model_name="b"} 1`}
	var body []byte
	scrape := func() bool {
		resp, err := http.Get(fx.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range wants {
			if !strings.Contains(string(body), want+"\n") {
				return false
			}
		}
		return true
	}
	for i := 0; !scrape(); i++ {
		if i > 2000 {
			for _, want := range wants {
				if !strings.Contains(string(body), want+"\n") {
					t.Errorf("metrics lack %q", want)
				}
			}
			break
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRouterUnloadsLeastRecentlyUsed(t *testing.T) {
	fx := newRouterFixture(t, []string{"a", "b", "c"}, 2, nil)
	for _, id := range []string{"a", "b", "c"} {
		if code, m := fx.complete(t, id, ""); code != 200 {
			t.Fatalf("%s: %d %v", id, code, m)
		}
	}
	wantStatus(t, fx, map[string]string{"a": "unloaded", "b": "loaded", "c": "loaded"})
	// b is used again, so loading a now unloads c.
	if code, _ := fx.complete(t, "b", ""); code != 200 {
		t.Fatal(code)
	}
	if code, _ := fx.complete(t, "a", ""); code != 200 {
		t.Fatal(code)
	}
	wantStatus(t, fx, map[string]string{"a": "loaded", "b": "loaded", "c": "unloaded"})
	if budget, used := fx.r.Memory(); used != 2*fx.cost || budget != 2*fx.cost {
		t.Errorf("memory used %d of %d, want %d", used, budget, 2*fx.cost)
	}
}

func TestRouterWaitsForRunningRequest(t *testing.T) {
	fx := newRouterFixture(t, []string{"a", "b"}, 1, nil)
	// A request in flight on a (held as a handler holds it).
	_, release, e := fx.r.acquire(context.Background(), "a", nil)
	if e != nil {
		t.Fatal(e)
	}
	type res struct {
		code int
		m    map[string]any
	}
	done := make(chan res, 1)
	go func() {
		code, m := post(t, fx.url+"/v1/completions", `{"model":"b","prompt":"x","max_tokens":2}`)
		done <- res{code, m}
	}()
	// b waits for memory: it is counted in its queue gauge.
	waitFor(t, "b queued", func() bool {
		for _, s := range fx.r.Status() {
			if s.ID == "b" && s.Waiting == 1 {
				return true
			}
		}
		return false
	})
	resp, err := http.Get(fx.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `memvanta:num_requests_waiting{model_name="b"} 1`+"\n") {
		t.Errorf("queue gauge does not count the waiting load:\n%s", body)
	}
	wantStatus(t, fx, map[string]string{"a": "loaded", "b": "loading"})
	release()
	r := <-done
	if r.code != 200 || r.m["model"] != "b" {
		t.Fatalf("b after a finished: %d %v", r.code, r.m)
	}
	wantStatus(t, fx, map[string]string{"a": "unloaded", "b": "loaded"})
}

func TestRouterBudgetRefusals(t *testing.T) {
	fx := newRouterFixture(t, []string{"a", "b"}, 1, func(c *RouterConfig) { c.LoadWait = time.Millisecond })
	_, release, e := fx.r.acquire(context.Background(), "a", nil)
	if e != nil {
		t.Fatal(e)
	}
	defer release()
	code, m := fx.complete(t, "b", "")
	e2, _ := m["error"].(map[string]any)
	if code != 503 || e2["code"] != "model_budget_busy" || !strings.Contains(fmt.Sprint(e2["message"]), `(a (1 requests))`) {
		t.Errorf("b while a busy: %d %v", code, m)
	}
	wantStatus(t, fx, map[string]string{"a": "loaded", "b": "unloaded"})

	// A model larger than the whole budget is refused at once.
	small := newRouterFixture(t, []string{"a"}, 0, func(c *RouterConfig) { c.Budget = 1000 })
	code, m = small.complete(t, "a", "")
	e2, _ = m["error"].(map[string]any)
	if code != 503 || e2["code"] != "model_too_large" {
		t.Errorf("too large: %d %v", code, m)
	}
}

func TestRouterNeverCutsInFlight(t *testing.T) {
	fx := newRouterFixture(t, []string{"a"}, 0, nil)
	_, release, e := fx.r.acquire(context.Background(), "a", nil)
	if e != nil {
		t.Fatal(e)
	}
	if code, m := post(t, fx.url+"/models/unload", `{"model":"a"}`); code != 200 || m["success"] != true {
		t.Fatalf("unload: %d %v", code, m)
	}
	// Still loaded while held; requests on it still complete in full.
	wantStatus(t, fx, map[string]string{"a": "loaded"})
	code, m := fx.complete(t, "a", "")
	ch, _ := m["choices"].([]any)
	if code != 200 || len(ch) != 1 || ch[0].(map[string]any)["finish_reason"] != "length" {
		t.Fatalf("request during a pending unload: %d %v", code, m)
	}
	wantStatus(t, fx, map[string]string{"a": "loaded"})
	release()
	wantStatus(t, fx, map[string]string{"a": "unloaded"})
}

func TestRouterKeepAlive(t *testing.T) {
	fx := newRouterFixture(t, []string{"a", "b", "c"}, 0, func(c *RouterConfig) { c.KeepAlive = 5 * time.Minute })
	status := func(id string) ModelStatus {
		for _, s := range fx.r.Status() {
			if s.ID == id {
				return s
			}
		}
		t.Fatalf("no %s", id)
		return ModelStatus{}
	}
	// keep_alive 0: unloaded after the request.
	if code, m := fx.complete(t, "a", `,"keep_alive":0`); code != 200 {
		t.Fatalf("%d %v", code, m)
	}
	waitFor(t, "a unloaded after keep_alive 0", func() bool { return status("a").State == StatusUnloaded })

	// The default (5m) arms a timer; firing it unloads the model.
	if code, _ := fx.complete(t, "b", ""); code != 200 {
		t.Fatal(code)
	}
	waitFor(t, "b idle", func() bool { return status("b").Requests == 0 && !status("b").Expires.IsZero() })
	fx.mu.Lock()
	timers := append([]fakeTimer(nil), fx.timers...)
	fx.mu.Unlock()
	if len(timers) != 1 || timers[0].d != 5*time.Minute {
		t.Fatalf("timers %+v, want one of 5m", timers)
	}
	// A request with "10m" re-arms it: the old timer firing does nothing.
	if code, _ := fx.complete(t, "b", `,"keep_alive":"10m"`); code != 200 {
		t.Fatal(code)
	}
	waitFor(t, "b idle again", func() bool { return status("b").Requests == 0 && !status("b").Expires.IsZero() })
	fx.mu.Lock()
	timers = append([]fakeTimer(nil), fx.timers...)
	fx.mu.Unlock()
	if len(timers) != 2 || timers[1].d != 10*time.Minute {
		t.Fatalf("timers %+v", timers)
	}
	timers[0].f()
	if st := status("b").State; st != StatusLoaded {
		t.Errorf("a stale timer unloaded b: %s", st)
	}
	timers[1].f()
	if st := status("b").State; st != StatusUnloaded {
		t.Errorf("b after its keep-alive: %s", st)
	}
	// A negative keep_alive keeps the model: no timer.
	if code, _ := fx.complete(t, "c", `,"keep_alive":"-1m"`); code != 200 {
		t.Fatal(code)
	}
	waitFor(t, "c idle", func() bool { return status("c").Requests == 0 })
	fx.mu.Lock()
	n := len(fx.timers)
	fx.mu.Unlock()
	if n != 2 || status("c").State != StatusLoaded || !status("c").Expires.IsZero() {
		t.Errorf("keep_alive -1m: %d timers, %+v", n, status("c"))
	}
	// A malformed keep_alive is a 400 naming the field.
	if code, m := fx.complete(t, "c", `,"keep_alive":"soon"`); code != 400 {
		t.Errorf("bad keep_alive: %d %v", code, m)
	}
}

func TestParseKeepAlive(t *testing.T) {
	for in, want := range map[string]time.Duration{`"5m"`: 5 * time.Minute, `0`: 0, `"0"`: 0, `30`: 30 * time.Second,
		`1.5`: 1500 * time.Millisecond, `-1`: -1, `"-1h"`: -1, `"1h30m"`: 90 * time.Minute} {
		got, err := ParseKeepAlive(json.RawMessage(in))
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{`"soon"`, `true`, `{}`, `"300"`} {
		if _, err := ParseKeepAlive(json.RawMessage(in)); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

func TestRouterLoadUnloadEndpoints(t *testing.T) {
	fx := newRouterFixture(t, []string{"a", "b"}, 0, nil)
	fx.mu.Lock()
	gate := make(chan struct{})
	fx.gate["b"] = gate
	fx.mu.Unlock()
	done := make(chan map[string]any, 1)
	go func() {
		_, m := post(t, fx.url+"/models/load", `{"model":"b"}`)
		done <- m
	}()
	// The load is visible as "loading" until it completes.
	waitFor(t, "b loading", func() bool { return fx.status(t)["b"] == StatusLoading })
	close(gate)
	if m := <-done; m["success"] != true {
		t.Fatalf("load: %v", m)
	}
	wantStatus(t, fx, map[string]string{"a": "unloaded", "b": "loaded"})

	// /api/ps lists it with its memory.
	resp, err := http.Get(fx.url + "/api/ps")
	if err != nil {
		t.Fatal(err)
	}
	var ps PSReply
	if err := json.NewDecoder(resp.Body).Decode(&ps); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(ps.Models) != 1 || ps.Models[0].Name != "b" || ps.Models[0].Size != fx.cost || ps.UsedBytes != fx.cost || ps.ModelsServed != 2 {
		t.Errorf("ps %+v", ps)
	}

	if code, m := post(t, fx.url+"/models/unload", `{"model":"b"}`); code != 200 || m["success"] != true {
		t.Fatalf("unload: %d %v", code, m)
	}
	wantStatus(t, fx, map[string]string{"a": "unloaded", "b": "unloaded"})
	if _, used := fx.r.Memory(); used != 0 {
		t.Errorf("used %d after unloading everything", used)
	}
	for _, body := range []string{`{"model":"zzz"}`, `{}`, `{"model":"a","extra":1}`} {
		if code, _ := post(t, fx.url+"/models/load", body); code != 404 && code != 400 {
			t.Errorf("load %s: %d", body, code)
		}
	}
}

// The budget reserves each slot's KV cache at full context: a slot filled
// to its capacity allocates exactly what KVCapacityBytes says.
func TestKVCapacityBytes(t *testing.T) {
	m, tok := testmodel.New(t, 0)
	eng, err := engine.New(engine.Batched{M: m}, tok, engine.Options{Slots: 1, CtxPerSlot: 300})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = eng.Run(ctx) }()
	h, err := eng.Submit(ctx, engine.Request{Prompt: []int32{1, 2, 3}, MaxTokens: 1000, IgnoreEOS: true,
		Sample: sample.Params{Temp: 0, TopP: 1, RepeatPenalty: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := h.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Done {
			break
		}
	}
	kt, vt := m.KV().Types()
	want, err := KVCapacityBytes(m.Cfg, kt, vt, 1, 300)
	if err != nil {
		t.Fatal(err)
	}
	if got := eng.Stats().KVBytes; got != want || want == 0 {
		t.Errorf("a full slot allocates %d bytes, KVCapacityBytes says %d", got, want)
	}
}
