package kernels

import (
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/memvanta/memvanta/core/ggml"
)

// Packed matrix × matrix for prefill (BLIS-style, no persistent copy).
//
// The one-weight-row Dot4 kernels unpack every weight block again for each
// group of four activation rows, and that unpacking plus their horizontal
// sums dominated prefill. Here a tile of gemmTileRows weight rows × a range
// of at most gemmKB blocks is unpacked once into a per-worker scratch (at
// most 147 KiB, so it stays in L2 while every activation row of the batch
// streams past it): per 32-element block, eight 64-byte vectors — vector j holds,
// for the dword group j (elements 4j..4j+3), those four quants of each of
// the 16 rows as unsigned bytes (Q4_0: q in 0..15; Q8_0: w+128, or w
// itself for AVX2's |w|·sign(a, w) kernel; IQ4_NL on avx512 and neon: its
// codebook value + 128) — then the
// 16 rows' scales as f32. One VPDPBUSD of vector j with activation dword j
// broadcast adds four products to each row's lane, so eight give 16 exact
// block sums at once with no horizontal reduction (the AVX2 Q4_0 kernel
// does the same with VPMADDUBSW on each 32-byte half). The unsigned offset is
// removed by starting each sum at -off·Σa, precomputed once per MatMul per
// activation block together with the f32 activation scale (gemmPrep).
//
// The model's weights stay where they are (mmap): only the tile is copied,
// and each weight byte is read from memory once per MatMul. A K-range
// covers whole rows up to 8192 columns, so each output is written once;
// with 32-block ranges the reloads of partial outputs from beyond L2 cost
// ~20% at 5632 columns and a 512-row batch (single-thread CPU time).
// Longer rows continue the same f32 chain through y, range by range.

const (
	gemmTileRows  = 16
	gemmKB        = 256 // blocks per K-range (147 KiB packed, in L2)
	gemmBlockB    = 576 // packed bytes per block: 8 quant vectors + 1 scale vector
	gemmPrepBytes = 8   // per activation block: int32 -off·Σq, f32 scale
	// gemmMinBatch is the smallest batch that takes the packed path. From
	// two rows up packing already beat the Dot4 path (single-thread CPU
	// time, 2048×2048 and 2048×5632, Q4_0 and Q8_0: 1.2-2.5× at batches
	// 2..6); one row is MatVec's job and measured no faster packed.
	gemmMinBatch = 2
)

// gemmRoutines is one path's packed-GEMM routines for one weight type. The
// contracts (all bounds are checked by the implementations, which panic on a
// caller bug rather than read out of bounds):
//
//   - pack(n, w, ws, dst) packs blocks [0, n) of the 16 rows w[i·ws:] into
//     dst (n·gemmBlockB bytes) in the layout above.
//   - prep(n, a, dst, stride) writes, for the n consecutive activation blocks
//     of a, the int32 -off·Σq and the f32 scale to dst[i·stride:].
//   - kernel(n, pw, a, as, prep, ps, y, ys, ntok, nr, first) adds, for each
//     token t < ntok, the n packed blocks pw against activation row
//     a[t·as:] (prep entries prep[t·prepB + i·ps:], or prep[t·ps + i·prepB:]
//     with prepByToken) into y[t·ys + r], r < nr, in block order, starting
//     from zero if first.
//
// Activation quants are QuantizeAct's, in [-127, 127] for every block with
// a nonzero scale (TestQuantizeActQ8_0Range): the AVX2 Q8_0 kernel's
// sign(a, w) relies on it (-128 would wrap); the other kernels are exact
// for any byte.
//
// The sizes above are the 32-element layout's; a type with another packed
// layout (the K-quant super-blocks, gemmk.go) states its own in blockB (packed
// bytes per weight block for the 16 rows), prepB (prep bytes per activation
// block), kb (blocks per K-range) and minBatch (smallest batch MatMul packs
// for).
type gemmRoutines struct {
	pack   func(n int, w []byte, ws int, dst []byte)
	prep   func(n int, a []byte, dst []byte, stride int)
	kernel func(n int, pw, a []byte, as int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool)
	// kernelPF, where a path has it, is kernel that also prefetches the
	// bytes of next (the weight rows packed after this tile) spread over
	// its block iterations; results are kernel's, bit for bit.
	kernelPF func(n int, pw, a []byte, as int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool, next []byte)

	blockB, prepB, kb, minBatch int
	// off is the unsigned offset added to the quants of the 32-element
	// layouts (Q4_0: 8, Q8_0: 128 for VPDPBUSD; 0 for the AVX2 Q8_0
	// kernel, which keeps them signed): the prep's integer is -off·Σa.
	off int
	// prepByToken lays the prep out token by token (each token's blocks
	// adjacent) instead of block by block, and the kernel's ps is then the
	// stride between tokens: for a prep of hundreds of bytes per block, which
	// the kernel streams through a whole K-range for each token.
	prepByToken bool
	// big, where set, is another routine set for the same type that
	// MatMul takes instead from batches of bigFrom rows (the avx2 Q8_0
	// int16 MatMul, faster at large batches and slower at small ones).
	big     *gemmRoutines
	bigFrom int
}

