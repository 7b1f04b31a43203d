package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
)

// Packed MatMul on NEON with ASIMDDP: gemm.go's 32-element layout and
// activation prep, packed and prepared in Go (Q4_0, Q8_0, IQ4_NL;
// gemm_arm64.s), and gemmk.go's Q4_K layout with its Go packers (Q4_K,
// Q5_K; gemmk_arm64.s), with SDOT-by-element kernels. CPUs without the
// dot-product extension keep the Dot4 routines.
// The speed of this path is unmeasured (it was only run under qemu), so
// gemmNEONMinBatch is a guess: packing is Go code paid once per MatMul.
const gemmNEONMinBatch = 8

// gemmNEONTmpTok is how many tokens of a short last tile (fewer than 16
// rows) go through the kernel's 16-wide scratch at a time (4 KiB of stack).
const gemmNEONTmpTok = 64

// gemmNEONDot is an archRow's packed MatMul (newGemmNEON) with packed
// weights offset by off.
func gemmNEONDot(off int, kernel neonGemmKernel) func(ggml.Type) *gemmRoutines {
	return func(t ggml.Type) *gemmRoutines { return newGemmNEON(t, off, kernel) }
}

type neonGemmKernel func(nblk int, pw, a *byte, as int, prep *byte, pstride int, y *float32, ys, ntok, first int)

// newGemmNEON wraps a kernel with gemm.go's contracts and bounds checks. A
// short last tile (nr < 16 rows: the packer zero-padded the rest) goes
// through a 16-wide scratch, as the kernel always stores 16 lanes.
func newGemmNEON(t ggml.Type, off int, kernel neonGemmKernel) *gemmRoutines {
	bs := t.TypeSize()
	const abs = 34 // Q8_0 activation block
	return &gemmRoutines{
		off: off, blockB: gemmBlockB, prepB: gemmPrepBytes, kb: gemmKB, minBatch: gemmNEONMinBatch,
		pack: func(n int, w []byte, ws int, dst []byte) {
			if n <= 0 {
				return
			}
			if ws < n*bs {
				panic(fmt.Sprintf("kernels: gemm pack %s: row stride %d for %d blocks", t, ws, n))
			}
			_ = w[(gemmTileRows-1)*ws+n*bs-1]
			_ = dst[n*gemmBlockB-1]
			packGemm32(t, n, w, ws, dst)
		},
		prep: func(n int, a []byte, dst []byte, stride int) {
			if n <= 0 {
				return
			}
			if stride < gemmPrepBytes {
				panic(fmt.Sprintf("kernels: gemm prep: stride %d", stride))
			}
			_ = a[n*abs-1]
			_ = dst[(n-1)*stride+gemmPrepBytes-1]
			prepGemmQ8_0(n, a, int32(off), dst, stride)
		},
		kernel: func(n int, pw, a []byte, as int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool) {
			if ntok <= 0 || nr <= 0 {
				return
			}
			if nr > gemmTileRows || as < n*abs || ps < ntok*gemmPrepBytes || ys < nr {
				panic(fmt.Sprintf("kernels: gemm kernel: %d rows, strides a %d prep %d y %d for %d blocks × %d tokens", nr, as, ps, ys, n, ntok))
			}
			_ = y[(ntok-1)*ys+nr-1]
			if n <= 0 {
				if first {
					for i := 0; i < ntok; i++ {
						clear(y[i*ys : i*ys+nr])
					}
				}
				return
			}
			_ = pw[n*gemmBlockB-1]
			_ = a[(ntok-1)*as+n*abs-1]
			_ = prep[(n-1)*ps+ntok*gemmPrepBytes-1]
			f := 0
			if first {
				f = 1
			}
			if nr == gemmTileRows {
				kernel(n, &pw[0], &a[0], as, &prep[0], ps, &y[0], ys, ntok, f)
				return
			}
			// Short tile: groups of up to gemmNEONTmpTok tokens through a
			// stack buffer (no allocation per call).
			var tmp [gemmNEONTmpTok * gemmTileRows]float32
			for t0 := 0; t0 < ntok; t0 += gemmNEONTmpTok {
				nt := min(gemmNEONTmpTok, ntok-t0)
				if !first {
					for i := 0; i < nt; i++ {
						copy(tmp[i*gemmTileRows:], y[(t0+i)*ys:(t0+i)*ys+nr])
					}
				}
				kernel(n, &pw[0], &a[t0*as], as, &prep[t0*gemmPrepBytes], ps, &tmp[0], gemmTileRows, nt, f)
				for i := 0; i < nt; i++ {
					copy(y[(t0+i)*ys:(t0+i)*ys+nr], tmp[i*gemmTileRows:i*gemmTileRows+nr])
				}
			}
		},
	}
}

