package cache

import (
	"errors"
	"os"
	"testing"
)

func TestLRUEvictionAndCounters(t *testing.T) {
	ps := int64(os.Getpagesize())
	c, err := New(3 * ps)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fill := func(key int, n int64) *Entry {
		t.Helper()
		e, err := c.Reserve(key, n, nil)
		if err != nil {
			t.Fatalf("Reserve(%d): %v", key, err)
		}
		for i := range e.Buf {
			e.Buf[i] = byte(key)
		}
		c.Fill(e, nil)
		c.Unpin(e)
		return e
	}
	fill(1, ps)
	fill(2, ps-100) // rounds up to one page
	fill(3, 10)
	if k := c.Counters(); k.Used != 3*ps || k.Entries != 3 || k.Evictions != 0 {
		t.Fatalf("after 3 fills: %+v", k)
	}
	// Touch 1 so that 2 is least recently used.
	if e := c.Lookup(1); e == nil || !e.Ready() || e.Buf[0] != 1 {
		t.Fatal("Lookup(1) failed")
	} else {
		c.Unpin(e)
	}
	fill(4, ps)
	if c.Peek(2) != nil || c.Peek(1) == nil || c.Peek(3) == nil {
		t.Fatal("LRU did not evict key 2")
	}
	// Keep predicate protects 3 (the LRU now), so 1 goes.
	if _, err := c.Reserve(5, ps, func(k int) bool { return k == 3 }); err != nil {
		t.Fatal(err)
	}
	if c.Peek(1) != nil || c.Peek(3) == nil {
		t.Fatal("keep predicate ignored")
	}
	if c.Lookup(99) != nil {
		t.Fatal("Lookup of absent key returned an entry")
	}
	k := c.Counters()
	want := Counters{Hits: 1, Misses: 1, Evictions: 2, Used: 3 * ps, Peak: 3 * ps, Budget: 3 * ps, Entries: 3, Filling: 1} // 5 reserved, not filled
	if k != want {
		t.Fatalf("counters %+v, want %+v", k, want)
	}
}

