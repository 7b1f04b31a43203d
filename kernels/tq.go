package kernels

import "encoding/binary"

// The ternary types (ggml's TQ1_0 and TQ2_0, for BitNet b1.58 and TriLM
// models): 256 weights per super-block, each -1, 0 or +1 times the block's
// fp16 d, dotted with Q8_K activations (ggml's vec_dot_type) in exact int32
// and scaled once per super-block, as ggml's generic kernels do.
//
// TQ2_0 (66 bytes): qs[64], d. Byte m of 32-byte half h holds elements
// 128h + 32l + m in its bit pairs l = 0..3, each stored as value + 1.
//
// TQ1_0 (54 bytes): qs[48], qh[4], d. Five trits per byte, as the fixed-
// point fraction q = ceil(t·256/243) of their base-3 number t (first
// element the most significant trit), so trit n is ((q·3^n mod 256)·3) >> 8:
// qs[0..31] hold elements n·32 + m (n = 0..4), qs[32..47] elements 160 +
// n·16 + m, qh[0..3] (four trits each, the fifth zero) elements 240 + n·4
// + j. Again each trit is value + 1.

const (
	tq1BlockBytes = 54
	tq2BlockBytes = 66
)

// tq1Trit is trit n (0..4) of a TQ1_0 byte, in 0..2.
func tq1Trit(b byte, n int) int32 {
	q := b * [5]byte{1, 3, 9, 27, 81}[n]
	return int32(uint16(q) * 3 >> 8)
}

// tq1Each calls f(element, trit) for the 256 elements of a TQ1_0 block in
// element order.
func tq1Each(x *[tq1BlockBytes]byte, f func(i int, t int32)) {
	for n := 0; n < 5; n++ {
		for m := 0; m < 32; m++ {
			f(n*32+m, tq1Trit(x[m], n))
		}
	}
	for n := 0; n < 5; n++ {
		for m := 0; m < 16; m++ {
			f(160+n*16+m, tq1Trit(x[32+m], n))
		}
	}
	for n := 0; n < 4; n++ {
		for j := 0; j < 4; j++ {
			f(240+n*4+j, tq1Trit(x[48+j], n))
		}
	}
}

func deqTQ1_0(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		x := (*[tq1BlockBytes]byte)(src[b*tq1BlockBytes:])
		y := (*[256]float32)(dst[b*256:])
		d := getF16(x[52:])
		tq1Each(x, func(i int, t int32) { y[i] = float32(t-1) * d })
	}
}

func deqTQ2_0(src []byte, dst []float32) {
	for b := 0; b*256 < len(dst); b++ {
		x := (*[tq2BlockBytes]byte)(src[b*tq2BlockBytes:])
		y := (*[256]float32)(dst[b*256:])
		d := getF16(x[64:])
		for h := 0; h < 2; h++ {
			for l := 0; l < 4; l++ {
				for m := 0; m < 32; m++ {
					y[128*h+32*l+m] = float32(int32(x[32*h+m]>>(2*l)&3)-1) * d
				}
			}
		}
	}
}

func dotTQ1_0(n int, w, a []byte) float32 {
	var sum float32
	for b := 0; b < n/256; b++ {
		x := (*[tq1BlockBytes]byte)(w[b*tq1BlockBytes:])
		y := (*q8kBlock)(a[b*292:])
		var s int32
		tq1Each(x, func(i int, t int32) { s += (t - 1) * int32(int8(y[4+i])) })
		d := float32(getF16(x[52:]) * f32at(y[:]))
		sum += float32(float32(s) * d)
	}
	return sum
}

func dotTQ2_0(n int, w, a []byte) float32 {
	var sum float32
	for b := 0; b < n/256; b++ {
		x := (*[tq2BlockBytes]byte)(w[b*tq2BlockBytes:])
		y := (*q8kBlock)(a[b*292:])
		var s int32
		for h := 0; h < 2; h++ {
			for l := 0; l < 4; l++ {
				for m := 0; m < 32; m++ {
					s += (int32(x[32*h+m]>>(2*l)&3) - 1) * int32(int8(y[4+128*h+32*l+m]))
				}
			}
		}
		d := float32(f32at(y[:]) * getF16(x[64:]))
		sum += float32(float32(s) * d)
	}
	return sum
}

// tqScale is the ternary quantizers' d = amax (stored as fp16) and 1/d in
// f32, 0 for an all-zero block.
func tqScale(x []float32) (d, id float32) {
	for _, v := range x {
		d = max(d, abs32(v))
	}
	if d != 0 {
		id = 1 / d
	}
	return d, id
}

// quantTQ1_0 is quantize_row_tq1_0_ref: each weight rounds (half away from
// zero) to -1, 0 or 1 in units of the block's amax; trits are packed
// base 3, most significant first, and the byte stores ceil(t·256/243).
func quantTQ1_0(x []float32, dst []byte) {
	trit := func(v, id float32) uint16 { return uint16(roundAway(float32(v*id)) + 1) }
	for b := 0; b*256 < len(x); b++ {
		xb := (*[256]float32)(x[b*256:])
		o := (*[tq1BlockBytes]byte)(dst[b*tq1BlockBytes:])
		d, id := tqScale(xb[:])
		binary.LittleEndian.PutUint16(o[52:], F32ToF16(d))
		pack := func(q uint16) byte { return byte((uint16(byte(q))*256 + 242) / 243) }
		for m := 0; m < 32; m++ {
			var q uint16
			for n := 0; n < 5; n++ {
				q = q*3 + trit(xb[m+n*32], id)
			}
			o[m] = pack(q)
		}
		for m := 0; m < 16; m++ {
			var q uint16
			for n := 0; n < 5; n++ {
				q = q*3 + trit(xb[160+m+n*16], id)
			}
			o[32+m] = pack(q)
		}
		for j := 0; j < 4; j++ {
			var q uint16
			for m := 0; m < 4; m++ {
				q = q*3 + trit(xb[240+j+m*4], id)
			}
			o[48+j] = pack(q * 3)
		}
	}
}

// quantTQ2_0 is quantize_row_tq2_0_ref: the same rounding, each trit + 1
// in a bit pair.
func quantTQ2_0(x []float32, dst []byte) {
	for b := 0; b*256 < len(x); b++ {
		xb := (*[256]float32)(x[b*256:])
		o := (*[tq2BlockBytes]byte)(dst[b*tq2BlockBytes:])
		d, id := tqScale(xb[:])
		binary.LittleEndian.PutUint16(o[64:], F32ToF16(d))
		for h := 0; h < 2; h++ {
			for m := 0; m < 32; m++ {
				var q byte
				for n := 0; n < 4; n++ {
					xi := roundAway(float32(xb[128*h+m+n*32]*id)) + 1
					q += byte(xi&3) << (2 * n)
				}
				o[32*h+m] = q
			}
		}
	}
}
