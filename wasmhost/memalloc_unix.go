//go:build unix

package wasmhost

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// mmapAllocator backs each guest's linear memory with its own anonymous
// mapping reserved at the cap: growing is a slice extension (no copy of the
// whole memory, as wazero's default []byte growth does), untouched pages
// cost no RSS (touched ones come in huge pages where the OS offers them,
// see adviseHugePages), and Free returns everything to the OS at once instead of
// leaving a dead multi-MiB buffer to the host's garbage collector.
type mmapAllocator struct{}

func (mmapAllocator) Allocate(cap, max uint64) experimental.LinearMemory {
	if max == 0 || max > 1<<32 {
		return nil
	}
	b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
	if err != nil {
		return nil
	}
	adviseHugePages(b)
	return &mmapMemory{buf: b}
}

type mmapMemory struct{ buf []byte }

// Reallocate returns nil past the reservation, which wazero reports to the
// guest as a failed memory.grow (Go's runtime then dies "out of memory").
func (m *mmapMemory) Reallocate(size uint64) []byte {
	if m.buf == nil || size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size:len(m.buf)]
}

func (m *mmapMemory) Free() {
	if m.buf != nil {
		syscall.Munmap(m.buf)
		m.buf = nil
	}
}

func memoryAllocator() experimental.MemoryAllocator { return mmapAllocator{} }
