// Package prefetch moves weight groups into the copy cache ahead of the
// graph, in the plan's group order and wrapping around to the start for the
// next pass. One loader goroutine works through a window of look-ahead
// groups past the graph's cursor; the cache's byte budget, not the window,
// is the hard limit on what is in flight, so the loader simply waits when
// the next group does not fit. To make room it evicts only groups the plan
// uses later than the one it is loading (least recently used first among
// those), which defeats LRU's worst case, a cyclic scan larger than the cache.
package prefetch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/memvanta/memvanta/native/cache"
)

// Source produces the data of plan groups.
type Source interface {
	// Groups is the number of groups in the plan.
	Groups() int
	// Size is group g's byte size.
	Size(g int) int64
	// Load fills dst (len Size(g)) with group g's data. It should return
	// promptly with ctx's error when ctx is cancelled.
	Load(ctx context.Context, g int, dst []byte) error
}

// Result describes how Get obtained a group, for telemetry.
type Result struct {
	Hit  bool // already loaded when asked
	Late bool // its load was in flight when asked (a late arrival)
}

// Prefetcher is started once and stopped once.
type Prefetcher struct {
	c   *cache.Cache
	src Source
	n   int

	mu      sync.Mutex
	cursor  int           // the group the graph needs next
	depth   int           // look-ahead beyond the cursor
	loading int           // group being loaded, -1 if none
	demand  int           // group a Get is waiting for, -1 if none
	failed  map[int]error // load or reservation failures, until the group is asked for again
	skip    []bool        // groups the loader passes over (the graph does not acquire them)
	changed chan struct{} // closed and replaced on every state change
	stopped bool
	foreign func(key int) int64 // eviction rank of the owner's own entries (see Foreign)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New prepares a prefetcher over c for src's groups with the given initial
// look-ahead depth. Start launches the loader.
func New(c *cache.Cache, src Source, depth int) (*Prefetcher, error) {
	n := src.Groups()
	if n <= 0 {
		return nil, errors.New("prefetch: plan has no groups")
	}
	return &Prefetcher{c: c, src: src, n: n, depth: max(depth, 0), loading: -1, demand: -1, failed: map[int]error{},
		skip: make([]bool, n), changed: make(chan struct{})}, nil
}

// Start launches the loader goroutine; it runs until ctx is cancelled or
// Stop is called.
func (p *Prefetcher) Start(ctx context.Context) {
	p.ctx, p.cancel = context.WithCancel(ctx)
	p.wg.Add(1)
	go p.loop()
}

// Stop cancels the loader and waits for it to exit. Safe to call twice.
func (p *Prefetcher) Stop() {
	p.mu.Lock()
	p.stopped = true
	p.broadcast()
	p.mu.Unlock()
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
}

// Foreign tells the loader that the cache also holds entries whose keys are
// not plan groups (outside [0, Groups())), put there by the owner (a
// mixture-of-experts model's experts): to make room it evicts those before
// any group, lowest rank first (negative: keep). Without it such entries
// go first, least recently used first. rank is called with the cache's
// lock held and must not call into the cache or the prefetcher. Call
// before Start.
func (p *Prefetcher) Foreign(rank func(key int) int64) {
	p.mu.Lock()
	p.foreign = rank
	p.mu.Unlock()
}

// groupRank ranks the plan groups the loader may evict after every foreign
// entry (whose ranks must stay below it).
const groupRank = 1 << 62

// SetDepth changes the look-ahead.
func (p *Prefetcher) SetDepth(d int) {
	p.mu.Lock()
	p.depth = max(d, 0)
	p.broadcast()
	p.mu.Unlock()
}

// Skip tells the loader whether to pass over group g: a plan may list a
// group that the graph only reads by rows (the embedding table), and
// loading it would waste bandwidth and budget. Skipped groups do not count
// towards the look-ahead depth; Get still loads them on demand.
func (p *Prefetcher) Skip(g int, skip bool) {
	if g < 0 || g >= p.n {
		return
	}
	p.mu.Lock()
	if p.skip[g] != skip {
		p.skip[g] = skip
		p.broadcast()
	}
	p.mu.Unlock()
}

// Depth is the current look-ahead.
func (p *Prefetcher) Depth() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.depth
}

