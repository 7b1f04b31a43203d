package weights

import (
	"time"

	"github.com/memvanta/memvanta/core/policy"
	"github.com/memvanta/memvanta/native/telemetry"
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
	// Mixture-of-experts layers (see Stats).
	ExpertAcquisitions int64         `json:"expert_acquisitions,omitempty"`
	ExpertHits         int64         `json:"expert_hits,omitempty"`
	ExpertBytesRead    int64         `json:"expert_bytes_read,omitempty"`
	ExpertStallTime    time.Duration `json:"expert_stall_time_ns,omitempty"`
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
	// Mixture-of-experts layers: the policy evicting cached experts
	// (budget mode); expert acquisitions by the graph; hits, those whose
	// expert was in the cache before its batch asked for it (resident mode:
	// all); misses, those whose expert was read for its batch (read ahead
	// by WillNeedExperts or on demand); the bytes read for experts; and the
	// acquisitions that blocked and for how long in all.
	ExpertPolicy       string        `json:"expert_policy,omitempty"`
	ExpertAcquisitions int64         `json:"expert_acquisitions,omitempty"`
	ExpertHits         int64         `json:"expert_hits,omitempty"`
	ExpertMisses       int64         `json:"expert_misses,omitempty"`
	ExpertBytesRead    int64         `json:"expert_bytes_read,omitempty"`
	ExpertStalls       int64         `json:"expert_stalls,omitempty"`
	ExpertStallTime    time.Duration `json:"expert_stall_time_ns,omitempty"`
	// RSS: now (from /proc/self/status VmRSS), process peak (ru_maxrss), and
	// the per-pass samples (most recent MaxPassStats passes).
	RSS     int64       `json:"rss"`
	PeakRSS int64       `json:"peak_rss"`
	PerPass []PassStats `json:"per_pass"`
}

// MaxPassStats bounds the per-pass history kept in Stats.
const MaxPassStats = 1024

// beginAcquire closes a pass when the graph wraps around the plan, and a
// policy window when it is full. Called with w.mu held.
func (w *fileWeights) beginAcquire(g int) {
	now := time.Now()
	if w.winStart.IsZero() {
		w.winStart = now
	}
	if w.lastG >= 0 && g <= w.lastG {
		w.endPass()
	}
	w.lastG = g
	size := w.opt.Window
	if size <= 0 {
		size = len(w.groups)
	}
	if w.winAcq >= size {
		w.endWindow(now)
	}
	w.winAcq++
}

func (w *fileWeights) touched(n int64, hit, late bool, wait time.Duration) {
	w.tot.Acquisitions++
	w.tot.BytesTouched += n
	w.cur.BytesTouched += n
	w.win.Acquisitions++
	if hit {
		w.tot.CacheHits++
		w.cur.Hits++
		w.win.Hits++
		return
	}
	w.tot.CacheMisses++
	w.cur.Misses++
	w.tot.Stalls++
	w.cur.Stalls++
	w.win.Stalls++
	w.tot.StallTime += wait
	w.cur.StallTime += wait
	w.win.StallNanos += int64(wait)
	if late {
		w.tot.LateArrivals++
		w.cur.LateArrivals++
		w.win.LateArrivals++
	}
}

// expertTouched records one expert acquisition of n bytes. Called with
// w.mu held.
func (w *fileWeights) expertTouched(n int64, hit bool, wait time.Duration) {
	w.tot.ExpertAcquisitions++
	w.cur.ExpertAcquisitions++
	w.tot.BytesTouched += n
	w.cur.BytesTouched += n
	if hit {
		w.tot.ExpertHits++
		w.cur.ExpertHits++
	} else {
		w.tot.ExpertMisses++
	}
	if wait > 0 {
		w.tot.ExpertStalls++
		w.tot.ExpertStallTime += wait
		w.cur.ExpertStallTime += wait
	}
}

func (w *fileWeights) endPass() {
	if w.pf != nil {
		// Groups the graph did not acquire this pass (row-only tables) are
		// not worth loading ahead next pass.
		for g, u := range w.used {
			w.pf.Skip(g, !u)
			w.used[g] = false
		}
	}
	m := w.moved.Load()
	w.cur.BytesMoved, w.passMoved = m-w.passMoved, m
	xr := w.xread.Load()
	w.cur.ExpertBytesRead, w.passXRead = xr-w.passXRead, xr
	w.cur.Pass = w.tot.Passes
	w.cur.Depth = w.depth
	if rss, err := telemetry.CurrentRSS(); err == nil {
		w.cur.RSS = rss
	}
	if len(w.passes) < MaxPassStats {
		w.passes = append(w.passes, w.cur)
	} else {
		w.passes[w.tot.Passes%MaxPassStats] = w.cur
	}
	w.tot.Passes++
	w.cur = PassStats{}
}

// endWindow hands the finished window to the policy and applies its depth.
func (w *fileWeights) endWindow(now time.Time) {
	o := w.win
	m := w.moved.Load()
	o.BytesMoved, w.winMoved = m-w.winMoved, m
	o.Depth = w.depth
	o.WindowNanos = int64(now.Sub(w.winStart))
	if w.cache != nil {
		o.ResidentPeak = w.cache.Counters().Used
		o.Budget = w.opt.Budget
		o.GroupBytes = w.minBudget
	}
	d := policy.Next(w.pcfg, o)
	w.decision = d
	if w.pf != nil && d.Depth != w.depth {
		w.depth = d.Depth
		w.pf.SetDepth(d.Depth)
	}
	w.tot.Depth = w.depth
	w.win = policy.Observation{}
	w.winStart = now
	w.winAcq = 0
}

func (w *fileWeights) stats() Stats {
	w.mu.Lock()
	s := w.tot
	s.BytesMoved = w.moved.Load()
	s.ExpertBytesRead = w.xread.Load()
	if s.ExpertAcquisitions > 0 && w.opt.Mode == Budget {
		s.ExpertPolicy = w.opt.ExpertPolicy
	}
	s.Depth = w.depth
	s.LastDecision = w.decision
	if w.cache != nil {
		k := w.cache.Counters()
		s.Evictions += k.Evictions
		s.PeakWeightBytes = max(s.PeakWeightBytes, k.Peak)
	}
	if w.huge != nil {
		s.HugeMappedBytes, s.SmallMappedBytes, s.RecachedBytes = w.huge.counters()
	}
	n := len(w.passes)
	s.PerPass = make([]PassStats, 0, n)
	if n < MaxPassStats {
		s.PerPass = append(s.PerPass, w.passes...)
	} else {
		i := int(w.tot.Passes % MaxPassStats)
		s.PerPass = append(append(s.PerPass, w.passes[i:]...), w.passes[:i]...)
	}
	w.mu.Unlock()
	if u, err := telemetry.Rusage(); err == nil {
		s.MinorFaults = u.MinorFaults - w.base.MinorFaults
		s.MajorFaults = u.MajorFaults - w.base.MajorFaults
		s.PeakRSS = u.PeakRSS
	}
	if rss, err := telemetry.CurrentRSS(); err == nil {
		s.RSS = rss
	}
	return s
}
