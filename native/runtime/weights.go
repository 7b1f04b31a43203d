//go:build linux

package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/policy"
	"github.com/memvanta/memvanta/native/cache"
	"github.com/memvanta/memvanta/native/mmap"
	"github.com/memvanta/memvanta/native/prefetch"
	"github.com/memvanta/memvanta/native/store"
	"github.com/memvanta/memvanta/native/telemetry"
)

// tensorAlign aligns each tensor inside a budget-mode group buffer, so
// kernels see the same alignment a GGUF file gives (32) or better.
const tensorAlign = 64

// loadChunk bounds one pread so a cancelled load stops promptly.
const loadChunk = 8 << 20

type group struct {
	name    string
	tensors []*store.Tensor
	offs    []int64  // budget copy mode: each tensor's offset in the group buffer
	size    int64    // budget mode: bytes charged to the cache (buffer, or mapped pages)
	bytes   int64    // sum of tensor sizes
	views   [][]byte // resident mode: slices of the mapping
}

// weights implements model.Weights for both modes.
type weights struct {
	st   *store.Store
	opt  Options
	pcfg policy.Config
	base telemetry.Usage

	mu        sync.Mutex
	declared  bool
	closed    bool
	groups    []group
	held      []int          // graph pins per group
	used      []bool         // budget mode: acquired during the current pass
	entries   []*cache.Entry // budget mode: entry pinned for each held group
	minBudget int64

	// budget mode
	cache *cache.Cache
	pf    *prefetch.Prefetcher
	depth int
	huge  *hugeState // map stream: page-cache folio repair; used by the loader only

	// telemetry. moved is atomic because the loader adds to it without
	// w.mu (which Close holds while stopping the loader).
	moved     atomic.Int64
	passMoved int64 // moved at the start of the current pass
	winMoved  int64 // moved at the start of the current window
	tot       Stats
	cur       PassStats
	lastG     int
	passes    []PassStats // ring of the last MaxPassStats
	win       policy.Observation
	winStart  time.Time
	winAcq    int
	decision  policy.Decision
}

func newWeights(st *store.Store, opt Options, pcfg policy.Config) (*weights, error) {
	w := &weights{st: st, opt: opt, pcfg: pcfg, base: baseline(), lastG: -1}
	w.tot.Mode = opt.Mode
	w.tot.FileSize = st.Map().Size()
	if opt.Mode == Budget {
		w.tot.Budget = opt.Budget
		w.tot.Stream = opt.Stream
		if opt.Stream == StreamMap {
			w.huge = newHugeState(st.Map().Size(), !opt.KeepPageCache)
		}
	} else {
		w.huge = newHugeState(st.Map().Size(), !opt.KeepPageCache)
	}
	return w, nil
}

var _ model.Weights = (*weights)(nil)

func (w *weights) Info(name string) (gguf.TensorInfo, bool) {
	t, ok := w.st.Tensor(name)
	if !ok {
		return gguf.TensorInfo{}, false
	}
	return t.Info, true
}

