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

// BenchmarkGemmIQ4XSAlt compares, on one thread, the int16 IQ4_XS packed
// MatMul (gemmiq4xs_amd64.go) with the index-layout one it replaced
// (gemmk.go's layout, gemmKernelIQ4XSAVX2), alternating one call of each
// and reporting the smallest process CPU time of each and their ratio, at
// TinyLlama's shapes (attention 2048×2048, FFN gate/up 5632×2048, down
// 2048×5632).
func BenchmarkGemmIQ4XSAlt(b *testing.B) {
	const typ = ggml.IQ4_XS
	r := rand.New(rand.NewPCG(117, 118))
	old := gemmK(gemmIQ4XSBlockB, gemmIQ4XSKB, packIQ4XS, gemmKernelIQ4XSAVX2, gemmIQ4XSMinBatch)(typ)
	cur := newGemmIQ4XS16(typ)
	for _, sh := range [][2]int{{2048, 2048}, {5632, 2048}, {2048, 5632}} {
		rows, cols := sh[0], sh[1]
		w := randWeights(r, typ, rows*cols)
		for _, nb := range []int{32, 128, 512} {
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
				best := [2]time.Duration{1 << 62, 1 << 62}
				for b.Loop() {
					t0 := cpuTime(b, syscall.RUSAGE_SELF)
					matMulPacked(p, old, typ, rows, cols, w, a, nb, y, ws, as, gemmKB)
					t1 := cpuTime(b, syscall.RUSAGE_SELF)
					matMulPacked(p, cur, typ, rows, cols, w, a, nb, y, ws, as, gemmKB)
					t2 := cpuTime(b, syscall.RUSAGE_SELF)
					best[0] = min(best[0], t1-t0)
					best[1] = min(best[1], t2-t1)
				}
				macs := float64(rows) * float64(cols) * float64(nb)
				b.ReportMetric(macs/float64(best[0].Nanoseconds()), "old-GMAC/s")
				b.ReportMetric(macs/float64(best[1].Nanoseconds()), "new-GMAC/s")
				b.ReportMetric(float64(best[0])/float64(best[1]), "speedup")
			})
		}
	}
}
