package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
)

// The AVX2 packed Q8_0 MatMul multiplies int16 by int16 (VPMADDWD), as the
// IQ4_XS one does (gemmiq4xs_amd64.go). A whole Q8_0 byte cannot go into
// VPMADDUBSW's unsigned operand, so the byte kernel it replaces
// (gemmKernelQ8PFAVX2, kept for BenchmarkGemmQ8Alt and the bit-identity
// test) multiplied |w| by sign(a, w): per 32 products a VPSIGNB per token
// and a VPABSB per token pair besides the two multiplies, and on Zen 5
// that ran at ~60% of the Q4_0 kernel's rate, which has no sign step.
// VPMADDWD takes w and a whole: two multiplies and two adds per 32
// products and nothing else, every weight vector loaded once for six
// tokens. The price is twice the bytes: the packed tile (16 rows × 32
// elements as int16 per block) and the activations, widened once per
// MatMul (the prep) and reused by every tile.
//
// Layout (gemmQ8I16BlockB bytes per block of a 16-row tile):
//
//   - vector k (k < 16, 64 bytes at 64k): elements 2k, 2k+1 of each row as
//     an int16 pair, row r at byte 4r (rows 0..7 in the low 32 bytes, 8..15
//     in the high 32);
//   - at gemmQ8I16D: the 16 rows' scales as f32.
//
// The prep of a Q8_0 activation block is its 32 quants as int16, its f32
// scale and four zero bytes (gemmQ8I16PrepB), token by token. Every int32
// block sum is Σ w·a exactly for any quant bytes (|sum| ≤ 32·128·128 =
// 2^19), and each block adds fl(d_a·fl(d_w·float(sum))) to the f32 sum in
// block order, the byte kernels' rounding: the results are theirs bit for
// bit wherever those are exact (activation quants in [-127, 127]).
const (
	gemmQ8I16D      = 16 * 64
	gemmQ8I16BlockB = gemmQ8I16D + 64 // 1088
	gemmQ8I16KB     = gemmKB          // blocks per K-range: 272 KiB packed
	gemmQ8I16PrepB  = 72              // 32 int16 + f32 d_a + 4 zero bytes
	// gemmQ8I16MinBatch is the smallest batch that takes the int16
	// MatMul; smaller ones keep the byte kernel, whose tile is half the
	// bytes to pack and which prefetches the next tile's weights.
	// BenchmarkGemmQ8Alt (one thread, TinyLlama's three shapes), int16
	// over the byte kernel: 0.79-0.86× at batch 4, 0.87-1.02× at 16,
	// 1.02-1.05× at 64, 1.06-1.09× at 128, 1.09-1.13× at 512.
	gemmQ8I16MinBatch = 64
)

// gemmQ8AVX2 is the avx2 path's packed Q8_0 MatMul: the byte kernel's
// routines, with the int16 ones as big from gemmQ8I16MinBatch.
func gemmQ8AVX2(t ggml.Type) *gemmRoutines {
	g := gemm32PF(0, gemmPackQ8_0AVX2, gemmKernelQ8PFAVX2)(t)
	g.big, g.bigFrom = newGemmQ8I16(t), gemmQ8I16MinBatch
	return g
}

// packQ8I16Go is gemmPackQ8I16AVX2 in plain Go, the reference the assembly
// packer is tested against.
func packQ8I16Go(n int, w []byte, ws int, dst []byte) {
	le := binary.LittleEndian
	for b := 0; b < n; b++ {
		o := dst[b*gemmQ8I16BlockB : (b+1)*gemmQ8I16BlockB]
		for r := 0; r < gemmTileRows; r++ {
			x := w[r*ws+b*34 : r*ws+(b+1)*34]
			le.PutUint32(o[gemmQ8I16D+4*r:], math.Float32bits(getF16(x)))
			for k := 0; k < 16; k++ {
				le.PutUint16(o[64*k+4*r:], uint16(int16(int8(x[2+2*k]))))
				le.PutUint16(o[64*k+4*r+2:], uint16(int16(int8(x[3+2*k]))))
			}
		}
	}
}

// newGemmQ8I16 is the packed Q8_0 MatMul in the int16 layout, with the
// bounds discipline of newGemm (the kernel reads the activations only
// through the prep).
func newGemmQ8I16(ggml.Type) *gemmRoutines {
	const bs, abs = 34, 34
	return &gemmRoutines{
		blockB: gemmQ8I16BlockB, prepB: gemmQ8I16PrepB, kb: gemmQ8I16KB, minBatch: gemmMinBatch, prepByToken: true,
		pack: func(n int, w []byte, ws int, dst []byte) {
			if n <= 0 {
				return
			}
			if ws < n*bs || int64(ws)*(gemmTileRows-1) > math.MaxInt32 {
				panic(fmt.Sprintf("kernels: gemm pack Q8_0 int16: row stride %d for %d blocks", ws, n))
			}
			_ = w[(gemmTileRows-1)*ws+n*bs-1]
			_ = dst[n*gemmQ8I16BlockB-1]
			gemmPackQ8I16AVX2(n, &w[0], ws, &dst[0])
		},
		prep: func(n int, a []byte, dst []byte, stride int) {
			if n <= 0 {
				return
			}
			if stride < gemmQ8I16PrepB {
				panic(fmt.Sprintf("kernels: gemm prep Q8_0 int16: stride %d", stride))
			}
			_ = a[n*abs-1]
			_ = dst[(n-1)*stride+gemmQ8I16PrepB-1]
			gemmPrepQ8I16AVX2(n, &a[0], &dst[0], stride)
		},
		kernel: func(n int, pw, _ []byte, _ int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool) {
			f, run := gemmKCall(ggml.Q8_0, gemmQ8I16BlockB, gemmQ8I16PrepB, n, pw, prep, ps, y, ys, ntok, nr, first)
			if !run {
				return
			}
			gemmKernelQ8I16AVX2(n, &pw[0], nil, 0, &prep[0], ps, &y[0], ys*4, ntok, 1<<nr-1, f)
		},
	}
}

//go:noescape
func gemmPackQ8I16AVX2(nblk int, w *byte, ws int, dst *byte)

//go:noescape
func gemmPrepQ8I16AVX2(nblk int, a *byte, dst *byte, stride int)

//go:noescape
func gemmKernelQ8I16AVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
