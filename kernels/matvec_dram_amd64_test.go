//go:build linux

package kernels

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// dramTypes are the weight types the DRAM and hot four-row benchmarks cover:
// every type with a four-weight-row routine on some amd64 path.
var dramTypes = []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.IQ4_XS,
	ggml.IQ4_NL, ggml.Q3_K, ggml.Q2_K}

// dramRingBytes is how much distinct weight memory one BenchmarkArchMatVecDRAM
// case walks: far beyond any L3, as the weights of a 7B model are.
const dramRingBytes = 1 << 30

// BenchmarkArchMatVecDRAM is BenchmarkArchMatVec with the weights streamed
// from memory rather than cache: each op walks a ring of distinct 4096×11008
// matrices (~1 GiB in all), as generation on a 7B model does, so the figure
// is what a token costs when no matrix is still in L3 from the last use.
//
// Per type and thread count it runs, side by side, "read" (only reading the
// same matrices with readSumAVX2 in MatVec's chunks: the ceiling this
// machine gives a memory-bound MatVec), every path's MatVec, and for paths
// with a four-weight-row routine the same path without it ("-rows1", the
// one-row dot per weight row), so one run gives the before/after ratio
// and the fraction of the ceiling.
func BenchmarkArchMatVecDRAM(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const rows, cols = 4096, 11008
	for _, typ := range dramTypes {
		ws, _ := RowSize(typ, cols)
		ring := max(8, dramRingBytes/(rows*ws))
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
		sums := make([]uint64, rows)
		// readSumAVX2 reads whole 128-byte units; the row's last <128 bytes
		// are left out of the ceiling's bytes.
		rb := ws &^ 127
		for _, threads := range []int{1, 2} {
			p := NewPool(threads)
			b.Run(fmt.Sprintf("%s/read/t%d", typ, threads), func(b *testing.B) {
				b.SetBytes(int64(rows * rb))
				grain := MatVecGrain(rows, ws, threads)
				c0, n := cpuTime(b, syscall.RUSAGE_SELF), 0
				for b.Loop() {
					w := ms[n%ring]
					p.Run(rows, grain, func(lo, hi int) {
						for r := lo; r < hi; r++ {
							sums[r] = readSumAVX2(rb, &w[r*ws])
						}
					})
					n++
				}
				reportCPU(b, cpuTime(b, syscall.RUSAGE_SELF)-c0, n, rows*rb, threads)
			})
			var ks []*Impl
			for _, k := range Available() {
				if k.Name == "scalar" {
					continue
				}
				ks = append(ks, k)
				if k.DotRows4(typ) != nil {
					ks = append(ks, withoutRows4(k))
				}
			}
			for _, k := range ks {
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
// does not inflate it. "rows1" is the same path's one-row dot called four
// times on the same rows (what MatVec did before the routine existed).
// The buffer holds a second group after the first, because the routines
// prefetch the next group's lines as MatVec's rows would have them: a
// prefetch past the end of a 4-row buffer lands on unrelated pages and
// made the routines look slower than they are in MatVec.
func BenchmarkArchRows4Hot(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const cols = 11008
	for _, typ := range dramTypes {
		ws, _ := RowSize(typ, cols)
		w := make([]byte, 8*ws)
		for j := 0; j < 8; j++ {
			copy(w[j*ws:], simdRow(b, r, typ, cols, true))
		}
		a := simdRow(b, r, ActType(typ), cols, false)
		for _, k := range Available() {
			f := k.DotRows4(typ)
			if f == nil {
				continue
			}
			dot := k.Dot(typ)
			rows1 := func(n int, w, a []byte, stride int, y *[4]float32) {
				for j := range y {
					y[j] = dot(n, w[j*stride:j*stride+ws], a)
				}
			}
			for _, v := range []struct {
				name string
				f    DotRows4Func
			}{{"rows4", f}, {"rows1", rows1}} {
				b.Run(fmt.Sprintf("%s/%s/%s", typ, k.Name, v.name), func(b *testing.B) {
					var y [4]float32
					b.SetBytes(int64(4 * ws))
					c0, n := cpuTime(b, rusageThread), 0
					for b.Loop() {
						v.f(cols, w, a, ws, &y)
						n++
					}
					reportCPU(b, cpuTime(b, rusageThread)-c0, n, 4*ws, 1)
				})
			}
		}
	}
}
