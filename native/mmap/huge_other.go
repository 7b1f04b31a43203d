//go:build !linux

package mmap

import (
	"errors"
	"fmt"
	"runtime"
)

// Only Linux reports which parts of a mapping are huge-page mapped
// (PAGEMAP_SCAN) and has huge page-cache folios to repair into (huge.go).
// Elsewhere HugeRanges reports ErrNoScan, which turns the repair off
// (native/weights/huge.go), and Recache refuses.

type pagemap struct{}

func (*pagemap) close() {}

// HugeRanges reports ErrNoScan: this OS cannot say which pages of a
// mapping are huge-page mapped.
func (m *Map) HugeRanges(off, n int64) ([]Range, error) {
	if n == 0 || m.data == nil {
		return nil, nil
	}
	if off < 0 || n < 0 || off > m.size || n > m.size-off {
		return nil, fmt.Errorf("mmap: %s: huge-range query [%d,+%d) outside file of %d bytes", m.path, off, n, m.size)
	}
	return nil, fmt.Errorf("%w: not on %s", ErrNoScan, runtime.GOOS)
}

// Recache refuses: there are no huge page-cache folios to re-read into.
func (m *Map) Recache(off, n int64) error {
	return fmt.Errorf("mmap: %s: re-reading [%d,+%d) into huge page-cache folios: not on %s: %w", m.path, off, n, runtime.GOOS, errors.ErrUnsupported)
}
