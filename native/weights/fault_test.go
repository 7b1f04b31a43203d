package weights

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memvanta/memvanta/core/policy"
	"github.com/memvanta/memvanta/native/cache"
)

// TestTruncatedFile truncates the model after Open: every copy path and the
// resident Acquire must report an error; nothing may crash.
func TestTruncatedFile(t *testing.T) {
	for _, ms := range []string{Resident, Budget, Budget + "/" + StreamCopy, Budget + "/" + StreamMap} {
		mode, stream, _ := strings.Cut(ms, "/")
		t.Run(ms, func(t *testing.T) {
			path, infos, plan := tinyModel(t, t.TempDir(), 256, 512, 3)
			layer := int64(planBytesOf(plan, infos, 0))
			pol := policy.Config{MinDepth: 0, MaxDepth: 0}
			md, err := Open(context.Background(), path, Options{Mode: mode, Stream: stream, Budget: 2 * cache.BufferSize(layer), Policy: &pol})
			if err != nil {
				t.Fatal(err)
			}
			defer md.Close()
			w := md.Weights()
			if err := w.Declare(plan); err != nil {
				t.Fatal(err)
			}
			runPasses(t, w, plan, infos, 1) // warm: resident pages mapped, budget cache filled
			if truncationRefused(t, path) {
				t.Skip("Windows refuses to truncate a mapped file: no truncation faults to recover from")
			}
			// Keep only the header and the embedding table.
			emb := infos[0]
			if err := os.Truncate(path, md.File().DataOffset+int64(emb.Offset+emb.Size)); err != nil {
				t.Fatal(err)
			}
			// Row of the last tensor (output.weight) is past the new end.
			rs := int(infos[len(infos)-1].Size / 64)
			if err := w.Row(context.Background(), "output.weight", 3, make([]byte, rs)); err == nil {
				t.Error("Row past truncation: no error")
			}
			if mode == Resident {
				if _, err := w.Acquire(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "truncated") {
					t.Errorf("resident Acquire after truncation: %v", err)
				}
				return
			}
			// Budget mode (two groups' budget, no look-ahead): group 1 is not
			// cached after the warm pass, so acquiring it must pread past the
			// new end of file.
			if _, err := w.Acquire(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "truncated") {
				t.Errorf("budget Acquire of a truncated group: %v", err)
			}
		})
	}
}

// TestCloseStopsGoroutines: budget mode runs a loader goroutine per
// declared plan; Close (and re-Declare) must leave none behind.
func TestCloseStopsGoroutines(t *testing.T) {
	path, infos, plan := tinyModel(t, t.TempDir(), 256, 512, 4)
	before := runtime.NumGoroutine()
	for i := range 4 {
		stream := []string{"", StreamCopy}[i%2] // default (map) and copy
		md, err := Open(context.Background(), path, Options{Mode: Budget, Budget: 200 << 10, Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		w := md.Weights()
		if err := w.Declare(plan); err != nil {
			t.Fatal(err)
		}
		runPasses(t, w, plan, infos, 1)
		if err := w.Declare(plan); err != nil { // replaces the loader
			t.Fatal(err)
		}
		if _, err := w.Acquire(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		// Close with a group still acquired and the loader mid-window.
		if err := md.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100 && runtime.NumGoroutine() > before; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines: %d before, %d after Close\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
