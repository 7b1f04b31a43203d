package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
)

// The AVX-512 packed IQ4_XS MatMul multiplies bytes (VPDPBUSD: 64
// products per instruction, twice VPDPWSSD's 32 on the int16 layout of
// gemmiq4xs_amd64.go) and applies each sub-block's scale to the sub-block's
// int32 sum (VPMULLD) instead of folding it into the weights. The weights
// are the codebook values + 128 as unsigned bytes (1..241), the activations
// their signed Q8_K quants, and the +128 is taken out by starting each
// sub-block's sum at −128·Σa over the sub-block (from the Q8_K block's
// bsums, part of the activation contract the K-quant MatMuls already use).
//
// Layout (gemmIQ4XS8BlockB bytes per super-block of a 16-row tile):
//
//   - sub-block s at 576s: vector j (j < 8, 64 bytes) holds elements
//     32s+4j..32s+4j+3 of each row as value + 128, row r at bytes 4r..4r+3;
//     at 576s + 512 the rows' scale codes − 32 (−32..31) as int32;
//   - at gemmIQ4XS8D: d as f32.
//
// The prep of a Q8_K activation block (gemmIQ4XS8PrepB bytes, token-major
// like the int16 prep): sub-block s's 32 quants at 36s and −128·Σ of them as
// int32 at 36s + 32, the f32 scale at 288.
//
// Exactness: per row, token and sub-block the sub-block sum starts at
// −128·Σa (|·| ≤ 128·32·128 = 2^19) and each VPDPBUSD adds four products
// of at most 241·128 (< 2^15), 32 products in all, so every partial sum is
// below 2^19 + 2^20 in magnitude and the final one is Σ v·a exactly,
// |Σ v·a| ≤ 32·127·128 < 2^19. Times |sc| ≤ 32 that is < 2^24, and the
// super-block's eight < 2^27 < 2^31: the int32 sum Σ_s sc_s·Σ v·a is
// dotIQ4_XS's integer exactly, the same integer the int16 kernel forms, and
// the float steps after it are that kernel's, so the outputs are equal bit
// for bit (TestGemmIQ4XSAVX512MatchesAVX2).
const (
	gemmIQ4XS8D      = 8 * 576
	gemmIQ4XS8BlockB = gemmIQ4XS8D + 64 // 4672
	// gemmIQ4XS8KB is super-blocks per K-range: 219 KiB packed, in L2 on
	// Zen 4/5 and Intel's server parts (1 MiB and up), and whole rows up
	// to 12288 columns
	// (then each output is written once and kernelPF applies). Against 24
	// at 2048×11008 (Llama-7B's FFN down), one thread: 1.09× at 64 tokens,
	// 1.02× at 512; rows up to 6144 columns are one range either way.
	gemmIQ4XS8KB    = 48
	gemmIQ4XS8PrepB = 296 // 8·(32 quants + int32) + f32 d_a + pad
)

// packIQ4XS8 packs super-blocks [0, n) of the 16 IQ4_XS rows w[r·ws:] into
// dst in the layout above: values and scales in assembly, the d's here.
func packIQ4XS8(n int, w []byte, ws int, dst []byte) {
	if n <= 0 {
		return
	}
	if ws < n*136 {
		panic(fmt.Sprintf("kernels: gemm pack IQ4_XS: row stride %d for %d blocks", ws, n))
	}
	_ = w[(gemmTileRows-1)*ws+n*136-1]
	_ = dst[n*gemmIQ4XS8BlockB-1]
	gemmPackIQ4XS8AVX2(n, &w[0], ws, &dst[0])
	le := binary.LittleEndian
	for b := 0; b < n; b++ {
		o := (*[gemmIQ4XS8BlockB]byte)(dst[b*gemmIQ4XS8BlockB:])
		for r := 0; r < gemmTileRows; r++ {
			le.PutUint32(o[gemmIQ4XS8D+4*r:], math.Float32bits(getF16(w[r*ws+b*136:])))
		}
	}
}

