// Package policy decides how far ahead of the graph the prefetcher should
// load weight groups. It is a pure function of one completed observation
// window: no I/O, no clock, no state of its own, so the same observations
// give the same depth on every platform and in tests. The runtime measures;
// the policy only judges.
package policy

import (
	"errors"
	"fmt"
)

// Direction is the adjustment a Decision makes.
type Direction int8

const (
	Shallower Direction = -1
	Hold      Direction = 0
	Deeper    Direction = 1
)

func (d Direction) String() string {
	switch d {
	case Shallower:
		return "shallower"
	case Hold:
		return "hold"
	case Deeper:
		return "deeper"
	}
	return fmt.Sprintf("direction(%d)", int(d))
}

// Reason names the rule that produced a Decision, for telemetry.
type Reason string

const (
	NoData     Reason = "no-data"      // empty window
	OverBudget Reason = "over-budget"  // depth+1 groups do not fit the budget
	Stalling   Reason = "stalling"     // the graph waited for weights
	AtLimit    Reason = "at-limit"     // would deepen, but depth or budget forbids
	HighWater  Reason = "high-water"   // no stalls and resident bytes near the budget: give back one step
	Steady     Reason = "steady"       // nothing to change
	OutOfRange Reason = "out-of-range" // depth outside [MinDepth, MaxDepth] corrected
)

// Config tunes the rules. Thresholds are in per mille so the policy needs
// no floating point and is exact.
type Config struct {
	MinDepth int // smallest look-ahead, in groups beyond the one in use (≥ 0)
	MaxDepth int // largest look-ahead (≥ MinDepth)
	// StallPermille: deepen when time stalled is at least this share of the
	// window's wall time, or when at least this share of acquisitions stalled.
	StallPermille int64
	// QuietPermille: a window counts as quiet (no pressure to keep depth)
	// when its stall time share is below this.
	QuietPermille int64
	// HighWaterPermille: in a quiet window whose peak resident weight bytes
	// reach this share of the budget, step back one group to keep margin.
	HighWaterPermille int64
}

// DefaultConfig: look-ahead 1..8 groups, deepen at 2% stalled, step back
// when quiet (< 0.5% stalled) and above 97% of the budget.
func DefaultConfig() Config {
	return Config{MinDepth: 1, MaxDepth: 8, StallPermille: 20, QuietPermille: 5, HighWaterPermille: 970}
}

// Validate reports an inconsistent Config.
func (c Config) Validate() error {
	var errs []error
	if c.MinDepth < 0 || c.MaxDepth < c.MinDepth {
		errs = append(errs, fmt.Errorf("policy: depth range [%d,%d] invalid", c.MinDepth, c.MaxDepth))
	}
	for _, p := range []struct {
		name string
		v    int64
	}{{"StallPermille", c.StallPermille}, {"QuietPermille", c.QuietPermille}, {"HighWaterPermille", c.HighWaterPermille}} {
		if p.v < 0 || p.v > 1000 {
			errs = append(errs, fmt.Errorf("policy: %s %d outside [0,1000]", p.name, p.v))
		}
	}
	if c.QuietPermille > c.StallPermille {
		errs = append(errs, fmt.Errorf("policy: QuietPermille %d above StallPermille %d", c.QuietPermille, c.StallPermille))
	}
	return errors.Join(errs...)
}

// Observation is one completed window, as measured by the runtime.
type Observation struct {
	Depth        int   // look-ahead in force during the window
	Acquisitions int64 // group acquisitions by the graph
	Hits         int64 // acquisitions whose group was already loaded
	Stalls       int64 // acquisitions that had to wait for data
	StallNanos   int64 // total time the graph waited for weights
	WindowNanos  int64 // wall time of the window (0: use counts only)
	LateArrivals int64 // stalls on a group whose prefetch had already started
	BytesMoved   int64 // bytes loaded into the cache
	ResidentPeak int64 // peak weight bytes resident (cached + loading)
	Budget       int64 // weight byte budget; 0 means unbounded
	GroupBytes   int64 // bytes of the largest group: the cost of one more step
}

// Decision is the new look-ahead.
type Decision struct {
	Depth  int       `json:"depth"`
	Dir    Direction `json:"dir"`
	Reason Reason    `json:"reason"`
}

// fits reports whether a window of depth look-ahead groups plus the one in
// use fits the budget.
func fits(o Observation, depth int) bool {
	if o.Budget <= 0 || o.GroupBytes <= 0 {
		return true
	}
	return int64(depth+1) <= o.Budget/o.GroupBytes
}

func permille(part, whole int64) int64 {
	if whole <= 0 {
		return 0
	}
	if part >= whole {
		return 1000
	}
	return part * 1000 / whole
}

// Next returns the look-ahead for the next window. Rules, first match wins:
// a depth outside the configured range is clamped; a depth whose window does
// not fit the budget shrinks to the largest that does; a stalling window
// deepens by one if depth and budget allow; a quiet window near the budget's
// high-water mark steps back one; otherwise the depth holds. Deepening
// reacts to measured waiting only, so a model that fits entirely never
// grows its look-ahead for nothing.
func Next(c Config, o Observation) Decision {
	d := o.Depth
	clamped := min(max(d, c.MinDepth), c.MaxDepth)
	if clamped != d {
		return decide(d, clamped, OutOfRange)
	}
	if !fits(o, d) {
		nd := d
		for nd > c.MinDepth && !fits(o, nd) {
			nd--
		}
		if nd != d {
			return decide(d, nd, OverBudget)
		}
	}
	if o.Acquisitions <= 0 {
		return decide(d, d, NoData)
	}
	stallShare := permille(o.Stalls, o.Acquisitions)
	if o.WindowNanos > 0 {
		stallShare = max(stallShare, permille(o.StallNanos, o.WindowNanos))
	}
	if stallShare >= c.StallPermille && o.Stalls > 0 {
		if d < c.MaxDepth && fits(o, d+1) {
			return decide(d, d+1, Stalling)
		}
		return decide(d, d, AtLimit)
	}
	quiet := o.Stalls == 0 || (o.WindowNanos > 0 && permille(o.StallNanos, o.WindowNanos) < c.QuietPermille)
	if quiet && d > c.MinDepth && o.Budget > 0 && permille(o.ResidentPeak, o.Budget) >= c.HighWaterPermille {
		return decide(d, d-1, HighWater)
	}
	return decide(d, d, Steady)
}

func decide(old, nd int, r Reason) Decision {
	dir := Hold
	switch {
	case nd > old:
		dir = Deeper
	case nd < old:
		dir = Shallower
	}
	return Decision{Depth: nd, Dir: dir, Reason: r}
}
