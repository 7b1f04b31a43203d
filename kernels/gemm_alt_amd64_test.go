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

// BenchmarkGemmAlt is the ratio to trust on a shared machine: on one
// thread it alternates one MatMul through the path's previous route
// (withoutGemm: Dot4 or Dot per activation row) and one through the packed
// routine, and reports the smallest process CPU time of a call of each
// (time slicing by other jobs does not count, so this is close to the
// uncontended cost, both measured under the same conditions) and their
// ratio. Shapes are
// TinyLlama's attention (2048×2048) and FFN down (2048×5632).
func BenchmarkGemmAlt(b *testing.B) {
	r := rand.New(rand.NewPCG(115, 116))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.IQ4_XS, ggml.Q3_K, ggml.Q2_K} {
		for _, k := range gemmPaths(typ) {
			for _, sh := range [][2]int{{2048, 2048}, {2048, 5632}} {
				rows, cols := sh[0], sh[1]
				w := randWeights(r, typ, rows*cols)
				for _, nb := range []int{2, 4, 8, 16, 32, 128} {
					var a []byte
					for i := 0; i < nb; i++ {
						a = append(a, encodeAct(typ, randActivations(r, cols))...)
					}
					y := make([]float32, rows*nb)
					ws, _ := RowSize(typ, cols)
					as, _ := RowSize(ActType(typ), cols)
					b.Run(fmt.Sprintf("%s/%s/%dx%d/b%d", typ, k.Name, rows, cols, nb), func(b *testing.B) {
						p := NewPool(1)
						defer p.Close()
						old, g := withoutGemm(k), k.gemmFor(typ)
						best := [2]time.Duration{1 << 62, 1 << 62}
						for b.Loop() {
							t0 := cpuTime(b, syscall.RUSAGE_SELF)
							old.MatMul(p, typ, rows, cols, w, a, nb, y)
							t1 := cpuTime(b, syscall.RUSAGE_SELF)
							matMulPacked(p, g, typ, rows, cols, w, a, nb, y, ws, as, gemmKB)
							t2 := cpuTime(b, syscall.RUSAGE_SELF)
							best[0] = min(best[0], t1-t0)
							best[1] = min(best[1], t2-t1)
						}
						macs := float64(rows) * float64(cols) * float64(nb)
						b.ReportMetric(macs/float64(best[0].Nanoseconds()), "old-GMAC/s")
						b.ReportMetric(macs/float64(best[1].Nanoseconds()), "packed-GMAC/s")
						b.ReportMetric(float64(best[0])/float64(best[1]), "speedup")
					})
				}
			}
		}
	}
}

// gemmRival is one side of benchGemmPair: a packed routine set, the name
// its GMAC/s metric carries, and the K-range it runs with.
type gemmRival struct {
	name string
	g    *gemmRoutines
	kb   int
}

// benchGemmPair compares two packed MatMul routine sets for typ on one
// thread at TinyLlama's shapes (attention 2048×2048, FFN gate/up 5632×2048,
// down 2048×5632) and the given batches, alternating one call of each and
// keeping the smallest process CPU time of each (the ratio to trust on a
// shared machine), reported as GMAC/s and speedup = old/new time.
func benchGemmPair(b *testing.B, typ ggml.Type, r *rand.Rand, batches []int, old, cur gemmRival) {
	for _, sh := range [][2]int{{2048, 2048}, {5632, 2048}, {2048, 5632}} {
		rows, cols := sh[0], sh[1]
		w := randWeights(r, typ, rows*cols)
		for _, nb := range batches {
			var a []byte
			for i := 0; i < nb; i++ {
				a = append(a, encodeAct(typ, randActivations(r, cols))...)
			}
			y := make([]float32, rows*nb)
			ws, _ := RowSize(typ, cols)
			as, _ := RowSize(ActType(typ), cols)
			b.Run(fmt.Sprintf("%dx%d/b%d", rows, cols, nb), func(b *testing.B) {
				p := NewPool(1)
				defer p.Close()
				rivals := [2]gemmRival{old, cur}
				best := [2]time.Duration{1 << 62, 1 << 62}
				for b.Loop() {
					for i, v := range rivals {
						t0 := cpuTime(b, syscall.RUSAGE_SELF)
						matMulPacked(p, v.g, typ, rows, cols, w, a, nb, y, ws, as, v.kb)
						best[i] = min(best[i], cpuTime(b, syscall.RUSAGE_SELF)-t0)
					}
				}
				macs := float64(rows) * float64(cols) * float64(nb)
				for i, v := range rivals {
					b.ReportMetric(macs/float64(best[i].Nanoseconds()), v.name+"-GMAC/s")
				}
				b.ReportMetric(float64(best[0])/float64(best[1]), "speedup")
			})
		}
	}
}
