package serve

import (
	"net/http"

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
	stats := func(f func(b *Backend) float64) func() float64 {
		return func() float64 {
			b := s.be.Load()
			if b == nil {
				return 0
			}
			return f(b)
		}
	}
	gauge := func(name, help string, f func(b *Backend) float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, stats(f)))
	}
	counter := func(name, help string, f func(b *Backend) float64) {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, stats(f)))
	}
	gauge(NumRequestsWaiting, "Requests waiting for a slot.", func(b *Backend) float64 { return float64(b.Engine.Stats().Waiting) })
	gauge(NumRequestsRunning, "Requests holding a slot (prefilling or generating).", func(b *Backend) float64 { return float64(b.Engine.Stats().Running) })
	gauge(KVCacheUsage, "Fraction (0..1) of all slots' KV-cache positions held by running requests.", func(b *Backend) float64 {
		st := b.Engine.Stats()
		if st.KVCap == 0 {
			return 0
		}
		return float64(st.KVUsed) / float64(st.KVCap)
	})
	gauge(KVCacheIdleCached, "Fraction (0..1) of all slots' KV-cache positions held by idle slots: finished requests' tokens kept for prefix reuse (free for new requests).", func(b *Backend) float64 {
		st := b.Engine.Stats()
		if st.KVCap == 0 {
			return 0
		}
		return float64(st.KVCached) / float64(st.KVCap)
	})
	gauge("memvanta:kv_cache_bytes", "Bytes of KV-cache pages allocated across slots.", func(b *Backend) float64 { return float64(b.Engine.Stats().KVBytes) })
	gauge("memvanta:slots", "Configured slots (-np).", func(b *Backend) float64 { return float64(b.Engine.Stats().Slots) })
	counter("memvanta:prompt_tokens_total", "Prompt tokens computed.", func(b *Backend) float64 { return float64(b.Engine.Stats().PromptTokens) })
	counter("memvanta:prompt_tokens_cached_total", "Prompt tokens reused from a slot's cache instead of computed.", func(b *Backend) float64 { return float64(b.Engine.Stats().CachedTokens) })
	counter("memvanta:kv_positions_forked_total", "KV-cache positions copied from a request's first choice into its other choices (n > 1) instead of computed.", func(b *Backend) float64 { return float64(b.Engine.Stats().ForkedTokens) })
	counter("memvanta:generation_tokens_total", "Tokens generated.", func(b *Backend) float64 { return float64(b.Engine.Stats().GenTokens) })
	counter("memvanta:engine_steps_total", "Scheduler steps run.", func(b *Backend) float64 { return float64(b.Engine.Stats().Steps) })
	// Speculative decoding (-md, --spec-type): acceptance rate is
	// accepted/drafted, tokens per pass generation_tokens_total/passes.
	counter("memvanta:spec_draft_tokens_total", "Speculative decoding: tokens drafted and verified.", func(b *Backend) float64 { return float64(b.Engine.Stats().Spec.Drafted) })
	counter("memvanta:spec_draft_tokens_accepted_total", "Speculative decoding: drafted tokens accepted.", func(b *Backend) float64 { return float64(b.Engine.Stats().Spec.Accepted) })
	counter("memvanta:generation_passes_total", "Passes over the weights that produced a sequence's generated tokens (one-token steps and speculative verifications, per sequence).", func(b *Backend) float64 { return float64(b.Engine.Stats().Spec.Passes) })
	gauge("memvanta:spec_accept_rate", "Speculative decoding: fraction (0..1) of drafted tokens accepted since start.", func(b *Backend) float64 { return b.Engine.Stats().Spec.AcceptRate() })
	gauge("memvanta:generation_tokens_per_pass", "Generated tokens per pass over the weights per sequence since start (1 without speculative decoding).", func(b *Backend) float64 {
		st := b.Engine.Stats()
		if st.Spec.Passes == 0 {
			return 0
		}
		return float64(st.GenTokens) / float64(st.Spec.Passes)
	})
	for _, reason := range []string{"stop", "length", "cancelled", "error"} {
		r := reason
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "memvanta:request_finished_total",
			Help: "Requests finished, by reason.", ConstLabels: prometheus.Labels{"finish_reason": r}},
			stats(func(b *Backend) float64 { return float64(b.Engine.Stats().Finished[r]) })))
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

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