// forBatch is the routine set g's MatMul runs for a batch of nb rows.
func (g *gemmRoutines) forBatch(nb int) *gemmRoutines {
	if g.big != nil && nb >= g.bigFrom {
		return g.big
	}
	return g
}

// gemmBuffers is the packed MatMul's scratch, reused across calls on one
// Pool (which lives as long as its model): without it every prefill MatMul
// left up to a few MiB of garbage, which raised peak RSS by ~80 MiB on
// TinyLlama pp512. The buffers carry no state between calls: every byte is
// written before it is read.
type gemmBuffers struct {
	prep  sync.Pool // *[]byte: activation prep
	tiles sync.Pool // *gemmScratch: one worker's packed tile
}

// gemmFits reports whether weight rows of ws bytes can take the packed
// path: the packers address a tile's 16 rows with 32-bit offsets (rows of
// over 134 M elements, far beyond any model, keep the Dot4 path).
func gemmFits(ws int) bool { return ws <= math.MaxInt32/gemmTileRows }

// gemmFor returns k's packed routines for t, or nil.
func (k *Impl) gemmFor(t ggml.Type) *gemmRoutines {
	if r := k.row(t); r != nil {
		return r.gemm
	}
	return nil
}

// aligned64 returns n bytes of buf starting at a 64-byte boundary (buf has
// n+63 bytes), so packed vectors never straddle cache lines.
func aligned64(buf []byte, n int) []byte {
	off := int((64 - uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%64) % 64)
	return buf[off : off+n]
}

