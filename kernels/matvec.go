package kernels

import (
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
)

// chunkBytes is the weight bytes one pool chunk covers: small enough that a
// 4096-row matrix splits into a few hundred chunks (load balance on a shared
// machine), large enough that the atomic hand-out is noise.
const chunkBytes = 32 << 10

// geometry validates a weight matrix of rows×cols of type t against its
// buffers and returns the weight and activation row sizes. Mismatches are
// programming errors in the graph (shapes come from validated tensor infos),
// so they panic with the offending numbers rather than read out of bounds.
func (k *Impl) geometry(op string, t ggml.Type, rows, cols, nw, na, nb, ny int) (DotFunc, int, int) {
	dot := k.Dot(t)
	if dot == nil {
		panic(fmt.Sprintf("kernels: %s: no %s dot routine for weight type %s", op, k.Name, t))
	}
	ws, err := RowSize(t, cols)
	if err != nil {
		panic(fmt.Sprintf("kernels: %s: %v", op, err))
	}
	as, err := RowSize(ActType(t), cols)
	if err != nil {
		panic(fmt.Sprintf("kernels: %s: %v", op, err))
	}
	if rows < 0 || nb < 0 || nw < rows*ws || na < nb*as || ny < nb*rows {
		panic(fmt.Sprintf("kernels: %s %s %dx%d batch %d: need w %d, a %d, y %d; have %d, %d, %d",
			op, t, rows, cols, nb, rows*ws, nb*as, nb*rows, nw, na, ny))
	}
	return dot, ws, as
}

func grainRows(ws int) int { return max(1, chunkBytes/max(ws, 1)) }

// matVecChunkBytes is the weight bytes a MatVec pool chunk aims at.
// Generation reads every weight byte from DRAM once per token, and a
// chunk is the run of rows one thread streams in sequence: with chunkBytes
// (a few rows) the threads' chunks interleave and each starts on lines the
// hardware prefetcher has not followed yet, and a 4096×11008 Q4_0 MatVec
// streamed ~20 GB/s on 2 threads here; with 0.5–1 MiB chunks it streams
// ~37 GB/s, the machine's DRAM read rate (BenchmarkArchMatVecDRAM).
const matVecChunkBytes = 512 << 10

// MatVecGrain is the rows per pool chunk of a MatVec over rows weight rows
// of ws bytes on threads threads: at most about matVecChunkBytes, aiming at
// a chunk count that is a multiple of threads (so on a quiet machine every
// thread has work until near the end; rounding to whole groups of four rows,
// for the four-weight-row routines, can leave the count a little short). Callers that split generation's matrices
// themselves (the graph's fused dispatches) use it too.
func MatVecGrain(rows, ws, threads int) int {
	threads = max(threads, 1)
	per := threads * matVecChunkBytes
	n := threads * max(1, (rows*max(ws, 1)+per-1)/per)
	g := (rows + n - 1) / n
	return max(4, (g+3)&^3)
}

// MatVec computes y[r] = w[r]·a for rows rows of cols elements of weight
// type t; a is one activation row already in ActType(t) (see QuantizeAct).
// Where the path has a DotRows4Func for t, weight rows go four at a time
// through it (each activation block converted once per four rows) and only
// a chunk's last rows%4 use the one-row routine; results are bit-identical
// either way.
func (k *Impl) MatVec(p *Pool, t ggml.Type, rows, cols int, w, a []byte, y []float32) {
	dot, ws, as := k.geometry("MatVec", t, rows, cols, len(w), len(a), 1, len(y))
	a = a[:as]
	rows4 := k.DotRows4(t)
	grain := MatVecGrain(rows, ws, p.Threads())
	p.Run(rows, grain, func(lo, hi int) {
		r := lo
		if rows4 != nil {
			for ; r+4 <= hi; r += 4 {
				rows4(cols, w[r*ws:(r+4)*ws], a, ws, (*[4]float32)(y[r:r+4]))
			}
		}
		for ; r < hi; r++ {
			y[r] = dot(cols, w[r*ws:(r+1)*ws], a)
		}
	})
}

// MatMul computes y[b*rows+r] = w[r]·a[b] for nb activation rows (prefill).
// A CPU matmul over quantized weights is bound by memory traffic, so the
// loops are tiled: each pool chunk is ~chunkBytes of weight rows, and within
// it the batch is walked in tiles of ~chunkBytes of activation rows, rows
// inside tiles. A weight chunk is thus read from memory once and reused from
// cache for every activation tile, and each activation tile is reused from
// L1/L2 for every row of the chunk (rather than streaming all nb activation
// rows past every single weight row). Where the path has a Dot4Func for t,
// activation rows go four at a time through it, so each weight block is
// unpacked once per four rows; results are bit-identical either way.
//
// Where the path has packed routines for t (avx2 and avx512: Q4_0, Q8_0,
// IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS; neon with ASIMDDP: Q4_0,
// Q8_0, IQ4_NL, Q2_K…Q6_K, IQ4_XS) and the batch has at least the routine's minBatch rows, MatMul
// instead packs 16-row weight tiles into scratch once and runs every
// activation row past them (gemm.go, gemmk.go, gemmk3.go).
// Block integer sums stay exact, but each output's f32 terms are rounded
// and added in a different way than Dot's, so those results are not
// bit-identical to Dot/MatVec: they are within (blocks+1)·u·Σ|block terms|
// of the exact sum, as Dot is (gemm_test.go derives the bound).
func (k *Impl) MatMul(p *Pool, t ggml.Type, rows, cols int, w, a []byte, nb int, y []float32) {
	dot, ws, as := k.geometry("MatMul", t, rows, cols, len(w), len(a), nb, len(y))
	if nb == 0 {
		return
	}
	if g := k.gemmFor(t); g != nil && nb >= g.minBatch && gemmFits(ws) {
		matMulPacked(p, g, t, rows, cols, w, a, nb, y, ws, as, gemmKB)
		return
	}
	dot4 := k.Dot4(t)
	tile := max(1, chunkBytes/max(as, 1))
	if dot4 != nil {
		// Whole groups of four per tile, so only the batch's last tile has
		// rows left for the one-row routine.
		tile = max(4, tile&^3)
	}
	p.Run(rows, grainRows(ws), func(lo, hi int) {
		var o [4]float32
		for b0 := 0; b0 < nb; b0 += tile {
			b1 := min(b0+tile, nb)
			for r := lo; r < hi; r++ {
				wr := w[r*ws : (r+1)*ws]
				b := b0
				if dot4 != nil {
					for ; b+4 <= b1; b += 4 {
						dot4(cols, wr, a[b*as:(b+4)*as], as, &o)
						y[b*rows+r] = o[0]
						y[(b+1)*rows+r] = o[1]
						y[(b+2)*rows+r] = o[2]
						y[(b+3)*rows+r] = o[3]
					}
				}
				for ; b < b1; b++ {
					y[b*rows+r] = dot(cols, wr, a[b*as:(b+1)*as])
				}
			}
		}
	})
}