// Declare builds the groups. In budget mode it checks the budget against
// the largest group and starts the prefetcher; a second Declare (a new
// graph over the same model) replaces the plan if no group is held.
func (w *weights) Declare(p model.Plan) error {
	if len(p.Groups) == 0 {
		return errors.New("runtime: declared plan has no groups")
	}
	groups := make([]group, len(p.Groups))
	var largest int64
	largestName := ""
	for i, pg := range p.Groups {
		if len(pg.Tensors) == 0 {
			return fmt.Errorf("runtime: plan group %d (%q) has no tensors", i, pg.Name)
		}
		g := group{name: pg.Name}
		var spans []span // budget map stream: what populating each tensor maps
		for _, name := range pg.Tensors {
			t, ok := w.st.Tensor(name)
			if !ok {
				return fmt.Errorf("runtime: plan group %q names tensor %q, which the file does not have", pg.Name, name)
			}
			g.tensors = append(g.tensors, t)
			if w.opt.Mode == Resident {
				g.size += pageSpan(t.Off, int64(t.Info.Size))
			} else if w.mapped() {
				spans = append(spans, mappedSpan(t.Off, int64(t.Info.Size), w.st.Map().Size()))
			} else {
				g.size = (g.size + tensorAlign - 1) / tensorAlign * tensorAlign
				g.offs = append(g.offs, g.size)
				g.size += int64(t.Info.Size)
			}
			g.bytes += int64(t.Info.Size)
			if w.mapped() {
				v, err := w.st.Bytes(name)
				if err != nil {
					return fmt.Errorf("runtime: %w", err)
				}
				g.views = append(g.views, v)
			}
		}
		if len(spans) > 0 {
			g.size = unionSize(spans)
		}
		if bs := cache.BufferSize(g.size); bs > largest && !rowOnly(pg) {
			largest, largestName = bs, pg.Name
		}
		groups[i] = g
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("runtime: model closed")
	}
	for g, h := range w.held {
		if h > 0 {
			return fmt.Errorf("runtime: Declare while group %q is acquired", w.groups[g].name)
		}
	}
	if w.opt.Mode == Budget && w.opt.Budget < largest {
		return fmt.Errorf("runtime: memory budget %s is below the largest weight group %q (%s); the minimum budget for this model is %dMiB",
			FormatSize(w.opt.Budget), largestName, FormatSize(largest), ceilMiB(largest))
	}
	w.stopBudget()
	w.groups, w.held, w.entries = groups, make([]int, len(groups)), make([]*cache.Entry, len(groups))
	w.used = make([]bool, len(groups))
	w.minBudget = largest
	w.tot.MinBudget = largest
	w.lastG = -1
	w.declared = true
	if w.opt.Mode == Budget {
		var c *cache.Cache
		var err error
		if w.opt.Stream == StreamMap {
			c, err = cache.NewAccounting(w.opt.Budget, (*source)(w).drop)
		} else {
			c, err = cache.New(w.opt.Budget)
		}
		if err != nil {
			return fmt.Errorf("runtime: %w", err)
		}
		w.depth = min(max(w.pcfg.MinDepth, 1), w.pcfg.MaxDepth, int(w.opt.Budget/largest)-1)
		w.depth = max(w.depth, 0)
		pf, err := prefetch.New(c, (*source)(w), w.depth)
		if err != nil {
			c.Close()
			return fmt.Errorf("runtime: %w", err)
		}
		for g, pg := range p.Groups {
			pf.Skip(g, rowOnly(pg))
		}
		w.cache, w.pf = c, pf
		pf.Start(context.Background())
	}
	w.tot.Depth = w.depth
	return nil
}

// stopBudget stops the prefetcher and frees the cache. Called with w.mu held
// (the prefetcher's loader never takes w.mu, so this cannot deadlock).
func (w *weights) stopBudget() {
	if w.pf != nil {
		w.pf.Stop()
		w.pf = nil
	}
	if w.cache != nil {
		k := w.cache.Counters()
		w.tot.Evictions += k.Evictions
		w.tot.PeakWeightBytes = max(w.tot.PeakWeightBytes, k.Peak)
		w.cache.Close()
		w.cache = nil
	}
}

// rowOnly reports a group the graph reads only by Row: the contract names
// it "input" (the token embedding table). It is neither prefetched nor
// counted in the minimum budget unless the graph does acquire it.
func rowOnly(g model.Group) bool { return g.Name == "input" }

// source adapts weights to prefetch.Source. Its methods read only fields
// fixed at Declare, so the loader never needs w.mu.
type source weights

func (s *source) Groups() int      { return len(s.groups) }
func (s *source) Size(g int) int64 { return s.groups[g].size }
func (s *source) Load(ctx context.Context, g int, dst []byte) error {
	gr := &s.groups[g]
	if s.opt.Stream == StreamMap {
		for _, t := range gr.tensors {
			for off := int64(0); off < int64(t.Info.Size); off += loadChunk {
				if err := ctx.Err(); err != nil {
					return err
				}
				n := min(loadChunk, int64(t.Info.Size)-off)
				if err := s.st.Map().Advise(t.Off+off, n, mmap.Populate); err != nil {
					return fmt.Errorf("tensor %s (file truncated?): %w", t.Info.Name, err)
				}
			}
			if err := s.huge.check(ctx, s.st.Map(), t.Off, int64(t.Info.Size)); err != nil {
				return fmt.Errorf("tensor %s: %w", t.Info.Name, err)
			}
		}
		s.moved.Add(gr.bytes)
		return nil
	}
	for i, t := range gr.tensors {
		buf := dst[gr.offs[i] : gr.offs[i]+int64(t.Info.Size)]
		for off := int64(0); off < int64(len(buf)); off += loadChunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			end := min(off+loadChunk, int64(len(buf)))
			if err := s.st.ReadAt(buf[off:end], t.Off+off, "tensor "+t.Info.Name); err != nil {
				return err
			}
		}
	}
	s.moved.Add(gr.bytes)
	return nil
}

