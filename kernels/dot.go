package kernels

import (
	"encoding/binary"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
)

// The scalar dot products mirror ggml's structure: within a block the
// products of quants are summed exactly in integers, and only the per-block
// total is scaled (d_w·d_a) and added in f32. So the result differs from
// llama.cpp's only by the order of those per-block f32 additions. Every f32
// multiply-add is written float32(a*b) so that no Go port fuses it into an
// FMA, which keeps the scalar path bit-identical on amd64, arm64 and wasm.

func f32at(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

func dotQ4_0(n int, w, a []byte) float32 {
	nb := n / 32
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[18]byte)(w[b*18:])
		y := (*[34]byte)(a[b*34:])
		var s int32
		for j := 0; j < 16; j++ {
			s += (int32(x[2+j]&15)-8)*int32(int8(y[2+j])) + (int32(x[2+j]>>4)-8)*int32(int8(y[18+j]))
		}
		sum += float32(getF16(x[:])*getF16(y[:])) * float32(s)
	}
	return sum
}

func dotQ4_1(n int, w, a []byte) float32 {
	nb := n / 32
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[20]byte)(w[b*20:])
		y := (*[36]byte)(a[b*36:])
		var s int32
		for j := 0; j < 16; j++ {
			s += int32(x[4+j]&15)*int32(int8(y[4+j])) + int32(x[4+j]>>4)*int32(int8(y[20+j]))
		}
		sum += float32(float32(getF16(x[:])*getF16(y[:]))*float32(s)) + float32(getF16(x[2:])*getF16(y[2:]))
	}
	return sum
}

func dotQ5_0(n int, w, a []byte) float32 {
	nb := n / 32
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[22]byte)(w[b*22:])
		y := (*[34]byte)(a[b*34:])
		qh := binary.LittleEndian.Uint32(x[2:])
		var s int32
		for j := 0; j < 16; j++ {
			v0 := (int32(x[6+j]&15) | int32(qh>>j&1)<<4) - 16
			v1 := (int32(x[6+j]>>4) | int32(qh>>(j+16)&1)<<4) - 16
			s += v0*int32(int8(y[2+j])) + v1*int32(int8(y[18+j]))
		}
		sum += float32(getF16(x[:])*getF16(y[:])) * float32(s)
	}
	return sum
}

func dotQ5_1(n int, w, a []byte) float32 {
	nb := n / 32
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[24]byte)(w[b*24:])
		y := (*[36]byte)(a[b*36:])
		qh := binary.LittleEndian.Uint32(x[4:])
		var s int32
		for j := 0; j < 16; j++ {
			v0 := int32(x[8+j]&15) | int32(qh>>j&1)<<4
			v1 := int32(x[8+j]>>4) | int32(qh>>(j+16)&1)<<4
			s += v0*int32(int8(y[4+j])) + v1*int32(int8(y[20+j]))
		}
		sum += float32(float32(getF16(x[:])*getF16(y[:]))*float32(s)) + float32(getF16(x[2:])*getF16(y[2:]))
	}
	return sum
}

func dotQ8_0(n int, w, a []byte) float32 {
	nb := n / 32
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[34]byte)(w[b*34:])
		y := (*[34]byte)(a[b*34:])
		var s int32
		for j := 2; j < 34; j += 4 {
			s += int32(int8(x[j]))*int32(int8(y[j])) + int32(int8(x[j+1]))*int32(int8(y[j+1])) +
				int32(int8(x[j+2]))*int32(int8(y[j+2])) + int32(int8(x[j+3]))*int32(int8(y[j+3]))
		}
		sum += float32(getF16(x[:])*getF16(y[:])) * float32(s)
	}
	return sum
}

// q8kBlock views one Q8_K activation block: d, 256 quants, 16 group sums.
type q8kBlock = [292]byte

func q8kSum16(y *q8kBlock, j int) int32 { return int32(int16(binary.LittleEndian.Uint16(y[260+2*j:]))) }

