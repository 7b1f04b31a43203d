package mmap

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows: a read-only view of a file mapping (CreateFileMapping,
// MapViewOfFile) in place of mmap, and the nearest memory-manager calls
// for the hints:
//   - WillNeed: PrefetchVirtualMemory (Windows 8+), which reads the range
//     into memory with large concurrent I/O without blocking on each page;
//   - Populate: PrefetchVirtualMemory, then a fault-protected read of one
//     byte per page (Touch), so every page is in the working set when it
//     returns, as after MADV_POPULATE_READ;
//   - DontNeed: VirtualUnlock on the (never locked) range, which the
//     VirtualUnlock documentation says removes the pages from the
//     process's working set; the standby list (page cache) keeps them.
//     DiscardVirtualMemory and OfferVirtualMemory apply to private memory
//     only, not to views of a file.
//   - Normal, Sequential and Random have no per-range equivalent for a
//     view (FILE_FLAG_SEQUENTIAL_SCAN and FILE_FLAG_RANDOM_ACCESS apply to
//     a handle's cached reads, fixed at open): they fail with
//     errors.ErrUnsupported, and nothing in memvanta gives them.
// Windows refuses to truncate a file while a view of it exists
// (ERROR_USER_MAPPED_FILE), so the truncation faults of the other systems
// arise here only from I/O errors (EXCEPTION_IN_PAGE_ERROR, which Go's
// SetPanicOnFault turns into a panic as it does SIGBUS).

var (
	modkernel32               = windows.NewLazySystemDLL("kernel32.dll")
	procPrefetchVirtualMemory = modkernel32.NewProc("PrefetchVirtualMemory")
)

// mapAligned maps a view of the whole file. Windows has no huge pages for
// file views, so there is nothing to align for (mmap_linux.go).
func mapAligned(f *os.File, size int) (data, region []byte, err error) {
	h, err := windows.CreateFileMapping(windows.Handle(f.Fd()), nil, windows.PAGE_READONLY, 0, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("CreateFileMapping: %w", err)
	}
	// A view holds its own reference to the mapping object (MapViewOfFile
	// documentation), so the handle is not needed past this function.
	defer windows.CloseHandle(h)
	addr, err := windows.MapViewOfFile(h, windows.FILE_MAP_READ, 0, 0, uintptr(size))
	if err != nil {
		return nil, nil, fmt.Errorf("MapViewOfFile: %w", err)
	}
	d := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), addr)), size)
	return d, d, nil
}

func unmap(region []byte) error {
	return windows.UnmapViewOfFile(uintptr(unsafe.Pointer(unsafe.SliceData(region))))
}

// memoryRangeEntry is WIN32_MEMORY_RANGE_ENTRY.
type memoryRangeEntry struct {
	addr uintptr
	size uintptr
}

func prefetchVirtualMemory(b []byte) error {
	if err := procPrefetchVirtualMemory.Find(); err != nil {
		return err
	}
	e := memoryRangeEntry{uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b))}
	r, _, err := procPrefetchVirtualMemory.Call(uintptr(windows.CurrentProcess()), 1, uintptr(unsafe.Pointer(&e)), 0)
	if r == 0 {
		return fmt.Errorf("PrefetchVirtualMemory: %w", err)
	}
	return nil
}

// advise applies a to the page-aligned file range [lo, hi) of the mapping.
func (m *Map) advise(lo, hi int64, a Advice) error {
	b := m.data[lo:hi]
	switch a {
	case WillNeed:
		return prefetchVirtualMemory(b)
	case Populate:
		if err := prefetchVirtualMemory(b); err != nil {
			return err
		}
		_, err := Touch(b)
		return err
	case DontNeed:
		err := windows.VirtualUnlock(uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		if err == nil || errors.Is(err, windows.ERROR_NOT_LOCKED) {
			return nil
		}
		return fmt.Errorf("VirtualUnlock: %w", err)
	}
	return fmt.Errorf("advice %v has no Windows equivalent for a mapped view: %w", a, errors.ErrUnsupported)
}
