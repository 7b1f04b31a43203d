//go:build linux

package kernels

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// BenchmarkArchMatVecDRAM is BenchmarkArchMatVec with the weights streamed
// from memory rather than cache: each op walks a ring of distinct 4096×11008
// matrices (~1 GiB in all), as generation on a 7B model does, so the figure
// is what a token costs when no matrix is still in L3 from the last use.
func BenchmarkArchMatVecDRAM(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const rows, cols, ring = 4096, 11008, 40
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
		ws, _ := RowSize(typ, cols)
		row := simdRow(b, r, typ, cols, true)
		ms := make([][]byte, ring)
		for m := range ms {
			w := make([]byte, rows*ws)
			for i := 0; i < rows; i++ {
				copy(w[i*ws:], row)
				w[i*ws+ws/2] ^= byte(i + m)
			}
			ms[m] = w
		}
		a := simdRow(b, r, ActType(typ), cols, false)
		y := make([]float32, rows)
		for _, threads := range []int{1, 2} {
			p := NewPool(threads)
			for _, k := range Available() {
				if k.Name == "scalar" {
					continue
				}
				b.Run(fmt.Sprintf("%s/%s/t%d", typ, k.Name, threads), func(b *testing.B) {
					b.SetBytes(int64(rows * ws))
					c0, n := cpuTime(b, syscall.RUSAGE_SELF), 0
					for b.Loop() {
						k.MatVec(p, typ, rows, cols, ms[n%ring], a, y)
						n++
					}
					reportCPU(b, cpuTime(b, syscall.RUSAGE_SELF)-c0, n, rows*ws, threads)
				})
			}
			p.Close()
		}
		ms = nil
	}
}

// BenchmarkArchRows4Hot is the compute ceiling of the four-weight-row
// routines: one group of four 11008-element rows (in L1/L2) against one
// activation row, on one thread, timed in thread CPU time so a busy machine
// does not inflate it.
func BenchmarkArchRows4Hot(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const cols = 11008
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
		ws, _ := RowSize(typ, cols)
		w := make([]byte, 4*ws)
		for j := 0; j < 4; j++ {
			copy(w[j*ws:], simdRow(b, r, typ, cols, true))
		}
		a := simdRow(b, r, ActType(typ), cols, false)
		for _, k := range Available() {
			f := k.DotRows4(typ)
			if f == nil {
				continue
			}
			b.Run(fmt.Sprintf("%s/%s", typ, k.Name), func(b *testing.B) {
				var y [4]float32
				b.SetBytes(int64(len(w)))
				c0, n := cpuTime(b, rusageThread), 0
				for b.Loop() {
					f(cols, w, a, ws, &y)
					n++
				}
				reportCPU(b, cpuTime(b, rusageThread)-c0, n, len(w), 1)
			})
		}
	}
}
