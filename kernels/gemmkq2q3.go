package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
)

// packQ3K packs super-blocks [0, n) of the 16 Q3_K rows w[r·ws:] into dst
// in the Q6_K layout (gemmQ6KBlockB bytes per super-block), so the Q6_K
// kernel runs Q3_K unchanged: each element's value v = q − 4·(hmask bit
// clear) ∈ [−4, 3] is stored as v + 32 (28..35, inside Q6_K's unsigned
// 0..63, whose −32 the kernel takes off through the activation's sums of
// 16), each group of 16 elements takes its 6-bit scale − 32 as Q6_K's int8
// scale, and d is the block's fp16 d. The kernel's integer per row and
// super-block is then Σ_g sc_g·Σ v·a, dotQ3_K's isum exactly, and its f32
// step fl(d_w·d_a)·isum is Q6_K's (gemmKBound applies as it stands).
func packQ3K(n int, w []byte, ws int, dst []byte) {
	if n <= 0 {
		return
	}
	if ws < n*110 {
		panic(fmt.Sprintf("kernels: gemm pack Q3_K: row stride %d for %d blocks", ws, n))
	}
	_ = w[(gemmTileRows-1)*ws+n*110-1]
	_ = dst[n*gemmQ6KBlockB-1]
	le := binary.LittleEndian
	var sc, sc1 [16]int8
	for b := 0; b < n; b++ {
		o := (*[gemmQ6KBlockB]byte)(dst[b*gemmQ6KBlockB:])
		// Two rows at a time (adjacent dwords of every vector).
		for r := 0; r < gemmTileRows; r += 2 {
			x := (*[110]byte)(w[r*ws+b*110:])
			x1 := (*[110]byte)(w[(r+1)*ws+b*110:])
			le.PutUint64(o[gemmQ6KD+4*r:], uint64(math.Float32bits(getF16(x[108:])))|uint64(math.Float32bits(getF16(x1[108:])))<<32)
			q3Scales(x[96:108], &sc)
			q3Scales(x1[96:108], &sc1)
			pair := func(lo, hi int8) uint64 {
				return uint64(uint16(int16(lo)-32)) | uint64(uint16(int16(hi)-32))<<16
			}
			for g := 0; g < 16; g++ {
				le.PutUint64(o[gemmQ6KSc+64*g+4*r:], pair(sc[g], sc[g])|pair(sc1[g], sc1[g])<<32)
			}
			for k := 0; k < 8; k++ {
				le.PutUint64(o[gemmQ6KOff+64*k+4*r:], pair(sc[2*k], sc[2*k+1])|pair(sc1[2*k], sc1[2*k+1])<<32)
			}
			// Element 128h+32j+l takes bits 2j..2j+1 of qs[32h+l] and bit
			// 4h+j of hmask[l] (dequantize_row_q3_K), four lanes per
			// uint32, two rows per uint64.
			for h := 0; h < 2; h++ {
				for l := 0; l < 32; l += 4 {
					q := uint64(le.Uint32(x[32+32*h+l:])) | uint64(le.Uint32(x1[32+32*h+l:]))<<32
					hm := uint64(le.Uint32(x[l:])) | uint64(le.Uint32(x1[l:]))<<32
					for j := 0; j < 4; j++ {
						const m2, m1, bias = 0x0303030303030303, 0x0101010101010101, 0x1c1c1c1c1c1c1c1c
						v := q>>(2*j)&m2 | (hm>>(4*h+j)&m1)<<2
						le.PutUint64(o[64*((128*h+32*j+l)/4)+4*r:], v+bias)
					}
				}
			}
		}
	}
}

// The Q2_K layout is Q6_K's (gemmk.go) with one more vector: values 0..3 at
// vector e/4, group g's 4-bit scale as the int16 pair (sc, sc) at
// gemmQ6KSc + 64g, the 4-bit mins of groups 2k, 2k+1 as an int16 pair at
// gemmQ6KOff + 64k (against the bsum pairs), d at gemmQ6KD and dmin at
// gemmQ2KDmin as f32. Its kernel (gemmKernelQ2KAVX2) forms dotQ2_K's exact
// isum and summs and adds fl(d_w·d_a)·isum − fl(dmin·d_a)·summs, as the
// Q4_K kernel does (gemmKBound applies).
const (
	gemmQ2KDmin   = gemmQ6KD + 64
	gemmQ2KBlockB = gemmQ2KDmin + 64 // 5760
	gemmQ2KKB     = 28               // super-blocks per K-range: 158 KiB packed, in L2
)

// packQ2K packs super-blocks [0, n) of the 16 Q2_K rows w[r·ws:] into dst
// in the layout above.
func packQ2K(n int, w []byte, ws int, dst []byte) {
	if n <= 0 {
		return
	}
	if ws < n*84 {
		panic(fmt.Sprintf("kernels: gemm pack Q2_K: row stride %d for %d blocks", ws, n))
	}
	_ = w[(gemmTileRows-1)*ws+n*84-1]
	_ = dst[n*gemmQ2KBlockB-1]
	le := binary.LittleEndian
	for b := 0; b < n; b++ {
		o := (*[gemmQ2KBlockB]byte)(dst[b*gemmQ2KBlockB:])
		// Two rows at a time (adjacent dwords of every vector).
		for r := 0; r < gemmTileRows; r += 2 {
			x := (*[84]byte)(w[r*ws+b*84:])
			x1 := (*[84]byte)(w[(r+1)*ws+b*84:])
			le.PutUint64(o[gemmQ6KD+4*r:], uint64(math.Float32bits(getF16(x[80:])))|uint64(math.Float32bits(getF16(x1[80:])))<<32)
			le.PutUint64(o[gemmQ2KDmin+4*r:], uint64(math.Float32bits(getF16(x[82:])))|uint64(math.Float32bits(getF16(x1[82:])))<<32)
			for g := 0; g < 16; g++ {
				s0, s1 := uint64(x[g]&15), uint64(x1[g]&15)
				le.PutUint64(o[gemmQ6KSc+64*g+4*r:], s0|s0<<16|(s1|s1<<16)<<32)
			}
			for k := 0; k < 8; k++ {
				m0 := uint64(x[2*k]>>4) | uint64(x[2*k+1]>>4)<<16
				m1 := uint64(x1[2*k]>>4) | uint64(x1[2*k+1]>>4)<<16
				le.PutUint64(o[gemmQ6KOff+64*k+4*r:], m0|m1<<32)
			}
			// Element 128h+32j+l takes bits 2j..2j+1 of qs[32h+l]
			// (dequantize_row_q2_K), four lanes per uint32, two rows per
			// uint64.
			for h := 0; h < 2; h++ {
				for l := 0; l < 32; l += 4 {
					q := uint64(le.Uint32(x[16+32*h+l:])) | uint64(le.Uint32(x1[16+32*h+l:]))<<32
					for j := 0; j < 4; j++ {
						const m2 = 0x0303030303030303
						le.PutUint64(o[64*((128*h+32*j+l)/4)+4*r:], q>>(2*j)&m2)
					}
				}
			}
		}
	}
}
