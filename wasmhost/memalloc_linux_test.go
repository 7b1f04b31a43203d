package wasmhost

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags of every mapping of this process overlapping
// [lo, hi), from /proc/self/smaps.
func vmFlags(t *testing.T, lo, hi uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var out []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var a, b uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &a, &b); n == 2 && !strings.HasSuffix(strings.Fields(line)[0], ":") {
			in = a < hi && lo < b
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			out = append(out, strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")))
		}
	}
	if len(out) == 0 {
		t.Fatalf("no mapping overlaps %#x-%#x", lo, hi)
	}
	return out
}

func thpAvailable(t *testing.T) {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(b), "[never]") {
		t.Skip("transparent huge pages unavailable")
	}
}

// The guest's linear memory is advised for huge pages ("hg" in VmFlags).
func TestGuestMemoryHugePages(t *testing.T) {
	thpAvailable(t)
	m := mmapAllocator{}.Allocate(0, 16<<20)
	if m == nil {
		t.Fatal("Allocate failed")
	}
	defer m.Free()
	buf := m.Reallocate(1 << 20)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	for _, fl := range vmFlags(t, p, p+16<<20) {
		if !strings.Contains(" "+fl+" ", " hg ") {
			t.Fatalf("guest memory VmFlags %q lack hg", fl)
		}
	}
}

// HugePageHeap advises a span of the Go heap, and only that.
func TestHugePageHeap(t *testing.T) {
	thpAvailable(t)
	if lo, hi := hugePageHeap(1 << 20); lo != hi {
		t.Fatal("advised a range below two huge pages")
	}
	lo, hi := hugePageHeap(8 << 20)
	if lo >= hi || lo%(2<<20) != 0 || hi%(2<<20) != 0 || hi-lo > 8<<20 {
		t.Fatalf("advised %#x-%#x", lo, hi)
	}
	for _, fl := range vmFlags(t, lo, hi) {
		if !strings.Contains(" "+fl+" ", " hg ") {
			t.Fatalf("heap span VmFlags %q lack hg", fl)
		}
	}
}
