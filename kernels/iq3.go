package kernels

import "encoding/binary"

// The 3-bit i-quants (ggml's IQ3_XXS and IQ3_S): 256 weights per super-block
// in groups of four that index a grid of four-magnitude entries
// (iq3grid.go, from ggml-common.h), with one sign bit per weight and a
// 4-bit scale per 32 (IQ3_XXS) or per 32-weight half of 64 (IQ3_S). Dotted
// with Q8_K activations (ggml's vec_dot_type): the grid products sum in
// exact int32 per super-block and are scaled once, as ggml's generic kernels
// do.
//
// IQ3_XXS (98 bytes): d, qs[64] grid indices, then eight little-endian
// uint32 (one per 32 weights): bits 7l..7l+6 index ksigns for the eight
// weights of group pair l (the eighth sign is the parity of the seven), the
// top four bits s give the scale d·(2s+1)/4.
//
// IQ3_S (110 bytes): d, qs[64] low index bytes, qh[8] (bit k of qh[g] is
// bit 8 of group 8g+k's index), signs[32] (bit j of byte 4g+l is weight
// 8l+j of the 32 of group g), scales[4] (nibble h of byte p: scale of 32-group
// 2p+h, d·(2s+1)).

const (
	iq3xxsBlockBytes = 98
	iq3sBlockBytes   = 110
)

// iq3xxsSigns returns the eight sign bits of pair l of an IQ3_XXS 32-group
// from its scale-and-sign word.
func iq3xxsSigns(aux uint32, l int) byte { return kSigns[aux>>(7*l)&127] }

// iq3Sign is -1 where bit j of signs is set, else +1.
func iq3Sign(signs byte, j int) int32 { return 1 - 2*int32(signs>>j&1) }

func deqIQ3_XXS(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		x := (*[iq3xxsBlockBytes]byte)(src[b*iq3xxsBlockBytes:])
		y := (*[256]float32)(dst[b*256:])
		d := getF16(x[:])
		for g := 0; g < 8; g++ {
			aux := binary.LittleEndian.Uint32(x[66+4*g:])
			db := float32(float32(d*(0.5+float32(aux>>28))) * 0.5)
			for l := 0; l < 4; l++ {
				signs := iq3xxsSigns(aux, l)
				g1, g2 := iq3xxsGrid[x[2+8*g+2*l]], iq3xxsGrid[x[2+8*g+2*l+1]]
				for j := 0; j < 4; j++ {
					y[32*g+8*l+j] = float32(db*float32(byte(g1>>(8*j)))) * float32(iq3Sign(signs, j))
					y[32*g+8*l+4+j] = float32(db*float32(byte(g2>>(8*j)))) * float32(iq3Sign(signs, 4+j))
				}
			}
		}
	}
}

// iq3sIndex returns the grid index of group k (0..63) of an IQ3_S block.
func iq3sIndex(x *[iq3sBlockBytes]byte, k int) uint32 {
	return uint32(x[2+k]) | uint32(x[66+k/8]>>(k%8)&1)<<8
}

// iq3sScale returns the odd scale 2s+1 of 32-group g of an IQ3_S block.
func iq3sScale(x *[iq3sBlockBytes]byte, g int) int32 {
	return 2*int32(x[106+g/2]>>(4*(g%2))&15) + 1
}

func deqIQ3_S(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		x := (*[iq3sBlockBytes]byte)(src[b*iq3sBlockBytes:])
		y := (*[256]float32)(dst[b*256:])
		d := getF16(x[:])
		for g := 0; g < 8; g++ {
			db := float32(d * float32(iq3sScale(x, g)))
			for l := 0; l < 4; l++ {
				signs := x[74+4*g+l]
				g1, g2 := iq3sGrid[iq3sIndex(x, 8*g+2*l)], iq3sGrid[iq3sIndex(x, 8*g+2*l+1)]
				for j := 0; j < 4; j++ {
					y[32*g+8*l+j] = float32(db*float32(byte(g1>>(8*j)))) * float32(iq3Sign(signs, j))
					y[32*g+8*l+4+j] = float32(db*float32(byte(g2>>(8*j)))) * float32(iq3Sign(signs, 4+j))
				}
			}
		}
	}
}

// iq3Group8 is Σ grid·sign·q8 over eight weights: grid entries g1, g2
// (weights 0..3 and 4..7), their sign bits and eight Q8_K quants.
func iq3Group8(g1, g2 uint32, signs byte, q8 []byte) int32 {
	var s int32
	for j := 0; j < 4; j++ {
		s += int32(byte(g1>>(8*j))) * int32(int8(q8[j])) * iq3Sign(signs, j)
		s += int32(byte(g2>>(8*j))) * int32(int8(q8[4+j])) * iq3Sign(signs, 4+j)
	}
	return s
}

// dotIQ3_XXS is ggml_vec_dot_iq3_xxs_q8_K_generic: per super-block the
// exact Σ (2s+1)·Σ grid·sign·q8, times d·d8, summed, then × 1/4.
func dotIQ3_XXS(n int, w, a []byte) float32 {
	var sum float32
	for b := 0; b < n/256; b++ {
		x := (*[iq3xxsBlockBytes]byte)(w[b*iq3xxsBlockBytes:])
		y := (*q8kBlock)(a[b*292:])
		var bsum int32
		for g := 0; g < 8; g++ {
			aux := binary.LittleEndian.Uint32(x[66+4*g:])
			var s int32
			for l := 0; l < 4; l++ {
				s += iq3Group8(iq3xxsGrid[x[2+8*g+2*l]], iq3xxsGrid[x[2+8*g+2*l+1]], iq3xxsSigns(aux, l), y[4+32*g+8*l:])
			}
			bsum += s * int32(2*(aux>>28)+1)
		}
		d := float32(getF16(x[:]) * f32at(y[:]))
		sum += float32(d * float32(bsum))
	}
	return float32(0.25 * sum)
}

// dotIQ3_S is ggml_vec_dot_iq3_s_q8_K_generic.
func dotIQ3_S(n int, w, a []byte) float32 {
	var sum float32
	for b := 0; b < n/256; b++ {
		x := (*[iq3sBlockBytes]byte)(w[b*iq3sBlockBytes:])
		y := (*q8kBlock)(a[b*292:])
		var bsum int32
		for g := 0; g < 8; g++ {
			var s int32
			for l := 0; l < 4; l++ {
				s += iq3Group8(iq3sGrid[iq3sIndex(x, 8*g+2*l)], iq3sGrid[iq3sIndex(x, 8*g+2*l+1)], x[74+4*g+l], y[4+32*g+8*l:])
			}
			bsum += s * iq3sScale(x, g)
		}
		d := float32(getF16(x[:]) * f32at(y[:]))
		sum += float32(d * float32(bsum))
	}
	return sum
}
