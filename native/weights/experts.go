package weights

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/native/cache"
	"github.com/memvanta/memvanta/native/prefetch"
	"github.com/memvanta/memvanta/native/store"
)

// Mixture-of-experts layers (model.ExpertWeights). A layer's 3-D expert
// tensors are not part of its group: the graph asks for the few experts
// its router picked, one at a time. Resident mode hands out slices of the
// mapping. The budget modes make each expert (its slice of every expert
// tensor of the layer, read together) one entry of the same cache the
// groups use, charged against the same budget:
//
//   - WillNeedExperts queues reads of the listed experts that the cache
//     does not hold; a few reader goroutines work through the queue in
//     order, so expert i+1 arrives while the graph multiplies expert i.
//     Experts it finds cached, and those its readers bring in, stay pinned
//     ("wanted") until the graph acquires them or releases the group, so a
//     read for the same batch cannot evict them first.
//   - AcquireExpert takes a wanted expert, waits for one being read, or
//     queues a read at the front of the queue (on demand).
//   - Eviction: experts go before any dense group (a group is used every
//     pass, an expert by a few tokens), in the order of the expert policy
//     (expertPolicy); when a read for the current layer still finds no room,
//     the dense groups whose next use is furthest away go.
//
// Experts are always copied into cache buffers, in the map stream too: an
// expert's slice of a tensor (about 0.9 MB in a Qwen3-30B-A3B layer) is
// smaller than the 2 MiB chunk a huge folio maps whole, so mapping it in
// place would charge (and map) two to four times its size; a copy is one
// read of bytes the graph reads anyway, and only for misses.

// groupRank ranks the dense groups after every expert when an expert read
// makes room (the prefetcher uses the same order for its own reserves).
const groupRank = 1 << 62

// expertLayout records group g's expert tensors (plan group pg) and where
// each tensor's slice of one expert lies in an expert buffer.
func expertLayout(g *group, pg model.Group, st *store.Store) error {
	if len(pg.Experts) == 0 {
		return nil
	}
	if pg.NExpert <= 0 {
		return fmt.Errorf("weights: plan group %q names %d expert tensors but %d experts", pg.Name, len(pg.Experts), pg.NExpert)
	}
	g.nExpert = pg.NExpert
	for _, name := range pg.Experts {
		t, ok := st.Tensor(name)
		if !ok {
			return fmt.Errorf("weights: plan group %q names expert tensor %q, which the file does not have", pg.Name, name)
		}
		d := t.Info.Dims
		if len(d) != 3 || d[2] != uint64(pg.NExpert) {
			return fmt.Errorf("weights: plan group %q: expert tensor %q has dims %v, want [ne0 ne1 %d]", pg.Name, name, d, pg.NExpert)
		}
		// store.New checked Size == RowSize * d[1] * d[2].
		stride := t.RowSize * int64(d[1])
		g.experts = append(g.experts, t)
		g.xstride = append(g.xstride, stride)
		g.xsize = (g.xsize + tensorAlign - 1) / tensorAlign * tensorAlign
		g.xoffs = append(g.xoffs, g.xsize)
		g.xsize += stride
		g.xbytes += stride
	}
	return nil
}

// residentExpert slices expert e out of the mapping.
func residentExpert(gr *group, st *store.Store, e int) ([][]byte, error) {
	out := make([][]byte, len(gr.experts))
	for i, t := range gr.experts {
		v, err := st.Map().Slice(t.Off+int64(e)*gr.xstride[i], gr.xstride[i])
		if err != nil {
			return nil, fmt.Errorf("weights: %w", err)
		}
		out[i] = v
	}
	return out, nil
}

// expertViews slices an expert's tensors out of its buffer.
func expertViews(gr *group, buf []byte) [][]byte {
	out := make([][]byte, len(gr.experts))
	for i := range gr.experts {
		end := gr.xoffs[i] + gr.xstride[i]
		out[i] = buf[gr.xoffs[i]:end:end]
	}
	return out
}

var _ model.ExpertWeights = (*fileWeights)(nil)