// packGemm32 writes gemm.go's 32-element layout for Q4_0, Q8_0 or IQ4_NL:
// for block b, vector j, lane r, bytes 4j..4j+3 of row r's block as
// unsigned quants (Q4_0: element e is the low nibble of qs[e] for e < 16,
// the high nibble of qs[e-16] otherwise; Q8_0: the byte + 128; IQ4_NL: the
// codebook value of Q4_0's nibble + 128), then the 16 scales as f32.
func packGemm32(t ggml.Type, n int, w []byte, ws int, dst []byte) {
	if t == ggml.MXFP4 {
		packGemm32MXFP4(128, n, w, ws, dst) // mxfp4.go
		return
	}
	bs := t.TypeSize()
	for b := 0; b < n; b++ {
		o := dst[b*gemmBlockB : (b+1)*gemmBlockB]
		for r := 0; r < gemmTileRows; r++ {
			blk := w[r*ws+b*bs : r*ws+(b+1)*bs]
			switch t {
			case ggml.Q4_0:
				for e := 0; e < 16; e++ {
					q := blk[2+e]
					o[(e/4)*64+r*4+e%4] = q & 15
					o[((e+16)/4)*64+r*4+e%4] = q >> 4
				}
			case ggml.IQ4_NL:
				for e := 0; e < 16; e++ {
					q := blk[2+e]
					o[(e/4)*64+r*4+e%4] = byte(kvaluesIQ4NL[q&15]) + 128
					o[((e+16)/4)*64+r*4+e%4] = byte(kvaluesIQ4NL[q>>4]) + 128
				}
			default:
				for e := 0; e < 32; e++ {
					o[(e/4)*64+r*4+e%4] = blk[2+e] + 128
				}
			}
			binary.LittleEndian.PutUint32(o[512+4*r:], math.Float32bits(getF16(blk)))
		}
	}
}

// prepGemmQ8_0 writes, per Q8_0 activation block, -off·Σq as int32 and the
// f32 scale to dst[i·stride:].
func prepGemmQ8_0(n int, a []byte, off int32, dst []byte, stride int) {
	for i := 0; i < n; i++ {
		blk := a[i*34 : (i+1)*34]
		var s int32
		for _, q := range blk[2:] {
			s += int32(int8(q))
		}
		binary.LittleEndian.PutUint32(dst[i*stride:], uint32(-off*s))
		binary.LittleEndian.PutUint32(dst[i*stride+4:], math.Float32bits(getF16(blk)))
	}
}

//go:noescape
func gemmKernelQ4_0NEONDot(nblk int, pw, a *byte, as int, prep *byte, pstride int, y *float32, ys, ntok, first int)

//go:noescape
func gemmKernelQ8_0NEONDot(nblk int, pw, a *byte, as int, prep *byte, pstride int, y *float32, ys, ntok, first int)

// gemmNEONKMinBatch is the smallest batch the NEON packed K-quant MatMul
// takes: the AVX2 path's measured crossover (gemmQ4KMinBatch), borrowed
// unmeasured (the packer is the same Go code, the kernel is not).
const gemmNEONKMinBatch = 16

type neonGemmKKernel func(nblk int, pw, a *byte, as int, y *float32, ys, ntok, first int)

// gemmKNEONDot is an archRow's packed K-quant MatMul in one of gemmk.go's
// layouts (blockB bytes per super-block, kb per K-range; pack: its Go
// packer), with gemmKCall's bounds discipline
// and short-tile scratch; Q8_K activations carry their own scale and sums,
// so there is no prep.
func gemmKNEONDot(blockB, kb int, pack func(n int, w []byte, ws int, dst []byte), kernel neonGemmKKernel) func(ggml.Type) *gemmRoutines {
	return func(t ggml.Type) *gemmRoutines {
		return &gemmRoutines{
			blockB: blockB, kb: kb, minBatch: gemmNEONKMinBatch,
			pack: pack,
			kernel: func(n int, pw, a []byte, as int, _ []byte, _ int, y []float32, ys, ntok, nr int, first bool) {
				f, run := gemmKCall(t, blockB, len(q8kBlock{}), n, pw, a, as, y, ys, ntok, nr, first)
				if !run {
					return
				}
				if nr == gemmTileRows {
					kernel(n, &pw[0], &a[0], as, &y[0], ys, ntok, f)
					return
				}
				var tmp [gemmNEONTmpTok * gemmTileRows]float32
				for t0 := 0; t0 < ntok; t0 += gemmNEONTmpTok {
					nt := min(gemmNEONTmpTok, ntok-t0)
					if !first {
						for i := 0; i < nt; i++ {
							copy(tmp[i*gemmTileRows:], y[(t0+i)*ys:(t0+i)*ys+nr])
						}
					}
					kernel(n, &pw[0], &a[t0*as], as, &tmp[0], gemmTileRows, nt, f)
					for i := 0; i < nt; i++ {
						copy(y[(t0+i)*ys:(t0+i)*ys+nr], tmp[i*gemmTileRows:i*gemmTileRows+nr])
					}
				}
			},
		}
	}
}

//go:noescape
func gemmKernelQ4KNEONDot(nblk int, pw, a *byte, as int, y *float32, ys, ntok, first int)

//go:noescape
func gemmKernelQ6KNEONDot(nblk int, pw, a *byte, as int, y *float32, ys, ntok, first int)

//go:noescape
func gemmKernelQ2KNEONDot(nblk int, pw, a *byte, as int, y *float32, ys, ntok, first int)

//go:noescape
func gemmKernelIQ4XSNEONDot(nblk int, pw, a *byte, as int, y *float32, ys, ntok, first int)
