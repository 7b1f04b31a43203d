//go:build linux

package mmap

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Why this file exists. Budget map mode maps each weight group, uses it and
// unmaps it again, every token. Where the page cache holds the file in
// small folios, every 4 KiB page is a fresh page-table entry on each pass,
// and under a shadow-paging hypervisor (this project's CI and benchmark
// machines run as PVM guests) the first touch of each fresh entry costs
// microseconds of hypervisor time, charged to the kernels reading the
// weights: about 2 s per pass over a 3.5 GiB model, more than copying it.
// A page cache holding the file in 2 MiB folios is mapped one PMD per
// 2 MiB and costs about a hundredth of that. Which folios the page cache
// holds depends on how the file got there (written, read(2) with small
// readahead, or faulted through a huge-page mapping), so the runtime
// checks what it got (HugeRanges) and re-reads the rest (Recache).

// pagemap is /proc/self/pagemap, opened on first use.
type pagemap struct {
	once sync.Once
	f    *os.File
	err  error
}

func (p *pagemap) close() {
	if p.f != nil {
		_ = p.f.Close() // read-only proc file; nothing to flush
		p.f = nil
	}
}

// PAGEMAP_SCAN ABI (include/uapi/linux/fs.h).
const (
	pageIsHuge  = 1 << 6
	pagemapScan = 0xc0606610 // _IOWR('f', 16, struct pm_scan_arg)
)

type pageRegion struct{ start, end, categories uint64 }

type pmScanArg struct {
	size, flags, start, end, walkEnd, vec, vecLen, maxPages       uint64
	categoryInverted, categoryMask, categoryAnyofMask, returnMask uint64
}

// HugeRanges returns the parts of the file range [off, off+n) that this
// mapping currently maps with huge (PMD) entries, in order. It reads page
// tables only; nothing is faulted in.
func (m *Map) HugeRanges(off, n int64) ([]Range, error) {
	if n == 0 || m.data == nil {
		return nil, nil
	}
	if off < 0 || n < 0 || off > m.size || n > m.size-off {
		return nil, fmt.Errorf("mmap: %s: huge-range query [%d,+%d) outside file of %d bytes", m.path, off, n, m.size)
	}
	m.pm.once.Do(func() {
		m.pm.f, m.pm.err = os.Open("/proc/self/pagemap")
		if m.pm.err != nil {
			m.pm.err = fmt.Errorf("%w: %v", ErrNoScan, m.pm.err)
		}
	})
	if m.pm.err != nil {
		return nil, m.pm.err
	}
	ps := int64(os.Getpagesize())
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
	lo := uint64(base) + uint64(off&^(ps-1))
	hi := uint64(base) + uint64((off+n+ps-1)&^(ps-1))
	var vec [64]pageRegion
	var out []Range
	for lo < hi {
		arg := pmScanArg{
			size: uint64(unsafe.Sizeof(pmScanArg{})), start: lo, end: hi,
			vec: uint64(uintptr(unsafe.Pointer(&vec[0]))), vecLen: uint64(len(vec)),
			categoryMask: pageIsHuge, returnMask: pageIsHuge,
		}
		r, _, errno := unix.Syscall(unix.SYS_IOCTL, m.pm.f.Fd(), pagemapScan, uintptr(unsafe.Pointer(&arg)))
		if errno != 0 {
			// ENOSYS: no kernel returns it for an ioctl, but user-mode
			// emulators and sandboxes that do not know the request do
			// (qemu-user running the arm64 build): no scan, not a failure.
			if errno == unix.ENOTTY || errno == unix.EINVAL || errno == unix.EOPNOTSUPP || errno == unix.ENOSYS {
				return nil, fmt.Errorf("%w: %v", ErrNoScan, errno)
			}
			return nil, fmt.Errorf("mmap: %s: PAGEMAP_SCAN: %w", m.path, errno)
		}
		for _, pr := range vec[:r] {
			s := max(int64(pr.start-uint64(base)), off)
			e := min(int64(pr.end-uint64(base)), off+n)
			if e <= s {
				continue
			}
			if k := len(out); k > 0 && out[k-1].End == s {
				out[k-1].End = e
			} else {
				out = append(out, Range{s, e})
			}
		}
		if arg.walkEnd <= lo {
			return nil, fmt.Errorf("mmap: %s: PAGEMAP_SCAN made no progress at %#x", m.path, lo)
		}
		lo = arg.walkEnd
	}
	return out, nil
}

// Recache drops the file range [off, off+n) from this mapping and, where
// no other mapping holds the pages, from the page cache, then maps it again
// (MADV_POPULATE_READ): the pages come back through this huge-page-advised
// mapping's readahead, in 2 MiB folios where the kernel and filesystem
// allow, and are mapped by PMD. The file is not modified (dirty pages of the
// range are written back first, as the kernel would); the data is re-read
// from storage, so callers do this once per range, not per pass.
func (m *Map) Recache(off, n int64) error {
	if err := m.Advise(off, n, DontNeed); err != nil {
		return err
	}
	// Dirty or under-writeback pages cannot be dropped (a file written
	// just before, not yet flushed): write this range back first.
	fd := int(m.f.Fd())
	if err := unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER); err != nil {
		return fmt.Errorf("mmap: %s: sync_file_range [%d,+%d): %w", m.path, off, n, err)
	}
	if err := unix.Fadvise(fd, off, n, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("mmap: %s: fadvise dontneed [%d,+%d): %w", m.path, off, n, err)
	}
	return m.Advise(off, n, Populate)
}