// checkExpert validates (g, e). Called with w.mu held.
func (w *fileWeights) checkExpert(g, e int) error {
	if err := w.check(g); err != nil {
		return err
	}
	gr := &w.groups[g]
	if len(gr.experts) == 0 {
		return fmt.Errorf("weights: group %q has no experts", gr.name)
	}
	if e < 0 || e >= gr.nExpert {
		return fmt.Errorf("weights: expert %d of group %q outside [0,%d)", e, gr.name, gr.nExpert)
	}
	return nil
}

// WillNeedExperts starts reading the listed experts of group g that the
// cache does not hold (budget modes); resident mode has them mapped.
func (w *fileWeights) WillNeedExperts(g int, ids []int) {
	w.mu.Lock()
	x := w.xc
	ok := w.check(g) == nil && len(w.groups[g].experts) > 0
	w.mu.Unlock()
	if ok && x != nil {
		x.willNeed(g, ids)
	}
}

// AcquireExpert returns expert e of group g: slices of the mapping
// (resident) or of the expert's cache buffer (budget modes), waiting for
// its read if needed.
func (w *fileWeights) AcquireExpert(ctx context.Context, g, e int) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w.mu.Lock()
	if err := w.checkExpert(g, e); err != nil {
		w.mu.Unlock()
		return nil, err
	}
	gr := &w.groups[g]
	if w.opt.Mode == Resident {
		defer w.mu.Unlock()
		// Acquire(g) checked the file a moment ago if the graph holds g.
		if w.held[g] == 0 {
			if err := w.checkFile(); err != nil {
				return nil, err
			}
		}
		out, err := residentExpert(gr, w.st, e)
		if err != nil {
			return nil, err
		}
		w.expertTouched(gr.xbytes, true, 0)
		return out, nil
	}
	x := w.xc
	w.mu.Unlock()
	out, hit, wait, err := x.acquire(ctx, g, e)
	if err != nil {
		return nil, fmt.Errorf("weights: expert %d of group %q: %w", e, gr.name, err)
	}
	w.mu.Lock()
	w.expertTouched(gr.xbytes, hit, wait)
	w.mu.Unlock()
	return out, nil
}

// ReleaseExpert ends one AcquireExpert's hold on expert e of group g.
func (w *fileWeights) ReleaseExpert(g, e int) {
	w.mu.Lock()
	x := w.xc
	ok := w.checkExpert(g, e) == nil
	w.mu.Unlock()
	if ok && x != nil {
		x.release(g, e)
	}
}

// expertPolicy orders cached experts for eviction (lower rank first; the
// cache breaks ties least recently used first). ExpertLRU ranks them all
// the same: plain LRU. ExpertLFU ranks an expert by how often the graph
// acquired it, every count halved after each aging period of
// acquisitions, so popularity that has passed fades.
type expertPolicy struct {
	lfu   bool
	aging int
	uses  int            // acquisitions since the last halving (under expertCache.mu)
	count []atomic.Int64 // per expert of the plan; read by rank under the cache's lock
}

func (p *expertPolicy) use(x int) {
	if !p.lfu {
		return
	}
	p.count[x].Add(1)
	if p.uses++; p.uses >= p.aging {
		p.uses = 0
		for i := range p.count {
			p.count[i].Store(p.count[i].Load() / 2)
		}
	}
}

func (p *expertPolicy) rank(x int) int64 {
	if !p.lfu || x < 0 || x >= len(p.count) {
		return 0
	}
	return p.count[x].Load()
}

// Expert-cache eviction policies (Options.ExpertPolicy).
const (
	ExpertLRU = "lru"
	ExpertLFU = "lfu"
)

type xreq struct{ g, e, key int }

// xwant is an expert pinned for the graph's current batch.
type xwant struct {
	ent    *cache.Entry
	g      int
	cached bool // in the cache before the batch asked for it (a hit)
}

type xheld struct {
	ent *cache.Entry
	n   int
}

type xread struct {
	g      int
	cancel context.CancelFunc
}

