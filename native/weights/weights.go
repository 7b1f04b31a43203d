package weights

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/policy"
	"github.com/memvanta/memvanta/native/cache"
	"github.com/memvanta/memvanta/native/prefetch"
	"github.com/memvanta/memvanta/native/store"
	"github.com/memvanta/memvanta/native/telemetry"
)

// This file holds what every loading strategy shares: the plan's groups,
// the model.Weights entry points and the checks they make before handing
// out bytes. Each strategy lives in its own file: resident.go (the mapping
// as is), budgetmap.go (the mapping populated ahead and dropped behind
// within the budget), budgetcopy.go (pread into bounded cache buffers);
// budget.go is the prefetcher and cache the two budget strategies share,
// stats.go the telemetry.

type group struct {
	name    string
	tensors []*store.Tensor
	offs    []int64     // budget copy: each tensor's offset in the group buffer
	size    int64       // bytes charged to the budget (buffer, or mapped pages); resident: pages spanned
	bytes   int64       // sum of tensor sizes
	views   [][]byte    // resident and budget map: slices of the mapping
	ranges  []fileRange // budget map: the file ranges the loader populates and drops (fileRanges)

	// Mixture-of-experts layer (experts.go): the 3-D expert tensors, the
	// bytes of one expert in each, each one's offset in an expert buffer,
	// one expert's buffer size and data bytes, and the plan-wide index of
	// the group's expert 0.
	experts []*store.Tensor
	nExpert int
	xstride []int64
	xoffs   []int64
	xsize   int64
	xbytes  int64
	xfirst  int
}

// fileWeights implements model.Weights over an opened file for every
// strategy.
type fileWeights struct {
	st   *store.Store
	opt  Options
	pcfg policy.Config
	base telemetry.Usage

	mu        sync.Mutex
	declared  bool
	closed    bool
	groups    []group
	held      []int          // graph pins per group
	used      []bool         // budget: acquired during the current pass
	entries   []*cache.Entry // budget: entry pinned for each held group
	minBudget int64

	// budget
	cache *cache.Cache
	pf    *prefetch.Prefetcher
	xc    *expertCache // nil unless the plan has experts
	depth int
	// expertsUsed is how many experts a token uses per layer (file
	// metadata), for the minimum budget; readHook replaces the expert
	// reader's pread in tests.
	expertsUsed int
	readHook    func(ctx context.Context, dst []byte, off int64, what string) error
	huge        *hugeState // resident and budget map: page-cache folio repair; one caller at a time (see hugeState)

	// telemetry (stats.go). moved is atomic because the loader adds to it
	// without w.mu (which Close holds while stopping the loader).
	moved     atomic.Int64
	xread     atomic.Int64 // expert bytes read (budget modes)
	passMoved int64        // moved at the start of the current pass
	passXRead int64        // xread at the start of the current pass
	winMoved  int64        // moved at the start of the current window
	tot       Stats
	cur       PassStats
	lastG     int
	passes    []PassStats // ring of the last MaxPassStats
	win       policy.Observation
	winStart  time.Time
	winAcq    int
	decision  policy.Decision
}

func newWeights(st *store.Store, opt Options, pcfg policy.Config, expertsUsed int) (*fileWeights, error) {
	w := &fileWeights{st: st, opt: opt, pcfg: pcfg, base: baseline(), lastG: -1, expertsUsed: max(expertsUsed, 1)}
	w.tot.Mode = opt.Mode
	w.tot.FileSize = st.Map().Size()
	if opt.Mode == Budget {
		w.tot.Budget = opt.Budget
		w.tot.Stream = opt.Stream
	}
	if w.mapped() {
		w.huge = newHugeState(st.Map().Size(), !opt.KeepPageCache)
	}
	return w, nil
}

var _ model.Weights = (*fileWeights)(nil)

func (w *fileWeights) Info(name string) (gguf.TensorInfo, bool) {
	t, ok := w.st.Tensor(name)
	if !ok {
		return gguf.TensorInfo{}, false
	}
	return t.Info, true
}

