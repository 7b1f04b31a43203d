// Package cache is the bounded copy cache of budget mode: weight groups
// (and mixture-of-experts experts) copied into buffers it owns, with a hard
// byte budget over every buffer it holds (filled, being filled, or idle for
// reuse), eviction of entries nobody needs (least recently used first, or
// in an order the caller ranks), and hit/miss/eviction counters.
//
// Buffers are anonymous mappings outside the Go heap: the budget is then
// exactly the memory held (no GC slack, no delayed scavenging), and an
// evicted buffer is reused for the next entry of the same size instead of
// being unmapped and faulted in again. On Linux they are slots of 2 MiB-
// aligned slabs, so that transparent huge pages can back them (slab_linux.go).
package cache

import (
	"container/list"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// ErrNoRoom reports that a reservation cannot fit without evicting entries
// that are pinned or that the caller asked to keep.
var ErrNoRoom = errors.New("cache: no room within budget")

// Entry is one cached item. Buf is valid while the entry is pinned.
type Entry struct {
	Key  int
	Size int64  // bytes requested
	Buf  []byte // len Size; backed by a buffer of cap ≥ Size

	ready atomic.Bool // set by Fill under mu; read lock-free by Ready
	pins  int
	elem  *list.Element // in lru when resident
	buf   *buffer
}

// Ready reports whether the entry has been filled (Fill called).
func (e *Entry) Ready() bool { return e.ready.Load() }

type buffer struct {
	mem  []byte // nil for an accounting entry
	size int64  // bytes charged to the budget (len(mem), or the accounted size)
}

// Counters are the cache's lifetime statistics.
type Counters struct {
	Hits, Misses, Evictions int64
	Used, Peak              int64 // bytes of buffers held now / at most
	Budget                  int64
	Entries                 int
	Filling                 int // entries reserved and not yet filled
}

// Cache is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	budget  int64
	used    int64 // bytes of all buffers mapped (in entries or free)
	peak    int64
	entries map[int]*Entry
	lru     *list.List // of *Entry, front = most recently used
	free    []*buffer
	mem     *arena // maps the buffers (slabs on Linux)
	c       Counters
	closed  bool
	// Accounting mode (NewAccounting): entries have no buffers; the data
	// lives elsewhere (pages of a file mapping) and onEvict gives it back.
	// ReserveRanked can still ask for buffer entries in this mode.
	account bool
	onEvict func(key int)
	// changed is closed (and forgotten) on every event that may free room
	// or finish a load; Changed makes it on demand.
	changed chan struct{}
}

// New returns a cache holding at most budget bytes of buffers.
func New(budget int64) (*Cache, error) {
	if budget <= 0 {
		return nil, fmt.Errorf("cache: budget %d must be positive", budget)
	}
	return &Cache{budget: budget, entries: map[int]*Entry{}, lru: list.New(), mem: newArena()}, nil
}

// NewAccounting returns a cache that allocates nothing: it only charges
// each entry's page-rounded size against the budget and calls onEvict(key)
// when an entry leaves (evicted, failed or at Close), so the owner can drop
// the data it stands for. Entry.Buf is nil in this mode.
func NewAccounting(budget int64, onEvict func(key int)) (*Cache, error) {
	c, err := New(budget)
	if err != nil {
		return nil, err
	}
	c.account, c.onEvict = true, onEvict
	return c, nil
}

// Budget is the byte budget.
func (c *Cache) Budget() int64 { return c.budget }

// BufferSize is the bytes a reservation of n bytes holds: whole pages.
func BufferSize(n int64) int64 {
	ps := int64(os.Getpagesize())
	return (n + ps - 1) / ps * ps
}

// Lookup returns the entry for key and pins it, counting a hit if it is
// ready and a miss otherwise (nil entry: miss, nothing pinned).
func (c *Cache) Lookup(key int) *Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil {
		c.c.Misses++
		return nil
	}
	if e.ready.Load() {
		c.c.Hits++
	} else {
		c.c.Misses++
	}
	e.pins++
	c.lru.MoveToFront(e.elem)
	return e
}

// Peek returns the entry for key without pinning or counting.
func (c *Cache) Peek(key int) *Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[key]
}

// Changed returns a channel closed at the next event that may make room
// or finish an entry (Unpin, Fill, Close): a caller waiting for room
// selects on it, then tries again.
func (c *Cache) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

// signal wakes the waiters of Changed. Called with c.mu held.
func (c *Cache) signal() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// Pin keeps e (and its buffer) from eviction until Unpin.
func (c *Cache) Pin(e *Entry) {
	c.mu.Lock()
	e.pins++
	c.mu.Unlock()
}

// Unpin undoes one Pin or Lookup.
func (c *Cache) Unpin(e *Entry) {
	c.mu.Lock()
	if e.pins > 0 {
		e.pins--
		if e.pins == 0 {
			c.signal()
		}
	}
	c.mu.Unlock()
}

// Reserve creates a pinned, not-yet-ready entry of n bytes for key, making
// room by reusing idle buffers, mapping new ones within the budget, and
// evicting unpinned entries for which keep returns false, least recently
// used first. If that is not enough it fails with ErrNoRoom and changes
// nothing that the caller could observe except idle buffers released. The
// entry has a buffer unless the cache is an accounting one.
func (c *Cache) Reserve(key int, n int64, keep func(key int) bool) (*Entry, error) {
	return c.ReserveRanked(key, n, !c.account, func(k int) int64 {
		if keep != nil && keep(k) {
			return -1
		}
		return 0
	})
}

