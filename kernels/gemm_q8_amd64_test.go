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

// BenchmarkGemmQ8Alt compares the AVX2 packed Q8_0 MatMul (signed layout,
// |w|·sign(a, w): gemmKernelQ8PFAVX2) with the nibble-split routines it
// replaced (gemmq8.go's layout, two VPMADDUBSW per 32 products), on one
// thread, alternating one call of each and keeping the smallest process
// CPU time of each, as BenchmarkGemmAlt does: the ratio to trust on a
// shared machine. Shapes are TinyLlama's (attention, FFN gate/up, FFN
// down) at generate's and bench's batches.
func BenchmarkGemmQ8Alt(b *testing.B) {
	k, err := ByName("avx2")
	if err != nil {
		b.Skip("no avx2 path on this CPU")
	}
	const typ = ggml.Q8_0
	r := rand.New(rand.NewPCG(131, 132))
	split := gemmSplit(128, gemmPackQ8_0SplitAVX2, gemmKernelQ8SplitAVX2)(typ)
	signed := k.gemmFor(typ)
	for _, sh := range [][2]int{{2048, 2048}, {5632, 2048}, {2048, 5632}} {
		rows, cols := sh[0], sh[1]
		w := randWeights(r, typ, rows*cols)
		for _, nb := range []int{32, 512} {
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
				gs := []*gemmRoutines{split, signed}
				names := []string{"split", "signed"}
				best := make([]time.Duration, len(gs))
				for i := range best {
					best[i] = 1 << 62
				}
				for b.Loop() {
					for i, g := range gs {
						t0 := cpuTime(b, syscall.RUSAGE_SELF)
						matMulPacked(p, g, typ, rows, cols, w, a, nb, y, ws, as, g.kb)
						best[i] = min(best[i], cpuTime(b, syscall.RUSAGE_SELF)-t0)
					}
				}
				macs := float64(rows) * float64(cols) * float64(nb)
				for i, n := range names {
					b.ReportMetric(macs/float64(best[i].Nanoseconds()), n+"-GMAC/s")
				}
				b.ReportMetric(float64(best[0])/float64(best[1]), "speedup")
			})
		}
	}
}
