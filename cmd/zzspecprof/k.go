package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/kernels"
)

func init() {
	if len(os.Args) < 2 || os.Args[1] != "k" {
		return
	}
	k := kernels.Select()
	p := kernels.NewPool(2)
	rows, cols, nb := 5632, 2048, 16
	for _, t := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
		ws, _ := ggml.RowSize(t, uint64(cols))
		w := make([]byte, rows*int(ws))
		f := make([]float32, cols)
		for i := range f {
			f[i] = rand.Float32() - 0.5
		}
		for r := 0; r < rows; r++ {
			kernels.Quantize(t, f, w[r*int(ws):(r+1)*int(ws)])
		}
		at := kernels.ActType(t)
		as, _ := ggml.RowSize(at, uint64(cols))
		a := make([]byte, nb*int(as))
		for b := 0; b < nb; b++ {
			k.QuantizeAct(at, f, a[b*int(as):(b+1)*int(as)])
		}
		y := make([]float32, nb*rows)
		dot, dot4 := k.Dot(t), k.Dot4(t)
		for rep := 0; rep < 3; rep++ {
			t0 := time.Now()
			for i := 0; i < 20; i++ {
				k.MatVec(p, t, rows, cols, w, a[:as], y[:rows])
			}
			mv := time.Since(t0) / 20
			t0 = time.Now()
			for i := 0; i < 20; i++ {
				k.MatMul(p, t, rows, cols, w, a, nb, y)
			}
			mm := time.Since(t0) / 20
			t0 = time.Now()
			for i := 0; i < 20; i++ {
				p.Run(rows, kernels.MatVecGrain(rows, int(ws), 2), func(lo, hi int) {
					var o [4]float32
					for r := lo; r < hi; r++ {
						wr := w[r*int(ws) : (r+1)*int(ws)]
						for b := 0; b < nb; b += 4 {
							dot4(cols, wr, a[b*int(as):(b+4)*int(as)], int(as), &o)
						}
					}
				})
			}
			d4 := time.Since(t0) / 20
			t0 = time.Now()
			for i := 0; i < 20; i++ {
				p.Run(rows, kernels.MatVecGrain(rows, int(ws), 2), func(lo, hi int) {
					for r := lo; r < hi; r++ {
						wr := w[r*int(ws) : (r+1)*int(ws)]
						for b := 0; b < nb; b++ {
							y[b*rows+r] = dot(cols, wr, a[b*int(as):(b+1)*int(as)])
						}
					}
				})
			}
			d1 := time.Since(t0) / 20
			rows4 := k.DotRows4(t)
			t0 = time.Now()
			for i := 0; i < 20; i++ {
				p.Run(rows, kernels.MatVecGrain(rows, int(ws), 2), func(lo, hi int) {
					for r0 := lo; r0 < hi; r0 += 32 {
						r1 := min(r0+32, hi)
						for b := 0; b < nb; b++ {
							kernels.MatVecRows(dot, rows4, cols, int(ws), w, a[b*int(as):(b+1)*int(as)], y[b*rows:(b+1)*rows], r0, r1)
						}
					}
				})
			}
			r4 := time.Since(t0) / 20
			fmt.Printf("   rows4 tiled %v (%.1fx)\n", r4, float64(r4)/float64(mv))
			fmt.Printf("%s %s: MatVec %v | nb=%d: packed %v (%.1fx) dot4 %v (%.1fx) dot %v (%.1fx)\n", k.Name, t, mv, nb, mm, float64(mm)/float64(mv), d4, float64(d4)/float64(mv), d1, float64(d1)/float64(mv))
		}
	}
	os.Exit(0)
}