func TestNoRoom(t *testing.T) {
	ps := int64(os.Getpagesize())
	c, _ := New(2 * ps)
	defer c.Close()
	a, err := c.Reserve(1, ps, nil) // pinned, not ready
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Reserve(2, ps, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Fill(b, nil)
	if _, err := c.Reserve(3, ps, nil); !errors.Is(err, ErrNoRoom) {
		t.Fatalf("both pinned: err = %v, want ErrNoRoom", err)
	}
	c.Unpin(b)
	if _, err := c.Reserve(3, ps, func(k int) bool { return k == 2 }); !errors.Is(err, ErrNoRoom) {
		t.Fatalf("only candidate kept: err = %v, want ErrNoRoom", err)
	}
	if _, err := c.Reserve(3, 3*ps, nil); !errors.Is(err, ErrNoRoom) {
		t.Fatalf("larger than budget: err = %v", err)
	}
	if _, err := c.Reserve(1, ps, nil); err == nil {
		t.Fatal("duplicate key: no error")
	}
	// A failed fill frees its buffer for reuse.
	c.Fill(a, errors.New("read failed"))
	if c.Peek(1) != nil {
		t.Fatal("failed entry still present")
	}
	e, err := c.Reserve(4, ps, func(k int) bool { return k == 2 })
	if err != nil {
		t.Fatalf("reuse of failed buffer: %v", err)
	}
	if k := c.Counters(); k.Used != 2*ps || k.Evictions != 0 {
		t.Fatalf("counters %+v", k)
	}
	c.Unpin(e)
	if _, err := New(0); err == nil {
		t.Fatal("zero budget: no error")
	}
}

// TestMixedSizes checks that idle buffers too small for a request are
// unmapped to make room, so used never exceeds the budget.
func TestMixedSizes(t *testing.T) {
	ps := int64(os.Getpagesize())
	c, _ := New(4 * ps)
	defer c.Close()
	for i, n := range []int64{ps, ps, ps, ps, 3 * ps, ps, 4 * ps, 2 * ps, 2 * ps} {
		e, err := c.Reserve(i, n, nil)
		if err != nil {
			t.Fatalf("Reserve #%d (%d): %v", i, n, err)
		}
		c.Fill(e, nil)
		c.Unpin(e)
		if k := c.Counters(); k.Used > 4*ps || k.Peak > 4*ps {
			t.Fatalf("#%d: used %d peak %d over budget %d", i, k.Used, k.Peak, 4*ps)
		}
	}
}

func TestAccounting(t *testing.T) {
	ps := int64(os.Getpagesize())
	var dropped []int
	c, err := NewAccounting(2*ps, func(k int) { dropped = append(dropped, k) })
	if err != nil {
		t.Fatal(err)
	}
	for k := range 4 {
		e, err := c.Reserve(k, ps-1, nil)
		if err != nil {
			t.Fatalf("Reserve(%d): %v", k, err)
		}
		if e.Buf != nil {
			t.Fatal("accounting entry has a buffer")
		}
		c.Fill(e, nil)
		c.Unpin(e)
	}
	e, _ := c.Reserve(9, ps, nil)
	c.Fill(e, errors.New("populate failed"))
	k := c.Counters()
	if k.Used != ps || k.Peak != 2*ps || k.Evictions != 3 {
		t.Fatalf("counters %+v", k)
	}
	c.Close()
	want := []int{0, 1, 2, 9, 3}
	if len(dropped) != len(want) {
		t.Fatalf("onEvict calls %v, want %v", dropped, want)
	}
	for i := range want {
		if dropped[i] != want[i] {
			t.Fatalf("onEvict calls %v, want %v", dropped, want)
		}
	}
}

// TestRanked checks the caller-ranked eviction order: lowest rank first,
// least recently used among equal ranks, negative ranks kept.
func TestRanked(t *testing.T) {
	ps := int64(os.Getpagesize())
	c, _ := New(4 * ps)
	defer c.Close()
	for k := range 4 {
		e, err := c.Reserve(k, ps, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Fill(e, nil)
		c.Unpin(e)
	}
	ranks := map[int]int64{0: 5, 1: -1, 2: 3, 3: 3}
	rank := func(k int) int64 { return ranks[k] }
	var evicted []int
	for k := 10; k < 14; k++ {
		before := map[int]bool{}
		for j := range 4 {
			before[j] = c.Peek(j) != nil
		}
		e, err := c.ReserveRanked(k, ps, true, rank)
		if k == 13 {
			// Only 1 (kept) and 10, 11, 12 (rank 0 but pinned) remain.
			if !errors.Is(err, ErrNoRoom) {
				t.Fatalf("Reserve(12): %v, want ErrNoRoom", err)
			}
			break
		}
		if err != nil {
			t.Fatalf("Reserve(%d): %v", k, err)
		}
		for j := range 4 {
			if before[j] && c.Peek(j) == nil {
				evicted = append(evicted, j)
			}
		}
		_ = e // stays pinned
	}
	// 2 and 3 rank 3 (2 less recently used), then 0 (rank 5); 1 is kept.
	if len(evicted) != 3 || evicted[0] != 2 || evicted[1] != 3 || evicted[2] != 0 {
		t.Fatalf("evicted %v, want [2 3 0]", evicted)
	}
	if c.Peek(1) == nil {
		t.Fatal("kept entry evicted")
	}
}

// TestAccountingWithBuffers checks that an accounting cache holds buffer
// entries beside accounted ones under one budget, calls onEvict only for
// the accounted ones, and that Changed fires when a pin is released.
func TestAccountingWithBuffers(t *testing.T) {
	ps := int64(os.Getpagesize())
	var dropped []int
	c, _ := NewAccounting(3*ps, func(k int) { dropped = append(dropped, k) })
	a, _ := c.Reserve(0, ps, nil)
	c.Fill(a, nil)
	c.Unpin(a)
	b, err := c.ReserveRanked(100, 2*ps, true, func(int) int64 { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Buf) != int(2*ps) {
		t.Fatalf("buffer entry has %d bytes", len(b.Buf))
	}
	b.Buf[len(b.Buf)-1] = 7
	c.Fill(b, nil)
	ch := c.Changed()
	select {
	case <-ch:
		t.Fatal("Changed fired with no event")
	default:
	}
	c.Unpin(b)
	select {
	case <-ch:
	default:
		t.Fatal("Changed did not fire on Unpin")
	}
	if k := c.Counters(); k.Used != 3*ps {
		t.Fatalf("used %d, want %d", k.Used, 3*ps)
	}
	// A third entry evicts the LRU (0, accounted: dropped) and then the
	// buffer entry, whose buffer goes idle, then is unmapped for room.
	e, err := c.Reserve(1, 3*ps, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Fill(e, nil)
	c.Unpin(e)
	if k := c.Counters(); k.Used != 3*ps || k.Evictions != 2 {
		t.Fatalf("counters %+v", k)
	}
	if len(dropped) != 1 || dropped[0] != 0 {
		t.Fatalf("onEvict %v, want [0]", dropped)
	}
	c.Close()
}

// TestFreeReuseBounded checks that an idle buffer much larger than a
// request is not reused for it (it would hold budget the entry cannot use).
func TestFreeReuseBounded(t *testing.T) {
	ps := int64(os.Getpagesize())
	c, _ := New(8 * ps)
	defer c.Close()
	big, _ := c.Reserve(0, 8*ps, nil)
	c.Fill(big, nil)
	c.Unpin(big)
	e, err := c.Reserve(1, ps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cap(e.Buf) > int(ps+ps/4) {
		t.Fatalf("1-page entry got a %d-byte buffer", cap(e.Buf))
	}
	if k := c.Counters(); k.Used != ps {
		t.Fatalf("used %d after unmapping the idle big buffer, want %d", k.Used, ps)
	}
}
