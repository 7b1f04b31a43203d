//go:build !unix

package wasmhost

import "github.com/tetratelabs/wazero/experimental"

// memoryAllocator is wazero's default []byte growth where mmap is not
// available.
func memoryAllocator() experimental.MemoryAllocator { return nil }
