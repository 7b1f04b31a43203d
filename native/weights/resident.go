package weights

import (
	"context"
	"os"

	"github.com/memvanta/memvanta/native/mmap"
	"github.com/memvanta/memvanta/native/store"
)

// Resident strategy: the graph reads the file mapping in place and the
// pages stay mapped for the run. The first pass populates each group (and
// hints the next one) and repairs small page-cache folios; later passes
// find everything mapped.

// residentLayout charges a group the whole pages its tensors span (only
// reported: resident mode has no budget) and points its views at the
// mapping.
func residentLayout(g *group, st *store.Store) error {
	for _, t := range g.tensors {
		g.size += pageSpan(t.Off, int64(t.Info.Size))
	}
	return mapViews(g, st)
}

// pageSpan is the bytes of whole pages that [off, off+n) touches.
func pageSpan(off, n int64) int64 {
	ps := int64(os.Getpagesize())
	lo := off &^ (ps - 1)
	hi := (off + n + ps - 1) &^ (ps - 1)
	return hi - lo
}

// acquireResident returns slices of the mapping, after checking that the
// file has not shrunk (a truncation racing with the compute itself faults
// in a kernel; model.Forward recovers that into an error through
// FaultError). Called with w.mu held.
func (w *fileWeights) acquireResident(ctx context.Context, g int) ([][]byte, error) {
	gr := &w.groups[g]
	if err := w.checkFile(); err != nil {
		return nil, err
	}
	if w.tot.Passes == 0 {
		w.prime(ctx, gr)
		if g+1 < len(w.groups) {
			// Cold start: ask the kernel to read the next group ahead.
			// Later passes find the pages mapped already.
			for _, t := range append(w.groups[g+1].tensors, w.groups[g+1].experts...) {
				_ = w.st.Map().Advise(t.Off, int64(t.Info.Size), mmap.WillNeed)
			}
		}
	}
	w.held[g]++
	w.touched(gr.bytes, true, false, 0)
	return gr.views, nil
}

// prime maps a group's pages on the first pass of resident mode and brings
// the chunks the page cache holds in small folios back as huge ones (see
// native/mmap/huge.go): the mapping then stays PMD-mapped for the rest of
// the run, which here made resident generation 2.5x faster than over the
// same file in 4 KiB folios. Advisory: a kernel without MADV_POPULATE_READ
// or PAGEMAP_SCAN only loses the gain, never the run.
func (w *fileWeights) prime(ctx context.Context, gr *group) {
	if w.huge == nil {
		return
	}
	m := w.st.Map()
	// A layer's experts too: resident mode maps the whole model.
	for _, t := range append(gr.tensors[:len(gr.tensors):len(gr.tensors)], gr.experts...) {
		n := int64(t.Info.Size)
		if m.Advise(t.Off, n, mmap.Populate) != nil || w.huge.check(ctx, m, t.Off, n, nil) != nil {
			return
		}
	}
}