// drop gives group g's mapped pages back (budget map mode, on eviction).
// The page cache keeps the data; only this process's mappings go.
func (s *source) drop(g int) {
	for _, t := range s.groups[g].tensors {
		_ = s.st.Map().Advise(t.Off, int64(t.Info.Size), mmap.DontNeed)
	}
}

type span struct{ lo, hi int64 }

// mappedSpan is the file range that populating [off, off+n) can map: whole
// pages, widened to whole 2 MiB chunks where a chunk lies wholly inside the
// file (only those can be a huge folio, which is mapped whole).
func mappedSpan(off, n, fileSize int64) span {
	ps := int64(os.Getpagesize())
	s := span{off &^ (ps - 1), (off + n + ps - 1) &^ (ps - 1)}
	if c := off / mmap.ChunkSize * mmap.ChunkSize; c+mmap.ChunkSize <= fileSize {
		s.lo = c
	}
	if c := (off + n + mmap.ChunkSize - 1) / mmap.ChunkSize * mmap.ChunkSize; c <= fileSize {
		s.hi = c
	}
	return s
}

// unionSize is the bytes covered by the union of spans.
func unionSize(spans []span) int64 {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	var total int64
	cur := spans[0]
	for _, s := range spans[1:] {
		if s.lo > cur.hi {
			total += cur.hi - cur.lo
			cur = s
			continue
		}
		cur.hi = max(cur.hi, s.hi)
	}
	return total + cur.hi - cur.lo
}

// chunkSpan is the 2 MiB chunk indexes [lo, hi) that [off, off+n) touches.
func chunkSpan(off, n int64) (lo, hi int64) {
	return off / mmap.ChunkSize, (off + n + mmap.ChunkSize - 1) / mmap.ChunkSize
}

// pageSpan is the bytes of whole pages that [off, off+n) touches.
func pageSpan(off, n int64) int64 {
	ps := int64(os.Getpagesize())
	lo := off &^ (ps - 1)
	hi := (off + n + ps - 1) &^ (ps - 1)
	return hi - lo
}

// mapped reports whether the graph reads the file mapping in place.
func (w *weights) mapped() bool {
	return w.opt.Mode == Resident || w.opt.Stream == StreamMap
}

// checkFile fails if the file has shrunk since Open: handing out slices of
// the mapping then would only delay the error to a memory fault in a kernel
// (which Forward recovers, see FaultError); copy mode checks too, so every
// mode ends a run over a truncated file the same way.
func (w *weights) checkFile() error {
	m := w.st.Map()
	sz, err := m.CurrentSize()
	if err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	if sz < m.Size() {
		return fmt.Errorf("runtime: %s: model file truncated during the run (now %d bytes, %d when opened)", m.Path(), sz, m.Size())
	}
	return nil
}

func (w *weights) check(g int) error {
	if w.closed {
		return errors.New("runtime: model closed")
	}
	if !w.declared {
		return errors.New("runtime: Acquire before Declare")
	}
	if g < 0 || g >= len(w.groups) {
		return fmt.Errorf("runtime: group %d outside the declared plan of %d groups", g, len(w.groups))
	}
	return nil
}