// Advance moves the cursor to group g (the next the graph will ask for):
// groups behind it become evictable and the loader moves on.
func (p *Prefetcher) Advance(g int) {
	p.mu.Lock()
	p.cursor = ((g % p.n) + p.n) % p.n
	p.broadcast()
	p.mu.Unlock()
}

// Done signals that the caller has unpinned something, so a loader waiting
// for room should look again.
func (p *Prefetcher) Done() {
	p.mu.Lock()
	p.broadcast()
	p.mu.Unlock()
}

func (p *Prefetcher) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// dist is how many groups after the cursor the graph reaches k.
func (p *Prefetcher) dist(k int) int {
	return ((k-p.cursor)%p.n + p.n) % p.n
}

// Get returns group g's entry, pinned (the caller Unpins it through the
// cache), waiting for its load if needed. It makes g the cursor.
func (p *Prefetcher) Get(ctx context.Context, g int) (*cache.Entry, Result, error) {
	if g < 0 || g >= p.n {
		return nil, Result{}, fmt.Errorf("prefetch: group %d outside plan of %d", g, p.n)
	}
	if e := p.c.Lookup(g); e != nil {
		if e.Ready() {
			p.Advance(g)
			return e, Result{Hit: true}, nil
		}
		p.c.Unpin(e)
	}
	p.mu.Lock()
	res := Result{Late: p.loading == g}
	p.cursor = g
	p.demand = g
	defer func() {
		p.mu.Lock()
		if p.demand == g {
			p.demand = -1
		}
		p.mu.Unlock()
	}()
	delete(p.failed, g)
	p.broadcast()
	for {
		if e := p.c.Peek(g); e != nil && e.Ready() {
			p.c.Pin(e)
			p.mu.Unlock()
			return e, res, nil
		}
		if err, ok := p.failed[g]; ok {
			delete(p.failed, g)
			p.mu.Unlock()
			return nil, res, err
		}
		if p.stopped {
			p.mu.Unlock()
			return nil, res, errors.New("prefetch: stopped")
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, res, ctx.Err()
		}
		p.mu.Lock()
	}
}

// next picks the first group of the window that is neither loaded nor
// failed. Called with p.mu held.
func (p *Prefetcher) next() (int, bool) {
	ahead := 0
	for i := 0; ahead <= p.depth && i < p.n; i++ {
		g := (p.cursor + i) % p.n
		if p.skip[g] && g != p.demand {
			continue
		}
		ahead++
		if _, bad := p.failed[g]; bad {
			return 0, false // do not look past a failure; wait for the graph to ask
		}
		if p.c.Peek(g) == nil {
			return g, true
		}
	}
	return 0, false
}

func (p *Prefetcher) loop() {
	defer p.wg.Done()
	defer func() {
		// However the loader ends, waiters must not wait for it.
		p.mu.Lock()
		p.stopped = true
		p.broadcast()
		p.mu.Unlock()
	}()
	for {
		p.mu.Lock()
		if p.stopped || p.ctx.Err() != nil {
			p.mu.Unlock()
			return
		}
		g, ok := p.next()
		var e *cache.Entry
		if ok {
			var err error
			// Plan order says when each group is used next: keep what the
			// graph needs no later than g, let anything needed after g go.
			dg := p.dist(g)
			e, err = p.c.ReserveRanked(g, p.src.Size(g), false, func(k int) int64 {
				switch {
				case k < 0 || k >= p.n:
					if p.foreign != nil {
						return min(p.foreign(k), groupRank-1)
					}
					return 0
				case p.dist(k) <= dg:
					return -1
				}
				return groupRank
			})
			switch {
			case err == nil:
				p.loading = g
			case errors.Is(err, cache.ErrNoRoom) && g != p.cursor:
				e = nil // look-ahead must wait for room
			default:
				p.failed[g] = fmt.Errorf("prefetch: group %d: %w", g, err)
				p.broadcast()
				e = nil
			}
		}
		ch := p.changed
		p.mu.Unlock()
		if e == nil {
			select {
			case <-ch:
				continue
			case <-p.ctx.Done():
				return
			}
		}
		err := p.src.Load(p.ctx, g, e.Buf)
		p.mu.Lock()
		p.c.Fill(e, err)
		p.c.Unpin(e)
		p.loading = -1
		if err != nil && p.ctx.Err() == nil {
			p.failed[g] = fmt.Errorf("prefetch: load group %d: %w", g, err)
		}
		p.broadcast()
		p.mu.Unlock()
	}
}
