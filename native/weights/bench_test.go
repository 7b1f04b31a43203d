package weights

import (
	"context"
	"os"
	"testing"
)

// BenchmarkStream drives a real model's layer plan (as planFor groups it)
// through the Weights interface, reading every byte of each acquired group
// as a stand-in for compute, and reports the runtime's telemetry. It needs
// a model: MEMVANTA_BENCH_MODEL=/tmp/7b.gguf; optional
// MEMVANTA_BENCH_BUDGET=512MiB and MEMVANTA_BENCH_STREAM=copy|map.
// Without a budget it measures resident mode.
func BenchmarkStream(b *testing.B) {
	path := os.Getenv("MEMVANTA_BENCH_MODEL")
	if path == "" {
		b.Skip("MEMVANTA_BENCH_MODEL not set")
	}
	opt := Options{Mode: Resident}
	if s := os.Getenv("MEMVANTA_BENCH_BUDGET"); s != "" {
		n, err := ParseSize(s)
		if err != nil {
			b.Fatal(err)
		}
		opt = Options{Mode: Budget, Budget: n, Stream: os.Getenv("MEMVANTA_BENCH_STREAM")}
	}
	md, err := Open(context.Background(), path, opt)
	if err != nil {
		b.Fatal(err)
	}
	defer md.Close()
	_, _, plan := planFor(md)
	w := md.Weights()
	if err := w.Declare(plan); err != nil {
		b.Fatal(err)
	}
	var sum uint64
	pass := func() {
		for g := range plan.Groups {
			bufs, err := w.Acquire(context.Background(), g)
			if err != nil {
				b.Fatal(err)
			}
			for _, t := range bufs {
				for i := 0; i+8 <= len(t); i += 64 {
					sum += uint64(t[i])
				}
			}
			w.Release(g)
		}
	}
	pass() // warm-up: map or fill once
	b.ResetTimer()
	for range b.N {
		pass()
	}
	b.StopTimer()
	s := md.Stats()
	b.ReportMetric(float64(s.StallTime.Milliseconds())/float64(s.Passes), "stall-ms/pass")
	b.ReportMetric(float64(s.CacheHits)/float64(max(s.Acquisitions, 1)), "hit-ratio")
	b.ReportMetric(float64(s.Depth), "depth")
	b.ReportMetric(float64(s.PeakRSS)/(1<<20), "peakRSS-MiB")
	b.Logf("passes %d hits %d misses %d stalls %d (%v) late %d evictions %d moved %d depth %d decision %+v sum %d",
		s.Passes, s.CacheHits, s.CacheMisses, s.Stalls, s.StallTime, s.LateArrivals, s.Evictions, s.BytesMoved, s.Depth, s.LastDecision, sum)
}
