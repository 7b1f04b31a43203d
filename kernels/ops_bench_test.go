package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// Benchmarks of the attention ops per path on TinyLlama's geometry: one kv
// head of an F16 cache (4 kv heads of 64 per row), a block of 8 tokens × 8
// query heads, 512 cached positions. Run briefly:
// go test -run X -bench 'Attn|OpsF32' -benchtime=200ms ./kernels/

func benchAttnSetup() (q []float32, keys []byte, out, w []float32) {
	r := rand.New(rand.NewPCG(1, 1))
	const nq, hd, n, stride = 64, 64, 512, 4 * 64 * 2
	q = make([]float32, nq*hd)
	_, qv := randHalfRow(r, nq*hd)
	copy(q, qv)
	keys = make([]byte, n*stride)
	for p := 0; p < n; p++ {
		b, _ := randHalfRow(r, hd)
		copy(keys[p*stride:], b)
	}
	return q, keys, make([]float32, nq*hd), randF32s(r, nq*n, 0.01)
}

func BenchmarkAttnScoresF16(b *testing.B) {
	q, keys, _, w := benchAttnSetup()
	for _, k := range Available() {
		b.Run(k.Name, func(b *testing.B) {
			b.SetBytes(512 * 64 * 2)
			for i := 0; i < b.N; i++ {
				k.ScoresF16(q, 64, 64, keys, 512, 512, 0.125, w, 512)
			}
		})
	}
}

func BenchmarkAttnAccumF16(b *testing.B) {
	_, vals, out, w := benchAttnSetup()
	for _, k := range Available() {
		b.Run(k.Name, func(b *testing.B) {
			b.SetBytes(512 * 64 * 2)
			for i := 0; i < b.N; i++ {
				k.AccumF16(out, 64, 64, w, 512, vals, 512, 512)
			}
		})
	}
}

// BenchmarkAttnAccumF16Gen is generation's shape at depth 2048: one
// token's 8 query heads of one kv head over 2048 cached positions.
func BenchmarkAttnAccumF16Gen(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	const nq, hd, n, stride = 8, 64, 2048, 4 * 64 * 2
	vals := make([]byte, n*stride)
	for p := 0; p < n; p++ {
		v, _ := randHalfRow(r, hd)
		copy(vals[p*stride:], v)
	}
	w, out := randF32s(r, nq*n, 0.01), make([]float32, nq*hd)
	for _, k := range Available() {
		b.Run(k.Name, func(b *testing.B) {
			b.SetBytes(n * hd * 2)
			for i := 0; i < b.N; i++ {
				k.AccumF16(out, nq, hd, w, n, vals, stride, n)
			}
		})
	}
}

func BenchmarkOpsF32(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	x := randF32s(r, 5632, 2)
	y := randF32s(r, 5632, 2)
	dst := make([]byte, 5632/32*34)
	for _, k := range Available() {
		b.Run("Softmax512/"+k.Name, func(b *testing.B) {
			s := make([]float32, 512)
			for i := 0; i < b.N; i++ {
				copy(s, x)
				k.Softmax(s)
			}
		})
		b.Run("SiLUMul5632/"+k.Name, func(b *testing.B) {
			g := make([]float32, len(x))
			for i := 0; i < b.N; i++ {
				copy(g, x)
				k.SiLUMul(g, y)
			}
		})
		b.Run("QuantizeQ8_0_5632/"+k.Name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = k.QuantizeAct(ggml.Q8_0, x, dst)
			}
		})
	}
}

// BenchmarkAttnGenDepth is one generated token's attention at depth 2048,
// one thread: per layer and kv head ScoresF16, Softmax and AccumF16 over
// the K and V caches laid out as core/model's KVCache lays them out (each
// kv head's rows contiguous), large enough that the rows come from beyond
// L2 as they do in generation. Shapes: TinyLlama (22 layers × 4 kv heads of
// 64, GQA 8: ~46 MB per cache) and a quarter of a 7B multi-head model's
// layers (8 × 32 heads of 128, one query row per kv head: ~134 MB per
// cache; a whole token is 4× the time), and a Llama-3-8B-like model (32
// layers × 8 kv heads of 128, GQA 4: ~134 MB per cache).
func BenchmarkAttnGenDepth(b *testing.B) {
	for _, sh := range []struct {
		name                     string
		layers, heads, nq, hd, n int
	}{
		{"tinyllama", 22, 4, 8, 64, 2048},
		{"7b-mha-8of32", 8, 32, 1, 128, 2048},
		{"8b-gqa4-32", 32, 8, 4, 128, 2048},
	} {
		b.Run(sh.name, func(b *testing.B) { // the setup only for the shapes -bench selects
			r := rand.New(rand.NewPCG(4, 4))
			head := sh.n * sh.hd * 2 // one kv head's rows in one layer
			kc := make([]byte, sh.layers*sh.heads*head)
			vc := make([]byte, len(kc))
			for i := 0; i < sh.layers*sh.heads*sh.n; i++ {
				k, _ := randHalfRow(r, sh.hd)
				copy(kc[i*sh.hd*2:], k)
				v, _ := randHalfRow(r, sh.hd)
				copy(vc[i*sh.hd*2:], v)
			}
			_, q := randHalfRow(r, sh.nq*sh.hd)
			s, out := make([]float32, sh.nq*sh.n), make([]float32, sh.nq*sh.hd)
			for _, k := range Available() {
				if k.Name == "scalar" {
					continue
				}
				b.Run(k.Name, func(b *testing.B) {
					b.SetBytes(int64(2 * len(kc)))
					for i := 0; i < b.N; i++ {
						for h := 0; h < sh.layers*sh.heads; h++ {
							off := h * head
							k.ScoresF16(q, sh.nq, sh.hd, kc[off:], sh.hd*2, sh.n, 0.125, s, sh.n)
							for j := 0; j < sh.nq; j++ {
								k.Softmax(s[j*sh.n : (j+1)*sh.n])
							}
							clear(out)
							k.AccumF16(out, sh.nq, sh.hd, s, sh.n, vc[off:], sh.hd*2, sh.n)
						}
					}
				})
			}
		})
	}
}