// Acquire returns group g's tensor bytes. Resident mode: slices of the
// mapping, after checking that the file has not shrunk (a truncation racing
// with the compute itself faults in a kernel; model.Forward recovers that
// into an error through FaultError). Budget mode: slices of a cache buffer
// or (map stream) of the mapping, waiting for the prefetcher if needed.
func (w *weights) Acquire(ctx context.Context, g int) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w.mu.Lock()
	if err := w.check(g); err != nil {
		w.mu.Unlock()
		return nil, err
	}
	w.beginAcquire(g)
	gr := &w.groups[g]
	if w.opt.Mode == Resident {
		defer w.mu.Unlock()
		if err := w.checkFile(); err != nil {
			return nil, err
		}
		if w.tot.Passes == 0 {
			w.prime(ctx, gr)
			if g+1 < len(w.groups) {
				// Cold start: ask the kernel to read the next group ahead.
				// Later passes find the pages mapped already.
				for _, t := range w.groups[g+1].tensors {
					_ = w.st.Map().Advise(t.Off, int64(t.Info.Size), mmap.WillNeed)
				}
			}
		}
		w.held[g]++
		w.touched(gr.bytes, true, false, 0)
		return gr.views, nil
	}
	pf := w.pf
	if gr.size > w.opt.Budget {
		w.mu.Unlock()
		return nil, fmt.Errorf("runtime: memory budget %s is below weight group %q (%s); the minimum budget for this model is %dMiB",
			FormatSize(w.opt.Budget), gr.name, FormatSize(cache.BufferSize(gr.size)), ceilMiB(max(w.minBudget, cache.BufferSize(gr.size))))
	}
	if !w.used[g] {
		pf.Skip(g, false)
	}
	w.used[g] = true
	w.mu.Unlock()
	t0 := time.Now()
	e, res, err := pf.Get(ctx, g)
	wait := time.Since(t0)
	if err != nil {
		return nil, fmt.Errorf("runtime: acquire group %q: %w", gr.name, err)
	}
	// Every mode checks the file has not shrunk: map mode is about to hand
	// out slices of the mapping; copy mode may hold the group already, but a
	// run over a file truncated under it ends as in the mapped modes (one
	// fstat per group, microseconds per token).
	if err := w.checkFile(); err != nil {
		w.cache.Unpin(e)
		return nil, err
	}
	var out [][]byte
	if w.opt.Stream == StreamMap {
		out = gr.views
	} else {
		out = make([][]byte, len(gr.tensors))
		for i, t := range gr.tensors {
			out[i] = e.Buf[gr.offs[i] : gr.offs[i]+int64(t.Info.Size) : gr.offs[i]+int64(t.Info.Size)]
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held[g] > 0 {
		// Re-acquired while held: keep one pin per group.
		w.cache.Unpin(e)
	} else {
		w.entries[g] = e
	}
	w.held[g]++
	w.touched(gr.bytes, res.Hit, res.Late, wait)
	return out, nil
}

// FaultError explains a memory fault at addr raised while the graph read
// the weights (model.FaultExplainer): in the mapped modes a fault inside
// the mapping means the file lost the page under it, i.e. it was truncated
// or overwritten (cut short) during the run. The error names the file, the
// offset and the tensor there (cause, Go's generic "invalid memory address"
// panic text, adds nothing). Addresses outside the mapping are not ours.
func (w *weights) FaultError(addr uintptr, cause error) error {
	m := w.st.Map()
	off, ok := m.Offset(addr)
	if !ok {
		return nil
	}
	what := ""
	for i := range w.groups {
		for _, t := range w.groups[i].tensors {
			if off >= t.Off && off < t.Off+int64(t.Info.Size) {
				what = ", tensor " + gguf.QuoteName(t.Info.Name)
			}
		}
	}
	now := "unknown"
	if sz, err := m.CurrentSize(); err == nil {
		now = fmt.Sprint(sz)
	}
	return fmt.Errorf("runtime: %s: memory fault reading byte %d of the mapped model file%s: the file was truncated or overwritten during the run (size now %s bytes, %d when opened)",
		m.Path(), off, what, now, m.Size())
}

var _ model.FaultExplainer = (*weights)(nil)

// prime maps a group's pages on the first pass of resident mode and brings
// the chunks the page cache holds in small folios back as huge ones (see
// native/mmap/huge.go): the mapping then stays PMD-mapped for the rest of
// the run, which here made resident generation 2.5x faster than over the
// same file in 4 KiB folios. Advisory: a kernel without MADV_POPULATE_READ
// or PAGEMAP_SCAN only loses the gain, never the run.
func (w *weights) prime(ctx context.Context, gr *group) {
	if w.huge == nil {
		return
	}
	m := w.st.Map()
	for _, t := range gr.tensors {
		n := int64(t.Info.Size)
		if m.Advise(t.Off, n, mmap.Populate) != nil || w.huge.check(ctx, m, t.Off, n) != nil {
			return
		}
	}
}

// Release ends the graph's use of group g. In budget mode its buffer
// becomes evictable once the cursor has passed it.
func (w *weights) Release(g int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.declared || g < 0 || g >= len(w.groups) || w.held[g] == 0 {
		return
	}
	w.held[g]--
	if w.held[g] > 0 || w.opt.Mode != Budget {
		return
	}
	w.cache.Unpin(w.entries[g])
	w.entries[g] = nil
	w.pf.Advance(g + 1)
	w.pf.Done()
}

// Row copies one row. Resident mode copies out of the mapping
// (fault-protected); budget mode preads it, so it never enters RSS.
func (w *weights) Row(ctx context.Context, name string, r int, dst []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return errors.New("runtime: model closed")
	}
	var err error
	if w.opt.Mode == Resident {
		err = w.st.CopyRows(name, int64(r), int64(r)+1, dst)
	} else {
		err = w.st.ReadRows(name, int64(r), int64(r)+1, dst)
	}
	if err != nil {
		return fmt.Errorf("runtime: row %d: %w", r, err)
	}
	w.mu.Lock()
	w.tot.BytesTouched += int64(len(dst))
	w.cur.BytesTouched += int64(len(dst))
	w.mu.Unlock()
	return nil
}

