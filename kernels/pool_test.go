package kernels

import (
	"sync"
	"testing"
	"time"
)

// TestPoolHelperJoins checks that the helper takes part in a Run whether it
// is still polling for work (right after the previous Run) or has parked
// (after more than poolSpin idle): each Run's two chunks meet at a
// rendezvous that only two goroutines running at once can pass, and a
// helper that never picked the job up fails the test by timeout instead of
// hanging it.
func TestPoolHelperJoins(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	for _, idle := range []time.Duration{0, 0, 4 * poolSpin, 0, 20 * poolSpin} {
		time.Sleep(idle)
		var (
			mu      sync.Mutex
			arrived int
			both    = make(chan struct{})
			failed  bool
		)
		p.Run(2, 1, func(lo, hi int) {
			mu.Lock()
			arrived++
			if arrived == 2 {
				close(both)
			}
			mu.Unlock()
			select {
			case <-both:
			case <-time.After(10 * time.Second):
				mu.Lock()
				failed = true
				mu.Unlock()
			}
		})
		if failed {
			t.Fatalf("after %v idle: the helper never ran the second chunk beside the caller", idle)
		}
	}
}

// TestSplitPartitions checks the runs Run hands its participants: in order,
// contiguous, covering every chunk once, lengths differing by at most one.
func TestSplitPartitions(t *testing.T) {
	for chunks := 1; chunks <= 40; chunks++ {
		for k := 1; k <= min(chunks, 9); k++ {
			parts := make([]part, k)
			split(parts, chunks)
			var prev int64
			for i := range parts {
				lo, hi := parts[i].next.Load(), parts[i].end
				if lo != prev || hi < lo {
					t.Fatalf("chunks=%d parts=%d: run %d is [%d,%d), want it to start at %d", chunks, k, i, lo, hi, prev)
				}
				if n := hi - lo; n != int64(chunks/k) && n != int64(chunks/k+1) {
					t.Fatalf("chunks=%d parts=%d: run %d has %d chunks", chunks, k, i, n)
				}
				prev = hi
			}
			if prev != int64(chunks) {
				t.Fatalf("chunks=%d parts=%d: runs end at %d", chunks, k, prev)
			}
		}
	}
}
