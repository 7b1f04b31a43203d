package serve

import (
	"net/http"

	"github.com/memvanta/memvanta/core/engine"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metric names. The two the Gateway API Inference Extension (llm-d, KServe)
// scrapes to pick a replica are NumRequestsWaiting (queue depth) and
// KVCacheUsage (fraction 0..1); see docs/llm-d.md for the mapping.
// KVCacheUsage counts the positions of running requests, as vLLM counts
// blocks referenced by running requests: an idle slot's cached tokens are
// reusable but evictable (the next request reuses or overwrites them), so
// they are free capacity, shown apart in KVCacheIdleCached. Their sum is
// what llama-server's kv_cache_usage_ratio counts (every occupied cell).
const (
	NumRequestsWaiting = "memvanta:num_requests_waiting"
	NumRequestsRunning = "memvanta:num_requests_running"
	KVCacheUsage       = "memvanta:kv_cache_usage_perc"
	KVCacheIdleCached  = "memvanta:kv_cache_idle_cached_perc"
)

type metrics struct {
	reg      *prometheus.Registry
	rejected *prometheus.CounterVec
	ttft     prometheus.Histogram
	e2e      prometheus.Histogram
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if s.cfg.Models != nil {
		m.reg.MustRegister(&routerCollector{r: s.cfg.Models, defs: engineMetrics()})
	} else {
		for _, d := range engineMetrics() {
			f := func() float64 {
				b := s.be.Load()
				if b == nil {
					return 0
				}
				st := b.Engine.Stats()
				return d.f(&st)
			}
			if d.counter {
				m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: d.name, Help: d.help, ConstLabels: d.labels}, f))
			} else {
				m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: d.name, Help: d.help, ConstLabels: d.labels}, f))
			}
		}
	}
	m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "memvanta:http_requests_rejected_total",
		Help: "Requests answered with an error status before generation, by status."}, []string{"code"})
	m.ttft = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "memvanta:time_to_first_token_seconds",
		Help: "Submit to first generated token.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)})
	m.e2e = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "memvanta:e2e_request_latency_seconds",
		Help: "Submit to last token.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)})
	m.reg.MustRegister(m.rejected, m.ttft, m.e2e)
	return m
}

// engineMetric is one gauge or counter read from a model's engine: one
// series per server in single-model mode, one per loaded model (labelled
// model_name, as vLLM labels its series) with a Router.
type engineMetric struct {
	name, help string
	counter    bool
	labels     prometheus.Labels
	f          func(st *engine.Stats) float64
}

func engineMetrics() []engineMetric {
	frac := func(n, d int) float64 {
		if d == 0 {
			return 0
		}
		return float64(n) / float64(d)
	}
	ms := []engineMetric{
		{name: NumRequestsWaiting, help: "Requests waiting for a slot.", f: func(st *engine.Stats) float64 { return float64(st.Waiting) }},
		{name: NumRequestsRunning, help: "Requests holding a slot (prefilling or generating).", f: func(st *engine.Stats) float64 { return float64(st.Running) }},
		{name: KVCacheUsage, help: "Fraction (0..1) of all slots' KV-cache positions held by running requests.", f: func(st *engine.Stats) float64 { return frac(st.KVUsed, st.KVCap) }},
		{name: KVCacheIdleCached, help: "Fraction (0..1) of all slots' KV-cache positions held by idle slots: finished requests' tokens kept for prefix reuse (free for new requests).", f: func(st *engine.Stats) float64 { return frac(st.KVCached, st.KVCap) }},
		{name: "memvanta:kv_cache_bytes", help: "Bytes of KV-cache pages allocated across slots.", f: func(st *engine.Stats) float64 { return float64(st.KVBytes) }},
		{name: "memvanta:slots", help: "Configured slots (-np).", f: func(st *engine.Stats) float64 { return float64(st.Slots) }},
		{name: "memvanta:prompt_tokens_total", help: "Prompt tokens computed.", counter: true, f: func(st *engine.Stats) float64 { return float64(st.PromptTokens) }},
		{name: "memvanta:prompt_tokens_cached_total", help: "Prompt tokens reused from a slot's cache instead of computed.", counter: true, f: func(st *engine.Stats) float64 { return float64(st.CachedTokens) }},
		{name: "memvanta:kv_positions_forked_total", help: "KV-cache positions copied from a request's first choice into its other choices (n > 1) instead of computed.", counter: true, f: func(st *engine.Stats) float64 { return float64(st.ForkedTokens) }},
		{name: "memvanta:generation_tokens_total", help: "Tokens generated.", counter: true, f: func(st *engine.Stats) float64 { return float64(st.GenTokens) }},
		{name: "memvanta:engine_steps_total", help: "Scheduler steps run.", counter: true, f: func(st *engine.Stats) float64 { return float64(st.Steps) }},
		{name: "memvanta:context_shifts_total", help: "Context shifts (serve --context-shift): a full slot kept n_keep tokens after BOS and discarded half of the rest.", counter: true, f: func(st *engine.Stats) float64 { return float64(st.Shifts) }},
		{name: "memvanta:context_shift_recomputes_total", help: "Context shifts whose kept tokens were computed again (sliding-window caches that cannot shift in place).", counter: true, f: func(st *engine.Stats) float64 { return float64(st.ShiftRecomputes) }},
		// Speculative decoding (-md, --spec-type): acceptance rate is
		// accepted/drafted, tokens per pass generation_tokens_total/passes.
		{name: "memvanta:spec_draft_tokens_total", help: "Speculative decoding: tokens drafted and verified.", counter: true, f: func(st *engine.Stats) float64 { return float64(st.Spec.Drafted) }},
		{name: "memvanta:spec_draft_tokens_accepted_total", help: "Speculative decoding: drafted tokens accepted.", counter: true, f: func(st *engine.Stats) float64 { return float64(st.Spec.Accepted) }},
		{name: "memvanta:generation_passes_total", help: "Passes over the weights that produced a sequence's generated tokens (one-token steps and speculative verifications, per sequence).", counter: true, f: func(st *engine.Stats) float64 { return float64(st.Spec.Passes) }},
		{name: "memvanta:spec_accept_rate", help: "Speculative decoding: fraction (0..1) of drafted tokens accepted since start.", f: func(st *engine.Stats) float64 { return st.Spec.AcceptRate() }},
		{name: "memvanta:generation_tokens_per_pass", help: "Generated tokens per pass over the weights per sequence since start (1 without speculative decoding).", f: func(st *engine.Stats) float64 { return frac(int(st.GenTokens), int(st.Spec.Passes)) }},
	}
	for _, reason := range []string{"stop", "length", "cancelled", "error"} {
		ms = append(ms, engineMetric{name: "memvanta:request_finished_total", help: "Requests finished, by reason.", counter: true,
			labels: prometheus.Labels{"finish_reason": reason}, f: func(st *engine.Stats) float64 { return float64(st.Finished[reason]) }})
	}
	return ms
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
