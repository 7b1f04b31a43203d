package mmap

import "errors"

// ChunkSize is the PMD size: the unit a huge page-cache folio is mapped in
// (huge.go). Budget map mode charges mapped pages in these units on every
// OS, so the minimum budget a model needs does not depend on the OS; where
// no huge folio exists (macOS, Windows) that only over-charges.
const ChunkSize = hugeAlign

// ErrNoScan reports a kernel without PAGEMAP_SCAN (before Linux 6.7), or
// another OS, so which parts of a mapping are PMD-mapped cannot be observed.
var ErrNoScan = errors.New("mmap: kernel cannot report huge mappings (PAGEMAP_SCAN, Linux 6.7+)")

// Range is a byte range of the file.
type Range struct{ Off, End int64 }
