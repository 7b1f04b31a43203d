package cache

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident reports, per page of b, whether it is in memory (mincore).
func resident(t *testing.T, b []byte) []bool {
	t.Helper()
	ps := os.Getpagesize()
	vec := make([]byte, (len(b)+ps-1)/ps)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, addr(b), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	out := make([]bool, len(vec))
	for i, v := range vec {
		out[i] = v&1 != 0
	}
	return out
}

// stamp writes tag into the first word of every page of b (and its last
// byte), which makes every page resident and lets check see whether any
// other buffer wrote over it.
func stamp(b []byte, tag uint64) {
	ps := os.Getpagesize()
	for off := 0; off < len(b); off += ps {
		*(*uint64)(unsafe.Pointer(&b[off])) = tag ^ uint64(off)
	}
	b[len(b)-1] = byte(tag)
}

func checkStamp(t *testing.T, b []byte, tag uint64, what string) {
	t.Helper()
	ps := os.Getpagesize()
	for off := 0; off < len(b); off += ps {
		if got := *(*uint64)(unsafe.Pointer(&b[off])); got != tag^uint64(off) {
			t.Fatalf("%s: page at %d holds %#x, want %#x (overwritten by another buffer)", what, off, got, tag^uint64(off))
		}
	}
	if b[len(b)-1] != byte(tag) {
		t.Fatalf("%s: last byte overwritten", what)
	}
}

func checkZero(t *testing.T, b []byte, what string) {
	t.Helper()
	ps := os.Getpagesize()
	for off := 0; off < len(b); off += ps {
		if *(*uint64)(unsafe.Pointer(&b[off])) != 0 {
			t.Fatalf("%s: page at %d not zero: a released slot kept its data", what, off)
		}
	}
}

// mapsPerm returns the permissions of the /proc/self/maps line starting at
// start, or "" if no mapping starts there.
func mapsPerm(t *testing.T, start uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	prefix := fmt.Sprintf("%x-", start)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) {
			return strings.Fields(line)[1]
		}
	}
	return ""
}

// expertSize is one expert of the Qwen3-30B-A3B-shaped Q4_K_M file (three
// slices), page-rounded: the size the slabs are for.
const expertSize = 732 << 12

func TestArena(t *testing.T) {
	ps := os.Getpagesize()
	for _, tc := range []struct {
		name  string
		size  int
		count int
	}{
		{"page", ps, 100},
		{"expert", expertSize, 30}, // 22 a slab: two slabs, the second partly used
		{"huge-page multiple", hugePage, 40},
		{"own mapping", 40 << 20, 2},
		{"bigger than a slab", 100<<20 + ps, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newArena()
			perSlab := max(1, slabTarget/tc.size)
			bufs := make([][]byte, tc.count)
			for i := range bufs {
				b, err := a.alloc(tc.size)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) != tc.size || cap(b) != tc.size {
					t.Fatalf("buffer %d: len %d cap %d, want %d", i, len(b), cap(b), tc.size)
				}
				checkZero(t, b, "new buffer")
				stamp(b, uint64(i+1)<<32)
				bufs[i] = b
			}
			c := a.classes[tc.size]
			if want := (tc.count + perSlab - 1) / perSlab; len(c.slabs) != want {
				t.Fatalf("%d slabs, want %d", len(c.slabs), want)
			}
			for _, s := range c.slabs {
				if addr(s.mem)%hugePage != 0 {
					t.Fatalf("slab at %#x not 2 MiB aligned", addr(s.mem))
				}
				if len(s.mem) != perSlab*tc.size {
					t.Fatalf("slab of %d bytes, want %d slots of %d", len(s.mem), perSlab, tc.size)
				}
				// Past the last slot up to the next 2 MiB boundary: a
				// guard nobody can touch, so that extent is never huge.
				if end := addr(s.mem) + uintptr(len(s.mem)); end%hugePage != 0 {
					if p := mapsPerm(t, end); p != "---p" {
						t.Fatalf("guard after slab: mapping %q, want ---p", p)
					}
				}
			}
			// No two buffers overlap, and each lies inside one slab.
			sorted := slices.Clone(bufs)
			slices.SortFunc(sorted, func(x, y []byte) int { return int(addr(x)) - int(addr(y)) })
			for i := 1; i < len(sorted); i++ {
				if addr(sorted[i-1])+uintptr(tc.size) > addr(sorted[i]) {
					t.Fatalf("buffers at %#x and %#x overlap", addr(sorted[i-1]), addr(sorted[i]))
				}
			}
			for i, b := range bufs {
				ref := a.slots[addr(b)]
				if lo, hi := addr(ref.s.mem), addr(ref.s.mem)+uintptr(len(ref.s.mem)); addr(b) < lo || addr(b)+uintptr(len(b)) > hi {
					t.Fatalf("buffer %d outside its slab", i)
				}
			}

			// Release every other buffer: its pages are gone at once, the
			// others keep their data.
			released := map[uintptr]bool{}
			for i := 0; i < len(bufs); i += 2 {
				b := bufs[i]
				s := a.slots[addr(b)].s
				if err := a.release(b); err != nil {
					t.Fatal(err)
				}
				released[addr(b)] = true
				if s.live > 0 {
					if res := resident(t, b); slices.Contains(res, true) {
						t.Fatalf("released buffer %d still has resident pages", i)
					}
				} else if p := mapsPerm(t, addr(s.span)); p != "" {
					t.Fatalf("emptied slab still mapped (%s)", p)
				}
				bufs[i] = nil
			}
			for i, b := range bufs {
				if b != nil {
					checkStamp(t, b, uint64(i+1)<<32, fmt.Sprintf("buffer %d after releases", i))
					if res := resident(t, b); slices.Contains(res, false) {
						t.Fatalf("live buffer %d lost pages", i)
					}
				}
			}
			// A slab emptied by the releases is unmapped: only those
			// with a live slot remain.
			live := map[*slab]bool{}
			for _, ref := range a.slots {
				live[ref.s] = true
			}
			if c := a.classes[tc.size]; len(live) == 0 && c != nil || c != nil && len(c.slabs) != len(live) {
				t.Fatalf("%d slabs mapped, %d with live slots", len(c.slabs), len(live))
			}

			// Reallocate: released slots are reused (no new slab while
			// one has room), come back zeroed, and overlap nothing.
			for i := range bufs {
				if bufs[i] != nil {
					continue
				}
				b, err := a.alloc(tc.size)
				if err != nil {
					t.Fatal(err)
				}
				if perSlab > 1 && len(live) > 0 && !released[addr(b)] {
					t.Fatalf("buffer %d: a new slot at %#x while released ones were free", i, addr(b))
				}
				checkZero(t, b, "reused slot")
				stamp(b, uint64(i+1)<<40)
				bufs[i] = b
			}
			for i, b := range bufs {
				tag := uint64(i+1) << 32
				if i%2 == 0 {
					tag = uint64(i+1) << 40
				}
				checkStamp(t, b, tag, fmt.Sprintf("buffer %d after reuse", i))
			}

			spans := [][]byte{}
			for _, s := range a.classes[tc.size].slabs {
				spans = append(spans, s.span)
			}
			for _, b := range bufs {
				if err := a.release(b); err != nil {
					t.Fatal(err)
				}
			}
			if len(a.classes) != 0 || len(a.slots) != 0 {
				t.Fatalf("after releasing all: %d classes, %d slots", len(a.classes), len(a.slots))
			}
			for _, sp := range spans {
				if p := mapsPerm(t, addr(sp)); p != "" {
					t.Fatalf("empty slab still mapped (%s)", p)
				}
			}
			if err := a.release(bufs[0]); err == nil {
				t.Fatal("double release: no error")
			}
		})
	}
}

