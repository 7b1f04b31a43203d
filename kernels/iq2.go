package kernels

import (
	"encoding/binary"
	"math/bits"
)

// The 2-bit codebook i-quants (ggml's IQ2_XXS, IQ2_XS, IQ2_S; llama.cpp's
// IQ2_M file type mixes IQ2_S with other types): 256 weights per
// super-block with one fp16 d, in 32 groups of 8 whose magnitudes are a
// codebook entry (iq2grid.go: bytes 8, 25 or 43) and whose signs are a bit
// each. A group's weight is d·(0.5+s)·0.25·grid[j]·±1 for a 4-bit scale s.
// They are dotted with Q8_K activations (ggml's vec_dot_type) in exact
// int32 per super-block, Σ (2s+1)·Σ grid·sign·a, scaled once by d·d_a and
// by 1/8 at the end, as ggml's generic kernels do.
//
// IQ2_XXS (66 bytes): d, then per 32 weights two uint32: four grid indices
// (one byte each) and four 7-bit sign fields with the scale in the top
// nibble. A 7-bit field gives signs 0..6; sign 7 makes the count of
// negatives even (ksigns_iq2xs).
//
// IQ2_XS (74 bytes): d, 32 uint16 (a 9-bit grid index, a 7-bit sign field
// as above), 8 scale bytes (low nibble for groups 0-1 of the 32, high for
// groups 2-3).
//
// IQ2_S (82 bytes): d, 32 low index bytes, 32 sign bytes (8 explicit
// signs), 8 bytes of index high bits (2 per group), 8 scale bytes as IQ2_XS.

const (
	iq2xxsBlockBytes = 66
	iq2xsBlockBytes  = 74
	iq2sBlockBytes   = 82
)

// iq2Signs7 expands a 7-bit sign field to the 8 signs it stands for: bit 7
// is set when bits 0..6 hold an odd count (ggml's ksigns_iq2xs).
func iq2Signs7(s uint32) uint8 {
	s &= 127
	return uint8(s) | uint8(bits.OnesCount32(s)&1)<<7
}

// kSigns is ggml's ksigns_iq2xs as a table, iq2Signs7 of every 7-bit field,
// for the IQ3_XXS code and assembly that index it (iq3.go, iq3_amd64.go,
// iq3_arm64.s). Built once at initialization, never written.
var kSigns = func() (t [128]uint8) {
	for i := range t {
		t[i] = iq2Signs7(uint32(i))
	}
	return t
}()

// iq2Sign8 is the sign multipliers of a sign byte as 8 bytes, 0x01 for +1
// and 0xff for -1 (byte j for bit j). The SIMD dots apply it with VPSIGNB.
func iq2Sign8(s uint8) uint64 {
	var v uint64
	for j := 0; j < 8; j++ {
		b := uint64(0x01)
		if s>>j&1 != 0 {
			b = 0xff
		}
		v |= b << (8 * j)
	}
	return v
}

// iq2SignTabs holds iq2Sign8 of every sign byte (signs8, for IQ2_S) and of
// every 7-bit field's expansion (signs7, for IQ2_XXS/XS), for the assembly.
// Built once at initialization and only read afterwards.
var iq2SignTabs = func() (t struct {
	signs7 [128]uint64
	signs8 [256]uint64
}) {
	for i := range t.signs8 {
		t.signs8[i] = iq2Sign8(uint8(i))
	}
	for i := range t.signs7 {
		t.signs7[i] = iq2Sign8(iq2Signs7(uint32(i)))
	}
	return t
}()

// iq2Group writes 8 weights: db·grid[j], negated where sign bit j is set;
// the float steps are dequantize_row_iq2_*'s (db·grid rounds once, the
// sign is exact).
func iq2Group(y []float32, db float32, grid uint64, signs uint8) {
	y = y[:8]
	for j := range y {
		v := float32(db * float32(byte(grid>>(8*j))))
		if signs>>j&1 != 0 {
			v = -v
		}
		y[j] = v
	}
}

// iq2Scale is a group scale d·(0.5+s)·0.25 in ggml's order of rounding.
func iq2Scale(d float32, s uint32) float32 {
	return float32(float32(d*(0.5+float32(s))) * 0.25)
}

func deqIQ2_XXS(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		x := (*[iq2xxsBlockBytes]byte)(src[b*iq2xxsBlockBytes:])
		y := dst[b*256 : b*256+256]
		d := getF16(x[:])
		for ib := 0; ib < 8; ib++ {
			aux := binary.LittleEndian.Uint32(x[2+8*ib+4:])
			db := iq2Scale(d, aux>>28)
			for l := 0; l < 4; l++ {
				iq2Group(y[32*ib+8*l:], db, iq2xxsGrid[x[2+8*ib+l]], iq2Signs7(aux>>(7*l)))
			}
		}
	}
}

