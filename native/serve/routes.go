package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
)

// The HTTP side of several models in one server (Config.Models): requests
// name their model in the body's "model" field (or, for endpoints whose
// body has none, ?model=), as llama-server's router mode routes them.

// ParseKeepAlive reads keep_alive as ollama spells it: a duration string
// ("5m", "1h30m", "0") or a number of seconds; a negative value keeps the
// model loaded until memory is needed (returned as -1).
func ParseKeepAlive(raw json.RawMessage) (time.Duration, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return 0, fmt.Errorf("keep_alive %q: want a duration such as \"5m\" or a number of seconds", s)
		}
		if d < 0 {
			d = -1
		}
		return d, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("keep_alive %s: want a duration string or a number of seconds", clip(raw))
	}
	switch {
	case f < 0:
		return -1, nil
	case f*float64(time.Second) > math.MaxInt64/2:
		return -1, nil
	}
	return time.Duration(f * float64(time.Second)), nil
}

// keepAliveRule checks the field on every endpoint that takes it (it
// changes nothing in single-model mode, where the model is never
// unloaded).
var keepAliveRule = fieldRule{check: func(raw json.RawMessage) *apiError {
	if _, err := ParseKeepAlive(raw); err != nil {
		return invalid("keep_alive", "%v", err)
	}
	return nil
}}

// routedModel reads the model a request names and its keep_alive, leaving
// the body for the handler.
func (s *Server) routedModel(w http.ResponseWriter, r *http.Request) (string, *time.Duration, *apiError) {
	id := r.URL.Query().Get("model")
	var ka *time.Duration
	if r.Body != nil && r.Method == http.MethodPost {
		var buf bytes.Buffer
		_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return "", nil, invalid("", "request body exceeds the %d-byte limit", s.cfg.MaxBody)
			}
			return "", nil, invalid("", "reading request body: %v", err)
		}
		body := buf.Bytes()
		r.Body = nopCloser{bytes.NewReader(body)}
		var head struct {
			Model     *string         `json:"model"`
			KeepAlive json.RawMessage `json:"keep_alive"`
		}
		// A malformed body is the handler's to report; only the model
		// must be found first.
		if json.Unmarshal(body, &head) == nil {
			if head.Model != nil && *head.Model != "" {
				id = *head.Model
			}
			if len(head.KeepAlive) > 0 && string(head.KeepAlive) != "null" {
				d, err := ParseKeepAlive(head.KeepAlive)
				if err != nil {
					return "", nil, invalid("keep_alive", "%v", err)
				}
				ka = &d
			}
		}
	}
	if id == "" {
		if ms := s.cfg.Models.order; len(ms) == 1 {
			return ms[0].spec.ID, ka, nil
		}
		return "", nil, invalid("model", "model is required: this server serves %d models (GET /v1/models lists them; endpoints without a model field take ?model=)", len(s.cfg.Models.order))
	}
	return id, ka, nil
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// routed is ready's router-mode form: it holds the named model (loading
// it first) for the duration of the handler.
func (s *Server) routed(h func(http.ResponseWriter, *http.Request, *Backend)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ka, e := s.routedModel(w, r)
		if e != nil {
			s.reject(w, e)
			return
		}
		b, release, e := s.cfg.Models.acquire(r.Context(), id, ka)
		if e != nil {
			if e.status == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "1")
			}
			s.reject(w, e)
			return
		}
		defer release()
		h(w, r, b)
	}
}

// idOf is the id replies name for the model behind b.
func (s *Server) idOf(b *Backend) string {
	if b != nil && b.ID != "" {
		return b.ID
	}
	return s.cfg.ModelID
}

