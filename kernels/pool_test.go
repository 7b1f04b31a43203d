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
