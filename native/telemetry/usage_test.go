package telemetry

import (
	"runtime"
	"testing"
)

// TestUsageSeesTouchedHeap runs on every OS (rss_test.go adds a mapping
// outside the Go heap on Linux): 64 MiB of fresh heap written page by page
// must show in the current and peak resident size and in the fault count,
// whichever call each OS answers them with.
func TestUsageSeesTouchedHeap(t *testing.T) {
	const n = 64 << 20
	before, err := CurrentRSS()
	if err != nil {
		t.Fatal(err)
	}
	u0, err := Rusage()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	after, err := CurrentRSS()
	if err != nil {
		t.Fatal(err)
	}
	u1, err := Rusage()
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(b)
	if after-before < n*3/4 {
		t.Errorf("resident size grew by %d bytes after touching %d (from %d to %d)", after-before, n, before, after)
	}
	if p := PeakRSS(); p < after-(2<<20) {
		t.Errorf("peak resident size %d below current %d", p, after)
	}
	f0, f1 := u0.MinorFaults+u0.MajorFaults, u1.MinorFaults+u1.MajorFaults
	switch {
	case f1 == 0 && runtime.GOOS == "windows":
		// Wine leaves PROCESS_MEMORY_COUNTERS.PageFaultCount at 0; Windows
		// counts every fault there.
		t.Log("GetProcessMemoryInfo reports no page faults at all (Wine): fault count unchecked")
	case f1-f0 < n/4096/2:
		t.Errorf("page faults grew by %d for %d touched pages", f1-f0, n/4096)
	}
	if u1.CPU < u0.CPU || u0.CPU < 0 {
		t.Errorf("CPU time went from %v to %v", u0.CPU, u1.CPU)
	}
}
