//go:build linux

package runtime

import (
	"time"

	"github.com/memvanta/memvanta/core/policy"
)

// PassStats is the telemetry of one forward pass (one cycle through the
// plan: one generated token, or one prefill batch).
type PassStats struct {
	Pass         int64
	BytesTouched int64 // weight bytes handed to the graph (groups + rows)
	BytesMoved   int64 // bytes loaded into cache buffers (budget mode)
	Hits         int64 // acquisitions served without loading
	Misses       int64 // acquisitions whose group had to be loaded (or finish loading)
	Stalls       int64 // acquisitions that waited for data
	StallTime    time.Duration
	LateArrivals int64 // stalls on a group whose prefetch was already in flight
	Depth        int   // look-ahead at the end of the pass
	RSS          int64 // resident set size sampled at the end of the pass (0 if unknown)
}

// Stats is the run's telemetry so far.
type Stats struct {
	Mode         string
	Budget       int64 // budget mode: weight byte budget
	FileSize     int64
	MinBudget    int64 // budget mode: largest group of the declared plan (the smallest workable budget)
	Passes       int64 // completed passes
	Acquisitions int64
	BytesTouched int64
	BytesMoved   int64
	CacheHits    int64
	CacheMisses  int64
	Evictions    int64
	Stalls       int64 // prefetch stalls: acquisitions that waited
	StallTime    time.Duration
	LateArrivals int64
	// PeakWeightBytes is the most weight data held in cache buffers at once
	// (budget mode; in resident mode the mapping is the page cache's).
	PeakWeightBytes int64
	Depth           int             // current look-ahead
	LastDecision    policy.Decision // the policy's latest verdict
	// Faults since Open, from getrusage (process-wide).
	MinorFaults int64
	MajorFaults int64
	// RSS: now (from /proc/self/status VmRSS), process peak (ru_maxrss), and
	// the per-pass samples (most recent MaxPassStats passes).
	RSS     int64
	PeakRSS int64
	PerPass []PassStats
}

// MaxPassStats bounds the per-pass history kept in Stats.
const MaxPassStats = 1024
