//go:build linux

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

// mapLayout charges a group the union of what populating its tensors maps
// and points its views at the mapping.
func mapLayout(g *group, st *store.Store) error {
	spans := make([]span, 0, len(g.tensors))
	for _, t := range g.tensors {
		spans = append(spans, mappedSpan(t.Off, int64(t.Info.Size), st.Map().Size()))
	}
	g.size = unionSize(spans)
	return mapViews(g, st)
}

// newMapCache is an accounting cache over the budget whose eviction drops
// the group's mapped pages.
func newMapCache(w *fileWeights) (*cache.Cache, error) {
	return cache.NewAccounting(w.opt.Budget, (*source)(w).drop)
}

// loadMapped populates the group's pages in the mapping, then repairs
// chunks the page cache holds in small folios (hugeState).
func (s *source) loadMapped(ctx context.Context, gr *group) error {
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
	return nil
}

// drop gives group g's mapped pages back (on eviction). The page cache
// keeps the data; only this process's mappings go.
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