// expertCache brings experts into the cache (budget modes). Its fields
// before mu are fixed when Declare makes it.
type expertCache struct {
	c      *cache.Cache
	pf     *prefetch.Prefetcher
	st     *store.Store
	groups []group
	n      int           // plan groups; expert keys start here
	read   *atomic.Int64 // bytes read for experts (fileWeights.xread)
	hook   func(ctx context.Context, dst []byte, off int64, what string) error
	pol    *expertPolicy
	minMiB int64 // the minimum budget, for the error when even that is short

	mu      sync.Mutex
	queue   []xreq         // reads not started, in the order asked (demand first)
	demand  map[int]int    // keys AcquireExpert waits for
	loading map[int]*xread // reads in flight
	wanted  map[int]*xwant
	held    map[int]*xheld
	failed  map[int]error // read failures, until acquired
	changed chan struct{} // closed and replaced on every state change
	stopped bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// newExpertCache starts readers goroutines over the declared groups, or
// returns nil if the plan has no experts.
func newExpertCache(w *fileWeights, c *cache.Cache, pf *prefetch.Prefetcher, readers int) *expertCache {
	total := 0
	for i := range w.groups {
		w.groups[i].xfirst = total
		total += w.groups[i].nExpert
	}
	if total == 0 {
		return nil
	}
	pol := &expertPolicy{lfu: w.opt.ExpertPolicy == ExpertLFU, aging: w.opt.ExpertAging, count: make([]atomic.Int64, total)}
	if pol.aging <= 0 {
		pol.aging = total
	}
	x := &expertCache{c: c, pf: pf, st: w.st, groups: w.groups, n: len(w.groups), read: &w.xread, hook: w.readHook, pol: pol, minMiB: ceilMiB(w.minBudget),
		demand: map[int]int{}, loading: map[int]*xread{}, wanted: map[int]*xwant{}, held: map[int]*xheld{},
		failed: map[int]error{}, changed: make(chan struct{})}
	pf.Foreign(func(k int) int64 { return pol.rank(k - x.n) })
	x.ctx, x.cancel = context.WithCancel(context.Background())
	for range max(readers, 1) {
		x.wg.Add(1)
		go x.loop()
	}
	return x
}

func (x *expertCache) key(g, e int) int { return x.n + x.groups[g].xfirst + e }

// broadcast wakes every waiter. Called with x.mu held.
func (x *expertCache) broadcast() {
	close(x.changed)
	x.changed = make(chan struct{})
}

// stop ends the readers (cancelling reads in flight) and waits for them.
func (x *expertCache) stop() {
	x.mu.Lock()
	x.stopped = true
	x.broadcast()
	x.mu.Unlock()
	x.cancel()
	x.wg.Wait()
}

// heldCount is the experts the graph holds.
func (x *expertCache) heldCount() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.held)
}

func (x *expertCache) queued(key int) int {
	for i, r := range x.queue {
		if r.key == key {
			return i
		}
	}
	return -1
}

func (x *expertCache) willNeed(g int, ids []int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stopped {
		return
	}
	// A new batch: reads still queued for another layer are stale.
	q := x.queue[:0]
	for _, r := range x.queue {
		if r.g == g || x.demand[r.key] > 0 {
			q = append(q, r)
		}
	}
	x.queue = q
	for _, e := range ids {
		if e < 0 || e >= x.groups[g].nExpert {
			continue
		}
		k := x.key(g, e)
		if x.wanted[k] != nil || x.held[k] != nil || x.loading[k] != nil || x.queued(k) >= 0 {
			continue
		}
		if ent := x.c.Lookup(k); ent != nil {
			if ent.Ready() {
				x.wanted[k] = &xwant{ent: ent, g: g, cached: true}
				continue
			}
			x.c.Unpin(ent)
		}
		x.queue = append(x.queue, xreq{g, e, k})
	}
	x.broadcast()
}

