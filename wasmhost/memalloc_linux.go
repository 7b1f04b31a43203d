package wasmhost

import (
	"runtime"
	"syscall"
	"unsafe"
)

// mapNoReserve: do not reserve swap for the whole cap up front.
const mapNoReserve = syscall.MAP_NORESERVE

// Huge pages. A sandboxed inspect is short and touches a few MiB of fresh
// memory in many places: the guest's Go runtime scatters its start-up over
// its linear memory, and wazero's decoder and validator allocate ~10 MiB on
// the host heap. On machines where a page fault is dear (virtual machines:
// ~20 µs per 4 KiB fault measured on the development VM) those faults cost
// more than the work itself. With transparent huge pages in the usual
// "madvise" mode, advising a region makes each of its faults map 2 MiB at
// once. The price is resident memory rounded up to 2 MiB regions; no cap
// changes. Where THP is off, madvise does nothing.

// adviseHugePages asks for huge pages for the guest memory b.
func adviseHugePages(b []byte) {
	syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}

// HugePageHeap advises huge pages for the next n bytes of heap the process
// will use: for a short-lived process whose main work is one sandbox start
// (`memvanta inspect`), not for a library caller that lives on. It
// allocates an n-byte object, which a fresh heap takes from memory it has
// never touched, lets the collector free it, and advises its span; the
// page allocator then reuses that span for the allocations that follow.
// The advice concerns only memory the Go heap owns (the freed span stays
// mapped), so nothing can break if the runtime places things differently:
// the advice is then merely useless.
func HugePageHeap(n int) { hugePageHeap(n) }

// hugePageHeap returns the range it advised (lo == hi: none).
func hugePageHeap(n int) (lo, hi uintptr) {
	const huge = 2 << 20
	if n < 2*huge {
		return 0, 0
	}
	b := make([]byte, n)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	b = nil
	runtime.GC()
	lo = (start + huge - 1) &^ (huge - 1)
	hi = (start + uintptr(n)) &^ (huge - 1)
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_HUGEPAGE); e != 0 {
		return 0, 0
	}
	return lo, hi
}
