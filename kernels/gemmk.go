package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
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
		// Two rows at a time: their dwords are adjacent in every vector,
		// so each store writes both.
		for r := 0; r < gemmTileRows; r += 2 {
			x := (*[144]byte)(w[r*ws+b*144:])
			x1 := (*[144]byte)(w[(r+1)*ws+b*144:])
			le.PutUint64(o[gemmQ4KD+4*r:], uint64(math.Float32bits(getF16(x[0:])))|uint64(math.Float32bits(getF16(x1[0:])))<<32)
			le.PutUint64(o[gemmQ4KDmin+4*r:], uint64(math.Float32bits(getF16(x[2:])))|uint64(math.Float32bits(getF16(x1[2:])))<<32)
			sc0, mn0 := q4kScalesMins(x[:16])
			sc1, mn1 := q4kScalesMins(x1[:16])
			for s := 0; s < 8; s++ {
				c := sc0>>(8*s)&0xff | (sc1>>(8*s)&0xff)<<32
				m := mn0>>(8*s)&0xff | (mn1>>(8*s)&0xff)<<32
				le.PutUint64(o[gemmQ4KSc+64*s+4*r:], c|c<<16)
				le.PutUint64(o[gemmQ4KMin+64*s+4*r:], m|m<<16)
			}
			// 32 bytes of quants per 64 elements: low nibbles are
			// sub-block 2c, high nibbles 2c+1.
			for c := 0; c < 4; c++ {
				q := (*[32]byte)(x[16+32*c:])
				q1 := (*[32]byte)(x1[16+32*c:])
				lo := o[64*8*(2*c)+4*r:]
				hi := o[64*8*(2*c+1)+4*r:]
				for j := 0; j < 8; j++ {
					v := uint64(le.Uint32(q[4*j:])) | uint64(le.Uint32(q1[4*j:]))<<32
					le.PutUint64(lo[64*j:], v&0x0f0f0f0f0f0f0f0f)
					le.PutUint64(hi[64*j:], v>>4&0x0f0f0f0f0f0f0f0f)
				}
			}
		}
	}
}

// q4kScalesMins decodes the eight 6-bit (scale, min) pairs of a Q4_K/Q5_K
// block as bytes, all at once (kScaleMin's decoding, four lanes per uint32).
func q4kScalesMins(x []byte) (sc, mn uint64) {
	le := binary.LittleEndian
	a0, a1, a2 := le.Uint32(x[4:]), le.Uint32(x[8:]), le.Uint32(x[12:])
	sc = uint64(a0&0x3f3f3f3f) | uint64(a2&0x0f0f0f0f|(a0>>6&0x03030303)<<4)<<32
	mn = uint64(a1&0x3f3f3f3f) | uint64(a2>>4&0x0f0f0f0f|(a1>>6&0x03030303)<<4)<<32
	return sc, mn
}

// The Q6_K layout (gemmQ6KBlockB bytes per super-block of a 16-row tile):
//
//   - vector e/4 for element e: its 6-bit quant 0..63 (unsigned; the -32
//     offset is applied through the activation's sums of 16);
//   - at gemmQ6KSc + 64g: group g's (of 16 elements) int8 scale as the int16
//     pair (sc, sc);
//   - at gemmQ6KOff + 64k: the scales of groups 2k, 2k+1 as an int16 pair,
//     for VPMADDWD against (bsum_2k, bsum_2k+1);
//   - at gemmQ6KD: d as f32.
//
// The kernel's integer per row and super-block is Σ_g sc_g·Σ q·a −
// 32·Σ_g sc_g·bsum_g, which equals dotQ6_K's Σ_g sc_g·Σ (q−32)·a whenever the
// activation's sums of 16 are its quants' sums (QuantizeAct writes them so;
// the AVX2 one-row routine relies on them too).
const (
	gemmQ6KSc     = 64 * 64
	gemmQ6KOff    = gemmQ6KSc + 16*64
	gemmQ6KD      = gemmQ6KOff + 8*64
	gemmQ6KBlockB = gemmQ6KD + 64 // 5696
	gemmQ6KKB     = 28            // super-blocks per K-range: 156 KiB packed, in L2
)