// acquire returns expert e of group g pinned for the graph, whether it was
// a hit (cached before its batch asked for it) and how long it waited.
func (x *expertCache) acquire(ctx context.Context, g, e int) ([][]byte, bool, time.Duration, error) {
	k := x.key(g, e)
	gr := &x.groups[g]
	x.mu.Lock()
	defer x.mu.Unlock()
	var t0 time.Time
	asked := false
	defer func() {
		if asked {
			if x.demand[k]--; x.demand[k] <= 0 {
				delete(x.demand, k)
			}
		}
	}()
	since := func() time.Duration {
		if t0.IsZero() {
			return 0
		}
		return time.Since(t0)
	}
	for {
		if x.stopped {
			return nil, false, since(), errors.New("model closed")
		}
		if h := x.held[k]; h != nil {
			h.n++
			x.pol.use(k - x.n)
			return expertViews(gr, h.ent.Buf), true, since(), nil
		}
		var ent *cache.Entry
		hit := false
		if wt := x.wanted[k]; wt != nil {
			delete(x.wanted, k)
			ent, hit = wt.ent, wt.cached
		} else if x.loading[k] == nil {
			if ce := x.c.Lookup(k); ce != nil {
				if ce.Ready() {
					ent, hit = ce, !asked
				} else {
					x.c.Unpin(ce)
				}
			}
		}
		if ent != nil {
			x.held[k] = &xheld{ent: ent, n: 1}
			x.pol.use(k - x.n)
			return expertViews(gr, ent.Buf), hit, since(), nil
		}
		if err, ok := x.failed[k]; ok {
			delete(x.failed, k)
			return nil, false, since(), err
		}
		if !asked {
			asked = true
			x.demand[k]++
		}
		if x.loading[k] == nil {
			if i := x.queued(k); i != 0 {
				if i > 0 {
					x.queue = append(x.queue[:i], x.queue[i+1:]...)
				}
				x.queue = append([]xreq{{g, e, k}}, x.queue...)
				x.broadcast()
			}
		}
		if t0.IsZero() {
			t0 = time.Now()
		}
		ch := x.changed
		x.mu.Unlock()
		select {
		case <-ch:
			x.mu.Lock()
		case <-ctx.Done():
			x.mu.Lock()
			// The graph gives up on this batch: stop its reads.
			x.dropGroup(g)
			return nil, false, since(), ctx.Err()
		}
	}
}

func (x *expertCache) release(g, e int) {
	k := x.key(g, e)
	x.mu.Lock()
	h := x.held[k]
	if h == nil {
		x.mu.Unlock()
		return
	}
	if h.n--; h.n > 0 {
		x.mu.Unlock()
		return
	}
	delete(x.held, k)
	x.c.Unpin(h.ent)
	x.broadcast()
	x.mu.Unlock()
	x.pf.Done()
}

// endGroup forgets group g's batch when the graph releases the group:
// queued reads are dropped, reads in flight cancelled, and experts read or
// found for it but never acquired unpinned (they stay cached).
func (x *expertCache) endGroup(g int) {
	x.mu.Lock()
	x.dropGroup(g)
	x.mu.Unlock()
}

// dropGroup is endGroup with x.mu held.
func (x *expertCache) dropGroup(g int) {
	q := x.queue[:0]
	for _, r := range x.queue {
		if r.g != g {
			q = append(q, r)
		}
	}
	x.queue = q
	for k, wt := range x.wanted {
		if wt.g == g {
			x.c.Unpin(wt.ent)
			delete(x.wanted, k)
		}
	}
	for _, r := range x.loading {
		if r.g == g {
			r.cancel()
		}
	}
	x.broadcast()
}

// unwant unpins every wanted expert but key (they stay cached, now
// evictable): a demand read that finds no room takes precedence over
// experts read ahead. It reports whether anything was unpinned.
func (x *expertCache) unwant(key int) bool {
	any := false
	for k, wt := range x.wanted {
		if k != key {
			x.c.Unpin(wt.ent)
			delete(x.wanted, k)
			any = true
		}
	}
	return any
}

// rankFor orders evictions for a read of group g's expert: experts by the
// policy, then dense groups, the one whose next use is furthest first;
// group g itself stays.
func (x *expertCache) rankFor(g int) func(int) int64 {
	return func(k int) int64 {
		if k >= x.n {
			return min(x.pol.rank(k-x.n), groupRank-1)
		}
		d := ((k-g)%x.n + x.n) % x.n
		if d == 0 {
			return -1
		}
		return groupRank + int64(x.n-d)
	}
}

