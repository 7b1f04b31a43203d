package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The grid i-quants (IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) pack into the Q6_K
// layout (gemmk.go) and run its packed MatMul kernels, as Q3_K does: every
// element's value, times a per-type power of two, is an integer v in
// [-31, 31] (stored as v + 32, inside Q6_K's unsigned 0..63) under an int8
// scale per 16 elements and an f32 d per super-block:
//
//   - IQ3_S: v = ±grid (odd, ≤ 15), scale 2s+1, d as stored;
//   - IQ3_XXS: v = ±grid/2 (grid even, ≤ 62), scale 2·(2s+1), d/4;
//   - IQ1_S, IQ1_M: v = 8·grid ± 1 (the ±1/8 delta, grid in {-1, 0, 1}),
//     scale 2s+1, d/8.
//
// The kernel's exact integer per row and super-block is then the scalar
// dot's (IQ3) or 8·sumi + sumi1 (IQ1: its sumi + sumi1/8 without the
// rounding), and its f32 step fl(d·d_a)·isum is Q6_K's, so gemmKBound
// applies as it stands. Scaling d by 1/4 or 1/8 is exact in f32 for every
// fp16 d, and (d'·sc)·v equals Dequantize's value bit for bit
// (TestGemmPackIQLayout).

// iqPackRow decodes one super-block x of a grid i-quant into the packed
// layout's values v[e] + 32, its sixteen scales and its d.
type iqPackRow func(x []byte, v *[256]byte, sc *[16]int8) float32

// packIQ returns the Q6_K-layout packer of the type whose blocks are bs
// bytes, decoded by dec.
func packIQ(name string, bs int, dec iqPackRow) func(n int, w []byte, ws int, dst []byte) {
	return func(n int, w []byte, ws int, dst []byte) {
		if n <= 0 {
			return
		}
		if ws < n*bs {
			panic(fmt.Sprintf("kernels: gemm pack %s: row stride %d for %d blocks", name, ws, n))
		}
		_ = w[(gemmTileRows-1)*ws+n*bs-1]
		_ = dst[n*gemmQ6KBlockB-1]
		le := binary.LittleEndian
		var v [256]byte
		var sc [16]int8
		sx := func(s int8) uint32 { return uint32(uint16(int16(s))) }
		for b := 0; b < n; b++ {
			o := (*[gemmQ6KBlockB]byte)(dst[b*gemmQ6KBlockB:])
			for r := 0; r < gemmTileRows; r++ {
				d := dec(w[r*ws+b*bs:r*ws+b*bs+bs], &v, &sc)
				le.PutUint32(o[gemmQ6KD+4*r:], math.Float32bits(d))
				for g := 0; g < 16; g++ {
					le.PutUint32(o[gemmQ6KSc+64*g+4*r:], sx(sc[g])|sx(sc[g])<<16)
				}
				for k := 0; k < 8; k++ {
					le.PutUint32(o[gemmQ6KOff+64*k+4*r:], sx(sc[2*k])|sx(sc[2*k+1])<<16)
				}
				for e := 0; e < 256; e += 4 {
					copy(o[64*(e/4)+4*r:64*(e/4)+4*r+4], v[e:e+4])
				}
			}
		}
	}
}

// iq3PackGroup writes the 32 values of an IQ3 group: grid entries g1, g2
// per eight, their signs, each magnitude shifted right by sh, plus 32.
func iq3PackGroup(v []byte, g1, g2 uint32, signs byte, sh uint) {
	for j := 0; j < 4; j++ {
		v[j] = byte(32 + iq3Sign(signs, j)*int32(byte(g1>>(8*j))>>sh))
		v[4+j] = byte(32 + iq3Sign(signs, 4+j)*int32(byte(g2>>(8*j))>>sh))
	}
}

func packRowIQ3_XXS(xb []byte, v *[256]byte, sc *[16]int8) float32 {
	x := (*[iq3xxsBlockBytes]byte)(xb)
	for g := 0; g < 8; g++ {
		aux := binary.LittleEndian.Uint32(x[66+4*g:])
		for l := 0; l < 4; l++ {
			iq3PackGroup(v[32*g+8*l:], iq3xxsGrid[x[2+8*g+2*l]], iq3xxsGrid[x[2+8*g+2*l+1]], iq3xxsSigns(aux, l), 1)
		}
		s := int8(2 * (2*(aux>>28) + 1))
		sc[2*g], sc[2*g+1] = s, s
	}
	return getF16(x[:]) * 0.25
}

func packRowIQ3_S(xb []byte, v *[256]byte, sc *[16]int8) float32 {
	x := (*[iq3sBlockBytes]byte)(xb)
	for g := 0; g < 8; g++ {
		for l := 0; l < 4; l++ {
			iq3PackGroup(v[32*g+8*l:], iq3sGrid[iq3sIndex(x, 8*g+2*l)], iq3sGrid[iq3sIndex(x, 8*g+2*l+1)], x[74+4*g+l], 0)
		}
		s := int8(iq3sScale(x, g))
		sc[2*g], sc[2*g+1] = s, s
	}
	return getF16(x[:])
}

// iq1PackGroup writes the eight values 32 + 8·grid ± 1 of grid entry idx.
func iq1PackGroup(v []byte, idx uint32, neg bool) {
	delta := int32(1)
	if neg {
		delta = -1
	}
	for j := 0; j < 8; j++ {
		v[j] = byte(32 + 8*iq1Grid(idx, j) + delta)
	}
}

func packRowIQ1_S(xb []byte, v *[256]byte, sc *[16]int8) float32 {
	x := (*[iq1sBlockBytes]byte)(xb)
	for g := 0; g < 8; g++ {
		qh := binary.LittleEndian.Uint16(x[34+2*g:])
		for l := 0; l < 4; l++ {
			iq1PackGroup(v[32*g+8*l:], iq1sIndex(x, g, l), qh&0x8000 != 0)
		}
		s := int8(2*(qh>>12&7) + 1)
		sc[2*g], sc[2*g+1] = s, s
	}
	return getF16(x[:]) * 0.125
}

func packRowIQ1_M(xb []byte, v *[256]byte, sc *[16]int8) float32 {
	x := (*[iq1mBlockBytes]byte)(xb)
	for g := 0; g < 8; g++ {
		for l := 0; l < 4; l++ {
			idx, neg := iq1mGroup(x, g, l)
			iq1PackGroup(v[32*g+8*l:], idx, neg)
		}
		sc[2*g], sc[2*g+1] = int8(iq1mScale(x, g, 0)), int8(iq1mScale(x, g, 1))
	}
	return iq1mD(x) * 0.125
}

var (
	packIQ3_XXS = packIQ("IQ3_XXS", iq3xxsBlockBytes, packRowIQ3_XXS)
	packIQ3_S   = packIQ("IQ3_S", iq3sBlockBytes, packRowIQ3_S)
	packIQ1_S   = packIQ("IQ1_S", iq1sBlockBytes, packRowIQ1_S)
	packIQ1_M   = packIQ("IQ1_M", iq1mBlockBytes, packRowIQ1_M)
)