// statusJSON is llama-server's router "status" object.
type statusJSON struct {
	Value  string `json:"value"`
	Failed bool   `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
}

func (s *Server) routedModels(w http.ResponseWriter, r *http.Request) {
	var data []any
	for _, m := range s.cfg.Models.Status() {
		st := statusJSON{Value: m.State}
		if m.State == StatusUnloaded && m.LastError != "" {
			st.Failed, st.Error = true, m.LastError
		}
		e := map[string]any{"id": m.ID, "object": "model", "created": s.created, "owned_by": "memvanta", "path": m.Path, "status": st}
		if m.State == StatusLoaded {
			e["memory_bytes"] = m.WeightBytes + m.KVBytes
		}
		data = append(data, e)
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data})
}

var loadRules = map[string]fieldRule{"model": honoured, "keep_alive": keepAliveRule}

// modelsLoad is llama-server's POST /models/load ({"model"} → {"success":
// true}); it answers once the model is loaded. keep_alive (ollama's)
// sets how long it then stays loaded without requests.
func (s *Server) modelsLoad(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model     string          `json:"model"`
		KeepAlive json.RawMessage `json:"keep_alive"`
	}
	if e := decodeBody(r, w, s.cfg.MaxBody, &req, loadRules); e != nil {
		s.reject(w, e)
		return
	}
	if req.Model == "" {
		s.reject(w, invalid("model", "model is required"))
		return
	}
	var ka *time.Duration
	if len(req.KeepAlive) > 0 && string(req.KeepAlive) != "null" {
		d, _ := ParseKeepAlive(req.KeepAlive) // checked by loadRules
		ka = &d
	}
	if err := s.cfg.Models.Load(r.Context(), req.Model, ka); err != nil {
		var e *apiError
		if errors.As(err, &e) {
			s.reject(w, e)
			return
		}
		s.reject(w, genError(err))
		return
	}
	writeJSON(w, 200, map[string]any{"success": true})
}

// modelsUnload is llama-server's POST /models/unload. A model serving
// requests is unloaded when the last of them ends, never during one.
func (s *Server) modelsUnload(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	if e := decodeBody(r, w, s.cfg.MaxBody, &req, map[string]fieldRule{"model": honoured}); e != nil {
		s.reject(w, e)
		return
	}
	if req.Model == "" {
		s.reject(w, invalid("model", "model is required"))
		return
	}
	if _, err := s.cfg.Models.Unload(req.Model); err != nil {
		var e *apiError
		if errors.As(err, &e) {
			s.reject(w, e)
			return
		}
		s.reject(w, genError(err))
		return
	}
	writeJSON(w, 200, map[string]any{"success": true})
}

// PSModel is one entry of GET /api/ps: ollama's fields (size is the
// memory the model holds; expires_at is absent while requests hold it
// and when it stays until memory is needed), and memvanta's breakdown.
type PSModel struct {
	Name        string     `json:"name"`
	Model       string     `json:"model"`
	Size        int64      `json:"size"`
	SizeVRAM    int64      `json:"size_vram"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	WeightBytes int64      `json:"weights_bytes"`
	KVBytes     int64      `json:"kv_cache_bytes"`
	KVAllocated int64      `json:"kv_cache_allocated_bytes"`
	Requests    int        `json:"requests"`
	Path        string     `json:"path"`
}

// PSReply is GET /api/ps.
type PSReply struct {
	Models       []PSModel `json:"models"`
	BudgetBytes  int64     `json:"budget_bytes"`
	UsedBytes    int64     `json:"used_bytes"`
	ModelsServed int       `json:"models_served"`
}

// ps is ollama's GET /api/ps: the loaded models and their memory.
func (s *Server) ps(w http.ResponseWriter, r *http.Request) {
	rep := PSReply{Models: []PSModel{}}
	if s.cfg.Models == nil {
		if b := s.be.Load(); b != nil {
			rep.Models = append(rep.Models, PSModel{Name: s.cfg.ModelID, Model: s.cfg.ModelID, KVAllocated: b.Engine.Stats().KVBytes, Requests: b.Engine.Stats().Running})
		}
		rep.ModelsServed = 1
		writeJSON(w, 200, rep)
		return
	}
	all := s.cfg.Models.Status()
	rep.ModelsServed = len(all)
	rep.BudgetBytes, rep.UsedBytes = s.cfg.Models.Memory()
	for _, m := range all {
		if m.State != StatusLoaded {
			continue
		}
		p := PSModel{Name: m.ID, Model: m.ID, Size: m.WeightBytes + m.KVBytes, WeightBytes: m.WeightBytes, KVBytes: m.KVBytes,
			KVAllocated: m.KVAllocated, Requests: m.Requests, Path: m.Path}
		if !m.Expires.IsZero() {
			t := m.Expires
			p.ExpiresAt = &t
		}
		rep.Models = append(rep.Models, p)
	}
	writeJSON(w, 200, rep)
}
