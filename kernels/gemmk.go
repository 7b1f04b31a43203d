package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Packed layout of the K-quant super-blocks for the packed MatMul (gemm.go):
// Q4_K here. One super-block (256 elements) of a 16-row tile packs into
// gemmQ4KBlockB bytes of 64-byte vectors, each holding one dword per row
// (rows 0..7 in the low 32 bytes, 8..15 in the high 32):
//
//   - vector 8s+j (s < 8 sub-blocks of 32, j < 8 dword groups): elements
//     32s+4j..32s+4j+3 of each row as unsigned quants 0..15;
//   - at gemmQ4KSc + 64s: sub-block s's 6-bit scale as the int16 pair
//     (sc, sc), for VPMADDWD of the row's two int16 partial sums;
//   - at gemmQ4KMin + 64s: sub-block s's min as the int16 pair (m, m),
//     for VPMADDWD against the activation's two sums of 16 (bsums 2s,
//     2s+1, read in place: their int16 sum could overflow for arbitrary
//     bytes, the int32 pair product cannot);
//   - at gemmQ4KD and gemmQ4KDmin: d and dmin as f32.
//
// The kernel forms, per row and super-block, the same exact integers as
// dotQ4_K (isum = Σ sc·Σq·a, summs = Σ m·(bsum_2s + bsum_2s+1)) and adds
// fl(d_w·d_a)·isum − fl(dmin·d_a)·summs to the row's f32 sum. The Q8_K
// activation carries its scale and sums itself, so there is no prep.
const (
	gemmQ4KSc     = 8 * 8 * 64
	gemmQ4KMin    = gemmQ4KSc + 8*64
	gemmQ4KD      = gemmQ4KMin + 8*64
	gemmQ4KDmin   = gemmQ4KD + 64
	gemmQ4KBlockB = gemmQ4KDmin + 64 // 5248
	gemmQ4KKB     = 32               // super-blocks per K-range: 164 KiB packed, in L2
)

// packQ4K packs super-blocks [0, n) of the 16 Q4_K rows w[r·ws:] into dst
// in the layout above. It is plain Go: a tile is packed once and then used
// by every activation row of the batch.
func packQ4K(n int, w []byte, ws int, dst []byte) {
	if n <= 0 {
		return
	}
	if ws < n*144 {
		panic(fmt.Sprintf("kernels: gemm pack Q4_K: row stride %d for %d blocks", ws, n))
	}
	_ = w[(gemmTileRows-1)*ws+n*144-1]
	_ = dst[n*gemmQ4KBlockB-1]
	le := binary.LittleEndian
	for b := 0; b < n; b++ {
		o := (*[gemmQ4KBlockB]byte)(dst[b*gemmQ4KBlockB:])
		for r := 0; r < gemmTileRows; r++ {
			x := (*[144]byte)(w[r*ws+b*144:])
			le.PutUint32(o[gemmQ4KD+4*r:], math.Float32bits(getF16(x[0:])))
			le.PutUint32(o[gemmQ4KDmin+4*r:], math.Float32bits(getF16(x[2:])))
			// The eight 6-bit (scale, min) pairs as bytes, all at once
			// (kScaleMin's decoding, four lanes per uint32).
			a0, a1, a2 := le.Uint32(x[4:]), le.Uint32(x[8:]), le.Uint32(x[12:])
			sc := uint64(a0&0x3f3f3f3f) | uint64(a2&0x0f0f0f0f|(a0>>6&0x03030303)<<4)<<32
			mn := uint64(a1&0x3f3f3f3f) | uint64(a2>>4&0x0f0f0f0f|(a1>>6&0x03030303)<<4)<<32
			for s := 0; s < 8; s++ {
				c, m := uint32(sc>>(8*s)&0xff), uint32(mn>>(8*s)&0xff)
				le.PutUint32(o[gemmQ4KSc+64*s+4*r:], c|c<<16)
				le.PutUint32(o[gemmQ4KMin+64*s+4*r:], m|m<<16)
			}
			// 32 bytes of quants per 64 elements: low nibbles are
			// sub-block 2c, high nibbles 2c+1.
			for c := 0; c < 4; c++ {
				q := (*[32]byte)(x[16+32*c:])
				lo := o[64*8*(2*c)+4*r:]
				hi := o[64*8*(2*c+1)+4*r:]
				for j := 0; j < 8; j++ {
					v := le.Uint32(q[4*j:])
					le.PutUint32(lo[64*j:], v&0x0f0f0f0f)
					le.PutUint32(hi[64*j:], v>>4&0x0f0f0f0f)
				}
			}
		}
	}
}