// mapped reports whether the graph reads the file mapping in place
// (resident and budget map).
func (w *fileWeights) mapped() bool {
	return w.opt.Mode == Resident || w.opt.Stream == StreamMap
}

// Declare builds the groups, laid out by the strategy. In budget mode it
// checks the budget against the largest group and starts the prefetcher; a
// second Declare (a new graph over the same model) replaces the plan if no
// group is held.
func (w *fileWeights) Declare(p model.Plan) error {
	if len(p.Groups) == 0 {
		return errors.New("weights: declared plan has no groups")
	}
	groups := make([]group, len(p.Groups))
	var largest int64
	largestName, largestNote := "", ""
	for i, pg := range p.Groups {
		if len(pg.Tensors) == 0 {
			return fmt.Errorf("weights: plan group %d (%q) has no tensors", i, pg.Name)
		}
		g := group{name: pg.Name}
		for _, name := range pg.Tensors {
			t, ok := w.st.Tensor(name)
			if !ok {
				return fmt.Errorf("weights: plan group %q names tensor %q, which the file does not have", pg.Name, name)
			}
			g.tensors = append(g.tensors, t)
			g.bytes += int64(t.Info.Size)
		}
		if err := expertLayout(&g, pg, w.st); err != nil {
			return err
		}
		var err error
		switch {
		case w.opt.Mode == Resident:
			err = residentLayout(&g, w.st)
		case w.opt.Stream == StreamMap:
			err = mapLayout(&g, w.st)
		default:
			copyLayout(&g)
		}
		if err != nil {
			return err
		}
		// A layer with experts must hold, beside its dense group, the
		// experts one token uses there.
		k := min(w.expertsUsed, g.nExpert)
		if bs := cache.BufferSize(g.size) + int64(k)*cache.BufferSize(g.xsize); bs > largest && !rowOnly(pg) {
			largest, largestName, largestNote = bs, pg.Name, ""
			if k > 0 {
				largestNote = fmt.Sprintf(" plus the %d experts a token uses there (%s each)", k, FormatSize(cache.BufferSize(g.xsize)))
			}
		}
		groups[i] = g
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("weights: model closed")
	}
	for g, h := range w.held {
		if h > 0 {
			return fmt.Errorf("weights: Declare while group %q is acquired", w.groups[g].name)
		}
	}
	if w.xc != nil && w.xc.heldCount() > 0 {
		return errors.New("weights: Declare while experts are acquired")
	}
	if w.opt.Mode == Budget && w.opt.Budget < largest {
		return fmt.Errorf("weights: memory budget %s is below the largest weight group %q%s (%s); the minimum budget for this model is %dMiB",
			FormatSize(w.opt.Budget), largestName, largestNote, FormatSize(largest), ceilMiB(largest))
	}
	w.stopBudget()
	w.groups, w.held, w.entries = groups, make([]int, len(groups)), make([]*cache.Entry, len(groups))
	w.used = make([]bool, len(groups))
	w.minBudget = largest
	w.tot.MinBudget = largest
	w.lastG = -1
	w.declared = true
	if w.opt.Mode == Budget {
		if err := w.startBudget(p, largest); err != nil {
			return err
		}
	}
	w.tot.Depth = w.depth
	return nil
}

// mapViews sets the group's views to slices of the mapping (the strategies
// whose graph reads the file in place).
func mapViews(g *group, st *store.Store) error {
	for _, t := range g.tensors {
		v, err := st.Bytes(t.Info.Name)
		if err != nil {
			return fmt.Errorf("weights: %w", err)
		}
		g.views = append(g.views, v)
	}
	return nil
}

