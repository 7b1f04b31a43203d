//go:build darwin || windows

package cache

// arena maps each buffer on its own: neither macOS nor Windows (without a
// privilege ordinary users lack) gives anonymous memory huge pages, so
// packing buffers into slabs (slab_linux.go) would gain nothing there.
type arena struct{}

func newArena() *arena { return &arena{} }

func (*arena) alloc(n int) ([]byte, error) { return allocBuffer(n) }

func (*arena) release(b []byte) error { return freeBuffer(b) }
