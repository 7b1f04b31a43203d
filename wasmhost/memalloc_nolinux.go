//go:build unix && !linux

package wasmhost

const mapNoReserve = 0

func adviseHugePages([]byte) {}

// HugePageHeap does nothing outside Linux (see memalloc_linux.go).
func HugePageHeap(int) {}
