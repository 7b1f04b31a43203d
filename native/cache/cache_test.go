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
	want := Counters{Hits: 1, Misses: 1, Evictions: 2, Used: 3 * ps, Peak: 3 * ps, Budget: 3 * ps, Entries: 3}
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
