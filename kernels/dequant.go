package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
)

// Dequantize decodes len(dst) elements of type t from src, which must be
// exactly that row's bytes. Results are bit-exact with ggml's
// dequantize_row_*: the same f32 operations in the same order. The explicit
// float32(...) conversions stop Go fusing a*b-c into an FMA (which would round
// once instead of twice and so differ from ggml's reference).
func Dequantize(t ggml.Type, src []byte, dst []float32) error {
	return dequantize(&portableRows, t, src, dst)
}

// dequantize is Dequantize through a path's table.
func dequantize(rows *[numTypes]routines, t ggml.Type, src []byte, dst []float32) error {
	if err := checkRow("dequantize", t, len(dst), len(src)); err != nil {
		return err
	}
	if uint64(t) >= numTypes || rows[t].deq == nil {
		return fmt.Errorf("kernels: dequantize %s is not supported", t)
	}
	rows[t].deq(src, dst)
	return nil
}

func deqF32(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func deqF16(src []byte, dst []float32) {
	for i := range dst {
		h := binary.LittleEndian.Uint16(src[2*i:])
		if f16IsNormal(h) {
			dst[i] = f16Normal(h)
		} else {
			dst[i] = f16Special(h)
		}
	}
}

func deqBF16(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func deqQ4_0(src []byte, dst []float32) {
	for b := 0; b*32 < len(dst); b++ {
		s := src[b*18 : b*18+18]
		y := dst[b*32 : b*32+32]
		d := getF16(s)
		for j := 0; j < 16; j++ {
			y[j] = float32(int32(s[2+j]&15)-8) * d
			y[j+16] = float32(int32(s[2+j]>>4)-8) * d
		}
	}
}

func deqQ4_1(src []byte, dst []float32) {
	for b := 0; b*32 < len(dst); b++ {
		s := src[b*20 : b*20+20]
		y := dst[b*32 : b*32+32]
		d, m := getF16(s), getF16(s[2:])
		for j := 0; j < 16; j++ {
			y[j] = float32(float32(s[4+j]&15)*d) + m
			y[j+16] = float32(float32(s[4+j]>>4)*d) + m
		}
	}
}

func deqQ5_0(src []byte, dst []float32) {
	for b := 0; b*32 < len(dst); b++ {
		s := src[b*22 : b*22+22]
		y := dst[b*32 : b*32+32]
		d := getF16(s)
		qh := binary.LittleEndian.Uint32(s[2:])
		for j := 0; j < 16; j++ {
			h0 := int32(qh>>j&1) << 4
			h1 := int32(qh>>(j+16)&1) << 4
			y[j] = float32((int32(s[6+j]&15)|h0)-16) * d
			y[j+16] = float32((int32(s[6+j]>>4)|h1)-16) * d
		}
	}
}

func deqQ5_1(src []byte, dst []float32) {
	for b := 0; b*32 < len(dst); b++ {
		s := src[b*24 : b*24+24]
		y := dst[b*32 : b*32+32]
		d, m := getF16(s), getF16(s[2:])
		qh := binary.LittleEndian.Uint32(s[4:])
		for j := 0; j < 16; j++ {
			h0 := int32(qh>>j&1) << 4
			h1 := int32(qh>>(j+16)&1) << 4
			y[j] = float32(float32(int32(s[8+j]&15)|h0)*d) + m
			y[j+16] = float32(float32(int32(s[8+j]>>4)|h1)*d) + m
		}
	}
}

func deqQ8_0(src []byte, dst []float32) {
	for b := 0; b*32 < len(dst); b++ {
		s := src[b*34 : b*34+34]
		y := dst[b*32 : b*32+32]
		d := getF16(s)
		for j := range y {
			y[j] = float32(int8(s[2+j])) * d
		}
	}
}

// deqQ8_1 decodes qs×d; the stored sum s is redundant for values.
func deqQ8_1(src []byte, dst []float32) {
	for b := 0; b*32 < len(dst); b++ {
		s := src[b*36 : b*36+36]
		y := dst[b*32 : b*32+32]
		d := getF16(s)
		for j := range y {
			y[j] = float32(int8(s[4+j])) * d
		}
	}
}

// Q2_K block (84 bytes): scales[16] (low nibble scale, high nibble min),
// qs[64] (2-bit quants, four 32-element planes per 128), d, dmin (fp16).
func deqQ2_K(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		s := src[b*84 : b*84+84]
		y := dst[b*256 : b*256+256]
		sc := s[0:16]
		d, dmin := getF16(s[80:]), getF16(s[82:])
		is := 0
		for n := 0; n < 2; n++ {
			q := s[16+32*n : 16+32*n+32]
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				for half := 0; half < 2; half++ {
					c := sc[is]
					is++
					dl := d * float32(c&15)
					ml := dmin * float32(c>>4)
					out := y[128*n+32*j+16*half : 128*n+32*j+16*half+16]
					qq := q[16*half : 16*half+16]
					for l := range out {
						out[l] = float32(dl*float32(qq[l]>>shift&3)) - ml
					}
				}
			}
		}
	}
}

