//go:build linux

package kernels

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/memvanta/memvanta/core/ggml"
)

// dramTypes are the weight types the DRAM and hot four-row benchmarks cover:
// every type with a four-weight-row routine on some amd64 path.
var dramTypes = []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.IQ4_XS,
	ggml.IQ4_NL, ggml.Q3_K, ggml.Q2_K, ggml.MXFP4, ggml.TQ1_0, ggml.TQ2_0,
	ggml.IQ2_XXS, ggml.IQ2_XS, ggml.IQ2_S}

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
// activation row, on one thread. Each iteration times 50 calls of the
// routine ("rows4") and then 50 calls of four one-row dots on the same rows
// ("rows1", what MatVec did before the routine existed) in thread CPU time
// (CLOCK_THREAD_CPUTIME_ID, the goroutine locked to its thread), and the benchmark reports the
// smallest of each over all iterations as weight GB/s and their ratio: on a
// machine shared with other jobs that is close to the uncontended cost,
// both measured under the same conditions. The buffer holds a second group
// after the first, because the routines prefetch the next group's lines as
// MatVec's rows would have them: a prefetch past the end of a 4-row buffer
// lands on unrelated pages and made the routines look slower than they are
// in MatVec.
func BenchmarkArchRows4Hot(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const cols, calls = 11008, 50
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
			b.Run(fmt.Sprintf("%s/%s", typ, k.Name), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var y [4]float32
				best := [2]time.Duration{1 << 62, 1 << 62}
				for b.Loop() {
					t0 := threadCPU(b)
					for i := 0; i < calls; i++ {
						f(cols, w, a, ws, &y)
					}
					t1 := threadCPU(b)
					for i := 0; i < calls; i++ {
						for j := range y {
							y[j] = dot(cols, w[j*ws:(j+1)*ws], a)
						}
					}
					t2 := threadCPU(b)
					best[0] = min(best[0], t1-t0)
					best[1] = min(best[1], t2-t1)
				}
				bytes := float64(calls * 4 * ws)
				b.ReportMetric(bytes/float64(best[0].Nanoseconds()), "rows4-GB/s")
				b.ReportMetric(bytes/float64(best[1].Nanoseconds()), "rows1-GB/s")
				b.ReportMetric(float64(best[1])/float64(best[0]), "speedup")
			})
		}
	}
}

// threadCPU is the calling thread's CPU time from CLOCK_THREAD_CPUTIME_ID,
// which is exact; getrusage(RUSAGE_THREAD) advances in scheduler ticks,
// too coarse for calls of a few microseconds.
func threadCPU(b *testing.B) time.Duration {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		b.Fatal(e)
	}
	return time.Duration(ts.Nano())
}

