package policy

import "testing"

func TestNext(t *testing.T) {
	c := DefaultConfig() // depth 1..8, stall 20‰, quiet 5‰, high water 970‰
	const mib = 1 << 20
	base := Observation{Acquisitions: 34, Budget: 512 * mib, GroupBytes: 100 * mib, WindowNanos: 1e9}
	with := func(f func(o *Observation)) Observation { o := base; f(&o); return o }
	tests := []struct {
		name string
		o    Observation
		want Decision
	}{
		{"empty window holds", with(func(o *Observation) { o.Depth = 2; o.Acquisitions = 0 }), Decision{2, Hold, NoData}},
		{"all hits holds", with(func(o *Observation) { o.Depth = 2; o.Hits = 34; o.ResidentPeak = 300 * mib }), Decision{2, Hold, Steady}},
		{"stall time share deepens", with(func(o *Observation) { o.Depth = 1; o.Stalls = 1; o.StallNanos = 30e6 }), Decision{2, Deeper, Stalling}},
		{"stall count share deepens", with(func(o *Observation) { o.Depth = 1; o.Stalls = 2; o.StallNanos = 1e3 }), Decision{2, Deeper, Stalling}},
		{"tiny stall holds", with(func(o *Observation) { o.Depth = 1; o.Acquisitions = 1000; o.Stalls = 1; o.StallNanos = 1e6 }), Decision{1, Hold, Steady}},
		{"count-only window", with(func(o *Observation) { o.Depth = 3; o.WindowNanos = 0; o.Stalls = 1; o.StallNanos = 1 }), Decision{4, Deeper, Stalling}},
		// 512 MiB / 100 MiB = 5 groups: depth 4 + the one in use is the most that fits.
		{"budget forbids deeper", with(func(o *Observation) { o.Depth = 4; o.Stalls = 10; o.StallNanos = 5e8 }), Decision{4, Hold, AtLimit}},
		{"max depth forbids deeper", with(func(o *Observation) { o.Depth = 8; o.Budget = 0; o.Stalls = 10; o.StallNanos = 5e8 }), Decision{8, Hold, AtLimit}},
		{"over budget shrinks to fit", with(func(o *Observation) { o.Depth = 7 }), Decision{4, Shallower, OverBudget}},
		{"over budget stops at min", with(func(o *Observation) { o.Depth = 3; o.GroupBytes = 400 * mib }), Decision{1, Shallower, OverBudget}},
		{"quiet at high water steps back", with(func(o *Observation) { o.Depth = 3; o.ResidentPeak = 500 * mib }), Decision{2, Shallower, HighWater}},
		{"high water never below min", with(func(o *Observation) { o.Depth = 1; o.ResidentPeak = 512 * mib }), Decision{1, Hold, Steady}},
		{"high water but stalling deepens only if it fits", with(func(o *Observation) { o.Depth = 3; o.ResidentPeak = 500 * mib; o.Stalls = 5; o.StallNanos = 1e8 }), Decision{4, Deeper, Stalling}},
		{"unbounded budget never high water", with(func(o *Observation) { o.Depth = 3; o.Budget = 0; o.ResidentPeak = 1 << 40 }), Decision{3, Hold, Steady}},
		{"depth below min clamped", with(func(o *Observation) { o.Depth = 0 }), Decision{1, Deeper, OutOfRange}},
		{"depth above max clamped", with(func(o *Observation) { o.Depth = 12; o.Budget = 0 }), Decision{8, Shallower, OutOfRange}},
	}
	for _, tc := range tests {
		got := Next(c, tc.o)
		if got != tc.want {
			t.Errorf("%s: Next = %+v, want %+v", tc.name, got, tc.want)
		}
		// Pure: the same window gives the same answer.
		if again := Next(c, tc.o); again != got {
			t.Errorf("%s: not deterministic: %+v then %+v", tc.name, got, again)
		}
	}
}

// TestConverges feeds the policy windows from a toy model of a loader that
// needs `need` groups of look-ahead to never stall, and checks the depth
// settles at need without oscillating.
func TestConverges(t *testing.T) {
	c := DefaultConfig()
	for need := 1; need <= 5; need++ {
		d := 1
		var trace []int
		for range 12 {
			o := Observation{Depth: d, Acquisitions: 34, Budget: 1 << 40, GroupBytes: 1, WindowNanos: 1e9}
			if d < need {
				o.Stalls, o.StallNanos, o.LateArrivals = 10, 2e8, 10
			}
			d = Next(c, o).Depth
			trace = append(trace, d)
		}
		for _, x := range trace[need:] {
			if x != need {
				t.Errorf("need %d: trace %v does not settle at %d", need, trace, need)
				break
			}
		}
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	bad := []Config{
		{MinDepth: -1, MaxDepth: 2},
		{MinDepth: 3, MaxDepth: 2},
		{MinDepth: 1, MaxDepth: 2, StallPermille: 2000},
		{MinDepth: 1, MaxDepth: 2, StallPermille: 5, QuietPermille: 10},
	}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

func TestDirectionString(t *testing.T) {
	for d, s := range map[Direction]string{Shallower: "shallower", Hold: "hold", Deeper: "deeper", 5: "direction(5)"} {
		if d.String() != s {
			t.Errorf("%d.String() = %q", d, d.String())
		}
	}
}
