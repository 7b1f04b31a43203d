package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// BenchmarkGemm is prefill MatMul at TinyLlama shapes (rows×cols: 2048×2048
// attention, 5632×2048 FFN gate/up, 2048×5632 FFN down), batches of 32
// (generate's default) and 512 (bench's pp512), 2 threads: the path's Dot4
// MatMul ("dot4") beside its packed MatMul ("packed"), as sub-benchmarks of
// one run so that both see the same machine load. GMAC/s counts
// rows·cols·nb multiply-adds per call. Weights are one matrix (each call
// reads it once either way; at these batches both variants are
// compute-bound).
func BenchmarkGemm(b *testing.B) {
	shapes := [][2]int{{2048, 2048}, {5632, 2048}, {2048, 5632}}
	r := rand.New(rand.NewPCG(111, 112))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.IQ4_XS, ggml.MXFP4} {
		for _, k := range gemmPaths(typ) {
			for _, sh := range shapes {
				rows, cols := sh[0], sh[1]
				w := randWeights(r, typ, rows*cols)
				for _, nb := range []int{32, 512} {
					var a []byte
					for i := 0; i < nb; i++ {
						a = append(a, encodeAct(typ, randActivations(r, cols))...)
					}
					y := make([]float32, rows*nb)
					for _, v := range []struct {
						name string
						k    *Impl
					}{{"dot4", withoutGemm(k)}, {"packed", k}} {
						b.Run(fmt.Sprintf("%s/%s/%dx%d/b%d/t2/%s", typ, k.Name, rows, cols, nb, v.name), func(b *testing.B) {
							p := NewPool(2)
							defer p.Close()
							for b.Loop() {
								v.k.MatMul(p, typ, rows, cols, w, a, nb, y)
							}
							b.ReportMetric(float64(rows)*float64(cols)*float64(nb)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
						})
					}
				}
			}
		}
	}
}

// BenchmarkGemmSmallBatch places gemmMinBatch: packed against Dot4 MatMul
// at batches 2..16 on the 2048×2048 shape.
func BenchmarkGemmSmallBatch(b *testing.B) {
	const rows, cols = 2048, 2048
	r := rand.New(rand.NewPCG(113, 114))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.IQ4_XS, ggml.MXFP4} {
		for _, k := range gemmPaths(typ) {
			w := randWeights(r, typ, rows*cols)
			for _, nb := range []int{2, 4, 8, 16} {
				var a []byte
				for i := 0; i < nb; i++ {
					a = append(a, encodeAct(typ, randActivations(r, cols))...)
				}
				y := make([]float32, rows*nb)
				ws, _ := RowSize(typ, cols)
				as, _ := RowSize(ActType(typ), cols)
				b.Run(fmt.Sprintf("%s/%s/b%d/dot4", typ, k.Name, nb), func(b *testing.B) {
					p := NewPool(2)
					defer p.Close()
					kd := withoutGemm(k)
					for b.Loop() {
						kd.MatMul(p, typ, rows, cols, w, a, nb, y)
					}
					b.ReportMetric(float64(rows)*float64(cols)*float64(nb)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
				})
				b.Run(fmt.Sprintf("%s/%s/b%d/packed", typ, k.Name, nb), func(b *testing.B) {
					p := NewPool(2)
					defer p.Close()
					g := k.gemmFor(typ)
					for b.Loop() {
						matMulPacked(p, g, typ, rows, cols, w, a, nb, y, ws, as, gemmKB)
					}
					b.ReportMetric(float64(rows)*float64(cols)*float64(nb)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
				})
			}
		}
	}
}
