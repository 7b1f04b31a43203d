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
// Each pool chunk goes through MatVecRows; results are bit-identical to
// one dot per row.
func (k *Impl) MatVec(p *Pool, t ggml.Type, rows, cols int, w, a []byte, y []float32) {
	dot, ws, as := k.geometry("MatVec", t, rows, cols, len(w), len(a), 1, len(y))
	a = a[:as]
	rows4 := k.DotRows4(t)
	grain := MatVecGrain(rows, ws, p.Threads())
	p.Run(rows, grain, func(lo, hi int) {
		MatVecRows(dot, rows4, cols, ws, w, a, y, lo, hi)
	})
}

// MatVecRows computes y[r] = w[r]·a for the weight rows [lo, hi) of ws
// bytes (cols elements) in w, with the four-weight-row routine rows4 where
// it is not nil and dot for the rest; each y[r] is bit-identical to
// dot(cols, w[r·ws:], a) (the kernels contract), so the order is free.
//
// The order is chosen for DRAM: each piece of up to rows4Piece rows is cut
// into four contiguous quarters and rows4 takes one row of each (r, r+q,
// r+2q, r+3q: stride q rows), so the routine reads four long sequential
// streams that the hardware prefetchers follow. Taking four adjacent rows
// instead makes four streams one row long (2–6 KiB at TinyLlama's and 7B's
// widths) that jump every row: the prefetchers never train, and even with
// software prefetches of the next group a 2048-column Q6_K MatVec streamed
// 9.5 GB/s on one thread here against 18–19 GB/s in quarters
// (BenchmarkArchRows4DRAM with MEMVANTA_DRAM_SHAPE="22016 2048").
func MatVecRows(dot DotFunc, rows4 DotRows4Func, cols, ws int, w, a []byte, y []float32, lo, hi int) {
	r := lo
	if rows4 != nil {
		// rows4 writes the four results of quarter row i to y[r+4i:r+4i+4]
		// (a *[4]float32 into y: one into a local array would escape to
		// the heap on every call through the function value), and the
		// piece is then transposed into place through buf.
		var buf [rows4Piece]float32
		for hi-r >= 4 {
			n := min(hi-r, rows4Piece) &^ 3
			q := n / 4
			for i := 0; i < q; i++ {
				rows4(cols, w[(r+i)*ws:(r+i+3*q+1)*ws], a, q*ws, (*[4]float32)(y[r+4*i:r+4*i+4]))
			}
			copy(buf[:n], y[r:r+n])
			for i := 0; i < q; i++ {
				y[r+i], y[r+q+i], y[r+2*q+i], y[r+3*q+i] = buf[4*i], buf[4*i+1], buf[4*i+2], buf[4*i+3]
			}
			r += n
		}
	}
	for ; r < hi; r++ {
		y[r] = dot(cols, w[r*ws:(r+1)*ws], a)
	}
}

// rows4Piece is the most rows MatVecRows quarters at once: a stream of a
// quarter is then up to 128 rows (147 KiB of 2048-column Q4_0), long enough
// for the prefetchers, and the transpose buffer stays a small stack array.
const rows4Piece = 512

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
// IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS, IQ2_XXS/XS/S; neon with ASIMDDP: Q4_0,
// Q8_0, IQ4_NL, Q2_K…Q6_K, IQ4_XS) and the batch has at least the routine's minBatch rows, MatMul
// instead packs 16-row weight tiles into scratch once and runs every
// activation row past them (gemm.go, gemmk.go, gemmkq2q3.go, iq2gemm_amd64.go).
// Block integer sums stay exact, but each output's f32 terms are rounded
// and added in a different way than Dot's, so those results are not
// bit-identical to Dot/MatVec: they are within (blocks+1)·u·Σ|block terms|
// of the exact sum, as Dot is (gemm_test.go derives the bound). The packed
// routines take a as QuantizeAct writes it: the avx2 Q8_0 kernel assumes
// activation quants in [-127, 127] in every block whose scale is nonzero
// (hand-made blocks with -128 there come out wrong where w < 0).
func (k *Impl) MatMul(p *Pool, t ggml.Type, rows, cols int, w, a []byte, nb int, y []float32) {
	dot, ws, as := k.geometry("MatMul", t, rows, cols, len(w), len(a), nb, len(y))
	if nb == 0 {
		return
	}
	if g := k.gemmFor(t); g != nil && nb >= g.minBatch && gemmFits(ws) {
		matMulPacked(p, g.forBatch(nb), t, rows, cols, w, a, nb, y, ws, as, gemmKB)
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
