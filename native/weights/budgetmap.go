package weights

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/memvanta/memvanta/native/cache"
	"github.com/memvanta/memvanta/native/mmap"
	"github.com/memvanta/memvanta/native/store"
)

// Budget map strategy (the default stream): the loader populates the file
// mapping's pages for a group ahead of the graph (MADV_POPULATE_READ) and
// drops them (MADV_DONTNEED) on eviction, so the graph reads the page cache
// in place. The cache only accounts: each group is charged the pages that
// populating it can map, whole 2 MiB chunks where a huge folio may back
// them.

// mapLayout charges a group the union of what populating its tensors maps,
// records the file ranges the loader populates and drops (extents merged,
// see fileRanges) and points its views at the mapping.
func mapLayout(g *group, st *store.Store) error {
	spans := make([]span, 0, len(g.tensors))
	for _, t := range g.tensors {
		spans = append(spans, mappedSpan(t.Off, int64(t.Info.Size), st.Map().Size()))
	}
	g.size = unionSize(spans)
	g.ranges = fileRanges(g.tensors)
	return mapViews(g, st)
}

// fileRanges is the tensors' file extents in file order, with extents that
// overlap or are separated by less than a page (alignment padding) merged:
// a layer's tensors are usually one run of the file, so the loader then
// populates, checks and drops a group with one call each instead of one per
// tensor. Every drop is a TLB shootdown on the CPUs running the graph, so
// this matters more than the system calls themselves. The merged ranges
// cover no page outside the tensors' own pages, so what is mapped stays
// within what mapLayout charges.
func fileRanges(ts []*store.Tensor) []fileRange {
	ps := int64(os.Getpagesize())
	rs := make([]mmap.Range, 0, len(ts))
	for _, t := range ts {
		if t.Info.Size == 0 {
			continue
		}
		rs = append(rs, mmap.Range{Off: t.Off, End: t.Off + int64(t.Info.Size)})
	}
	slices.SortFunc(rs, func(a, b mmap.Range) int { return cmp.Compare(a.Off, b.Off) })
	var out []fileRange
	for _, r := range rs {
		if k := len(out); k > 0 && r.Off&^(ps-1) <= (out[k-1].End+ps-1)&^(ps-1) {
			f := &out[k-1]
			f.End = max(f.End, r.End)
			f.parts = append(f.parts, r)
			continue
		}
		out = append(out, fileRange{Range: r, parts: []mmap.Range{r}})
	}
	return out
}

// fileRange is a merged run of a group's tensor extents; parts are the
// extents themselves (what the huge-mapping counters count).
type fileRange struct {
	mmap.Range
	parts []mmap.Range
}

// newMapCache is an accounting cache over the budget whose eviction drops
// the group's mapped pages.
func newMapCache(w *fileWeights) (*cache.Cache, error) {
	return cache.NewAccounting(w.opt.Budget, (*source)(w).drop)
}

// loadMapped populates the group's pages in the mapping, then repairs
// chunks the page cache holds in small folios (hugeState).
func (s *source) loadMapped(ctx context.Context, gr *group) error {
	m := s.st.Map()
	for _, r := range gr.ranges {
		for off := r.Off; off < r.End; off += loadChunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := min(loadChunk, r.End-off)
			if err := m.Advise(off, n, mmap.Populate); err != nil {
				return fmt.Errorf("group %s, %s (file truncated?): %w", gr.name, s.tensorAt(gr, off), err)
			}
		}
		if err := s.huge.check(ctx, m, r.Off, r.End-r.Off, r.parts); err != nil {
			return fmt.Errorf("group %s: %w", gr.name, err)
		}
	}
	return nil
}

// tensorAt names the group's tensor holding file offset off, for errors.
func (s *source) tensorAt(gr *group, off int64) string {
	for _, t := range gr.tensors {
		if off >= t.Off && off < t.Off+int64(t.Info.Size) {
			return "tensor " + t.Info.Name
		}
	}
	return fmt.Sprintf("file offset %d", off)
}

// drop gives group g's mapped pages back (on eviction). The page cache
// keeps the data; only this process's mappings go.
func (s *source) drop(g int) {
	for _, r := range s.groups[g].ranges {
		_ = s.st.Map().Advise(r.Off, r.End-r.Off, mmap.DontNeed)
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