// packQ6K packs super-blocks [0, n) of the 16 Q6_K rows w[r·ws:] into dst
// in the layout above.
func packQ6K(n int, w []byte, ws int, dst []byte) {
	if n <= 0 {
		return
	}
	if ws < n*210 {
		panic(fmt.Sprintf("kernels: gemm pack Q6_K: row stride %d for %d blocks", ws, n))
	}
	_ = w[(gemmTileRows-1)*ws+n*210-1]
	_ = dst[n*gemmQ6KBlockB-1]
	le := binary.LittleEndian
	sx := func(b byte) uint64 { return uint64(uint16(int16(int8(b)))) }
	for b := 0; b < n; b++ {
		o := (*[gemmQ6KBlockB]byte)(dst[b*gemmQ6KBlockB:])
		// Two rows at a time (adjacent dwords of every vector).
		for r := 0; r < gemmTileRows; r += 2 {
			x := (*[210]byte)(w[r*ws+b*210:])
			x1 := (*[210]byte)(w[(r+1)*ws+b*210:])
			le.PutUint64(o[gemmQ6KD+4*r:], uint64(math.Float32bits(getF16(x[208:])))|uint64(math.Float32bits(getF16(x1[208:])))<<32)
			for g := 0; g < 16; g++ {
				s0, s1 := sx(x[192+g]), sx(x1[192+g])
				le.PutUint64(o[gemmQ6KSc+64*g+4*r:], s0|s0<<16|(s1|s1<<16)<<32)
			}
			for k := 0; k < 8; k++ {
				p0 := sx(x[192+2*k]) | sx(x[193+2*k])<<16
				p1 := sx(x1[192+2*k]) | sx(x1[193+2*k])<<16
				le.PutUint64(o[gemmQ6KOff+64*k+4*r:], p0|p1<<32)
			}
			// Elements 128h+l, +32, +64, +96 take the low / high nibbles
			// of ql[64h+l] and ql[64h+l+32] and bit pairs 0..3 of
			// qh[32h+l] (dequantize_row_q6_K), four lanes per uint32,
			// two rows per uint64.
			for h := 0; h < 2; h++ {
				ql, ql1 := (*[64]byte)(x[64*h:]), (*[64]byte)(x1[64*h:])
				qh, qh1 := (*[32]byte)(x[128+32*h:]), (*[32]byte)(x1[128+32*h:])
				for l := 0; l < 32; l += 4 {
					l0 := uint64(le.Uint32(ql[l:])) | uint64(le.Uint32(ql1[l:]))<<32
					l1 := uint64(le.Uint32(ql[l+32:])) | uint64(le.Uint32(ql1[l+32:]))<<32
					hb := uint64(le.Uint32(qh[l:])) | uint64(le.Uint32(qh1[l:]))<<32
					const m4, m2 = 0x0f0f0f0f0f0f0f0f, 0x0303030303030303
					v := o[64*((128*h+l)/4)+4*r:]
					le.PutUint64(v[0:], l0&m4|(hb&m2)<<4)
					le.PutUint64(v[64*8:], l1&m4|(hb>>2&m2)<<4)
					le.PutUint64(v[64*16:], l0>>4&m4|(hb>>4&m2)<<4)
					le.PutUint64(v[64*24:], l1>>4&m4|(hb>>6&m2)<<4)
				}
			}
		}
	}
}