// matMulPacked is MatMul through g with K-ranges of kb ≤ gemmKB blocks
// (geometry already validated by the caller: w holds rows×ws bytes, a
// nb×as, y nb×rows). Each output is the
// sum over blocks, in block order, of d_a·(d_w·Σ_block w·a): integer parts
// exact, only the f32 rounding of each term and of the running sum differ
// from Dot (see the bound in gemm_test.go).
func matMulPacked(p *Pool, g *gemmRoutines, t ggml.Type, rows, cols int, w, a []byte, nb int, y []float32, ws, as, kb int) {
	bs := t.TypeSize()
	abs := ActType(t).TypeSize()
	nblocks := cols / t.BlockSize()
	if rows == 0 || nb == 0 || nblocks == 0 {
		clear(y[:nb*rows])
		return
	}
	bufs := p.gemmBuffers()
	// Token b's prep of block i is at b·ts + i·bs: block-major (a block's
	// tokens adjacent, ps = bs the kernel's stride between blocks) or, for
	// prepByToken, token-major (ps = ts, the stride between tokens).
	ts, bsp, ps := g.prepB, nb*g.prepB, nb*g.prepB
	if g.prepByToken {
		ts, bsp = nblocks*g.prepB, g.prepB
		ps = ts
	}
	var prep []byte // none when the activation blocks carry all the kernel needs
	if g.prepB > 0 {
		pb, _ := bufs.prep.Get().(*[]byte)
		if pb == nil || cap(*pb) < nb*nblocks*g.prepB {
			b := make([]byte, nb*nblocks*g.prepB)
			pb = &b
		}
		defer bufs.prep.Put(pb)
		prep = (*pb)[:nb*nblocks*g.prepB]
		p.Run(nb, max(1, 4096/nblocks), func(lo, hi int) {
			for b := lo; b < hi; b++ {
				g.prep(nblocks, a[b*as:(b+1)*as], prep[b*ts:], bsp)
			}
		})
	}
	kb = min(max(kb, 1), g.kb, nblocks)
	tileB := g.kb * g.blockB
	ntiles := (rows + gemmTileRows - 1) / gemmTileRows
	// Tiles are claimed one at a time from a shared counter (load balance
	// on a shared machine), but each worker claims its next tile before
	// computing the current one, so that with one K-range per row (the
	// next pack reads whole, contiguous rows) kernelPF can prefetch the
	// next tile's weights while this tile computes: at decode-sized batches
	// the pack is DRAM-bound and the kernel is short, and without the
	// overlap each tile waited for memory, then for arithmetic.
	var claimed atomic.Int64
	claim := func() int { return int(claimed.Add(1) - 1) }
	workers := 1
	if p != nil {
		workers = max(1, p.threads)
	}
	p.Run(min(workers, ntiles), 1, func(_, _ int) {
		s, _ := bufs.tiles.Get().(*gemmScratch)
		if s == nil || len(s.raw) < tileB+63 {
			// The pool is shared by every type's packed MatMul: a
			// scratch too small for this type's tile is replaced.
			s = &gemmScratch{raw: make([]byte, tileB+63)}
		}
		s.pw = aligned64(s.raw, tileB)
		defer bufs.tiles.Put(s)
		for tile := claim(); tile < ntiles; {
			// Claiming ahead holds a tile back from the other workers:
			// within the last tiles it could leave one idle while this
			// one computes two, so there each takes its next tile only
			// when done (and goes without the prefetch).
			next, ahead := 0, int(claimed.Load()) < ntiles-workers
			if ahead {
				next = claim()
			}
			r0 := tile * gemmTileRows
			nr := min(gemmTileRows, rows-r0)
			for k0 := 0; k0 < nblocks; k0 += kb {
				n := min(kb, nblocks-k0)
				if nr == gemmTileRows {
					g.pack(n, w[r0*ws+k0*bs:(r0+nr-1)*ws+(k0+n)*bs], ws, s.pw)
				} else {
					// Short last tile: copy its rows' range and pad with
					// zero rows (their lanes are masked off on output).
					rs := n * bs
					if len(s.tail) < gemmTileRows*rs {
						s.tail = make([]byte, gemmTileRows*g.kb*bs)
					}
					tail := s.tail[:gemmTileRows*rs]
					clear(tail[nr*rs:])
					for i := 0; i < nr; i++ {
						copy(tail[i*rs:(i+1)*rs], w[(r0+i)*ws+k0*bs:])
					}
					g.pack(n, tail, rs, s.pw)
				}
				if g.kernelPF != nil && n == nblocks && ahead && next < ntiles {
					n0 := next * gemmTileRows
					src := w[n0*ws : min(len(w), min(rows, n0+gemmTileRows)*ws)]
					g.kernelPF(n, s.pw, a[k0*abs:], as, prep[k0*bsp:], ps, y[r0:], rows, nb, nr, k0 == 0, src)
				} else {
					g.kernel(n, s.pw, a[k0*abs:], as, prep[k0*bsp:], ps, y[r0:], rows, nb, nr, k0 == 0)
				}
			}
			if !ahead {
				next = claim()
			}
			tile = next
		}
	})
}

// gemmScratch is one worker's packed tile (kb blocks) and, for a short
// last tile, the zero-padded copy of its rows.
type gemmScratch struct {
	raw, pw, tail []byte
}
