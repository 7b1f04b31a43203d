package serve

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Model states, as llama-server's router mode reports them in GET /models.
const (
	StatusUnloaded = "unloaded"
	StatusLoading  = "loading"
	StatusLoaded   = "loaded"
)

// ModelSpec is one model a router serves.
type ModelSpec struct {
	ID   string // the id requests name (file name without .gguf, or an alias)
	Path string
}

// Loaded is a model brought into memory by RouterConfig.Load.
type Loaded struct {
	Backend *Backend
	// WeightBytes and KVBytes are the memory the model holds while loaded:
	// its weights, and its slots' KV caches at full capacity (pages are
	// allocated as sequences grow, so the budget reserves the most they
	// can reach, not what they hold now).
	WeightBytes, KVBytes int64
	// Close stops the engine and frees the model. The router calls it
	// only when no request holds the model.
	Close func()
}

// RouterConfig configures a Router.
type RouterConfig struct {
	Models []ModelSpec
	// Budget bounds the sum of the loaded models' WeightBytes + KVBytes
	// (0: no bound).
	Budget int64
	// KeepAlive is how long a model stays loaded after its last request
	// ends when the request does not say (ollama's keep_alive): 0 unloads
	// it at once, a negative value keeps it until memory is needed.
	KeepAlive time.Duration
	// LoadWait is how long a request whose model does not fit waits for
	// running requests of other models to finish before it gets a 503.
	LoadWait time.Duration
	// Cost is the memory Load will hold for m, known before loading it,
	// so the router can make room first.
	Cost func(ctx context.Context, m ModelSpec) (int64, error)
	// Load brings m into memory.
	Load func(ctx context.Context, m ModelSpec) (*Loaded, error)

	// afterFunc runs f after d, returning a stop function (tests replace
	// time.AfterFunc to expire keep-alives without waiting).
	afterFunc func(d time.Duration, f func()) func() bool
}

// Router holds several models within one memory budget: a request for a
// model that is not loaded loads it, first unloading idle models (least
// recently used first) until it fits, else waiting for running requests
// to finish; a model idle for its keep-alive is unloaded. A model is never
// unloaded while a request holds it (reference counts), so an unload never
// cuts a reply short.
type Router struct {
	cfg RouterConfig

	mu      sync.Mutex
	models  map[string]*routed
	order   []*routed // as configured, for listings
	used    int64     // bytes reserved by loaded, loading and unloading models
	changed chan struct{}
}

type routed struct {
	spec  ModelSpec
	state string // StatusUnloaded, StatusLoading, StatusLoaded, or unloading
	// trans is closed when the current load or unload ends.
	trans chan struct{}

	be             *Backend
	close          func()
	weights, kv    int64 // of the loaded model
	cost           int64 // bytes reserved in Router.used (0 when unloaded)
	refs           int   // requests holding the model
	waiting        int   // requests waiting for it to load (or for memory)
	lastUsed       time.Time
	keepAlive      time.Duration
	expires        time.Time // when the idle timer unloads it (zero: not armed)
	stop           func() bool
	gen            uint64 // bumped by every acquire, so a stale timer does nothing
	unloadWhenIdle bool   // /models/unload while requests held it
	loads, unloads int64
	lastErr        string
}

const stateUnloading = "unloading"

