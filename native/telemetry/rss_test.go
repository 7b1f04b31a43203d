//go:build linux

package telemetry

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestRSSSeesTouchedMemory maps and touches 64 MiB outside the Go heap:
// VmRSS, the peak and the minor-fault count must all see it.
func TestRSSSeesTouchedMemory(t *testing.T) {
	const n = 64 << 20
	before, err := CurrentRSS()
	if err != nil {
		t.Fatal(err)
	}
	u0, err := Rusage()
	if err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	_ = unix.Madvise(mem, unix.MADV_NOHUGEPAGE) // one fault per 4 KiB page
	for i := 0; i < n; i += 4096 {
		mem[i] = 1
	}
	after, err := CurrentRSS()
	if err != nil {
		t.Fatal(err)
	}
	u1, err := Rusage()
	if err != nil {
		t.Fatal(err)
	}
	if after-before < n*3/4 {
		t.Errorf("VmRSS grew by %d bytes after touching %d", after-before, n)
	}
	// ru_maxrss and VmRSS read the kernel's batched per-CPU RSS counters
	// at different moments; they may disagree by a few batches of pages.
	if p := PeakRSS(); p < after-(2<<20) {
		t.Errorf("peak RSS %d below current %d", p, after)
	}
	if d := u1.MinorFaults - u0.MinorFaults; d < n/4096/2 {
		t.Errorf("minor faults grew by %d for %d touched pages", d, n/4096)
	}
	if u1.MajorFaults < 0 {
		t.Errorf("negative major faults %d", u1.MajorFaults)
	}
}
