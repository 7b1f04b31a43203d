//go:build linux

package runtime

import (
	"time"

	"github.com/memvanta/memvanta/core/policy"
)

// PassStats is the telemetry of one forward pass (one cycle through the
// plan: one generated token, or one prefill batch).
type PassStats struct {
	Pass         int64         `json:"pass"`
	BytesTouched int64         `json:"bytes_touched"` // weight bytes handed to the graph (groups + rows)
	BytesMoved   int64         `json:"bytes_moved"`   // bytes loaded into cache buffers (budget mode)
	Hits         int64         `json:"hits"`          // acquisitions served without loading
	Misses       int64         `json:"misses"`        // acquisitions whose group had to be loaded (or finish loading)
	Stalls       int64         `json:"stalls"`        // acquisitions that waited for data
	StallTime    time.Duration `json:"stall_time_ns"`
	LateArrivals int64         `json:"late_arrivals"` // stalls on a group whose prefetch was already in flight
	Depth        int           `json:"depth"`         // look-ahead at the end of the pass
	RSS          int64         `json:"rss"`           // resident set size sampled at the end of the pass (0 if unknown)
}

// Stats is the run's telemetry so far.
type Stats struct {
	Mode         string        `json:"mode"`
	Stream       string        `json:"stream,omitempty"` // budget mode: copy or map
	Budget       int64         `json:"budget"`           // budget mode: weight byte budget
	FileSize     int64         `json:"file_size"`
	MinBudget    int64         `json:"min_budget"` // budget mode: largest group of the declared plan (the smallest workable budget)
	Passes       int64         `json:"passes"`     // completed passes
	Acquisitions int64         `json:"acquisitions"`
	BytesTouched int64         `json:"bytes_touched"`
	BytesMoved   int64         `json:"bytes_moved"`
	CacheHits    int64         `json:"cache_hits"`
	CacheMisses  int64         `json:"cache_misses"`
	Evictions    int64         `json:"evictions"`
	Stalls       int64         `json:"stalls"` // prefetch stalls: acquisitions that waited
	StallTime    time.Duration `json:"stall_time_ns"`
	LateArrivals int64         `json:"late_arrivals"`
	// PeakWeightBytes is the most weight data held in cache buffers at once
	// (budget mode; in resident mode the mapping is the page cache's).
	PeakWeightBytes int64 `json:"peak_weight_bytes"`
	// Budget map stream (every load) and resident mode (first pass): weight
	// bytes mapped by huge (PMD) entries after loading, those mapped by
	// 4 KiB entries (see native/mmap/huge.go for what those cost), and bytes
	// re-read from storage to bring the page cache into huge folios.
	HugeMappedBytes  int64           `json:"huge_mapped_bytes,omitempty"`
	SmallMappedBytes int64           `json:"small_mapped_bytes,omitempty"`
	RecachedBytes    int64           `json:"recached_bytes,omitempty"`
	Depth            int             `json:"depth"`         // current look-ahead
	LastDecision     policy.Decision `json:"last_decision"` // the policy's latest verdict
	// Faults since Open, from getrusage (process-wide).
	MinorFaults int64 `json:"minor_faults"`
	MajorFaults int64 `json:"major_faults"`
	// RSS: now (from /proc/self/status VmRSS), process peak (ru_maxrss), and
	// the per-pass samples (most recent MaxPassStats passes).
	RSS     int64       `json:"rss"`
	PeakRSS int64       `json:"peak_rss"`
	PerPass []PassStats `json:"per_pass"`
}

// MaxPassStats bounds the per-pass history kept in Stats.
const MaxPassStats = 1024
