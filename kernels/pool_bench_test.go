package kernels

import (
	"sync/atomic"
	"testing"
)

// BenchmarkPoolRun is the pool's own cost per Run: two threads, 8 chunks
// of trivial work (a matrix-vector product per Run at generation time is
// ~100 µs; this shows what the dispatch adds to it).
func BenchmarkPoolRun(b *testing.B) {
	p := NewPool(2)
	defer p.Close()
	var sink atomic.Int64
	for b.Loop() {
		p.Run(8, 1, func(lo, hi int) { sink.Add(int64(hi - lo)) })
	}
}