// TestCacheSlabBudget drives the cache through fills, evictions, reuse of
// idle buffers and release of wrong-size ones with two expert sizes (as
// Q4_K_M mixes Q4_K and Q6_K experts) and checks, after every step, that
// the budget charge is exactly the bytes of the buffers the arena has
// handed out, that no live entry's data was overwritten, and that Close
// gives everything back.
func TestCacheSlabBudget(t *testing.T) {
	ps := int64(os.Getpagesize())
	small, large := int64(expertSize), int64(expertSize+200*ps)
	budget := 10*small + 3*large
	c, err := New(budget)
	if err != nil {
		t.Fatal(err)
	}
	check := func(step int) {
		t.Helper()
		var held int64
		for _, ref := range c.mem.slots {
			held += int64(len(ref.s.mem) / ref.s.n)
		}
		k := c.Counters()
		if k.Used != held || k.Used > budget {
			t.Fatalf("step %d: used %d, arena holds %d, budget %d", step, k.Used, held, budget)
		}
		for key, e := range c.entries {
			if e.Ready() {
				checkStamp(t, e.Buf[:BufferSize(e.Size)-ps], uint64(key)<<32, fmt.Sprintf("step %d entry %d", step, key))
			}
		}
	}
	for step := range 120 {
		n := small - ps/2
		if step%3 == 0 || step > 80 && step%2 == 0 {
			n = large
		}
		e, err := c.Reserve(step, n, nil)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		stamp(e.Buf[:BufferSize(n)-ps], uint64(step)<<32)
		c.Fill(e, nil)
		c.Unpin(e)
		check(step)
	}
	c.Close()
	if k := c.Counters(); k.Used != 0 {
		t.Fatalf("used %d after Close", k.Used)
	}
	if len(c.mem.classes) != 0 || len(c.mem.slots) != 0 {
		t.Fatalf("after Close: %d classes, %d slots mapped", len(c.mem.classes), len(c.mem.slots))
	}
}

// TestSlabResidentBound checks the price of huge pages stated on arena: the
// pages resident in a slab outside its live slots are at most one huge
// page (the frontier's), none in a released hole, and none at all for
// slots too small to ask for huge pages. Without transparent huge pages
// the bound holds trivially.
func TestSlabResidentBound(t *testing.T) {
	ps := os.Getpagesize()
	for _, tc := range []struct {
		name  string
		size  int
		extra int // resident pages allowed outside live slots
	}{
		{"expert", expertSize, hugePage / ps},
		{"small", 64 << 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newArena()
			var bufs [][]byte
			for i := range 5 {
				b, err := a.alloc(tc.size)
				if err != nil {
					t.Fatal(err)
				}
				stamp(b, uint64(i+1))
				bufs = append(bufs, b)
			}
			if err := a.release(bufs[2]); err != nil {
				t.Fatal(err)
			}
			bufs = append(bufs[:2], bufs[3:]...)
			s := a.classes[tc.size].slabs[0]
			res := resident(t, s.mem)
			live := make([]bool, len(res))
			for _, b := range bufs {
				first := int(addr(b)-addr(s.mem)) / ps
				for p := first; p < first+tc.size/ps; p++ {
					live[p] = true
				}
			}
			outside := 0
			for p, r := range res {
				if r && !live[p] {
					outside++
				}
			}
			t.Logf("%d pages resident outside live slots", outside)
			if outside > tc.extra {
				t.Fatalf("%d pages resident outside live slots, at most %d allowed", outside, tc.extra)
			}
			for _, b := range bufs {
				if err := a.release(b); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