func dotQ2_K(n int, w, a []byte) float32 {
	nb := n / 256
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[84]byte)(w[b*84:])
		y := (*q8kBlock)(a[b*292:])
		var summs, isum int32
		for j := 0; j < 16; j++ {
			summs += q8kSum16(y, j) * int32(x[j]>>4)
		}
		is := 0
		for nn := 0; nn < 2; nn++ {
			q2 := x[16+32*nn : 16+32*nn+32]
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				q8 := y[4+128*nn+32*j : 4+128*nn+32*j+32]
				var s0, s1 int32
				for l := 0; l < 16; l++ {
					s0 += int32(int8(q8[l])) * int32(q2[l]>>shift&3)
					s1 += int32(int8(q8[16+l])) * int32(q2[16+l]>>shift&3)
				}
				isum += int32(x[is]&15)*s0 + int32(x[is+1]&15)*s1
				is += 2
			}
		}
		yd := f32at(y[:])
		dall := yd * getF16(x[80:])
		dmin := yd * getF16(x[82:])
		sum += float32(float32(dall*float32(isum)) - float32(dmin*float32(summs)))
	}
	return sum
}

func dotQ3_K(n int, w, a []byte) float32 {
	nb := n / 256
	var sum float32
	var scales [16]int8
	for b := 0; b < nb; b++ {
		x := (*[110]byte)(w[b*110:])
		y := (*q8kBlock)(a[b*292:])
		q3Scales(x[96:108], &scales)
		hm := x[0:32]
		var isum int32
		is := 0
		m := uint8(1)
		for nn := 0; nn < 2; nn++ {
			q := x[32+32*nn : 32+32*nn+32]
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				q8 := y[4+128*nn+32*j : 4+128*nn+32*j+32]
				var s0, s1 int32
				for l := 0; l < 16; l++ {
					v0 := int32(q[l] >> shift & 3)
					if hm[l]&m == 0 {
						v0 -= 4
					}
					v1 := int32(q[16+l] >> shift & 3)
					if hm[16+l]&m == 0 {
						v1 -= 4
					}
					s0 += v0 * int32(int8(q8[l]))
					s1 += v1 * int32(int8(q8[16+l]))
				}
				isum += (int32(scales[is])-32)*s0 + (int32(scales[is+1])-32)*s1
				is += 2
				m <<= 1
			}
		}
		d := getF16(x[108:]) * f32at(y[:])
		sum += float32(d * float32(isum))
	}
	return sum
}

func dotQ4_K(n int, w, a []byte) float32 {
	nb := n / 256
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[144]byte)(w[b*144:])
		y := (*q8kBlock)(a[b*292:])
		sc := x[4:16]
		var isum, summs int32
		for j := 0; j < 4; j++ {
			c1, m1 := kScaleMin(2*j, sc)
			c2, m2 := kScaleMin(2*j+1, sc)
			summs += int32(m1)*(q8kSum16(y, 4*j)+q8kSum16(y, 4*j+1)) + int32(m2)*(q8kSum16(y, 4*j+2)+q8kSum16(y, 4*j+3))
			q := (*[32]byte)(x[16+32*j:])
			lo := (*[32]byte)(y[4+64*j:])
			hi := (*[32]byte)(y[4+64*j+32:])
			var s1, s2 int32
			for l := 0; l < 32; l++ {
				s1 += int32(q[l]&15) * int32(int8(lo[l]))
				s2 += int32(q[l]>>4) * int32(int8(hi[l]))
			}
			isum += int32(c1)*s1 + int32(c2)*s2
		}
		yd := f32at(y[:])
		d := getF16(x[:]) * yd
		dmin := getF16(x[2:]) * yd
		sum += float32(float32(d*float32(isum)) - float32(dmin*float32(summs)))
	}
	return sum
}

