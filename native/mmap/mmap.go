// Package mmap maps a model file read-only so weights can be used in place
// (no copy, shared with the page cache) and gives the rest of the native
// runtime two things the raw mapping lacks: advisory hints on byte ranges,
// and copies out of the mapping that turn a SIGBUS (file truncated or
// shrunk under the mapping) into an error instead of killing the process.
package mmap

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"unsafe"

	"github.com/memvanta/memvanta/native/regfile"
)

// ErrFault reports that reading the mapping faulted: the file no longer
// backs the touched page (truncated, or an I/O error on the device).
var ErrFault = errors.New("mmap: memory fault reading mapped file (file truncated or I/O error)")

// Advice is a madvise hint.
type Advice int

const (
	Normal     Advice = iota // undo earlier hints
	Sequential               // aggressive readahead, early reclaim behind
	Random                   // no readahead: row lookups into a large table
	WillNeed                 // start readahead now, asynchronously
	DontNeed                 // drop this process's page table entries: RSS falls, the page cache keeps the data
	Populate                 // map every page now (MADV_POPULATE_READ); blocks until done
)

func (a Advice) String() string {
	switch a {
	case Normal:
		return "normal"
	case Sequential:
		return "sequential"
	case Random:
		return "random"
	case WillNeed:
		return "willneed"
	case DontNeed:
		return "dontneed"
	case Populate:
		return "populate"
	}
	return fmt.Sprintf("advice(%d)", int(a))
}

// Map is a read-only mapping of a whole file. The file descriptor stays open
// so the owner can also pread from it and re-check the file's size.
type Map struct {
	path   string
	f      *os.File
	data   []byte // nil for an empty file
	region []byte // the address-space reservation data lies in (Close unmaps it)
	size   int64
	pm     pagemap // for HugeRanges
}

// Open maps path read-only. MAP_SHARED: pages are the page cache's own, so
// several processes (or runs) share one copy and nothing is duplicated.
func Open(path string) (*Map, error) {
	// A FIFO or device is refused before open(2), which would block on a
	// FIFO where Ctrl-C cannot interrupt it.
	f, size, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mmap: %w", err)
	}
	m := &Map{path: path, f: f, size: size}
	if size == 0 {
		return m, nil
	}
	if int64(int(size)) != size {
		f.Close()
		return nil, fmt.Errorf("mmap: %s: size %d does not fit the address space", path, size)
	}
	data, region, err := mapAligned(f, int(size))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mmap: %s: %w", path, err)
	}
	m.data, m.region = data, region
	return m, nil
}

// hugeAlign is the PMD size on amd64 and arm64 with 4 KiB pages.
const hugeAlign = 2 << 20

// Path is the mapped file's path.
func (m *Map) Path() string { return m.path }

// Size is the file size at Open time (the mapping's length).
func (m *Map) Size() int64 { return m.size }

// File is the open descriptor, for pread-based copies that bypass the
// mapping (and so never fault).
func (m *Map) File() *os.File { return m.f }

// Bytes is the whole mapping. Reading it directly is zero-copy but is not
// fault-protected by itself: a page past a truncated end raises SIGBUS,
// which kills the process unless the reading goroutine runs with
// debug.SetPanicOnFault (as model.Forward and the kernel pool's workers
// do; Offset then names the byte). Use Copy or ReadAt otherwise.
func (m *Map) Bytes() []byte { return m.data }

// Offset returns the file offset that address addr of the mapping holds,
// and whether addr lies in the mapping at all (its last page included): a
// memory fault's address tells this way which file and byte it was.
func (m *Map) Offset(addr uintptr) (int64, bool) {
	if len(m.data) == 0 {
		return 0, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
	ps := uintptr(os.Getpagesize())
	end := (base + uintptr(len(m.data)) + ps - 1) &^ (ps - 1)
	if addr < base || addr >= end {
		return 0, false
	}
	return int64(addr - base), true
}

// Slice returns the mapping's bytes [off, off+n), bounds-checked.
func (m *Map) Slice(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off > m.size || n > m.size-off {
		return nil, fmt.Errorf("mmap: %s: range [%d,+%d) outside file of %d bytes", m.path, off, n, m.size)
	}
	return m.data[off : off+n : off+n], nil
}

// ReadAt copies from the mapping (io.ReaderAt), fault-protected.
func (m *Map) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("mmap: %s: negative offset %d", m.path, off)
	}
	if off >= m.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := int64(len(p))
	short := false
	if n > m.size-off {
		n = m.size - off
		short = true
	}
	if err := Copy(p[:n], m.data[off:off+n]); err != nil {
		return 0, fmt.Errorf("mmap: %s: read [%d,+%d): %w", m.path, off, n, err)
	}
	if short {
		return int(n), io.EOF
	}
	return int(n), nil
}

