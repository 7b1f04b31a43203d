package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
)

// The AVX2 packed IQ4_XS MatMul multiplies int16 by int16 (VPMADDWD)
// instead of looking codebook values up in the kernel. The 4-bit index
// selects a signed value of −127..113, so an 8-bit product needs two
// VPMADDUBSW (the value as two unsigned nibbles, gemmk.go's index layout)
// plus two table lookups per vector; VPMADDWD takes the value whole, with
// the sub-block's scale folded in at packing time, at the same two
// multiplies per 32 products and no lookups and no per-sub-block scaling.
// The activations are widened to int16 once per MatMul (the prep), where
// every 16-row tile then reuses them.
//
// Layout (gemmIQ4XS16BlockB bytes per super-block of a 16-row tile):
//
//   - vector p (p < 128, 64 bytes): element pair 2p, 2p+1 of each row as
//     the int16 pair (sc·value, sc·value), row r at byte 4r (rows 0..7 in
//     the low 32 bytes, 8..15 in the high 32), sc = the pair's sub-block
//     scale code − 32 (−32..31), so |sc·value| ≤ 32·127 = 4064;
//   - at gemmIQ4XS16D: d as f32.
//
// The prep of a Q8_K activation block is its 256 quants as int16 and its
// f32 scale after them (gemmIQ4XS16PrepB bytes), token by token
// (prepByToken: the kernel streams each token's blocks in order). Per row, token and
// super-block the kernel's int32 sum Σ_p (sc·v_2p·a_2p + sc·v_2p+1·a_2p+1)
// is dotIQ4_XS's Σ_s sc_s·Σ value·a exactly: every VPMADDWD pair sum is
// at most 2·4064·128 < 2^20 and the 128 of them at most 2^27 < 2^31.
const (
	gemmIQ4XS16D      = 128 * 64
	gemmIQ4XS16BlockB = gemmIQ4XS16D + 64 // 8256
	gemmIQ4XS16KB     = 24                // super-blocks per K-range: 194 KiB packed, in L2
	gemmIQ4XS16PrepB  = 520               // 256 int16 + f32 d_a + pad to 8 bytes
)

// packIQ4XS16 packs super-blocks [0, n) of the 16 IQ4_XS rows w[r·ws:] into
// dst in the layout above: the values in assembly, the d's here.
func packIQ4XS16(n int, w []byte, ws int, dst []byte) {
	if n <= 0 {
		return
	}
	if ws < n*136 {
		panic(fmt.Sprintf("kernels: gemm pack IQ4_XS: row stride %d for %d blocks", ws, n))
	}
	_ = w[(gemmTileRows-1)*ws+n*136-1]
	_ = dst[n*gemmIQ4XS16BlockB-1]
	gemmPackIQ4XS16AVX2(n, &w[0], ws, &dst[0])
	le := binary.LittleEndian
	for b := 0; b < n; b++ {
		o := (*[gemmIQ4XS16BlockB]byte)(dst[b*gemmIQ4XS16BlockB:])
		for r := 0; r < gemmTileRows; r++ {
			le.PutUint32(o[gemmIQ4XS16D+4*r:], math.Float32bits(getF16(w[r*ws+b*136:])))
		}
	}
}

// packIQ4XS16Go is packIQ4XS16 in plain Go, the reference the assembly
// packer is tested against.
func packIQ4XS16Go(n int, w []byte, ws int, dst []byte) {
	le := binary.LittleEndian
	for b := 0; b < n; b++ {
		o := (*[gemmIQ4XS16BlockB]byte)(dst[b*gemmIQ4XS16BlockB:])
		for r := 0; r < gemmTileRows; r++ {
			x := (*[136]byte)(w[r*ws+b*136:])
			le.PutUint32(o[gemmIQ4XS16D+4*r:], math.Float32bits(getF16(x[0:])))
			for s := 0; s < 8; s++ {
				sc := int16(iq4xsScale(x[:], s) - 32)
				var tab [16]uint32
				for i, v := range kvaluesIQ4NL {
					tab[i] = uint32(uint16(sc * int16(v)))
				}
				q := (*[16]byte)(x[8+16*s:])
				v := o[64*16*s+4*r:]
				// Pairs 0..7: low nibbles of q[2k], q[2k+1] (elements
				// 32s+2k, +1); pairs 8..15: their high nibbles (+16).
				for k := 0; k < 8; k++ {
					l0, l1 := q[2*k], q[2*k+1]
					le.PutUint32(v[64*k:], tab[l0&15]|tab[l1&15]<<16)
					le.PutUint32(v[64*(k+8):], tab[l0>>4]|tab[l1>>4]<<16)
				}
			}
		}
	}
}

// newGemmIQ4XS16 is the packed IQ4_XS MatMul in the int16 layout: Go
// packer, AVX2 prep and kernel, with the bounds discipline of newGemm (the
// kernel reads the activation only through the prep).
func newGemmIQ4XS16(ggml.Type) *gemmRoutines {
	const abs = len(q8kBlock{})
	return &gemmRoutines{
		blockB: gemmIQ4XS16BlockB, prepB: gemmIQ4XS16PrepB, kb: gemmIQ4XS16KB, minBatch: gemmIQ4XSMinBatch, prepByToken: true,
		pack: packIQ4XS16,
		prep: func(n int, a []byte, dst []byte, stride int) {
			if n <= 0 {
				return
			}
			if stride < gemmIQ4XS16PrepB {
				panic(fmt.Sprintf("kernels: gemm prep IQ4_XS: stride %d", stride))
			}
			_ = a[n*abs-1]
			_ = dst[(n-1)*stride+gemmIQ4XS16PrepB-1]
			gemmPrepQ8KI16AVX2(n, &a[0], &dst[0], stride)
		},
		kernel: func(n int, pw, _ []byte, _ int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool) {
			f, run := gemmKCall(ggml.IQ4_XS, gemmIQ4XS16BlockB, gemmIQ4XS16PrepB, n, pw, prep, ps, y, ys, ntok, nr, first)
			if !run {
				return
			}
			gemmKernelIQ4XS16AVX2(n, &pw[0], nil, 0, &prep[0], ps, &y[0], ys*4, ntok, 1<<nr-1, f)
		},
	}
}

//go:noescape
func gemmPackIQ4XS16AVX2(nblk int, w *byte, ws int, dst *byte)

//go:noescape
func gemmPrepQ8KI16AVX2(nblk int, a *byte, dst *byte, stride int)

//go:noescape
func gemmKernelIQ4XS16AVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
