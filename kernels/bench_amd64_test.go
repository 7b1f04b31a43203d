//go:build linux

package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/cpuid/v2"

	"github.com/memvanta/memvanta/core/ggml"
)

// cpuTime is the CPU time consumed so far by the calling thread (who =
// RUSAGE_THREAD) or the whole process (RUSAGE_SELF). On a machine shared with
// other jobs, wall time mostly measures the queue for a core; CPU time per op
// is what the kernel itself costs, so the benchmarks report both.
func cpuTime(b *testing.B, who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const rusageThread = 1 // RUSAGE_THREAD (Linux)

// reportCPU adds cpu-ns/op and the weight GB/s the routine would reach with
// every one of threads threads on a core of its own (cpuGB/s).
func reportCPU(b *testing.B, cpu time.Duration, n, bytes, threads int) {
	if n == 0 || cpu <= 0 {
		return
	}
	ns := float64(cpu.Nanoseconds()) / float64(n)
	b.ReportMetric(ns, "cpu-ns/op")
	b.ReportMetric(float64(bytes)*float64(threads)/ns, "cpuGB/s")
}

// BenchmarkArchMatVec runs MatVec for every path side by side (so a busy
// shared machine affects them alike) and reports weight GB/s. Shapes are the
// Llama-7B FFN (4096 rows × 11008 cols) and attention (4096 × 4096).
func BenchmarkArchMatVec(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := []struct{ rows, cols int }{{4096, 11008}, {4096, 4096}}
	types := []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.Q4_K, ggml.Q6_K, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1,
		ggml.Q2_K, ggml.Q3_K, ggml.Q5_K, ggml.IQ4_NL, ggml.IQ4_XS, ggml.MXFP4, ggml.TQ1_0, ggml.TQ2_0, ggml.F16, ggml.BF16, ggml.F32,
		ggml.IQ2_XXS, ggml.IQ2_XS, ggml.IQ2_S}
	for _, sh := range shapes {
		for _, typ := range types {
			if sh.cols != 11008 && typ != ggml.Q4_0 && typ != ggml.Q4_K {
				continue
			}
			ws, _ := RowSize(typ, sh.cols)
			w := make([]byte, sh.rows*ws)
			row := simdRow(b, r, typ, sh.cols, true)
			for i := 0; i < sh.rows; i++ {
				copy(w[i*ws:], row)
				w[i*ws+ws/2] ^= byte(i) // rows differ, scales stay valid
			}
			a := simdRow(b, r, ActType(typ), sh.cols, false)
			y := make([]float32, sh.rows)
			for _, threads := range []int{1, 2} {
				p := NewPool(threads)
				for _, k := range Available() {
					b.Run(fmt.Sprintf("%dx%d/%s/%s/t%d", sh.rows, sh.cols, typ, k.Name, threads), func(b *testing.B) {
						b.SetBytes(int64(len(w)))
						c0, n := cpuTime(b, syscall.RUSAGE_SELF), 0
						for b.Loop() {
							k.MatVec(p, typ, sh.rows, sh.cols, w, a, y)
							n++
						}
						reportCPU(b, cpuTime(b, syscall.RUSAGE_SELF)-c0, n, len(w), threads)
					})
				}
				p.Close()
			}
		}
	}
}

// BenchmarkArchReadBW is the ceiling: the same pool and chunking as MatVec
// over a 4096×11008 Q4_0 matrix, but only reading the bytes.
func BenchmarkArchReadBW(b *testing.B) {
	rows, ws := 4096, 11008/32*18
	w := make([]byte, rows*ws)
	for i := range w {
		w[i] = byte(i)
	}
	sums := make([]uint64, rows)
	for _, threads := range []int{1, 2} {
		p := NewPool(threads)
		b.Run(fmt.Sprintf("t%d", threads), func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			c0, n := cpuTime(b, syscall.RUSAGE_SELF), 0
			for b.Loop() {
				p.Run(rows, grainRows(ws), func(lo, hi int) {
					for r := lo; r < hi; r++ {
						sums[r] = readSumAVX2(ws, &w[r*ws])
					}
				})
				n++
			}
			reportCPU(b, cpuTime(b, syscall.RUSAGE_SELF)-c0, n, len(w), threads)
		})
		p.Close()
	}
}

// BenchmarkArchDot times one 11008-element row dot (weights and activations
// in L1/L2), the compute ceiling of each routine, in weight GB/s.
func BenchmarkArchDot(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range simdTypes {
		n := 11008
		w := simdRow(b, r, typ, n, true)
		a := simdRow(b, r, ActType(typ), n, false)
		for _, k := range Available() {
			dot := k.Dot(typ)
			b.Run(fmt.Sprintf("%s/%s", typ, k.Name), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(len(w)))
				var s float32
				c0, it := cpuTime(b, rusageThread), 0
				for b.Loop() {
					s += dot(n, w, a)
					it++
				}
				reportCPU(b, cpuTime(b, rusageThread)-c0, it, len(w), 1)
				_ = s
			})
		}
	}
}

// BenchmarkArchAVX512vsAVX2 decides which routines the avx512 path takes: on
// a shared machine wall times of separate benchmarks are mostly queueing, so
// it alternates short bursts (100 calls on an 11008-element row) of the AVX2
// and the AVX-512 routine and reports the fastest burst of each per call —
// the uncontended cost, measured under the same conditions for both.
func BenchmarkArchAVX512vsAVX2(b *testing.B) {
	if !cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512VNNI) {
		b.Skip("no AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(5, 6))
	avx2 := map[ggml.Type]asmDot{}
	for _, d := range avx2Rows {
		avx2[d.t] = d.dot
	}
	for _, d := range avx512Rows {
		if d.dot == nil {
			continue
		}
		n := 11008
		w := simdRow(b, r, d.t, n, true)
		a := simdRow(b, r, ActType(d.t), n, false)
		nb := n / d.t.BlockSize()
		b.Run(d.t.String(), func(b *testing.B) {
			best := [2]time.Duration{1 << 62, 1 << 62}
			for b.Loop() {
				for i, f := range []asmDot{avx2[d.t], d.dot} {
					t0 := time.Now()
					for k := 0; k < 100; k++ {
						f(nb, &w[0], &a[0])
					}
					best[i] = min(best[i], time.Since(t0))
				}
			}
			b.ReportMetric(float64(best[0].Nanoseconds())/100, "avx2-min-ns")
			b.ReportMetric(float64(best[1].Nanoseconds())/100, "avx512-min-ns")
			b.ReportMetric(float64(best[0])/float64(best[1]), "speedup")
		})
	}
}
