package mmap

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// macOS: mmap(2) and madvise(2) as on Linux, without what Linux alone has.
// There is no MADV_POPULATE_READ, so Populate is MADV_WILLNEED followed by
// a fault-protected read of one byte per page (Touch): it blocks until every
// page is mapped, and a range past a truncated end fails with ErrFault as
// MADV_POPULATE_READ fails with EFAULT. MADV_DONTNEED on a shared file
// mapping only deactivates the pages on macOS (they stay mapped and count
// in RSS), so DontNeed maps the range afresh over itself (MAP_FIXED, which
// mmap(2) documents as replacing the previous mappings of those pages):
// the new mapping has no pages until touched, and the page cache keeps the
// data, which is what MADV_DONTNEED does on Linux.

// mapAligned maps the whole file read-only and shared. macOS's page cache
// has no huge folios that a 2 MiB-aligned mapping could map with large
// entries (mmap_linux.go), so there is nothing to align for.
func mapAligned(f *os.File, size int) (data, region []byte, err error) {
	d, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	return d, d, err
}

func unmap(region []byte) error { return unix.Munmap(region) }

// advise applies a to the page-aligned file range [lo, hi) of the mapping.
func (m *Map) advise(lo, hi int64, a Advice) error {
	b := m.data[lo:hi]
	switch a {
	case Normal:
		return unix.Madvise(b, unix.MADV_NORMAL)
	case Sequential:
		return unix.Madvise(b, unix.MADV_SEQUENTIAL)
	case Random:
		return unix.Madvise(b, unix.MADV_RANDOM)
	case WillNeed:
		return unix.Madvise(b, unix.MADV_WILLNEED)
	case DontNeed:
		_, err := unix.MmapPtr(int(m.f.Fd()), lo, unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)),
			unix.PROT_READ, unix.MAP_SHARED|unix.MAP_FIXED)
		return err
	case Populate:
		if err := unix.Madvise(b, unix.MADV_WILLNEED); err != nil {
			return err
		}
		_, err := Touch(b)
		return err
	}
	return nil
}