// NewRouter checks the models' ids and makes a router; nothing is loaded.
func NewRouter(cfg RouterConfig) (*Router, error) {
	if cfg.Load == nil || cfg.Cost == nil {
		return nil, fmt.Errorf("serve: router needs Load and Cost")
	}
	if len(cfg.Models) == 0 {
		return nil, fmt.Errorf("serve: router has no models")
	}
	if cfg.afterFunc == nil {
		cfg.afterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	r := &Router{cfg: cfg, models: map[string]*routed{}, changed: make(chan struct{})}
	for _, m := range cfg.Models {
		if m.ID == "" {
			return nil, fmt.Errorf("serve: model %s has an empty id", m.Path)
		}
		if o, dup := r.models[m.ID]; dup {
			return nil, fmt.Errorf("serve: two models have the id %q (%s and %s); give one an alias", m.ID, o.spec.Path, m.Path)
		}
		e := &routed{spec: m, state: StatusUnloaded}
		r.models[m.ID] = e
		r.order = append(r.order, e)
	}
	return r, nil
}

// broadcastLocked wakes everything waiting for memory or a state change.
func (r *Router) broadcastLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// routeError is a request the router cannot serve.
func routeError(status int, code, format string, a ...any) *apiError {
	typ := "invalid_request_error"
	if status == http.StatusServiceUnavailable {
		typ = "unavailable_error"
	} else if status >= 500 {
		typ = "server_error"
	}
	return &apiError{status: status, Message: fmt.Sprintf(format, a...), Type: typ, Code: code}
}

// acquire returns the model's backend, loading it first if needed, and
// holds it until release is called. ka, when not nil, is the request's
// keep_alive.
func (r *Router) acquire(ctx context.Context, id string, ka *time.Duration) (*Backend, func(), *apiError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.models[id]
	if m == nil {
		return nil, nil, &apiError{status: http.StatusNotFound, Message: fmt.Sprintf("model %q is not served here (GET /v1/models lists them)", id),
			Type: "invalid_request_error", Code: "model_not_found", Param: strp("model")}
	}
	for {
		switch m.state {
		case StatusLoaded:
			m.refs++
			m.gen++
			if m.stop != nil {
				m.stop()
				m.stop = nil
			}
			m.expires = time.Time{}
			m.keepAlive = r.cfg.KeepAlive
			if ka != nil {
				m.keepAlive = *ka
			}
			be := m.be
			var once sync.Once
			return be, func() { once.Do(func() { r.release(m) }) }, nil
		case StatusLoading, stateUnloading:
			ch := m.trans
			m.waiting++
			r.mu.Unlock()
			var err error
			select {
			case <-ch:
			case <-ctx.Done():
				err = ctx.Err()
			}
			r.mu.Lock()
			m.waiting--
			if err != nil {
				return nil, nil, genError(err)
			}
		case StatusUnloaded:
			if e := r.loadLocked(ctx, m); e != nil {
				return nil, nil, e
			}
		}
	}
}

// loadLocked loads m (unloaded): it reserves m's cost within the budget,
// unloading idle models or waiting as needed, then loads it. Called and
// returns with r.mu held; other requests for m wait on m.trans meanwhile.
func (r *Router) loadLocked(ctx context.Context, m *routed) *apiError {
	m.state, m.trans = StatusLoading, make(chan struct{})
	r.broadcastLocked()
	fail := func(e *apiError) *apiError {
		m.state = StatusUnloaded
		m.lastErr = e.Message
		close(m.trans)
		r.broadcastLocked()
		return e
	}
	r.mu.Unlock()
	cost, err := r.cfg.Cost(ctx, m.spec)
	r.mu.Lock()
	if err != nil {
		return fail(routeError(500, "model_load_failed", "model %q: %v", m.spec.ID, err))
	}
	if e := r.reserveLocked(ctx, m, cost); e != nil {
		return fail(e)
	}
	m.cost = cost
	r.mu.Unlock()
	// The load is not the requester's alone (others wait on m.trans), so a
	// client that goes away does not abort it.
	l, err := r.cfg.Load(context.WithoutCancel(ctx), m.spec)
	r.mu.Lock()
	if err != nil {
		r.used -= m.cost
		m.cost = 0
		return fail(routeError(500, "model_load_failed", "loading model %q: %v", m.spec.ID, err))
	}
	l.Backend.ID = m.spec.ID
	m.be, m.close, m.weights, m.kv = l.Backend, l.Close, l.WeightBytes, l.KVBytes
	// The reservation becomes what the loaded model reports.
	r.used += l.WeightBytes + l.KVBytes - m.cost
	m.cost = l.WeightBytes + l.KVBytes
	m.state, m.lastErr = StatusLoaded, ""
	m.loads++
	m.lastUsed = time.Now()
	close(m.trans)
	r.broadcastLocked()
	return nil
}

// reserveLocked adds cost to the memory in use, first unloading idle
// models, least recently used first, then waiting up to LoadWait for
// requests holding other models to finish.
func (r *Router) reserveLocked(ctx context.Context, m *routed, cost int64) *apiError {
	budget := r.cfg.Budget
	if budget > 0 && cost > budget {
		return routeError(http.StatusServiceUnavailable, "model_too_large",
			"model %q needs %.1f MiB (weights and KV caches at full context), more than the whole memory budget of %.1f MiB (--mem-budget); lower -c or -np, or raise the budget",
			m.spec.ID, mibf(cost), mibf(budget))
	}
	var deadline <-chan time.Time
	for budget > 0 && r.used+cost > budget {
		if v := r.lruIdleLocked(m); v != nil {
			r.unloadLocked(v)
			continue
		}
		if deadline == nil {
			if r.cfg.LoadWait <= 0 {
				return r.busyError(m, cost)
			}
			t := time.NewTimer(r.cfg.LoadWait)
			defer t.Stop()
			deadline = t.C
		}
		ch := r.changed
		m.waiting++
		r.mu.Unlock()
		var timedOut bool
		var err error
		select {
		case <-ch:
		case <-deadline:
			timedOut = true
		case <-ctx.Done():
			err = ctx.Err()
		}
		r.mu.Lock()
		m.waiting--
		if err != nil {
			return genError(err)
		}
		if timedOut && r.used+cost > budget {
			return r.busyError(m, cost)
		}
	}
	r.used += cost
	return nil
}

func (r *Router) busyError(m *routed, cost int64) *apiError {
	var busy []string
	for _, o := range r.order {
		if o.refs > 0 {
			busy = append(busy, fmt.Sprintf("%s (%d requests)", o.spec.ID, o.refs))
		}
	}
	return routeError(http.StatusServiceUnavailable, "model_budget_busy",
		"model %q needs %.1f MiB but %.1f MiB of the %.1f MiB memory budget are held by models serving requests (%s) and did not free up within %v; retry later",
		m.spec.ID, mibf(cost), mibf(r.used), mibf(r.cfg.Budget), strings.Join(busy, ", "), r.cfg.LoadWait)
}

func mibf(b int64) float64 { return float64(b) / (1 << 20) }

// lruIdleLocked is the loaded model no request holds that was used least
// recently, other than except; nil if there is none.
func (r *Router) lruIdleLocked(except *routed) *routed {
	var v *routed
	for _, o := range r.order {
		if o == except || o.state != StatusLoaded || o.refs > 0 {
			continue
		}
		if v == nil || o.lastUsed.Before(v.lastUsed) {
			v = o
		}
	}
	return v
}

// unloadLocked unloads m (loaded, no request holding it). The lock is
// released while the model closes; its memory counts as used until then.
func (r *Router) unloadLocked(m *routed) {
	if m.stop != nil {
		m.stop()
		m.stop = nil
	}
	m.state, m.trans = stateUnloading, make(chan struct{})
	m.expires = time.Time{}
	closeFn := m.close
	m.be, m.close = nil, nil
	r.mu.Unlock()
	if closeFn != nil {
		closeFn()
	}
	r.mu.Lock()
	r.used -= m.cost
	m.cost, m.weights, m.kv = 0, 0, 0
	m.state = StatusUnloaded
	m.unloadWhenIdle = false
	m.unloads++
	close(m.trans)
	r.broadcastLocked()
}

// release ends a request's hold on m; the last one out arms the idle
// timer (or unloads m at once for keep-alive 0).
func (r *Router) release(m *routed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m.refs--
	m.lastUsed = time.Now()
	if m.refs == 0 {
		switch ka := m.keepAlive; {
		case ka == 0 || m.unloadWhenIdle:
			r.unloadLocked(m)
			return
		case ka > 0:
			g := m.gen
			m.expires = m.lastUsed.Add(ka)
			m.stop = r.cfg.afterFunc(ka, func() { r.expire(m, g) })
		}
	}
	// An idle model may now make room for a waiting load.
	r.broadcastLocked()
}

// expire unloads m when its idle timer fires, unless a request used it
// since the timer was armed.
func (r *Router) expire(m *routed, gen uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.gen == gen && m.refs == 0 && m.state == StatusLoaded {
		m.stop = nil
		r.unloadLocked(m)
	}
}

// Load loads the model (as a request for it would) and leaves it loaded
// for ka (nil: the default keep-alive).
func (r *Router) Load(ctx context.Context, id string, ka *time.Duration) error {
	_, release, e := r.acquire(ctx, id, ka)
	if e != nil {
		return e
	}
	release()
	return nil
}

// Unload unloads the model now, or, while requests hold it, when the last
// of them ends. It reports whether the model was loaded (or loading).
func (r *Router) Unload(id string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.models[id]
	if m == nil {
		return false, &apiError{status: http.StatusNotFound, Message: fmt.Sprintf("model %q is not served here", id), Type: "invalid_request_error", Code: "model_not_found", Param: strp("model")}
	}
	switch {
	case m.state == StatusLoaded && m.refs == 0:
		r.unloadLocked(m)
		return true, nil
	case m.state == StatusLoaded || m.state == StatusLoading:
		m.unloadWhenIdle = true
		return true, nil
	}
	return false, nil
}

// ModelStatus is one model's state for listings (/v1/models, /api/ps).
type ModelStatus struct {
	ID, Path, State string
	// Memory reserved in the budget (weights, KV caches at capacity) and
	// the KV cache pages allocated now.
	WeightBytes, KVBytes, KVAllocated int64
	Requests, Waiting                 int
	KeepAlive                         time.Duration
	Expires                           time.Time // zero: in use, or kept until memory is needed
	Loads, Unloads                    int64
	LastError                         string
}

// Status lists every model in configuration order.
func (r *Router) Status() []ModelStatus {
	r.mu.Lock()
	type snap struct {
		st ModelStatus
		be *Backend
	}
	out := make([]snap, 0, len(r.order))
	for _, m := range r.order {
		st := m.state
		if st == stateUnloading {
			st = StatusLoaded // still holding its memory
		}
		out = append(out, snap{ModelStatus{ID: m.spec.ID, Path: m.spec.Path, State: st, WeightBytes: m.weights, KVBytes: m.kv,
			Requests: m.refs, Waiting: m.waiting, KeepAlive: m.keepAlive, Expires: m.expires, Loads: m.loads, Unloads: m.unloads, LastError: m.lastErr}, m.be})
	}
	r.mu.Unlock()
	res := make([]ModelStatus, len(out))
	for i, s := range out {
		if s.be != nil {
			s.st.KVAllocated = s.be.Engine.Stats().KVBytes
		}
		res[i] = s.st
	}
	return res
}

// Memory is the budget and the bytes reserved by models now.
func (r *Router) Memory() (budget, used int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cfg.Budget, r.used
}

// loadedBackends is every loaded model's backend with the requests waiting
// for it (metrics), sorted by id; models loading or waiting for memory
// come with a nil backend.
func (r *Router) loadedBackends() []routedStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []routedStats
	for _, m := range r.order {
		if m.state == StatusUnloaded && m.waiting == 0 {
			continue
		}
		out = append(out, routedStats{id: m.spec.ID, be: m.be, waiting: m.waiting, bytes: m.cost})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

type routedStats struct {
	id      string
	be      *Backend
	waiting int
	bytes   int64
}

// Close unloads every model no request holds (at shutdown, after the
// HTTP server has drained).
func (r *Router) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.order {
		if m.state == StatusLoaded && m.refs == 0 {
			r.unloadLocked(m)
		}
	}
}

// Drain waits for every loaded model's engine to finish its requests, or
// ctx to end (SIGTERM).
func (r *Router) Drain(ctx context.Context) error {
	for _, s := range r.loadedBackends() {
		if s.be != nil {
			if err := s.be.Engine.Drain(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}
