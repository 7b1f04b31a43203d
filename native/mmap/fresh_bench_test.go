//go:build linux

package mmap

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

// BenchmarkFreshMapping measures what budget map mode pays per pass beyond
// reading the weights: reading a range whose mappings were just created
// (populate, read, drop — what budget mode does to every weight group on
// every token) against reading the same range kept mapped (resident mode).
// The file is re-read into 2 MiB page-cache folios first (Recache), as the
// runtime does, so both cases read PMD mappings. Metrics: ns/chunk is the
// reading time per 2 MiB chunk (populate and drop excluded); huge% is the
// share of the range the kernel mapped by PMD. The fresh−mapped difference
// per chunk is the page-table cost streaming cannot hide, because it is
// charged to the thread that reads, not to the loader that populated:
//
//	go test -run '^$' -bench FreshMapping -count 5 ./native/mmap
func BenchmarkFreshMapping(b *testing.B) {
	const size = 256 << 20
	p := filepath.Join(b.TempDir(), "w.bin")
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i*7 + i>>12)
	}
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	buf = nil
	m, err := Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if err := m.Recache(0, size); err != nil {
		b.Fatal(err)
	}
	hugeShare := func(b *testing.B) {
		rs, err := m.HugeRanges(0, size)
		if err != nil {
			return // no PAGEMAP_SCAN: leave the metric out
		}
		var n int64
		for _, r := range rs {
			n += r.End - r.Off
		}
		b.ReportMetric(100*float64(n)/size, "huge%")
	}
	var sink uint64
	read := func() {
		data := m.Bytes()[:size]
		w := unsafe.Slice((*uint64)(unsafe.Pointer(&data[0])), size/8)
		var s uint64
		for i := 0; i < len(w); i += 8 { // one load per cache line
			s += w[i]
		}
		sink += s
	}
	chunks := float64(size / ChunkSize)
	b.Run("mapped", func(b *testing.B) {
		if err := m.Advise(0, size, Populate); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		b.ResetTimer()
		for range b.N {
			read()
		}
		hugeShare(b) // after ResetTimer, which clears reported metrics
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/chunks, "ns/chunk")
	})
	b.Run("fresh", func(b *testing.B) {
		if err := m.Advise(0, size, DontNeed); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		b.ResetTimer()
		for i := range b.N {
			b.StopTimer()
			if err := m.Advise(0, size, Populate); err != nil {
				b.Fatal(err)
			}
			if i == b.N-1 {
				hugeShare(b)
			}
			b.StartTimer()
			read()
			b.StopTimer()
			if err := m.Advise(0, size, DontNeed); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/chunks, "ns/chunk")
	})
	if sink == 42 {
		b.Log(sink)
	}
}
