package kernels

import (
	"encoding/binary"
	"math"
)

// MXFP4 (ggml type 39, the OCP microscaling FP4 format gpt-oss ships its
// experts in). A block of 32 weights is 17 bytes: e, an E8M0 exponent byte
// (a bare power of two), then qs[16], 4-bit E2M1 codes with element j in the
// low nibble of qs[j] and element j+16 in the high nibble, as Q4_0/IQ4_NL
// arrange them. ggml decodes a code through kvalues_mxfp4, the 16 E2M1 values
// doubled so that they are integers, and halves the scale to match
// (GGML_E8M0_TO_FP32_HALF: 2^(e-128)); a weight is kvaluesMXFP4[code]·that.
// The values are small integers, so a block's products with Q8_0 activations
// (ggml's vec_dot_type for MXFP4) sum exactly in int32 like IQ4_NL's, and
// every kernel is IQ4_NL's with another table and another scale decoder.

// kvaluesMXFP4 is ggml-common.h's kvalues_mxfp4 (checked bit for bit
// through the dequantize goldens recorded from ggml).
var kvaluesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// mxfp4BlockBytes is one block's size: the exponent byte and 16 code bytes.
const mxfp4BlockBytes = 17

// e8m0Half is GGML_E8M0_TO_FP32_HALF: 2^(e-128) as a float32 bit pattern.
// For e ≥ 2 that is a normal number with biased exponent e-1; e = 0 and 1
// give the subnormals 2^-128 and 2^-127 (0x00200000 << e), which ggml keeps
// rather than flushing to zero.
func e8m0Half(e byte) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// deqMXFP4 is dequantize_row_mxfp4: value·scale, exact (a small integer
// times a power of two) unless it underflows, and rounded as ggml's f32
// multiply rounds then.
func deqMXFP4(src []byte, dst []float32) {
	for b := 0; b*32 < len(dst); b++ {
		s := (*[mxfp4BlockBytes]byte)(src[b*mxfp4BlockBytes:])
		y := (*[32]float32)(dst[b*32:])
		d := e8m0Half(s[0])
		for j := 0; j < 16; j++ {
			y[j] = float32(kvaluesMXFP4[s[1+j]&15]) * d
			y[j+16] = float32(kvaluesMXFP4[s[1+j]>>4]) * d
		}
	}
}

// dotMXFP4 is ggml_vec_dot_mxfp4_q8_0_generic's arithmetic: per block the
// exact integer Σ value·q, scaled by fp16(d_a)·2^(e-128) (exact: a power of
// two times an fp16 value, unless it underflows) and added in f32.
func dotMXFP4(n int, w, a []byte) float32 {
	nb := n / 32
	var sum float32
	for b := 0; b < nb; b++ {
		x := (*[mxfp4BlockBytes]byte)(w[b*mxfp4BlockBytes:])
		y := (*[34]byte)(a[b*34:])
		var s int32
		for j := 0; j < 16; j++ {
			s += int32(kvaluesMXFP4[x[1+j]&15])*int32(int8(y[2+j])) + int32(kvaluesMXFP4[x[1+j]>>4])*int32(int8(y[18+j]))
		}
		d := float32(getF16(y[:]) * e8m0Half(x[0]))
		sum += float32(d * float32(s))
	}
	return sum
}

// quantMXFP4 is quantize_row_mxfp4_ref, which llama.cpp's quantizer runs
// for MXFP4 tensors (an importance matrix is ignored): e = floor(log2(amax))
// - 2 + 127, so the block's largest magnitude lands in the top binade of
// the doubled table (8..12), then each weight takes the first code whose
// value·scale is nearest (ties to the lower code, so 0 encodes as +0).
func quantMXFP4(x []float32, dst []byte) {
	for b := 0; b*32 < len(x); b++ {
		xb := (*[32]float32)(x[b*32:])
		o := (*[mxfp4BlockBytes]byte)(dst[b*mxfp4BlockBytes:])
		amax, _ := absMax(xb[:])
		var e byte
		if amax > 0 {
			e = mxfp4Exponent(amax)
		}
		d := e8m0Half(e)
		o[0] = e
		for j := 0; j < 16; j++ {
			o[1+j] = mxfp4Index(xb[j], d) | mxfp4Index(xb[j+16], d)<<4
		}
	}
}

// mxfp4Exponent is ggml's (uint8_t)(floorf(log2f(amax)) - 2 + 127) for a
// positive finite amax. log2f is the f32 rounding of log2 (a float64 log2
// rounded to f32 agrees with glibc's log2f wherever the floor can change:
// within a few f32 ulps of a power of two the float64 value is far more
// accurate than the f32 spacing; TestGoldenQuantize probes those inputs).
// The float → uint8 conversion goes through int32 as x86's cvttss2si does,
// so a subnormal amax (exponent below 0) wraps as ggml's build wraps it.
func mxfp4Exponent(amax float32) byte {
	l := float32(math.Log2(float64(amax)))
	f := float32(math.Floor(float64(l)))
	return byte(int32(f - 2 + 127))
}

// mxfp4Index is best_index_mxfp4: the code whose value·d is nearest to v,
// the first of equals (a strict < over codes 0..15).
func mxfp4Index(v, d float32) byte {
	best := byte(0)
	bestErr := abs32(float32(float32(kvaluesMXFP4[0])*d) - v)
	for i := 1; i < 16; i++ {
		if err := abs32(float32(float32(kvaluesMXFP4[i])*d) - v); err < bestErr {
			best, bestErr = byte(i), err
		}
	}
	return best
}

// packGemm32MXFP4 writes gemm.go's 32-element packed layout for MXFP4: for
// block b, vector j, lane r, elements 4j..4j+3 of row r as the code value
// plus off (a byte: off = 0 keeps the values signed for the AVX2 |w|·sign(a,
// w) kernel, which is exact for |w| ≤ 127; off = 128 makes them unsigned for
// VPDPBUSD / UDOT), then the 16 rows' scales 2^(e-128) as f32. The prep's
// -off·Σa removes the offset, so each block sum is Σ value·a exactly.
func packGemm32MXFP4(off byte, n int, w []byte, ws int, dst []byte) {
	for b := 0; b < n; b++ {
		o := dst[b*gemmBlockB : (b+1)*gemmBlockB]
		for r := 0; r < gemmTileRows; r++ {
			blk := w[r*ws+b*mxfp4BlockBytes : r*ws+(b+1)*mxfp4BlockBytes]
			for e := 0; e < 16; e++ {
				q := blk[1+e]
				o[(e/4)*64+r*4+e%4] = byte(kvaluesMXFP4[q&15]) + off
				o[((e+16)/4)*64+r*4+e%4] = byte(kvaluesMXFP4[q>>4]) + off
			}
			binary.LittleEndian.PutUint32(o[512+4*r:], math.Float32bits(e8m0Half(blk[0])))
		}
	}
}
