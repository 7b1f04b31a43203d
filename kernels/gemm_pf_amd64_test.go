package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// The prefetch hints of gemmKernelQ4PFAVX2 (and gemmKernelQ8PFAVX2) stay inside the span they were
// given (a prefetch cannot fault, but the contract is that the assembly
// addresses nothing outside its slices), and there is a prefetch whenever
// the span has room for one.
func TestGemmPFStep(t *testing.T) {
	for _, c := range []struct{ iters, span int }{
		{0, 50688}, {1, 50688}, {176, 50688}, {352, 50688}, {704, 50688},
		{1, 255}, {10, 256}, {100, 256}, {1000, 300}, {5, 1 << 20}, {176, 16 * 18},
	} {
		step := gemmPFStep(c.iters, c.span)
		name := fmt.Sprintf("iters %d span %d step %d", c.iters, c.span, step)
		if step < 0 {
			t.Fatalf("%s: negative", name)
		}
		if step == 0 {
			if c.iters > 0 && c.span >= 256 && c.span-192 >= c.iters {
				t.Errorf("%s: no prefetch though the span has room", name)
			}
			continue
		}
		if last := (c.iters-1)*step + 128 + 63; last >= c.span {
			t.Errorf("%s: last hinted byte %d outside the span", name, last)
		}
	}
}

// MatMul through the prefetching kernel is bit-identical to the plain
// kernel on every shape class: full and short tiles, one and several tiles
// per worker, odd and even batches, one K-range per row (the prefetch is
// used) and several (it is not), one and two threads.
func TestMatMulPackedPrefetchBitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(121, 122))
	pools := map[int]*Pool{1: NewPool(1), 2: NewPool(2)}
	defer pools[1].Close()
	defer pools[2].Close()
	ran := false
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
		for _, k := range gemmPaths(typ) {
			g := k.gemmFor(typ)
			if g.kernelPF == nil {
				continue
			}
			ran = true
			plain := *g
			plain.kernelPF = nil
			for _, rows := range []int{16, 17, 48, 100} {
				for _, cols := range []int{64, 2048, 5632} {
					w := gemmWeights(r, typ, rows, cols)
					ws, _ := RowSize(typ, cols)
					as, _ := RowSize(ActType(typ), cols)
					for _, nb := range []int{1, 2, 3, 8} {
						a := gemmActs(r, typ, nb, cols)
						for _, th := range []int{1, 2} {
							for _, kb := range []int{gemmKB, 32} {
								name := fmt.Sprintf("%s/%s/%dx%d/nb%d/t%d/kb%d", k.Name, typ, rows, cols, nb, th, kb)
								want := make([]float32, nb*rows)
								got := make([]float32, nb*rows)
								matMulPacked(pools[th], &plain, typ, rows, cols, w, a, nb, want, ws, as, kb)
								matMulPacked(pools[th], g, typ, rows, cols, w, a, nb, got, ws, as, kb)
								for i := range want {
									if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
										t.Fatalf("%s: y[%d] = %g with prefetch, %g without", name, i, got[i], want[i])
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if !ran {
		t.Skip("no path on this CPU has a prefetching packed kernel")
	}
}