// ReserveRanked is Reserve with the eviction order chosen by the caller:
// among unpinned, ready entries, those with the lowest rank(key) go first
// (ties: least recently used first) and those with a negative rank stay.
// withBuf asks for an entry with a buffer even in an accounting cache,
// which can then hold both: mapped groups it only charges, and copied
// experts in buffers it owns. A buffer cache always gives buffers.
func (c *Cache) ReserveRanked(key int, n int64, withBuf bool, rank func(key int) int64) (*Entry, error) {
	withBuf = withBuf || !c.account
	need := BufferSize(n)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("cache: closed")
	}
	if _, ok := c.entries[key]; ok {
		return nil, fmt.Errorf("cache: key %d already present", key)
	}
	if need > c.budget {
		return nil, fmt.Errorf("%w: %d bytes requested, budget %d", ErrNoRoom, need, c.budget)
	}
	for {
		if !withBuf {
			if c.used+need <= c.budget {
				c.used += need
				c.peak = max(c.peak, c.used)
				return c.insert(key, n, &buffer{size: need}), nil
			}
		} else if b := c.takeFree(need); b != nil {
			return c.insert(key, n, b), nil
		}
		if withBuf && c.used+need <= c.budget {
			mem, err := c.mem.alloc(int(need))
			if err != nil {
				return nil, fmt.Errorf("cache: map %d-byte buffer: %w", need, err)
			}
			c.used += need
			c.peak = max(c.peak, c.used)
			return c.insert(key, n, &buffer{mem: mem, size: need}), nil
		}
		// Idle buffers of the wrong size are the cheapest thing to give up.
		if len(c.free) > 0 {
			c.unmap(c.free[len(c.free)-1])
			c.free = c.free[:len(c.free)-1]
			continue
		}
		victim := c.victim(rank)
		if victim == nil {
			return nil, fmt.Errorf("%w: %d bytes requested, %d of %d held by entries in use", ErrNoRoom, need, c.used, c.budget)
		}
		c.evict(victim)
	}
}

// takeFree reuses the smallest idle buffer that holds need bytes and
// wastes at most a quarter of need: a much larger one (a group's buffer
// for an expert) would hold budget the entry cannot use.
func (c *Cache) takeFree(need int64) *buffer {
	best := -1
	for i, b := range c.free {
		if m := int64(len(b.mem)); m >= need && m <= need+need/4 && (best < 0 || len(b.mem) < len(c.free[best].mem)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	b := c.free[best]
	c.free = append(c.free[:best], c.free[best+1:]...)
	return b
}

func (c *Cache) insert(key int, n int64, b *buffer) *Entry {
	e := &Entry{Key: key, Size: n, buf: b, pins: 1}
	if b.mem != nil {
		e.Buf = b.mem[:n:n]
	}
	e.elem = c.lru.PushFront(e)
	c.entries[key] = e
	c.c.Entries = len(c.entries)
	return e
}

// victim is the evictable entry of lowest rank, least recently used first
// among equals; a rank of 0 or less ends the scan (nothing ranks lower).
func (c *Cache) victim(rank func(int) int64) *Entry {
	var best *Entry
	var bestRank int64
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		e := el.Value.(*Entry)
		if e.pins != 0 || !e.ready.Load() {
			continue
		}
		r := rank(e.Key)
		if r < 0 || best != nil && r >= bestRank {
			continue
		}
		best, bestRank = e, r
		if r == 0 {
			break
		}
	}
	return best
}

func (c *Cache) evict(e *Entry) {
	c.remove(e)
	c.c.Evictions++
}

// remove takes e out of the cache, returning its buffer to the idle pool
// (copy mode) or its charge to the budget (accounting mode).
func (c *Cache) remove(e *Entry) {
	c.lru.Remove(e.elem)
	delete(c.entries, e.Key)
	if e.buf.mem == nil {
		c.used -= e.buf.size
		if c.onEvict != nil {
			c.onEvict(e.Key)
		}
	} else {
		c.free = append(c.free, e.buf)
	}
	c.signal()
	e.buf, e.Buf, e.elem = nil, nil, nil
	c.c.Entries = len(c.entries)
}

func (c *Cache) unmap(b *buffer) {
	_ = c.mem.release(b.mem) // only fails on a bad address, which would be a bug here
	c.used -= int64(len(b.mem))
}

// Fill marks e ready (its Buf holds the data) or, on err, removes it and
// returns its buffer to the idle pool. The entry stays pinned by the
// reservation until Unpin.
func (c *Cache) Fill(e *Entry, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.signal()
	if err == nil {
		e.ready.Store(true)
		return
	}
	if e.elem != nil {
		c.remove(e)
	}
}

// Counters returns the statistics.
func (c *Cache) Counters() Counters {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.c
	k.Used, k.Peak, k.Budget = c.used, c.peak, c.budget
	for _, e := range c.entries {
		if !e.ready.Load() {
			k.Filling++
		}
	}
	return k
}

// Close unmaps every buffer. Entries must not be used afterwards.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	c.signal()
	for _, e := range c.entries {
		if e.buf.mem == nil {
			if c.onEvict != nil {
				c.onEvict(e.Key)
			}
			c.used -= e.buf.size
		} else {
			c.unmap(e.buf)
		}
		e.buf, e.Buf = nil, nil
	}
	for _, b := range c.free {
		c.unmap(b)
	}
	c.entries, c.free = map[int]*Entry{}, nil
	c.lru.Init()
}
