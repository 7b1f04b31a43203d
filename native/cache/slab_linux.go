package cache

import (
	"fmt"
	"math/bits"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the transparent-huge-page size on x86-64 and on arm64 with
// 4 KiB base pages: a huge page backs only a hugePage-aligned extent that
// lies wholly inside one mapping.
const hugePage = 2 << 20

// slabTarget is the mapping size slots are grouped in: large enough that a
// slab holds tens of mixture-of-experts experts (a few MB each), so the
// extents between them are whole huge pages, and small enough that an
// emptied slab is given back soon after the cache stops using its size.
const slabTarget = 64 << 20

// hugeMin is the smallest slot size whose slabs ask for huge pages. A
// class of smaller buffers (norms, biases, small groups in copy mode) may
// hold a few of them, and the huge page at its frontier (see arena) would
// then be resident memory several times their size, for few faults saved.
const hugeMin = hugePage / 2

// arena hands out the cache's buffers as slots of 2 MiB-aligned slabs.
//
// Why slabs: a buffer that is its own mapping gets huge pages only on the
// 2 MiB extents inside it, so a 2.86 MB expert got at most one and was
// faulted in 4 KiB at a time for the rest; on a paravirtualised guest every
// such fault is dear. Packed back to back in one aligned mapping, buffers
// share the extents at their seams and nearly all their bytes can be huge.
//
// Why one size per slab (size classes, not a first-fit over free ranges):
// address space costs nothing, only touched pages are resident, so there is
// no budget to gain from fitting other sizes into a hole, while exact slots
// never fragment and let the mapping end where the last slot ends: the
// partial extent past it is cut off by a PROT_NONE guard (which also keeps
// the kernel from merging the slab with a neighbouring mapping), so it
// never gets a huge page outside any buffer. The budget is the cache's and
// unchanged: it charges each buffer's bytes; a slab's free slots are
// released (MADV_DONTNEED) and not counted, and an empty slab is unmapped.
//
// What huge pages cost: a live slot next to a free one may fault in the
// huge page of the extent they share (that is how the next slot's head
// comes to be huge), so resident memory can exceed the buffers held by up
// to 2 MiB at each such seam; slots are taken lowest first so there is
// about one per slab in use (slots under hugeMin ask for no huge pages, so
// their seams cost nothing). Releasing a slot that shares a huge page with
// a live neighbour splits it; the kernel frees the released part when it
// splits the page (deferred, under memory pressure), and khugepaged may
// later collapse such an extent again, holes included.
//
// A buffer larger than half a slab gets a slab of its own (one slot). The
// arena is not safe for concurrent use: the cache calls it under its lock.
type arena struct {
	classes map[int]*sizeClass  // by slot size
	slots   map[uintptr]slotRef // by a handed-out buffer's address
}

type sizeClass struct {
	size  int
	slabs []*slab // in mapping order; the first with a free slot is used
}

type slab struct {
	mem  []byte   // the slots, len(mem) = n*size, starts 2 MiB aligned
	span []byte   // mem plus its guard: what munmap gives back
	used []uint64 // bit i set: slot i handed out
	n    int
	live int
}

type slotRef struct {
	s   *slab
	idx int
}

func newArena() *arena {
	return &arena{classes: map[int]*sizeClass{}, slots: map[uintptr]slotRef{}}
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// alloc returns a zeroed (never touched or released) buffer of n bytes,
// n whole pages.
func (a *arena) alloc(n int) ([]byte, error) {
	if n <= 0 {
		return nil, fmt.Errorf("cache: buffer size %d", n)
	}
	c := a.classes[n]
	if c == nil {
		c = &sizeClass{size: n}
		a.classes[n] = c
	}
	var s *slab
	for _, t := range c.slabs {
		if t.live < t.n {
			s = t
			break
		}
	}
	if s == nil {
		var err error
		if s, err = mapSlab(n, max(1, slabTarget/n)); err != nil {
			if len(c.slabs) == 0 {
				delete(a.classes, n)
			}
			return nil, err
		}
		c.slabs = append(c.slabs, s)
	}
	i := s.take()
	b := s.mem[i*n : (i+1)*n : (i+1)*n]
	a.slots[addr(b)] = slotRef{s, i}
	return b, nil
}

// release gives back a buffer from alloc: its pages are dropped, and its
// slab unmapped once no slot of it is in use.
func (a *arena) release(b []byte) error {
	ref, ok := a.slots[addr(b)]
	if !ok {
		return fmt.Errorf("cache: release of a buffer the arena did not hand out")
	}
	delete(a.slots, addr(b))
	s, size := ref.s, len(b)
	s.used[ref.idx/64] &^= 1 << (ref.idx % 64)
	s.live--
	if s.live > 0 {
		return unix.Madvise(s.mem[ref.idx*size:(ref.idx+1)*size], unix.MADV_DONTNEED)
	}
	c := a.classes[size]
	for i, t := range c.slabs {
		if t == s {
			c.slabs = append(c.slabs[:i], c.slabs[i+1:]...)
			break
		}
	}
	if len(c.slabs) == 0 {
		delete(a.classes, size)
	}
	return unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(s.span)), uintptr(len(s.span)))
}

// take marks the lowest free slot used and returns it: low slots first
// keep the live ones contiguous, with few live/free seams.
func (s *slab) take() int {
	for w, u := range s.used {
		if u != ^uint64(0) {
			b := bits.TrailingZeros64(^u)
			if i := w*64 + b; i < s.n {
				s.used[w] |= 1 << b
				s.live++
				return i
			}
		}
	}
	panic("cache: take on a full slab") // alloc checks live < n
}

// mapSlab maps n slots of size bytes starting on a 2 MiB boundary: it maps
// 2 MiB more than the 2 MiB-rounded length, unmaps the misaligned head and
// the excess tail, and keeps what lies past the last slot, up to the next
// 2 MiB boundary, as a PROT_NONE guard. (x/sys's Munmap takes only whole
// mappings it made itself, hence the pointer calls.)
func mapSlab(size, n int) (*slab, error) {
	length := size * n
	span := (length + hugePage - 1) &^ (hugePage - 1)
	raw, err := unix.MmapPtr(-1, 0, nil, uintptr(span+hugePage), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("map %d-byte slab: %w", span+hugePage, err)
	}
	head := (hugePage - uintptr(raw)%hugePage) % hugePage
	start := unsafe.Add(raw, head)
	// Trimming only shrinks the mapping, so it fails only on a bad
	// address: a bug here. The slab is then unmapped whole.
	if head > 0 {
		err = unix.MunmapPtr(raw, head)
	}
	if tail := hugePage - head; tail > 0 && err == nil {
		err = unix.MunmapPtr(unsafe.Add(start, span), tail)
	}
	s := &slab{span: unsafe.Slice((*byte)(start), span), n: n, used: make([]uint64, (n+63)/64)}
	s.mem = s.span[:length:length]
	if guard := s.span[length:]; len(guard) > 0 && err == nil {
		err = unix.Mprotect(guard, unix.PROT_NONE)
	}
	if err != nil {
		_ = unix.MunmapPtr(raw, uintptr(span+hugePage))
		return nil, fmt.Errorf("trim a %d-byte slab: %w", span, err)
	}
	// The point of the slab; advisory (THP may be off or absent).
	advice := unix.MADV_HUGEPAGE
	if size < hugeMin {
		advice = unix.MADV_NOHUGEPAGE
	}
	_ = unix.Madvise(s.mem, advice)
	return s, nil
}