func dotQ5_K(n int, w, a []byte) float32 {
	nb := n / 256
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[176]byte)(w[b*176:])
		y := (*q8kBlock)(a[b*292:])
		sc := x[4:16]
		qh := (*[32]byte)(x[16:])
		var isum, summs int32
		for j := 0; j < 4; j++ {
			c1, m1 := kScaleMin(2*j, sc)
			c2, m2 := kScaleMin(2*j+1, sc)
			summs += int32(m1)*(q8kSum16(y, 4*j)+q8kSum16(y, 4*j+1)) + int32(m2)*(q8kSum16(y, 4*j+2)+q8kSum16(y, 4*j+3))
			q := (*[32]byte)(x[48+32*j:])
			lo := (*[32]byte)(y[4+64*j:])
			hi := (*[32]byte)(y[4+64*j+32:])
			u1, u2 := uint(2*j), uint(2*j+1)
			var s1, s2 int32
			for l := 0; l < 32; l++ {
				v1 := int32(q[l]&15) | int32(qh[l]>>u1&1)<<4
				v2 := int32(q[l]>>4) | int32(qh[l]>>u2&1)<<4
				s1 += v1 * int32(int8(lo[l]))
				s2 += v2 * int32(int8(hi[l]))
			}
			isum += int32(c1)*s1 + int32(c2)*s2
		}
		yd := f32at(y[:])
		d := getF16(x[:]) * yd
		dmin := getF16(x[2:]) * yd
		sum += float32(float32(d*float32(isum)) - float32(dmin*float32(summs)))
	}
	return sum
}

func dotQ6_K(n int, w, a []byte) float32 {
	nb := n / 256
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[210]byte)(w[b*210:])
		y := (*q8kBlock)(a[b*292:])
		var isum int32
		for nn := 0; nn < 2; nn++ {
			ql := (*[64]byte)(x[64*nn:])
			qh := (*[32]byte)(x[128+32*nn:])
			sc := (*[8]byte)(x[192+8*nn:])
			q8 := (*[128]byte)(y[4+128*nn:])
			for h := 0; h < 2; h++ { // 16-element halves share a scale
				var s1, s2, s3, s4 int32
				for l := 16 * h; l < 16*h+16; l++ {
					q1 := int32(ql[l]&15|(qh[l]&3)<<4) - 32
					q2 := int32(ql[l+32]&15|(qh[l]>>2&3)<<4) - 32
					q3 := int32(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
					q4 := int32(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
					s1 += q1 * int32(int8(q8[l]))
					s2 += q2 * int32(int8(q8[l+32]))
					s3 += q3 * int32(int8(q8[l+64]))
					s4 += q4 * int32(int8(q8[l+96]))
				}
				isum += int32(int8(sc[h]))*s1 + int32(int8(sc[h+2]))*s2 + int32(int8(sc[h+4]))*s3 + int32(int8(sc[h+6]))*s4
			}
		}
		d := getF16(x[208:]) * f32at(y[:])
		sum += float32(d * float32(isum))
	}
	return sum
}

// kvaluesIQ4NL is the non-linear 4-bit codebook of IQ4_NL and IQ4_XS
// (ggml-common.h kvalues_iq4nl): a 4-bit index selects an int8 value, so a
// block's integer sums stay exact like the linear 4-bit types'.
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// dotIQ4_NL: block = fp16 d, 16 bytes of index pairs (low nibble element j,
// high nibble j+16), dotted with Q8_0 like Q4_0 (vec_dot_type Q8_0).
func dotIQ4_NL(n int, w, a []byte) float32 {
	nb := n / 32
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[18]byte)(w[b*18:])
		y := (*[34]byte)(a[b*34:])
		var s int32
		for j := 0; j < 16; j++ {
			s += int32(kvaluesIQ4NL[x[2+j]&15])*int32(int8(y[2+j])) + int32(kvaluesIQ4NL[x[2+j]>>4])*int32(int8(y[18+j]))
		}
		sum += float32(getF16(x[:])*getF16(y[:])) * float32(s)
	}
	return sum
}

// iq4xsScale returns the 6-bit scale code of 32-element sub-block ib of an
// IQ4_XS block (low 4 bits from scales_l, top 2 from scales_h); the
// sub-block's multiplier is d·(code-32).
func iq4xsScale(x []byte, ib int) int32 {
	sh := binary.LittleEndian.Uint16(x[2:])
	return int32(x[4+ib/2]>>(4*(ib%2))&15) | int32(sh>>(2*ib)&3)<<4
}

