//go:build unix

package weights

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvanta/memvanta/core/model"
)

// BenchmarkExpertPolicy measures the expert cache: hit rate, expert bytes
// read per token and generation speed against the budget, per eviction
// policy, on a mixture-of-experts file run through the real graph (greedy
// generation after a short prompt, so the routers' token-to-token locality
// decides the hits). The file is $MEMVANTA_MOE_FILE (a synth qwen3moe file:
// its routers follow synth's locality model), else a small synthetic one;
// budgets are $MEMVANTA_MOE_BUDGETS (comma-separated sizes, e.g.
// "256MiB,512MiB"), else fractions of the file. Each sub-benchmark
// generates $MEMVANTA_MOE_TOKENS tokens (default 64) per iteration from a
// fresh model; run with -benchtime=1x.
func BenchmarkExpertPolicy(b *testing.B) {
	path := os.Getenv("MEMVANTA_MOE_FILE")
	stream := os.Getenv("MEMVANTA_MOE_STREAM") // map (default) or copy
	if path == "" {
		path = synthMoE(b, b.TempDir(), 64, 8, 128)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var budgets []int64
	if s := os.Getenv("MEMVANTA_MOE_BUDGETS"); s != "" {
		for _, f := range strings.Split(s, ",") {
			n, err := ParseSize(f)
			if err != nil {
				b.Fatal(err)
			}
			budgets = append(budgets, n)
		}
	} else {
		for _, d := range []int64{8, 4, 2} {
			budgets = append(budgets, minBudget(b, path, planOf(b, path), stream)+fi.Size()/d)
		}
	}
	tokens := 64
	if s := os.Getenv("MEMVANTA_MOE_TOKENS"); s != "" {
		if tokens, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("resident", func(b *testing.B) {
		for b.Loop() {
			_, sec, cpu := runExpertBench(b, path, Options{Mode: Resident}, tokens)
			b.ReportMetric(float64(tokens)/sec, "tok/s")
			b.ReportMetric(cpu.Seconds()/float64(tokens)*1000, "cpu-ms/tok")
		}
	})
	for _, budget := range budgets {
		for _, pol := range []string{ExpertLRU, ExpertLFU} {
			b.Run(fmt.Sprintf("budget=%s/policy=%s", FormatSize(budget), pol), func(b *testing.B) {
				for b.Loop() {
					st, sec, cpu := runExpertBench(b, path, Options{Mode: Budget, Budget: budget, Stream: stream, ExpertPolicy: pol}, tokens)
					// Per-token figures over the generated tokens' passes
					// only (the prompt's pass excluded).
					var acq, hits, read int64
					gen := st.PerPass[len(st.PerPass)-min(len(st.PerPass), tokens-1):]
					for _, p := range gen {
						acq += p.ExpertAcquisitions
						hits += p.ExpertHits
						read += p.ExpertBytesRead
					}
					b.ReportMetric(100*float64(hits)/float64(max(acq, 1)), "hit%")
					b.ReportMetric(float64(read)/float64(max(len(gen), 1))/(1<<20), "MiB-read/tok")
					b.ReportMetric(float64(tokens)/sec, "tok/s")
					b.ReportMetric(st.ExpertStallTime.Seconds()/float64(tokens)*1000, "stall-ms/tok")
					// CPU time of the whole process per token (compute and
					// reads): on a machine shared with other work, wall time
					// mostly measures the wait for a core.
					b.ReportMetric(cpu.Seconds()/float64(tokens)*1000, "cpu-ms/tok")
				}
			})
		}
	}
}

// planOf is the plan the graph declares for the file at path.
func planOf(b *testing.B, path string) model.Plan {
	var plan model.Plan
	md, err := Open(context.Background(), path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer md.Close()
	c, err := model.ConfigFromGGUF(md.File())
	if err != nil {
		b.Fatal(err)
	}
	rec := &planRecorder{Weights: md.Weights(), plan: &plan}
	m, err := model.New(c, rec, model.Options{Threads: 1, Ctx: 16})
	if err != nil {
		b.Fatal(err)
	}
	m.Close()
	return plan
}

// planRecorder keeps the plan the graph declares (and serves experts so the
// graph declares its expert-at-a-time plan).
type planRecorder struct {
	model.Weights
	plan *model.Plan
}

func (r *planRecorder) Declare(p model.Plan) error {
	*r.plan = p
	return r.Weights.Declare(p)
}

func (r *planRecorder) WillNeedExperts(g int, ids []int) {
	r.Weights.(model.ExpertWeights).WillNeedExperts(g, ids)
}

func (r *planRecorder) AcquireExpert(ctx context.Context, g, e int) ([][]byte, error) {
	return r.Weights.(model.ExpertWeights).AcquireExpert(ctx, g, e)
}

func (r *planRecorder) ReleaseExpert(g, e int) { r.Weights.(model.ExpertWeights).ReleaseExpert(g, e) }

// runExpertBench generates n tokens greedily after an 8-token prompt and
// returns the stats, the generation time in seconds and the process CPU
// time it took.
func runExpertBench(b *testing.B, path string, opt Options, n int) (Stats, float64, time.Duration) {
	md, err := Open(context.Background(), path, opt)
	if err != nil {
		b.Fatal(err)
	}
	defer md.Close()
	c, err := model.ConfigFromGGUF(md.File())
	if err != nil {
		b.Fatal(err)
	}
	m, err := model.New(c, md.Weights(), model.Options{Threads: 2, Ctx: n + 16})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	logits, err := m.Forward(ctx, []int32{1, 17, 230, 45, 9, 801, 77, 3})
	if err != nil {
		b.Fatal(err)
	}
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	t0 := time.Now()
	for range n {
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		if logits, err = m.Forward(ctx, []int32{int32(best)}); err != nil {
			b.Fatal(err)
		}
	}
	sec := time.Since(t0).Seconds()
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
	return md.Stats(), sec, cpu
}
