//go:build linux

package kernels

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/memvanta/memvanta/core/ggml"
)

// BenchmarkGemmDRAM is what a server's decoding step costs per weight
// matrix: MatVec for one sequence's row against MatMul for 2..16 rows (the
// packed path), with the weights streamed from memory (a ring of ~450 MiB
// of distinct 2048×5632 Q4_0 matrices, TinyLlama's FFN shape), on two
// threads, timed in process CPU time (the figure a shared machine
// disturbs least). cpu-us/matrix over rows gives the batch's per-token
// gain: the ceiling of continuous batching's speed-up at that batch.
func BenchmarkGemmDRAM(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	typ := ggml.Q4_0
	const rows, cols = 2048, 5632
	ws, _ := RowSize(typ, cols)
	one := randWeights(r, typ, rows*cols)
	ms := make([][]byte, max(8, (450<<20)/(rows*ws)))
	for i := range ms {
		ms[i] = append([]byte(nil), one...)
	}
	k := Available()[0]
	for _, nb := range []int{1, 2, 4, 8, 16} {
		var a []byte
		for i := 0; i < nb; i++ {
			a = append(a, encodeAct(typ, randActivations(r, cols))...)
		}
		y := make([]float32, rows*nb)
		b.Run(fmt.Sprintf("%s/%s/rows%d", typ, k.Name, nb), func(b *testing.B) {
			p := NewPool(2)
			defer p.Close()
			c0 := cpuTime(b, syscall.RUSAGE_SELF)
			n := 0
			for b.Loop() {
				for _, w := range ms {
					if nb == 1 {
						k.MatVec(p, typ, rows, cols, w, a, y)
					} else {
						k.MatMul(p, typ, rows, cols, w, a, nb, y)
					}
					n++
				}
			}
			cpu := cpuTime(b, syscall.RUSAGE_SELF) - c0
			b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-us/matrix")
			b.ReportMetric(float64(cpu.Microseconds())/float64(n*nb), "cpu-us/row")
		})
	}
}

// BenchmarkGemmDRAMAlt is BenchmarkGemmDRAM's decode-step question asked
// the way a shared machine answers best: in one process it alternates
// passes over the same ring of DRAM-resident 2048×5632 Q4_0 matrices
// through MatVec (one row), the packed MatMul of nb rows without
// kernelPF's prefetch of the next tile, and with it, and reports the
// smallest process CPU time per matrix of each (two threads) and the
// ratios to MatVec's: rows-nb over one row, the figure continuous
// batching's speed-up is bounded by.
func BenchmarkGemmDRAMAlt(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	typ := ggml.Q4_0
	const rows, cols = 2048, 5632
	ws, _ := RowSize(typ, cols)
	as, _ := RowSize(ActType(typ), cols)
	one := randWeights(r, typ, rows*cols)
	ms := make([][]byte, max(8, (450<<20)/(rows*ws)))
	for i := range ms {
		ms[i] = append([]byte(nil), one...)
	}
	k := Available()[0]
	g := k.gemmFor(typ)
	if g == nil || g.kernelPF == nil {
		b.Skipf("%s has no prefetching packed %s MatMul", k.Name, typ)
	}
	noPF := *g
	noPF.kernelPF = nil
	for _, nb := range []int{2, 4, 8} {
		var a []byte
		for i := 0; i < nb; i++ {
			a = append(a, encodeAct(typ, randActivations(r, cols))...)
		}
		y := make([]float32, rows*nb)
		b.Run(fmt.Sprintf("%s/%s/rows%d", typ, k.Name, nb), func(b *testing.B) {
			p := NewPool(2)
			defer p.Close()
			runs := []func(w []byte){
				func(w []byte) { k.MatVec(p, typ, rows, cols, w, a, y) },
				func(w []byte) { matMulPacked(p, &noPF, typ, rows, cols, w, a, nb, y, ws, as, gemmKB) },
				func(w []byte) { matMulPacked(p, g, typ, rows, cols, w, a, nb, y, ws, as, gemmKB) },
			}
			best := []time.Duration{1 << 62, 1 << 62, 1 << 62}
			for b.Loop() {
				for i, run := range runs {
					c0 := cpuTime(b, syscall.RUSAGE_SELF)
					for _, w := range ms {
						run(w)
					}
					best[i] = min(best[i], (cpuTime(b, syscall.RUSAGE_SELF)-c0)/time.Duration(len(ms)))
				}
			}
			b.ReportMetric(float64(best[0].Microseconds()), "vec-cpu-us")
			b.ReportMetric(float64(best[1].Microseconds()), "nopf-cpu-us")
			b.ReportMetric(float64(best[2].Microseconds()), "pf-cpu-us")
			b.ReportMetric(float64(best[1])/float64(best[0]), "nopf/vec")
			b.ReportMetric(float64(best[2])/float64(best[0]), "pf/vec")
		})
	}
}
