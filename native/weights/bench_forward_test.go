//go:build unix

package weights

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/kernels"
)

// BenchmarkForwardToken is one generated token through a mapped model on
// the pool (2 threads): the path whose memory faults Forward and the pool
// recover (see core/model/fault.go, kernels/pool.go). Used to show that
// the recovery costs no speed: run it on a commit before and after and
// compare (scripts/fault-bench.sh).
func BenchmarkForwardToken(b *testing.B) {
	p := filepath.Join(b.TempDir(), "m.gguf")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	cfg := synth.Config{Embd: 1024, Layers: 4, Heads: 8, KVHeads: 8, FF: 2816, Ctx: 256, Type: ggml.Q4_0,
		VocabSize: 4000, Seed: 5, RopeBase: 10000, Eps: 1e-5, Quantize: kernels.Quantize}
	if err := synth.Write(context.Background(), f, cfg, nil); err != nil {
		b.Fatal(err)
	}
	f.Close()
	for _, mode := range []struct{ name, mode, stream string }{{"resident", Resident, ""}, {"budget-map", Budget, StreamMap}} {
		b.Run(mode.name, func(b *testing.B) {
			md, err := Open(context.Background(), p, Options{Mode: mode.mode, Stream: mode.stream, Budget: 64 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer md.Close()
			c, err := model.ConfigFromGGUF(md.File())
			if err != nil {
				b.Fatal(err)
			}
			m, err := model.New(c, md.Weights(), model.Options{Threads: 2, Ctx: 256})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			ctx := context.Background()
			// CPU time per token (user+system of the whole process, which
			// does nothing else meanwhile) beside wall time: on a machine
			// shared with other work, wall time mostly measures how long the
			// pool's threads waited for a core; CPU time measures the work.
			var r0, r1 syscall.Rusage
			b.ResetTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
			n := 0
			for i := 0; b.Loop(); i++ {
				if m.Pos() >= 200 {
					m.Reset()
				}
				if _, err := m.Forward(ctx, []int32{int32(1 + i%100)}); err != nil {
					b.Fatal(err)
				}
				n++
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
			cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
		})
	}
}