// Copy copies src into dst (len(dst) bytes; src must be at least as long)
// and turns a memory fault while reading src into ErrFault. It must run on
// the goroutine doing the copy: SetPanicOnFault is per goroutine.
func Copy(dst, src []byte) (err error) {
	if len(src) < len(dst) {
		return fmt.Errorf("mmap: copy of %d bytes from %d-byte source", len(dst), len(src))
	}
	return guard(func() { copy(dst, src) })
}

// Touch reads one byte per page of b so the pages are resident and mapped,
// fault-protected. It returns a checksum so the reads cannot be elided.
func Touch(b []byte) (sum byte, err error) {
	err = guard(func() {
		ps := os.Getpagesize()
		for i := 0; i < len(b); i += ps {
			sum ^= b[i]
		}
		if len(b) > 0 {
			sum ^= b[len(b)-1]
		}
	})
	return sum, err
}

// guard runs f with faults turned into panics, and the panic into ErrFault.
// Only memory faults are recovered; any other panic is re-raised.
func guard(f func()) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if re, ok := r.(runtime.Error); ok {
				if _, isFault := r.(interface{ Addr() uintptr }); isFault {
					err = fmt.Errorf("%w: %v", ErrFault, re)
					return
				}
			}
			panic(r)
		}
	}()
	f()
	return nil
}

// Advise applies a hint to the file range [off, off+n). The range is widened
// to whole pages (madvise works on pages); a range outside the mapping is an
// error. Populate blocks until every page in the range is mapped.
func (m *Map) Advise(off, n int64, a Advice) error {
	if n == 0 || m.data == nil {
		return nil
	}
	if off < 0 || n < 0 || off > m.size || n > m.size-off {
		return fmt.Errorf("mmap: %s: advise %v range [%d,+%d) outside file of %d bytes", m.path, a, off, n, m.size)
	}
	ps := int64(os.Getpagesize())
	lo := off &^ (ps - 1)
	hi := off + n
	if r := hi % ps; r != 0 {
		hi += ps - r
	}
	if hi > int64(len(m.data)) {
		// The last page of the mapping may extend past the file's end; the
		// slice cannot, but madvise accepts the partial page via its start.
		hi = int64(len(m.data))
	}
	if a < Normal || a > Populate {
		return fmt.Errorf("mmap: unknown advice %d", int(a))
	}
	if err := m.advise(lo, hi, a); err != nil {
		return fmt.Errorf("mmap: %s: madvise %v [%d,%d): %w", m.path, a, lo, hi, err)
	}
	return nil
}

// Close unmaps and closes the file. Slices from Bytes/Slice become invalid.
func (m *Map) Close() error {
	var err error
	if m.region != nil {
		err = unmap(m.region)
		m.data, m.region = nil, nil
	}
	m.pm.close()
	if m.f != nil {
		if cerr := m.f.Close(); err == nil {
			err = cerr
		}
		m.f = nil
	}
	if err != nil {
		return fmt.Errorf("mmap: %s: close: %w", m.path, err)
	}
	return nil
}

// CurrentSize re-reads the file's size, so a holder of zero-copy slices can
// check that the file has not shrunk before handing them out.
func (m *Map) CurrentSize() (int64, error) {
	if m.f == nil {
		return 0, fmt.Errorf("mmap: %s: closed", m.path)
	}
	st, err := m.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("mmap: %s: %w", m.path, err)
	}
	return st.Size(), nil
}