// dotIQ4_XS: block = fp16 d, u16 scales_h, 4 bytes scales_l, 128 bytes of
// index pairs (sub-block ib: bytes 16ib..16ib+15, low nibbles elements
// 32ib..32ib+15, high nibbles the next 16), dotted with Q8_K (vec_dot_type
// Q8_K). Like the K-quants, the super-block's integer sum Σ(code-32)·Σq·a is
// exact (|Σ| ≤ 8·32·127·128·32 < 2^27) and scaled once; ggml's AVX2 kernel
// does the same, its generic one scales per 32-element sub-block.
func dotIQ4_XS(n int, w, a []byte) float32 {
	nb := n / 256
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[136]byte)(w[b*136:])
		y := (*q8kBlock)(a[b*292:])
		var isum int32
		for ib := 0; ib < 8; ib++ {
			q := (*[16]byte)(x[8+16*ib:])
			q8 := (*[32]byte)(y[4+32*ib:])
			var s int32
			for j := 0; j < 16; j++ {
				s += int32(kvaluesIQ4NL[q[j]&15])*int32(int8(q8[j])) + int32(kvaluesIQ4NL[q[j]>>4])*int32(int8(q8[16+j]))
			}
			isum += (iq4xsScale(x[:], ib) - 32) * s
		}
		d := getF16(x[:]) * f32at(y[:])
		sum += float32(d * float32(isum))
	}
	return sum
}

// The float dots accumulate in float64 like ggml's generic ggml_vec_dot_f32
// and _f16 (ggml_float); the products of two f32, f16 or bf16 values are exact
// in float64, so the only rounding is the final conversion and the f64 sum.

func dotF32(n int, w, a []byte) float32 {
	w, a = w[:4*n], a[:4*n]
	var s0, s1 float64
	i := 0
	for ; i+1 < n; i += 2 {
		s0 += float64(f32at(w[4*i:])) * float64(f32at(a[4*i:]))
		s1 += float64(f32at(w[4*i+4:])) * float64(f32at(a[4*i+4:]))
	}
	if i < n {
		s0 += float64(f32at(w[4*i:])) * float64(f32at(a[4*i:]))
	}
	return float32(s0 + s1)
}

func dotF16(n int, w, a []byte) float32 {
	w, a = w[:2*n], a[:2*n]
	var s0, s1 float64
	for i := 0; i < n; i++ {
		hw := binary.LittleEndian.Uint16(w[2*i:])
		ha := binary.LittleEndian.Uint16(a[2*i:])
		if f16IsNormal(hw) && f16IsNormal(ha) {
			s0 += float64(f16Normal(hw)) * float64(f16Normal(ha))
		} else {
			s1 += float64(F16ToF32(hw)) * float64(F16ToF32(ha))
		}
	}
	return float32(s0 + s1)
}

func dotBF16(n int, w, a []byte) float32 {
	w, a = w[:2*n], a[:2*n]
	var s float64
	for i := 0; i < n; i++ {
		s += float64(BF16ToF32(binary.LittleEndian.Uint16(w[2*i:]))) * float64(BF16ToF32(binary.LittleEndian.Uint16(a[2*i:])))
	}
	return float32(s)
}

// Executable lists the weight types every Impl has a dot routine for (the
// rows of portableRows with a dot): the float types, then the block types,
// each in type id order.
func Executable() []ggml.Type {
	var ts []ggml.Type
	for _, quantized := range []bool{false, true} {
		for t := range portableRows {
			if typ := ggml.Type(t); Executes(typ) && typ.Quantized() == quantized {
				ts = append(ts, typ)
			}
		}
	}
	return ts
}

// newScalar is the portable path: portableRows and the portable ops.
func newScalar() *Impl {
	return &Impl{Name: "scalar", types: portableRows, ops: portableOps()}
}