// q3Scales unpacks Q3_K's twelve bytes into sixteen 6-bit scales (before the
// -32 offset): scales 0..7 take their low four bits from the low nibbles of
// bytes 0..7, scales 8..15 from the high nibbles, and bytes 8..11 hold the
// top two bits of all sixteen (two bits per scale, four scales per byte).
func q3Scales(p []byte, out *[16]int8) {
	a0 := binary.LittleEndian.Uint32(p[0:])
	a1 := binary.LittleEndian.Uint32(p[4:])
	tmp := binary.LittleEndian.Uint32(p[8:])
	const m1, m2 = 0x03030303, 0x0f0f0f0f
	w := [4]uint32{
		a0&m2 | (tmp>>0&m1)<<4,
		a1&m2 | (tmp>>2&m1)<<4,
		a0>>4&m2 | (tmp>>4&m1)<<4,
		a1>>4&m2 | (tmp>>6&m1)<<4,
	}
	for i, v := range w {
		out[4*i+0] = int8(v)
		out[4*i+1] = int8(v >> 8)
		out[4*i+2] = int8(v >> 16)
		out[4*i+3] = int8(v >> 24)
	}
}

// Q3_K block (110 bytes): hmask[32] (high bit, cleared bit means -4),
// qs[64] (low 2 bits), scales[12] (sixteen 6-bit scales), d (fp16).
func deqQ3_K(src []byte, dst []float32) {
	var scales [16]int8
	for b := 0; b*256 < len(dst); b++ {
		s := src[b*110 : b*110+110]
		y := dst[b*256 : b*256+256]
		hm := s[0:32]
		q3Scales(s[96:108], &scales)
		d := getF16(s[108:])
		is := 0
		m := uint8(1)
		for n := 0; n < 2; n++ {
			q := s[32+32*n : 32+32*n+32]
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				for half := 0; half < 2; half++ {
					dl := d * float32(int32(scales[is])-32)
					is++
					out := y[128*n+32*j+16*half : 128*n+32*j+16*half+16]
					for l := range out {
						k := 16*half + l
						v := int32(q[k] >> shift & 3)
						if hm[k]&m == 0 {
							v -= 4
						}
						out[l] = dl * float32(v)
					}
				}
				m <<= 1
			}
		}
	}
}

// kScaleMin decodes the j-th 6-bit (scale, min) pair of Q4_K/Q5_K's twelve
// scale bytes: pairs 0..3 sit in the low 6 bits of bytes 0..7; pairs 4..7 take
// their low 4 bits from bytes 8..11 and their top 2 bits from bytes 0..7.
func kScaleMin(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&15 | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// Q4_K block (144 bytes): d, dmin (fp16), scales[12], qs[128]; each 64
// elements use 32 bytes, low nibbles first.
func deqQ4_K(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		s := src[b*144 : b*144+144]
		y := dst[b*256 : b*256+256]
		d, dmin := getF16(s), getF16(s[2:])
		sc := s[4:16]
		for j := 0; j < 4; j++ {
			c1, m1 := kScaleMin(2*j, sc)
			c2, m2 := kScaleMin(2*j+1, sc)
			d1, mm1 := d*float32(c1), dmin*float32(m1)
			d2, mm2 := d*float32(c2), dmin*float32(m2)
			q := s[16+32*j : 16+32*j+32]
			lo := y[64*j : 64*j+32]
			hi := y[64*j+32 : 64*j+64]
			for l := range q {
				lo[l] = float32(d1*float32(q[l]&15)) - mm1
				hi[l] = float32(d2*float32(q[l]>>4)) - mm2
			}
		}
	}
}

