//go:build !linux

package kernels

// osYield is a no-op where the pool has no OS-level yield (wasm runs the
// pool on one thread; other systems yield through runtime.Gosched only).
func osYield() {}
