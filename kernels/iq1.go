package kernels

import "encoding/binary"

// The 1-bit i-quants (ggml's IQ1_S and IQ1_M): 256 weights per super-block
// in groups of eight that index iq1sGrid (iq1grid.go, from ggml-common.h),
// 2048 entries of eight values in {-1, 0, 1}, each shifted by a ±1/8 delta:
// weight = scale·(grid + delta). Dotted with Q8_K activations (ggml's
// vec_dot_type): the grid part sums in exact int32 and the delta part comes
// from the activation's 16-element sums (IQ1_S) or from the quants (IQ1_M),
// as in ggml's generic kernels.
//
// IQ1_S (50 bytes): d, qs[32] low index bytes, qh[8] uint16 (one per 32
// weights): bits 3l..3l+2 are index bits 8..10 of group l, bits 12..14 the
// scale s (d·(2s+1)), bit 15 the delta's sign.
//
// IQ1_M (56 bytes): qs[32], qh[16] (byte 2g+h for groups 4g+2h and 4g+2h+1:
// low nibble bits 0..2 index bits 8..10 and bit 3 the delta sign of the
// first, high nibble the second), scales[8] as four uint16: bits 6h..6h+2
// and 6h+3..6h+5 of word w are the 3-bit scales of the two 16-weight halves
// of 32-group 2w+h, and the top nibbles of the four words form the fp16 d.

const (
	iq1sBlockBytes = 50
	iq1mBlockBytes = 56
	iq1Delta       = 0.125 // ggml's IQ1S_DELTA and IQ1M_DELTA
)

// iq1Grid returns value j (0..7) of grid entry idx.
func iq1Grid(idx uint32, j int) int32 { return int32(int8(iq1sGrid[idx] >> (8 * j))) }

// iq1sIndex returns the grid index of group l (0..3) of IQ1_S 32-group g.
func iq1sIndex(x *[iq1sBlockBytes]byte, g, l int) uint32 {
	qh := binary.LittleEndian.Uint16(x[34+2*g:])
	return uint32(x[2+4*g+l]) | uint32(qh>>(3*l)&7)<<8
}

func deqIQ1_S(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		x := (*[iq1sBlockBytes]byte)(src[b*iq1sBlockBytes:])
		y := (*[256]float32)(dst[b*256:])
		d := getF16(x[:])
		for g := 0; g < 8; g++ {
			qh := binary.LittleEndian.Uint16(x[34+2*g:])
			dl := float32(d * float32(2*(qh>>12&7)+1))
			delta := float32(iq1Delta)
			if qh&0x8000 != 0 {
				delta = -iq1Delta
			}
			for l := 0; l < 4; l++ {
				idx := iq1sIndex(x, g, l)
				for j := 0; j < 8; j++ {
					y[32*g+8*l+j] = dl * float32(float32(iq1Grid(idx, j))+delta)
				}
			}
		}
	}
}

// iq1mD returns an IQ1_M block's fp16 d, spread over the scales' top nibbles.
func iq1mD(x *[iq1mBlockBytes]byte) float32 {
	var h uint16
	for w := 0; w < 4; w++ {
		h |= binary.LittleEndian.Uint16(x[48+2*w:]) >> 12 << (4 * w)
	}
	return F16ToF32(h)
}

// iq1mScale returns the odd scale 2s+1 of 16-weight half h (0, 1) of IQ1_M
// 32-group g.
func iq1mScale(x *[iq1mBlockBytes]byte, g, h int) int32 {
	sc := binary.LittleEndian.Uint16(x[48+2*(g/2):])
	return 2*int32(sc>>(6*(g%2)+3*h)&7) + 1
}

// iq1mGroup returns the grid index of group l (0..3) of IQ1_M 32-group g
// and whether its delta is negative.
func iq1mGroup(x *[iq1mBlockBytes]byte, g, l int) (idx uint32, neg bool) {
	qh := x[32+2*g+l/2] >> (4 * (l % 2))
	return uint32(x[4*g+l]) | uint32(qh&7)<<8, qh&8 != 0
}

func deqIQ1_M(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		x := (*[iq1mBlockBytes]byte)(src[b*iq1mBlockBytes:])
		y := (*[256]float32)(dst[b*256:])
		d := iq1mD(x)
		for g := 0; g < 8; g++ {
			for l := 0; l < 4; l++ {
				dl := float32(d * float32(iq1mScale(x, g, l/2)))
				idx, neg := iq1mGroup(x, g, l)
				delta := float32(iq1Delta)
				if neg {
					delta = -iq1Delta
				}
				for j := 0; j < 8; j++ {
					y[32*g+8*l+j] = dl * float32(float32(iq1Grid(idx, j))+delta)
				}
			}
		}
	}
}

// dotIQ1_S is ggml_vec_dot_iq1_s_q8_K_generic: per super-block the exact
// Σ (2s+1)·Σ grid·q8 and Σ (2s+1)·±(Q8_K group sums), combined as
// sumi + sumi1/8 in f32 and scaled by d·d8.
func dotIQ1_S(n int, w, a []byte) float32 {
	var sum float32
	for b := 0; b < n/256; b++ {
		x := (*[iq1sBlockBytes]byte)(w[b*iq1sBlockBytes:])
		y := (*q8kBlock)(a[b*292:])
		var sumi, sumi1 int32
		for g := 0; g < 8; g++ {
			qh := binary.LittleEndian.Uint16(x[34+2*g:])
			ls := 2*int32(qh>>12&7) + 1
			delta := int32(1)
			if qh&0x8000 != 0 {
				delta = -1
			}
			var lsum int32
			for l := 0; l < 4; l++ {
				idx := iq1sIndex(x, g, l)
				for j := 0; j < 8; j++ {
					lsum += int32(int8(y[4+32*g+8*l+j])) * iq1Grid(idx, j)
				}
			}
			sumi += ls * lsum
			sumi1 += ls * delta * (q8kSum16(y, 2*g) + q8kSum16(y, 2*g+1))
		}
		t := float32(float32(sumi) + float32(iq1Delta*float32(sumi1)))
		sum += float32(float32(getF16(x[:])*f32at(y[:])) * t)
	}
	return sum
}

// dotIQ1_M is ggml_vec_dot_iq1_m_q8_K_generic: the delta part from the
// quants' own sums (IQ1_M's delta sign is per eight weights).
func dotIQ1_M(n int, w, a []byte) float32 {
	var sum float32
	for b := 0; b < n/256; b++ {
		x := (*[iq1mBlockBytes]byte)(w[b*iq1mBlockBytes:])
		y := (*q8kBlock)(a[b*292:])
		var sumi1, sumi2 int32
		for g := 0; g < 8; g++ {
			var sum1, sum2 [2]int32
			for l := 0; l < 4; l++ {
				idx, neg := iq1mGroup(x, g, l)
				var lsum1, lsum2 int32
				for j := 0; j < 8; j++ {
					q := int32(int8(y[4+32*g+8*l+j]))
					lsum1 += q * iq1Grid(idx, j)
					lsum2 += q
				}
				if neg {
					lsum2 = -lsum2
				}
				sum1[l/2] += lsum1
				sum2[l/2] += lsum2
			}
			ls1, ls2 := iq1mScale(x, g, 0), iq1mScale(x, g, 1)
			sumi1 += sum1[0]*ls1 + sum1[1]*ls2
			sumi2 += sum2[0]*ls1 + sum2[1]*ls2
		}
		t := float32(float32(sumi1) + float32(iq1Delta*float32(sumi2)))
		sum += float32(float32(iq1mD(x)*f32at(y[:])) * t)
	}
	return sum
}