// Q5_K block (176 bytes): d, dmin, scales[12], qh[32] (fifth bits, two bit
// planes per 64 elements), qs[128].
func deqQ5_K(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		s := src[b*176 : b*176+176]
		y := dst[b*256 : b*256+256]
		d, dmin := getF16(s), getF16(s[2:])
		sc := s[4:16]
		qh := s[16:48]
		for j := 0; j < 4; j++ {
			c1, m1 := kScaleMin(2*j, sc)
			c2, m2 := kScaleMin(2*j+1, sc)
			d1, mm1 := d*float32(c1), dmin*float32(m1)
			d2, mm2 := d*float32(c2), dmin*float32(m2)
			q := s[48+32*j : 48+32*j+32]
			lo := y[64*j : 64*j+32]
			hi := y[64*j+32 : 64*j+64]
			u1, u2 := uint(2*j), uint(2*j+1)
			for l := range q {
				v1 := int32(q[l]&15) | int32(qh[l]>>u1&1)<<4
				v2 := int32(q[l]>>4) | int32(qh[l]>>u2&1)<<4
				lo[l] = float32(d1*float32(v1)) - mm1
				hi[l] = float32(d2*float32(v2)) - mm2
			}
		}
	}
}

// Q6_K block (210 bytes): ql[128] (low 4 bits), qh[64] (high 2 bits),
// scales[16] (int8), d (fp16). Values are (6-bit - 32) × d × scale.
func deqQ6_K(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		s := src[b*210 : b*210+210]
		y := dst[b*256 : b*256+256]
		d := getF16(s[208:])
		for n := 0; n < 2; n++ {
			ql := s[64*n : 64*n+64]
			qh := s[128+32*n : 128+32*n+32]
			sc := s[192+8*n : 192+8*n+8]
			out := y[128*n : 128*n+128]
			for l := 0; l < 32; l++ {
				is := l / 16
				q1 := int32(ql[l]&15|(qh[l]>>0&3)<<4) - 32
				q2 := int32(ql[l+32]&15|(qh[l]>>2&3)<<4) - 32
				q3 := int32(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
				q4 := int32(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
				out[l] = float32(d*float32(int8(sc[is]))) * float32(q1)
				out[l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
				out[l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
				out[l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
			}
		}
	}
}

// Q8_K block (292 bytes): d (f32), qs[256] (int8), bsums[16] (int16).
func deqQ8_K(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		s := src[b*292 : b*292+292]
		y := dst[b*256 : b*256+256]
		d := math.Float32frombits(binary.LittleEndian.Uint32(s))
		for j := range y {
			y[j] = d * float32(int8(s[4+j]))
		}
	}
}

// IQ4_NL block (18 bytes): d (fp16), qs[16] (codebook indices, low nibble
// element j, high nibble j+16). Values are d × kvalues[index].
func deqIQ4_NL(src []byte, dst []float32) {
	for b := 0; b*32 < len(dst); b++ {
		s := src[b*18 : b*18+18]
		y := dst[b*32 : b*32+32]
		d := getF16(s)
		for j := 0; j < 16; j++ {
			y[j] = d * float32(kvaluesIQ4NL[s[2+j]&15])
			y[j+16] = d * float32(kvaluesIQ4NL[s[2+j]>>4])
		}
	}
}

// IQ4_XS block (136 bytes): d (fp16), scales_h (u16), scales_l[4], qs[128].
// Sub-block ib of 32 elements has the 6-bit scale code ls (see iq4xsScale)
// and values d·(ls-32) × kvalues[index], the product d·(ls-32) rounded to
// f32 first as in ggml.
func deqIQ4_XS(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		s := src[b*136 : b*136+136]
		y := dst[b*256 : b*256+256]
		d := getF16(s)
		for ib := 0; ib < 8; ib++ {
			dl := d * float32(iq4xsScale(s, ib)-32)
			q := s[8+16*ib : 8+16*ib+16]
			out := y[32*ib : 32*ib+32]
			for j := 0; j < 16; j++ {
				out[j] = dl * float32(kvaluesIQ4NL[q[j]&15])
				out[j+16] = dl * float32(kvaluesIQ4NL[q[j]>>4])
			}
		}
	}
}