func deqIQ2_XS(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		x := (*[iq2xsBlockBytes]byte)(src[b*iq2xsBlockBytes:])
		y := dst[b*256 : b*256+256]
		d := getF16(x[:])
		for ib := 0; ib < 8; ib++ {
			sc := uint32(x[66+ib])
			db := [2]float32{iq2Scale(d, sc&15), iq2Scale(d, sc>>4)}
			for l := 0; l < 4; l++ {
				q := uint32(binary.LittleEndian.Uint16(x[2+8*ib+2*l:]))
				iq2Group(y[32*ib+8*l:], db[l/2], iq2xsGrid[q&511], iq2Signs7(q>>9))
			}
		}
	}
}

// iq2sIndex is IQ2_S group l's (0..3) grid index within 32-weight group ib.
func iq2sIndex(x *[iq2sBlockBytes]byte, ib, l int) uint32 {
	return uint32(x[2+4*ib+l]) | uint32(x[66+ib])<<(8-2*l)&0x300
}

func deqIQ2_S(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		x := (*[iq2sBlockBytes]byte)(src[b*iq2sBlockBytes:])
		y := dst[b*256 : b*256+256]
		d := getF16(x[:])
		for ib := 0; ib < 8; ib++ {
			sc := uint32(x[74+ib])
			db := [2]float32{iq2Scale(d, sc&15), iq2Scale(d, sc>>4)}
			for l := 0; l < 4; l++ {
				iq2Group(y[32*ib+8*l:], db[l/2], iq2sGrid[iq2sIndex(x, ib, l)], x[34+4*ib+l])
			}
		}
	}
}

// iq2GroupDot is Σ grid[j]·±a[j] over one group of 8 Q8_K activations.
func iq2GroupDot(grid uint64, signs uint8, a []byte) int32 {
	a = a[:8]
	var s int32
	for j := range a {
		p := int32(byte(grid>>(8*j))) * int32(int8(a[j]))
		if signs>>j&1 != 0 {
			p = -p
		}
		s += p
	}
	return s
}

// iq2Finish is the float step shared by the IQ2 dots: per super-block
// sum += (fp16 d_w · d_a)·float(isum), then the 1/8 of the scales 2s+1.
func iq2Finish(sum float32, x, y []byte, isum int32) float32 {
	d := float32(getF16(x) * f32at(y))
	return sum + float32(d*float32(isum))
}

func dotIQ2_XXS(n int, w, a []byte) float32 {
	var sum float32
	for b := 0; b < n/256; b++ {
		x := (*[iq2xxsBlockBytes]byte)(w[b*iq2xxsBlockBytes:])
		y := (*q8kBlock)(a[b*292:])
		var isum int32
		for ib := 0; ib < 8; ib++ {
			aux := binary.LittleEndian.Uint32(x[2+8*ib+4:])
			var s int32
			for l := 0; l < 4; l++ {
				s += iq2GroupDot(iq2xxsGrid[x[2+8*ib+l]], iq2Signs7(aux>>(7*l)), y[4+32*ib+8*l:])
			}
			isum += s * int32(2*(aux>>28)+1)
		}
		sum = iq2Finish(sum, x[:], y[:], isum)
	}
	return 0.125 * sum
}

func dotIQ2_XS(n int, w, a []byte) float32 {
	var sum float32
	for b := 0; b < n/256; b++ {
		x := (*[iq2xsBlockBytes]byte)(w[b*iq2xsBlockBytes:])
		y := (*q8kBlock)(a[b*292:])
		var isum int32
		for ib := 0; ib < 8; ib++ {
			sc := int32(x[66+ib])
			var s [2]int32
			for l := 0; l < 4; l++ {
				q := uint32(binary.LittleEndian.Uint16(x[2+8*ib+2*l:]))
				s[l/2] += iq2GroupDot(iq2xsGrid[q&511], iq2Signs7(q>>9), y[4+32*ib+8*l:])
			}
			isum += s[0]*(2*(sc&15)+1) + s[1]*(2*(sc>>4)+1)
		}
		sum = iq2Finish(sum, x[:], y[:], isum)
	}
	return 0.125 * sum
}

func dotIQ2_S(n int, w, a []byte) float32 {
	var sum float32
	for b := 0; b < n/256; b++ {
		x := (*[iq2sBlockBytes]byte)(w[b*iq2sBlockBytes:])
		y := (*q8kBlock)(a[b*292:])
		var isum int32
		for ib := 0; ib < 8; ib++ {
			sc := int32(x[74+ib])
			var s [2]int32
			for l := 0; l < 4; l++ {
				s[l/2] += iq2GroupDot(iq2sGrid[iq2sIndex(x, ib, l)], x[34+4*ib+l], y[4+32*ib+8*l:])
			}
			isum += s[0]*(2*(sc&15)+1) + s[1]*(2*(sc>>4)+1)
		}
		sum = iq2Finish(sum, x[:], y[:], isum)
	}
	return 0.125 * sum
}
