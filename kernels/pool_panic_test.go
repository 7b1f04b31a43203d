package kernels

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestPoolPanicReachesCaller: a panic in any chunk (a memory fault on a
// truncated mapping becomes one) is re-raised by Run on its caller, after
// every helper is done, instead of crashing the process from a worker
// goroutine. Chunk 0 waits until chunk 1 has panicked, so whichever
// goroutine takes chunk 1 (a helper, most runs) panics while the other is
// still inside Run. Each participant starts on its own chunk, and a panic
// stops the others taking more, so when chunk 1 panics before chunk 0 was
// taken at all, chunk 0 never runs: that is allowed (Run re-raises; the
// work is abandoned). What must not happen is Run returning while chunk 0
// is running, and most runs must exercise that overlap.
func TestPoolPanicReachesCaller(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	overlapped := 0
	for i := range 50 {
		var panicked, started, running atomic.Bool
		got := func() (r any) {
			defer func() { r = recover() }()
			p.Run(2, 1, func(lo, hi int) {
				if lo == 0 {
					started.Store(true)
					for deadline := time.Now().Add(5 * time.Second); !panicked.Load() && time.Now().Before(deadline); {
						time.Sleep(50 * time.Microsecond)
					}
					running.Store(true)
					return
				}
				panicked.Store(true)
				panic("chunk 1")
			})
			return nil
		}()
		if got != "chunk 1" {
			t.Fatalf("run %d: Run re-raised %v, want the chunk's panic", i, got)
		}
		if started.Load() && !running.Load() {
			t.Fatalf("run %d: Run returned before chunk 0 finished", i)
		}
		if started.Load() {
			overlapped++
		}
	}
	if overlapped == 0 {
		t.Fatalf("chunk 0 never ran in 50 runs: the test did not exercise a panic beside a running chunk")
	}
	// The pool still works after panics.
	var n atomic.Int64
	p.Run(100, 1, func(lo, hi int) { n.Add(int64(hi - lo)) })
	if n.Load() != 100 {
		t.Fatalf("after panics: %d of 100 indices run", n.Load())
	}
}
