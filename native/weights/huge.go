package weights

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/memvanta/memvanta/native/mmap"
)

// maxRecacheFailures stops the page-cache repair when re-reading chunks
// does not give huge folios (THP off, a filesystem without large folios,
// fragmented memory): each failed attempt re-read up to maxRecacheRun
// bytes for nothing.
const maxRecacheFailures = 8

// maxRecacheRun bounds one re-read, so a failed attempt wastes little.
const maxRecacheRun = 8 * mmap.ChunkSize

// hugeState tracks which 2 MiB chunks of the file have been re-read to get
// them into huge page-cache folios. One goroutine calls check at a time:
// the prefetcher's loader in budget map mode, Acquire under weights.mu in
// resident mode's first pass. The counters are atomic so stats can read
// them from any goroutine.
type hugeState struct {
	repair    bool
	tried     []bool // per chunk: a re-read was attempted
	failures  int
	disabled  bool // kernel cannot report huge mappings, or repair keeps failing
	hugeBytes atomic.Int64
	small     atomic.Int64
	recached  atomic.Int64
}

func newHugeState(fileSize int64, repair bool) *hugeState {
	return &hugeState{repair: repair, tried: make([]bool, (fileSize+mmap.ChunkSize-1)/mmap.ChunkSize)}
}

func (h *hugeState) counters() (huge, small, recached int64) {
	return h.hugeBytes.Load(), h.small.Load(), h.recached.Load()
}

// check runs after [off, off+n) has been populated: it counts how much of
// it is mapped huge and re-reads whole chunks that are not (once each).
// Only chunks lying wholly inside the file can be huge. parts, if not nil,
// are the ranges inside [off, off+n) that the counters count (the tensors
// of a merged range, without the padding between them).
func (h *hugeState) check(ctx context.Context, m *mmap.Map, off, n int64, parts []mmap.Range) error {
	if h == nil || h.disabled || n == 0 {
		return nil
	}
	if parts == nil {
		parts = []mmap.Range{{Off: off, End: off + n}}
	}
	rs, err := m.HugeRanges(off, n)
	if errors.Is(err, mmap.ErrNoScan) {
		h.disabled = true
		return nil
	}
	if err != nil {
		return err
	}
	if !h.repair || covered(rs) == n {
		h.count(rs, parts)
		return nil
	}
	// Chunks not covered by a huge range, in runs, so each run is re-read
	// with one readahead.
	lo, hi := chunkSpan(off, n)
	full := m.Size() / mmap.ChunkSize // chunks [0, full) lie wholly inside the file
	i := 0
	var runs []mmap.Range
	for c := lo; c < min(hi, full); c++ {
		cs, ce := c*mmap.ChunkSize, (c+1)*mmap.ChunkSize
		for i < len(rs) && rs[i].End <= cs {
			i++
		}
		if (i < len(rs) && rs[i].Off <= max(cs, off) && rs[i].End >= min(ce, off+n)) || h.tried[c] {
			continue
		}
		h.tried[c] = true
		if k := len(runs); k > 0 && runs[k-1].End == cs && runs[k-1].End-runs[k-1].Off < maxRecacheRun {
			runs[k-1].End = ce
		} else {
			runs = append(runs, mmap.Range{Off: cs, End: ce})
		}
	}
	for _, r := range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := m.Recache(r.Off, r.End-r.Off); err != nil {
			return err
		}
		h.recached.Add(r.End - r.Off)
		got, err := m.HugeRanges(r.Off, r.End-r.Off)
		if err != nil {
			return err
		}
		if len(got) > 0 {
			h.failures = 0
			continue
		}
		if h.failures++; h.failures >= maxRecacheFailures {
			h.repair = false
			break
		}
	}
	if len(runs) == 0 {
		h.count(rs, parts)
		return nil
	}
	// Recount: the re-read chunks may map differently now.
	rs, err = m.HugeRanges(off, n)
	if err != nil {
		return err
	}
	h.count(rs, parts)
	return nil
}

// covered is the bytes of the (disjoint) ranges rs.
func covered(rs []mmap.Range) int64 {
	var n int64
	for _, r := range rs {
		n += r.End - r.Off
	}
	return n
}

// count adds the bytes of parts mapped huge (inside rs) and those not.
// rs is sorted and disjoint, parts sorted by offset.
func (h *hugeState) count(rs, parts []mmap.Range) {
	var huge, total int64
	i := 0
	for _, p := range parts {
		total += p.End - p.Off
		for i < len(rs) && rs[i].End <= p.Off {
			i++
		}
		for j := i; j < len(rs) && rs[j].Off < p.End; j++ {
			huge += min(rs[j].End, p.End) - max(rs[j].Off, p.Off)
		}
	}
	h.hugeBytes.Add(huge)
	h.small.Add(total - huge)
}

// chunkSpan is the 2 MiB chunk indexes [lo, hi) that [off, off+n) touches.
func chunkSpan(off, n int64) (lo, hi int64) {
	return off / mmap.ChunkSize, (off + n + mmap.ChunkSize - 1) / mmap.ChunkSize
}
