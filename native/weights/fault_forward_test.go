package weights

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/kernels"
)

// synthModel writes a small llama model and returns its path: Q8_0
// matrices of 1024x1024 (1.1 MB, so a matrix-vector product is split
// across the pool's workers) in a ~20 MB file (mapped 2 MiB-aligned).
func synthModel(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.gguf")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg := synth.Config{Embd: 1024, Layers: 2, Heads: 8, KVHeads: 8, FF: 1024, Ctx: 256, Type: ggml.Q8_0,
		VocabSize: 2000, Seed: 3, RopeBase: 10000, Eps: 1e-5, Quantize: kernels.Quantize}
	if err := synth.Write(context.Background(), f, cfg, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// truncatingWeights cuts the model file to its header right after handing
// out group `at` (so the compute that follows reads pages past the new end
// of file: the mapping SIGBUSes there), once.
type truncatingWeights struct {
	model.Weights
	path string
	keep int64
	at   int
	once sync.Once
}

func (w *truncatingWeights) Acquire(ctx context.Context, g int) ([][]byte, error) {
	ts, err := w.Weights.Acquire(ctx, g)
	if err == nil && g == w.at {
		w.once.Do(func() {
			if terr := os.Truncate(w.path, w.keep); terr != nil {
				panic(terr)
			}
		})
	}
	return ts, err
}

func (w *truncatingWeights) FaultError(addr uintptr, cause error) error {
	return w.Weights.(interface {
		FaultError(uintptr, error) error
	}).FaultError(addr, cause)
}

// TestTruncatedDuringForward: the model file is truncated between Acquire
// and the compute that reads the group (the window Acquire's size check
// cannot cover). In every memory mode the run must end in an error naming
// the file, from Forward, with the pool's worker goroutines reading the
// mapping too (2 threads) - never a SIGBUS crash.
func TestTruncatedDuringForward(t *testing.T) {
	for _, ms := range []string{Resident, Budget + "/" + StreamMap, Budget + "/" + StreamCopy} {
		mode, stream, _ := strings.Cut(ms, "/")
		for _, threads := range []int{1, 2} {
			t.Run(ms+"/"+string(rune('0'+threads)), func(t *testing.T) {
				path := synthModel(t)
				md, err := Open(context.Background(), path, Options{Mode: mode, Stream: stream, Budget: 64 << 20})
				if err != nil {
					t.Fatal(err)
				}
				defer md.Close()
				if truncationRefused(t, path) {
					t.Skip("Windows refuses to truncate a mapped file: no truncation faults to recover from")
				}
				cfg, err := model.ConfigFromGGUF(md.File())
				if err != nil {
					t.Fatal(err)
				}
				// Keep the file up to the page after the start of
				// blk.1's q matrix: its norm still reads, and the fault
				// comes in the parallel matrix-vector product, on the
				// pool's workers as well as the caller.
				q, _ := md.File().Tensor("blk.1.attn_q.weight")
				ps := int64(os.Getpagesize())
				keep := (md.File().DataOffset + int64(q.Offset) + ps - 1) &^ (ps - 1)
				tw := &truncatingWeights{Weights: md.Weights(), path: path, keep: keep, at: 2}
				m, err := model.New(cfg, tw, model.Options{Threads: threads, Ctx: 64})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				var ferr error
				for i := 0; i < 4 && ferr == nil; i++ {
					_, ferr = m.Forward(context.Background(), []int32{1, 2, 3})
				}
				if ferr == nil {
					t.Fatal("Forward after truncation: no error")
				}
				if !strings.Contains(ferr.Error(), path) {
					t.Errorf("error does not name the file: %v", ferr)
				}
				if mode != Budget || stream != StreamCopy {
					// The mapped modes fault in the compute itself.
					if !errors.Is(ferr, model.ErrWeightsFault) || !strings.Contains(ferr.Error(), "truncated") {
						t.Errorf("want a weights fault saying the file was truncated: %v", ferr)
					}
				}
				t.Log(ferr)
			})
		}
	}
}