// checkFile fails if the file has shrunk since Open: handing out slices of
// the mapping then would only delay the error to a memory fault in a kernel
// (which Forward recovers, see FaultError); copy mode checks too, so every
// mode ends a run over a truncated file the same way.
func (w *fileWeights) checkFile() error {
	m := w.st.Map()
	sz, err := m.CurrentSize()
	if err != nil {
		return fmt.Errorf("weights: %w", err)
	}
	if sz < m.Size() {
		return fmt.Errorf("weights: %s: model file truncated during the run (now %d bytes, %d when opened)", m.Path(), sz, m.Size())
	}
	return nil
}

func (w *fileWeights) check(g int) error {
	if w.closed {
		return errors.New("weights: model closed")
	}
	if !w.declared {
		return errors.New("weights: Acquire before Declare")
	}
	if g < 0 || g >= len(w.groups) {
		return fmt.Errorf("weights: group %d outside the declared plan of %d groups", g, len(w.groups))
	}
	return nil
}

// Acquire returns group g's tensor bytes: slices of the mapping (resident,
// budget map) or of a cache buffer (budget copy); see acquireResident and
// acquireBudget.
func (w *fileWeights) Acquire(ctx context.Context, g int) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w.mu.Lock()
	if err := w.check(g); err != nil {
		w.mu.Unlock()
		return nil, err
	}
	w.beginAcquire(g)
	if w.opt.Mode == Resident {
		defer w.mu.Unlock()
		return w.acquireResident(ctx, g)
	}
	return w.acquireBudget(ctx, g)
}

// Release ends the graph's use of group g. In budget mode its buffer
// becomes evictable once the cursor has passed it.
func (w *fileWeights) Release(g int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.declared || g < 0 || g >= len(w.groups) || w.held[g] == 0 {
		return
	}
	w.held[g]--
	if w.held[g] > 0 || w.opt.Mode != Budget {
		return
	}
	if w.xc != nil && len(w.groups[g].experts) > 0 {
		w.xc.endGroup(g)
	}
	w.releaseBudget(g)
}

// Row copies one row. Resident mode copies out of the mapping
// (fault-protected); budget mode preads it, so it never enters RSS.
func (w *fileWeights) Row(ctx context.Context, name string, r int, dst []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return errors.New("weights: model closed")
	}
	var err error
	if w.opt.Mode == Resident {
		err = w.st.CopyRows(name, int64(r), int64(r)+1, dst)
	} else {
		err = w.st.ReadRows(name, int64(r), int64(r)+1, dst)
	}
	if err != nil {
		return fmt.Errorf("weights: row %d: %w", r, err)
	}
	w.mu.Lock()
	w.tot.BytesTouched += int64(len(dst))
	w.cur.BytesTouched += int64(len(dst))
	w.mu.Unlock()
	return nil
}

// FaultError explains a memory fault at addr raised while the graph read
// the weights (model.FaultExplainer): in the mapped modes a fault inside
// the mapping means the file lost the page under it, i.e. it was truncated
// or overwritten (cut short) during the run. The error names the file, the
// offset and the tensor there (cause, Go's generic "invalid memory address"
// panic text, adds nothing). Addresses outside the mapping are not ours.
func (w *fileWeights) FaultError(addr uintptr, cause error) error {
	m := w.st.Map()
	off, ok := m.Offset(addr)
	if !ok {
		return nil
	}
	what := ""
	for i := range w.groups {
		gr := &w.groups[i]
		for _, t := range append(gr.tensors[:len(gr.tensors):len(gr.tensors)], gr.experts...) {
			if off >= t.Off && off < t.Off+int64(t.Info.Size) {
				what = ", tensor " + gguf.QuoteName(t.Info.Name)
			}
		}
	}
	now := "unknown"
	if sz, err := m.CurrentSize(); err == nil {
		now = fmt.Sprint(sz)
	}
	return fmt.Errorf("weights: %s: memory fault reading byte %d of the mapped model file%s: the file was truncated or overwritten during the run (size now %s bytes, %d when opened)",
		m.Path(), off, what, now, m.Size())
}

var _ model.FaultExplainer = (*fileWeights)(nil)

func (w *fileWeights) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	w.stopBudget()
	return nil
}