// packQ5K packs super-blocks [0, n) of the 16 Q5_K rows w[r·ws:] into dst
// in the Q4_K layout (gemmQ4KBlockB bytes per super-block) with 5-bit
// quants 0..31: the fifth bit of sub-block s is bit s of qh.
func packQ5K(n int, w []byte, ws int, dst []byte) {
	if n <= 0 {
		return
	}
	if ws < n*176 {
		panic(fmt.Sprintf("kernels: gemm pack Q5_K: row stride %d for %d blocks", ws, n))
	}
	_ = w[(gemmTileRows-1)*ws+n*176-1]
	_ = dst[n*gemmQ4KBlockB-1]
	le := binary.LittleEndian
	for b := 0; b < n; b++ {
		o := (*[gemmQ4KBlockB]byte)(dst[b*gemmQ4KBlockB:])
		// Two rows at a time (adjacent dwords of every vector).
		for r := 0; r < gemmTileRows; r += 2 {
			x := (*[176]byte)(w[r*ws+b*176:])
			x1 := (*[176]byte)(w[(r+1)*ws+b*176:])
			le.PutUint64(o[gemmQ4KD+4*r:], uint64(math.Float32bits(getF16(x[0:])))|uint64(math.Float32bits(getF16(x1[0:])))<<32)
			le.PutUint64(o[gemmQ4KDmin+4*r:], uint64(math.Float32bits(getF16(x[2:])))|uint64(math.Float32bits(getF16(x1[2:])))<<32)
			sc0, mn0 := q4kScalesMins(x[:16])
			sc1, mn1 := q4kScalesMins(x1[:16])
			for s := 0; s < 8; s++ {
				c := sc0>>(8*s)&0xff | (sc1>>(8*s)&0xff)<<32
				m := mn0>>(8*s)&0xff | (mn1>>(8*s)&0xff)<<32
				le.PutUint64(o[gemmQ4KSc+64*s+4*r:], c|c<<16)
				le.PutUint64(o[gemmQ4KMin+64*s+4*r:], m|m<<16)
			}
			qh, qh1 := (*[32]byte)(x[16:]), (*[32]byte)(x1[16:])
			for c := 0; c < 4; c++ {
				q, q1 := (*[32]byte)(x[48+32*c:]), (*[32]byte)(x1[48+32*c:])
				lo := o[64*8*(2*c)+4*r:]
				hi := o[64*8*(2*c+1)+4*r:]
				for j := 0; j < 8; j++ {
					const m4, m1 = 0x0f0f0f0f0f0f0f0f, 0x0101010101010101
					v := uint64(le.Uint32(q[4*j:])) | uint64(le.Uint32(q1[4*j:]))<<32
					h := uint64(le.Uint32(qh[4*j:])) | uint64(le.Uint32(qh1[4*j:]))<<32
					le.PutUint64(lo[64*j:], v&m4|(h>>(2*c)&m1)<<4)
					le.PutUint64(hi[64*j:], v>>4&m4|(h>>(2*c+1)&m1)<<4)
				}
			}
		}
	}
}

// The IQ4_XS layout (gemmIQ4XSBlockB bytes per super-block of a 16-row
// tile). Codebook values are signed, so the kernel looks each index up as
// u = value+128 (1..241) split into nibbles u = 16h + l (VPSHUFB of two
// 16-byte tables), and every 32-element sub-block s is summed as two
// virtual sub-blocks of unsigned 4-bit values, v = 2s (h) and 2s+1 (l):
//
//   - vector 8s+j (j < 8 dword groups): the codebook indices 0..15 of
//     elements 32s+4j..+3 of each row (Q4_K's arrangement);
//   - at gemmIQ4XSSc + 64v: the int16 pair (16·sc, 16·sc) for v = 2s and
//     (sc, sc) for v = 2s+1, sc = scale code − 32;
//   - at gemmIQ4XSOff + 64s: (sc, sc), against the activation's
//     (bsum_2s, bsum_2s+1) for the −128·Σa offset;
//   - at gemmIQ4XSD: d as f32.
//
// Per row and super-block the kernel's integer Σ_s sc·(16·Σh·a + Σl·a −
// 128·Σa) is dotIQ4_XS's Σ_s sc·Σ value·a exactly when the activation's sums
// of 16 are its quants' sums (QuantizeAct writes them so).
const (
	gemmIQ4XSSc     = 8 * 8 * 64
	gemmIQ4XSOff    = gemmIQ4XSSc + 16*64
	gemmIQ4XSD      = gemmIQ4XSOff + 8*64
	gemmIQ4XSBlockB = gemmIQ4XSD + 64 // 5696
	gemmIQ4XSKB     = 28              // super-blocks per K-range: 156 KiB packed, in L2
)

