package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
)

// The packed IQ2 MatMuls reuse IQ4_XS's kernels (gemmiq4xs_amd64.go,
// gemmiq4xs8_amd64.go) with IQ2 packers: a weight is (d/8)·(2s+1)·v with
// v = ±grid byte (|v| ≤ 43) and 2s+1 ≤ 31, so
//
//   - the int16 layout (AVX2 kernel, every IQ2 type) takes (2s+1)·v whole,
//     |·| ≤ 1333 < IQ4_XS's 4064, and d/8 as the row's f32 d;
//   - the byte layout (AVX-512 VPDPBUSD kernel) takes v + 128 (85..171 ≤
//     241) with 2s+1 as the sub-block's int32 scale (≤ 32) where the scale
//     covers the whole sub-block of 32: IQ2_XXS only (IQ2_XS and IQ2_S
//     scale halves of 16).
//
// Both kernels' integer per row, token and super-block is then the IQ2
// dot's isum exactly (their bounds hold for these smaller ranges), and
// their float step fl(d_w·d_a)·isum with d_w = d/8 is the dot's
// fl(d·d_a)·isum scaled by 1/8, exactly (a power of two; fp16 d/8 stays a
// normal f32), which the dot applies at the end instead.

// iq2Decode writes a super-block's signed grid values v and the scale
// (2s+1) of each group of 8 (sc[g]); x is one block of type t.
func iq2Decode(t ggml.Type, x []byte, v *[256]int8, sc *[32]uint8) {
	le := binary.LittleEndian
	put := func(g int, grid uint64, signs uint8) {
		for j := 0; j < 8; j++ {
			q := int8(byte(grid >> (8 * j)))
			if signs>>j&1 != 0 {
				q = -q
			}
			v[8*g+j] = q
		}
	}
	for ib := 0; ib < 8; ib++ {
		switch t {
		case ggml.IQ2_XXS:
			aux := le.Uint32(x[2+8*ib+4:])
			for l := 0; l < 4; l++ {
				put(4*ib+l, iq2xxsGrid[x[2+8*ib+l]], iq2Signs7(aux>>(7*l)))
				sc[4*ib+l] = uint8(2*(aux>>28) + 1)
			}
		case ggml.IQ2_XS:
			s := x[66+ib]
			for l := 0; l < 4; l++ {
				q := uint32(le.Uint16(x[2+8*ib+2*l:]))
				put(4*ib+l, iq2xsGrid[q&511], iq2Signs7(q>>9))
				sc[4*ib+l] = 2*(s>>(4*(l/2))&15) + 1
			}
		case ggml.IQ2_S:
			xs := (*[iq2sBlockBytes]byte)(x)
			s := x[74+ib]
			for l := 0; l < 4; l++ {
				put(4*ib+l, iq2sGrid[iq2sIndex(xs, ib, l)], x[34+4*ib+l])
				sc[4*ib+l] = 2*(s>>(4*(l/2))&15) + 1
			}
		}
	}
}

// iq2D8 is a block's d/8 as f32 bits (exact: see above).
func iq2D8(x []byte) uint32 { return math.Float32bits(getF16(x) * 0.125) }

// packIQ2I16 returns the int16-layout packer for IQ2 type t: super-blocks
// [0, n) of the 16 rows w[r·ws:] into dst (gemmIQ4XS16BlockB bytes each).
func packIQ2I16(t ggml.Type) func(n int, w []byte, ws int, dst []byte) {
	bs := t.TypeSize()
	return func(n int, w []byte, ws int, dst []byte) {
		if n <= 0 {
			return
		}
		if ws < n*bs {
			panic(fmt.Sprintf("kernels: gemm pack %s: row stride %d for %d blocks", t, ws, n))
		}
		_ = w[(gemmTileRows-1)*ws+n*bs-1]
		_ = dst[n*gemmIQ4XS16BlockB-1]
		le := binary.LittleEndian
		var v [256]int8
		var sc [32]uint8
		for b := 0; b < n; b++ {
			o := (*[gemmIQ4XS16BlockB]byte)(dst[b*gemmIQ4XS16BlockB:])
			for r := 0; r < gemmTileRows; r++ {
				x := w[r*ws+b*bs : r*ws+(b+1)*bs]
				le.PutUint32(o[gemmIQ4XS16D+4*r:], iq2D8(x))
				iq2Decode(t, x, &v, &sc)
				// Pair p holds elements 2p, 2p+1 (both in group p/4).
				for p := 0; p < 128; p++ {
					s := int16(sc[p/4])
					lo, hi := uint16(s*int16(v[2*p])), uint16(s*int16(v[2*p+1]))
					le.PutUint32(o[64*p+4*r:], uint32(lo)|uint32(hi)<<16)
				}
			}
		}
	}
}

// packIQ2XXS8 packs IQ2_XXS super-blocks [0, n) of the 16 rows w[r·ws:]
// into dst in the byte layout (gemmIQ4XS8BlockB bytes each).
func packIQ2XXS8(n int, w []byte, ws int, dst []byte) {
	const bs = iq2xxsBlockBytes
	if n <= 0 {
		return
	}
	if ws < n*bs {
		panic(fmt.Sprintf("kernels: gemm pack IQ2_XXS: row stride %d for %d blocks", ws, n))
	}
	_ = w[(gemmTileRows-1)*ws+n*bs-1]
	_ = dst[n*gemmIQ4XS8BlockB-1]
	le := binary.LittleEndian
	var v [256]int8
	var sc [32]uint8
	for b := 0; b < n; b++ {
		o := (*[gemmIQ4XS8BlockB]byte)(dst[b*gemmIQ4XS8BlockB:])
		for r := 0; r < gemmTileRows; r++ {
			x := w[r*ws+b*bs : r*ws+(b+1)*bs]
			le.PutUint32(o[gemmIQ4XS8D+4*r:], iq2D8(x))
			iq2Decode(ggml.IQ2_XXS, x, &v, &sc)
			for s := 0; s < 8; s++ {
				le.PutUint32(o[576*s+512+4*r:], uint32(sc[4*s]))
				for j := 0; j < 8; j++ {
					e := 32*s + 4*j
					le.PutUint32(o[576*s+64*j+4*r:], uint32(uint8(int(v[e])+128))|uint32(uint8(int(v[e+1])+128))<<8|
						uint32(uint8(int(v[e+2])+128))<<16|uint32(uint8(int(v[e+3])+128))<<24)
				}
			}
		}
	}
}

// newGemmIQ2I16 is the packed IQ2 MatMul in the int16 layout: IQ4_XS's
// int16 routines with packIQ2I16 as the packer.
func newGemmIQ2I16(t ggml.Type) *gemmRoutines {
	g := newGemmIQ4XS16(t)
	g.pack = packIQ2I16(t)
	return g
}

// newGemmIQ2XXS8AVX512 is the packed IQ2_XXS MatMul in the byte layout:
// IQ4_XS's AVX-512 routines with packIQ2XXS8 as the packer.
func newGemmIQ2XXS8AVX512(t ggml.Type) *gemmRoutines {
	g := newGemmIQ4XS8AVX512(t)
	g.pack = packIQ2XXS8
	return g
}
