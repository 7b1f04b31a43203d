package weights

import (
	"context"
	"fmt"
	"time"

	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/native/cache"
	"github.com/memvanta/memvanta/native/prefetch"
)

// What the two budget strategies (budgetmap.go, budgetcopy.go) share: a
// cache that charges every group brought in against Options.Budget, and a
// prefetcher whose one loader goroutine brings groups in ahead of the
// graph's cursor and lets them go behind it.

// loadChunk bounds one pread or populate call so a cancelled load stops
// promptly.
const loadChunk = 8 << 20

// rowOnly reports a group the graph reads only by Row: the contract names
// it "input" (the token embedding table). It is neither prefetched nor
// counted in the minimum budget unless the graph does acquire it.
func rowOnly(g model.Group) bool { return g.Name == "input" }

// startBudget makes the cache and starts the prefetcher for the declared
// groups; largest is the largest group's buffer size. Called with w.mu
// held, after stopBudget.
func (w *fileWeights) startBudget(p model.Plan, largest int64) error {
	var c *cache.Cache
	var err error
	if w.opt.Stream == StreamMap {
		c, err = newMapCache(w)
	} else {
		c, err = cache.New(w.opt.Budget)
	}
	if err != nil {
		return fmt.Errorf("weights: %w", err)
	}
	w.depth = min(max(w.pcfg.MinDepth, 1), w.pcfg.MaxDepth, int(w.opt.Budget/largest)-1)
	w.depth = max(w.depth, 0)
	pf, err := prefetch.New(c, (*source)(w), w.depth)
	if err != nil {
		c.Close()
		return fmt.Errorf("weights: %w", err)
	}
	for g, pg := range p.Groups {
		pf.Skip(g, rowOnly(pg))
	}
	w.cache, w.pf = c, pf
	w.xc = newExpertCache(w, c, pf, w.opt.ExpertReads)
	pf.Start(context.Background())
	return nil
}

// stopBudget stops the prefetcher and frees the cache. Called with w.mu held
// (the prefetcher's loader never takes w.mu, so this cannot deadlock).
func (w *fileWeights) stopBudget() {
	if w.xc != nil {
		w.xc.stop()
		w.xc = nil
	}
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

// acquireBudget returns group g's bytes once the prefetcher has them in
// the cache, waiting for it if needed: slices of the mapping (map) or of
// the cache buffer (copy). Called with w.mu held; releases it while
// waiting and holds it again only to record the pin.
func (w *fileWeights) acquireBudget(ctx context.Context, g int) ([][]byte, error) {
	gr := &w.groups[g]
	pf := w.pf
	if gr.size > w.opt.Budget {
		w.mu.Unlock()
		return nil, fmt.Errorf("weights: memory budget %s is below weight group %q (%s); the minimum budget for this model is %dMiB",
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
		return nil, fmt.Errorf("weights: acquire group %q: %w", gr.name, err)
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
		out = copyViews(gr, e.Buf)
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

// releaseBudget unpins group g's entry (the graph's last hold on it ended)
// and moves the prefetcher's cursor past it. Called with w.mu held.
func (w *fileWeights) releaseBudget(g int) {
	w.cache.Unpin(w.entries[g])
	w.entries[g] = nil
	w.pf.Advance(g + 1)
	w.pf.Done()
}

// source adapts fileWeights to prefetch.Source. Its methods read only
// fields fixed at Declare, so the loader never needs w.mu.
type source fileWeights

func (s *source) Groups() int      { return len(s.groups) }
func (s *source) Size(g int) int64 { return s.groups[g].size }
func (s *source) Load(ctx context.Context, g int, dst []byte) error {
	gr := &s.groups[g]
	var err error
	if s.opt.Stream == StreamMap {
		err = s.loadMapped(ctx, gr)
	} else {
		err = s.loadCopy(ctx, gr, dst)
	}
	if err != nil {
		return err
	}
	s.moved.Add(gr.bytes)
	return nil
}