// packIQ4XS packs super-blocks [0, n) of the 16 IQ4_XS rows w[r·ws:] into
// dst in the layout above.
func packIQ4XS(n int, w []byte, ws int, dst []byte) {
	if n <= 0 {
		return
	}
	if ws < n*136 {
		panic(fmt.Sprintf("kernels: gemm pack IQ4_XS: row stride %d for %d blocks", ws, n))
	}
	_ = w[(gemmTileRows-1)*ws+n*136-1]
	_ = dst[n*gemmIQ4XSBlockB-1]
	le := binary.LittleEndian
	for b := 0; b < n; b++ {
		o := (*[gemmIQ4XSBlockB]byte)(dst[b*gemmIQ4XSBlockB:])
		for r := 0; r < gemmTileRows; r++ {
			x := (*[136]byte)(w[r*ws+b*136:])
			le.PutUint32(o[gemmIQ4XSD+4*r:], math.Float32bits(getF16(x[0:])))
			for s := 0; s < 8; s++ {
				c := iq4xsScale(x[:], s) - 32
				sc, sc16 := uint32(uint16(int16(c))), uint32(uint16(int16(16*c)))
				le.PutUint32(o[gemmIQ4XSSc+64*(2*s)+4*r:], sc16|sc16<<16)
				le.PutUint32(o[gemmIQ4XSSc+64*(2*s+1)+4*r:], sc|sc<<16)
				le.PutUint32(o[gemmIQ4XSOff+64*s+4*r:], sc|sc<<16)
				q := (*[16]byte)(x[8+16*s:])
				v := o[64*8*s+4*r:]
				for j := 0; j < 4; j++ {
					u := le.Uint32(q[4*j:])
					le.PutUint32(v[64*j:], u&0x0f0f0f0f)
					le.PutUint32(v[64*(j+4):], u>>4&0x0f0f0f0f)
				}
			}
		}
	}
}

// gemmKCall is the bounds discipline of every packed K-quant kernel call
// (the assembly indexes without checks): it panics on a tile or stride the
// kernel cannot take, proves y, pw and a long enough, and handles the empty
// cases itself — run is false when there is nothing for the kernel to do
// (after clearing y's tile when first and n ≤ 0). f is first as the
// kernels take it (1 or 0). a is what the kernel reads per token: Q8_K
// activation rows (abs = a Q8_K block; they carry their own scale and sums,
// so there is no separate prep), or a prep in the activations' place (the
// int16 IQ4_XS kernel's widened rows, abs = its bytes per block).
func gemmKCall(t ggml.Type, blockB, abs, n int, pw, a []byte, as int, y []float32, ys, ntok, nr int, first bool) (f int, run bool) {
	if ntok <= 0 || nr <= 0 {
		return 0, false
	}
	if nr > gemmTileRows || as < n*abs || ys < nr {
		panic(fmt.Sprintf("kernels: gemm kernel %s: %d rows, strides a %d y %d for %d blocks × %d tokens", t, nr, as, ys, n, ntok))
	}
	_ = y[(ntok-1)*ys+nr-1]
	if n <= 0 {
		if first {
			for i := 0; i < ntok; i++ {
				clear(y[i*ys : i*ys+nr])
			}
		}
		return 0, false
	}
	_ = pw[n*blockB-1]
	_ = a[(ntok-1)*as+n*abs-1]
	if first {
		f = 1
	}
	return f, true
}