// beginAcquire closes a pass when the graph wraps around the plan, and a
// policy window when it is full. Called with w.mu held.
func (w *weights) beginAcquire(g int) {
	now := time.Now()
	if w.winStart.IsZero() {
		w.winStart = now
	}
	if w.lastG >= 0 && g <= w.lastG {
		w.endPass()
	}
	w.lastG = g
	size := w.opt.Window
	if size <= 0 {
		size = len(w.groups)
	}
	if w.winAcq >= size {
		w.endWindow(now)
	}
	w.winAcq++
}

func (w *weights) touched(n int64, hit, late bool, wait time.Duration) {
	w.tot.Acquisitions++
	w.tot.BytesTouched += n
	w.cur.BytesTouched += n
	w.win.Acquisitions++
	if hit {
		w.tot.CacheHits++
		w.cur.Hits++
		w.win.Hits++
		return
	}
	w.tot.CacheMisses++
	w.cur.Misses++
	w.tot.Stalls++
	w.cur.Stalls++
	w.win.Stalls++
	w.tot.StallTime += wait
	w.cur.StallTime += wait
	w.win.StallNanos += int64(wait)
	if late {
		w.tot.LateArrivals++
		w.cur.LateArrivals++
		w.win.LateArrivals++
	}
}

func (w *weights) endPass() {
	if w.pf != nil {
		// Groups the graph did not acquire this pass (row-only tables) are
		// not worth loading ahead next pass.
		for g, u := range w.used {
			w.pf.Skip(g, !u)
			w.used[g] = false
		}
	}
	m := w.moved.Load()
	w.cur.BytesMoved, w.passMoved = m-w.passMoved, m
	w.cur.Pass = w.tot.Passes
	w.cur.Depth = w.depth
	if rss, err := telemetry.CurrentRSS(); err == nil {
		w.cur.RSS = rss
	}
	if len(w.passes) < MaxPassStats {
		w.passes = append(w.passes, w.cur)
	} else {
		w.passes[w.tot.Passes%MaxPassStats] = w.cur
	}
	w.tot.Passes++
	w.cur = PassStats{}
}

// endWindow hands the finished window to the policy and applies its depth.
func (w *weights) endWindow(now time.Time) {
	o := w.win
	m := w.moved.Load()
	o.BytesMoved, w.winMoved = m-w.winMoved, m
	o.Depth = w.depth
	o.WindowNanos = int64(now.Sub(w.winStart))
	if w.cache != nil {
		o.ResidentPeak = w.cache.Counters().Used
		o.Budget = w.opt.Budget
		o.GroupBytes = w.minBudget
	}
	d := policy.Next(w.pcfg, o)
	w.decision = d
	if w.pf != nil && d.Depth != w.depth {
		w.depth = d.Depth
		w.pf.SetDepth(d.Depth)
	}
	w.tot.Depth = w.depth
	w.win = policy.Observation{}
	w.winStart = now
	w.winAcq = 0
}

func (w *weights) stats() Stats {
	w.mu.Lock()
	s := w.tot
	s.BytesMoved = w.moved.Load()
	s.Depth = w.depth
	s.LastDecision = w.decision
	if w.cache != nil {
		k := w.cache.Counters()
		s.Evictions += k.Evictions
		s.PeakWeightBytes = max(s.PeakWeightBytes, k.Peak)
	}
	if w.huge != nil {
		s.HugeMappedBytes, s.SmallMappedBytes, s.RecachedBytes = w.huge.counters()
	}
	n := len(w.passes)
	s.PerPass = make([]PassStats, 0, n)
	if n < MaxPassStats {
		s.PerPass = append(s.PerPass, w.passes...)
	} else {
		i := int(w.tot.Passes % MaxPassStats)
		s.PerPass = append(append(s.PerPass, w.passes[i:]...), w.passes[:i]...)
	}
	w.mu.Unlock()
	if u, err := telemetry.Rusage(); err == nil {
		s.MinorFaults = u.MinorFaults - w.base.MinorFaults
		s.MajorFaults = u.MajorFaults - w.base.MajorFaults
		s.PeakRSS = u.PeakRSS
	}
	if rss, err := telemetry.CurrentRSS(); err == nil {
		s.RSS = rss
	}
	return s
}

func (w *weights) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	w.stopBudget()
	return nil
}