// packIQ4XS8Go is packIQ4XS8 in plain Go, the reference the assembly packer
// is tested against.
func packIQ4XS8Go(n int, w []byte, ws int, dst []byte) {
	le := binary.LittleEndian
	for b := 0; b < n; b++ {
		o := (*[gemmIQ4XS8BlockB]byte)(dst[b*gemmIQ4XS8BlockB:])
		for r := 0; r < gemmTileRows; r++ {
			x := (*[136]byte)(w[r*ws+b*136:])
			le.PutUint32(o[gemmIQ4XS8D+4*r:], math.Float32bits(getF16(x[0:])))
			for s := 0; s < 8; s++ {
				le.PutUint32(o[576*s+512+4*r:], uint32(iq4xsScale(x[:], s)-32))
				q := x[8+16*s:]
				for i := 0; i < 32; i++ {
					idx := q[i%16] & 15
					if i >= 16 {
						idx = q[i-16] >> 4
					}
					o[576*s+64*(i/4)+4*r+i%4] = uint8(int(kvaluesIQ4NL[idx]) + 128)
				}
			}
		}
	}
}

// prepQ8KI8Go is the byte layout's prep of one Q8_K block in plain Go (the
// reference for gemmPrepQ8KI8AVX512), from the quants themselves rather
// than bsums.
func prepQ8KI8Go(a, dst []byte) {
	le := binary.LittleEndian
	copy(dst[288:292], a[0:4])
	le.PutUint32(dst[292:], 0)
	for s := 0; s < 8; s++ {
		sum := int32(0)
		for i := 0; i < 32; i++ {
			q := int8(a[4+32*s+i])
			dst[36*s+i] = byte(q)
			sum += int32(q)
		}
		le.PutUint32(dst[36*s+32:], uint32(-128*sum))
	}
}

// gemmIQ4XS8PFIters is how many super-block iterations the byte kernel
// makes for n super-blocks and ntok tokens: n per token group (12 at a
// time, then one each of 8, 4, 2, 1 as the rest needs).
func gemmIQ4XS8PFIters(n, ntok int) int {
	g, rest := ntok/12, ntok%12
	for _, t := range []int{8, 4, 2, 1} {
		if rest >= t {
			g, rest = g+1, rest-t
		}
	}
	return n * g
}

// newGemmIQ4XS8AVX512 is the packed IQ4_XS MatMul in the byte layout, with
// the bounds discipline of newGemmIQ4XS16, and kernelPF: the kernel
// prefetching the next tile's weight rows (contiguous when a K-range is a
// whole row) across its super-block iterations, so the next pack finds
// them in cache instead of waiting for memory (the pack's loads were where
// its profile samples sat).
func newGemmIQ4XS8AVX512(ggml.Type) *gemmRoutines {
	const abs = len(q8kBlock{})
	kernel := func(n int, pw []byte, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool, next []byte, step int) {
		f, run := gemmKCall(ggml.IQ4_XS, gemmIQ4XS8BlockB, gemmIQ4XS8PrepB, n, pw, prep, ps, y, ys, ntok, nr, first)
		if !run {
			return
		}
		pf := &pw[0]
		if step > 0 {
			pf = &next[0]
		}
		gemmKernelIQ4XS8AVX512(n, &pw[0], nil, 0, &prep[0], ps, &y[0], ys*4, ntok, 1<<nr-1, f, pf, step)
	}
	return &gemmRoutines{
		blockB: gemmIQ4XS8BlockB, prepB: gemmIQ4XS8PrepB, kb: gemmIQ4XS8KB, minBatch: gemmIQ4XSMinBatch, prepByToken: true,
		pack: packIQ4XS8,
		prep: func(n int, a []byte, dst []byte, stride int) {
			if n <= 0 {
				return
			}
			if stride < gemmIQ4XS8PrepB {
				panic(fmt.Sprintf("kernels: gemm prep IQ4_XS: stride %d", stride))
			}
			_ = a[n*abs-1]
			_ = dst[(n-1)*stride+gemmIQ4XS8PrepB-1]
			gemmPrepQ8KI8AVX512(n, &a[0], &dst[0], stride)
		},
		kernel: func(n int, pw, _ []byte, _ int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool) {
			kernel(n, pw, prep, ps, y, ys, ntok, nr, first, nil, 0)
		},
		kernelPF: func(n int, pw, _ []byte, _ int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool, next []byte) {
			// Three lines per iteration: the last hint, (iters−1)·step
			// + 128, stays inside next (gemmPFStep).
			kernel(n, pw, prep, ps, y, ys, ntok, nr, first, next, gemmPFStep(gemmIQ4XS8PFIters(n, ntok), len(next)))
		},
	}
}

//go:noescape
func gemmPackIQ4XS8AVX2(nblk int, w *byte, ws int, dst *byte)

//go:noescape
func gemmPrepQ8KI8AVX512(nblk int, a *byte, dst *byte, stride int)

//go:noescape
func gemmKernelIQ4XS8AVX512(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int, pf *byte, pfstep int)