// BenchmarkArchRows4DRAM is BenchmarkArchMatVecDRAM's comparison made
// robust on a shared machine: each iteration runs, back to back, the read
// ceiling, the avx2 MatVec and the avx2 MatVec without its four-row routine
// ("rows1"), each on the next matrix of the ring, and the benchmark reports
// for each the fastest call's wall time as GB/s (the call least disturbed
// by other jobs, closest to what a quiet machine gives) and the ratios
// rows4/read and rows4/rows1 of those. Two threads unless -cpu says
// otherwise (GOMAXPROCS); ring and matrices as BenchmarkArchMatVecDRAM.
// The MatVecs run on the avx2 path, or the one MEMVANTA_KERNELS names.
func BenchmarkArchRows4DRAM(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	rows, cols := 4096, 11008
	// MEMVANTA_DRAM_SHAPE="ROWS COLS" measures another shape (row width
	// decides how long the four-row routine's streams are).
	if v := os.Getenv("MEMVANTA_DRAM_SHAPE"); v != "" {
		if _, err := fmt.Sscan(v, &rows, &cols); err != nil || rows < 4 || cols < 256 || cols%256 != 0 {
			b.Fatalf("MEMVANTA_DRAM_SHAPE=%q: want \"ROWS COLS\", COLS a multiple of 256", v)
		}
	}
	path := "avx2"
	if v := os.Getenv("MEMVANTA_KERNELS"); v != "" {
		path = v
	}
	k, err := ByName(path)
	if err != nil {
		b.Skip(err)
	}
	for _, typ := range dramTypes {
		if k.DotRows4(typ) == nil {
			continue
		}
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
		rb := ws &^ 127
		k1 := withoutRows4(k)
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/t%d", typ, threads), func(b *testing.B) {
				p := NewPool(threads)
				defer p.Close()
				grain := MatVecGrain(rows, ws, threads)
				best := [3]time.Duration{1 << 62, 1 << 62, 1 << 62}
				n := 0
				for b.Loop() {
					t0 := time.Now()
					w := ms[n%ring]
					p.Run(rows, grain, func(lo, hi int) {
						for r := lo; r < hi; r++ {
							sums[r] = readSumAVX2(rb, &w[r*ws])
						}
					})
					t1 := time.Now()
					k.MatVec(p, typ, rows, cols, ms[(n+1)%ring], a, y)
					t2 := time.Now()
					k1.MatVec(p, typ, rows, cols, ms[(n+2)%ring], a, y)
					t3 := time.Now()
					n += 3
					best[0] = min(best[0], t1.Sub(t0))
					best[1] = min(best[1], t2.Sub(t1))
					best[2] = min(best[2], t3.Sub(t2))
				}
				read := float64(rows*rb) / float64(best[0].Nanoseconds())
				r4 := float64(rows*ws) / float64(best[1].Nanoseconds())
				r1 := float64(rows*ws) / float64(best[2].Nanoseconds())
				b.ReportMetric(read, "read-GB/s")
				b.ReportMetric(r4, "rows4-GB/s")
				b.ReportMetric(r1, "rows1-GB/s")
				b.ReportMetric(r4/read, "rows4/read")
				b.ReportMetric(r4/r1, "rows4/rows1")
			})
		}
		ms = nil
	}
}

// BenchmarkArchTokenDRAM is one token's generation MatVecs at TinyLlama's
// shape (22 layers of q, k, v, o, gate, up and down: 2048 wide, 256 KV
// rows, 5632 FFN) in file order over one contiguous buffer, on the avx2
// path for 1 and 2 threads, reported as weight GB/s of the fastest pass.
// Short rows and small matrices are what separate a model's token from
// BenchmarkArchRows4DRAM's one wide matrix: per-matrix dispatch, and four-
// row streams that are only as long as a row.
func BenchmarkArchTokenDRAM(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	k, err := ByName("avx2")
	if err != nil {
		b.Skip(err)
	}
	type shape struct{ rows, cols int }
	layer := []shape{{2048, 2048}, {256, 2048}, {256, 2048}, {2048, 2048}, {5632, 2048}, {5632, 2048}, {2048, 5632}}
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.Q4_K, ggml.Q6_K} {
		var total int
		var offs []int
		var shapes []shape
		for l := 0; l < 22; l++ {
			for _, s := range layer {
				ws, _ := RowSize(typ, s.cols)
				offs = append(offs, total)
				shapes = append(shapes, s)
				total += s.rows * ws
			}
		}
		// Every row of every matrix is a whole number of 2048-column rows
		// (5632 = 2.75·2048 columns is 11 of them per 4 rows), so one valid
		// 2048-column row pattern tiles the buffer block-aligned.
		row := simdRow(b, r, typ, 2048, true)
		w := make([]byte, total)
		for i := 0; i+len(row) <= total; i += len(row) {
			copy(w[i:], row)
			w[i+len(row)/2] ^= byte(i >> 7)
		}
		a := simdRow(b, r, ActType(typ), 5632, false)
		y := make([]float32, 5632)
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/t%d", typ, threads), func(b *testing.B) {
				p := NewPool(threads)
				defer p.Close()
				best := time.Duration(1 << 62)
				for b.Loop() {
					t0 := time.Now()
					for i, s := range shapes {
						ws, _ := RowSize(typ, s.cols)
						as, _ := RowSize(ActType(typ), s.cols)
						k.MatVec(p, typ, s.rows, s.cols, w[offs[i]:offs[i]+s.rows*ws], a[:as], y[:s.rows])
					}
					best = min(best, time.Since(t0))
				}
				b.ReportMetric(float64(total)/float64(best.Nanoseconds()), "GB/s")
			})
		}
	}
}