// next picks the first queued read that can start: not in flight, not
// cached (a queued expert the cache holds by now needs no read and leaves
// the queue). Returns -1 if none. Called with x.mu held.
func (x *expertCache) next() int {
	for i := 0; i < len(x.queue); {
		k := x.queue[i].key
		switch {
		case x.loading[k] != nil:
			i++
		case x.c.Peek(k) != nil:
			x.queue = append(x.queue[:i], x.queue[i+1:]...)
		default:
			return i
		}
	}
	return -1
}

// loop is one reader goroutine.
func (x *expertCache) loop() {
	defer x.wg.Done()
	x.mu.Lock()
	defer x.mu.Unlock()
	for !x.stopped {
		i := x.next()
		if i < 0 {
			x.wait(nil)
			continue
		}
		r := x.queue[i]
		gr := &x.groups[r.g]
		room := x.c.Changed()
		ent, err := x.c.ReserveRanked(r.key, gr.xsize, true, x.rankFor(r.g))
		if errors.Is(err, cache.ErrNoRoom) {
			if x.demand[r.key] > 0 {
				if x.unwant(r.key) {
					continue
				}
				if len(x.loading) == 0 && x.c.Counters().Filling == 0 {
					x.queue = append(x.queue[:i], x.queue[i+1:]...)
					x.failed[r.key] = fmt.Errorf("the memory budget %s cannot hold it beside the weights in use (its group and %d experts held); the minimum budget for this model is %dMiB: %w",
						FormatSize(x.c.Budget()), len(x.held), x.minMiB, err)
					x.broadcast()
					continue
				}
			}
			x.wait(room)
			continue
		}
		x.queue = append(x.queue[:i], x.queue[i+1:]...)
		if err != nil {
			x.failed[r.key] = err
			x.broadcast()
			continue
		}
		ctx, cancel := context.WithCancel(x.ctx)
		x.loading[r.key] = &xread{g: r.g, cancel: cancel}
		x.mu.Unlock()
		err = x.load(ctx, gr, r.e, ent.Buf)
		cancelled := ctx.Err() != nil
		cancel()
		x.mu.Lock()
		x.c.Fill(ent, err)
		delete(x.loading, r.key)
		switch {
		case err != nil:
			x.c.Unpin(ent)
			if !cancelled {
				x.failed[r.key] = err
			}
		case cancelled || x.stopped:
			x.read.Add(gr.xbytes)
			x.c.Unpin(ent) // read, but its batch is over: cached, not pinned
		default:
			x.read.Add(gr.xbytes)
			x.wanted[r.key] = &xwant{ent: ent, g: r.g}
		}
		x.broadcast()
		x.mu.Unlock()
		x.pf.Done() // room may have changed for the group loader
		x.mu.Lock()
	}
}

// wait blocks until the state changes, extra fires or the readers stop.
// Called with x.mu held; holds it again on return.
func (x *expertCache) wait(extra <-chan struct{}) {
	ch := x.changed
	x.mu.Unlock()
	select {
	case <-ch:
	case <-extra:
	case <-x.ctx.Done():
	}
	x.mu.Lock()
}

// load preads expert e of every expert tensor of gr into dst, in chunks so
// a cancelled read stops promptly.
func (x *expertCache) load(ctx context.Context, gr *group, e int, dst []byte) error {
	for i, t := range gr.experts {
		off := t.Off + int64(e)*gr.xstride[i]
		buf := dst[gr.xoffs[i] : gr.xoffs[i]+gr.xstride[i]]
		for o := int64(0); o < int64(len(buf)); o += loadChunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			end := min(o+loadChunk, int64(len(buf)))
			what := fmt.Sprintf("expert %d of tensor %s", e, t.Info.Name)
			var err error
			if x.hook != nil {
				err = x.hook(ctx, buf[o:end], off+o, what)
			} else {
				err = x.st.ReadAt(buf[o:end], off+o, what)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
