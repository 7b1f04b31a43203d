//go:build !unix

package wasmhost

import "github.com/tetratelabs/wazero/experimental"

// memoryAllocator is wazero's default []byte growth where mmap is not
// available.
func memoryAllocator() experimental.MemoryAllocator { return nil }

// HugePageHeap does nothing outside Linux (see memalloc_linux.go).
func HugePageHeap(int) {}
