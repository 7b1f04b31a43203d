package kernels

import "math"

// F16ToF32 widens an IEEE 754 binary16 value. Every binary16 value is exactly
// representable in binary32, so this is exact; NaN payloads are kept (shifted
// into the high mantissa bits, as F16C's VCVTPH2PS does).
func F16ToF32(h uint16) float32 {
	if f16IsNormal(h) {
		return f16Normal(h)
	}
	return f16Special(h)
}

// f16IsNormal and f16Normal are F16ToF32's fast path, split out so that hot
// loops can inline it (F16ToF32 itself is over the inlining budget).
func f16IsNormal(h uint16) bool { return h&0x7c00-0x400 < 0x7800 } // exponent 1..30; 0 wraps

// f16Normal rebiases the exponent (15 → 127) by adding 112<<10 to the
// magnitude bits and moves them into place; valid only for normal numbers.
func f16Normal(h uint16) float32 {
	return math.Float32frombits(uint32(h&0x8000)<<16 | (uint32(h&0x7fff)+112<<10)<<13)
}

// f16Special handles zeros, subnormals, infinities and NaN.
func f16Special(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	man := uint32(h) & 0x3ff
	if h&0x7c00 == 0x7c00 {
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	if man == 0 {
		return math.Float32frombits(sign)
	}
	// Subnormal: man × 2^-24, exact in binary32 (10 significant bits).
	v := float32(man) * (1.0 / (1 << 24))
	return math.Float32frombits(math.Float32bits(v) | sign)
}

// F32ToF16 rounds to the nearest binary16 value, ties to even, the rounding
// ggml gets from F16C (VCVTPS2PH with round-to-nearest) and from its scalar
// fallback. Overflow gives ±Inf; values below half the smallest subnormal
// give ±0; NaN stays NaN (quiet, high payload bits kept).
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00 | uint16(man>>13)
		}
		return sign | 0x7c00
	}
	if exp == 0 {
		// binary32 subnormals are < 2^-126, far below 2^-25 (half the smallest
		// binary16 subnormal), so they round to zero.
		return sign
	}
	e := exp - 127 + 15 // biased binary16 exponent if the value is normal
	if e >= 31 {
		return sign | 0x7c00
	}
	m := man | 0x800000 // 24-bit significand; value = m × 2^(exp-150)
	var shift uint32 = 13
	if e <= 0 {
		// Subnormal result: significand = value / 2^-24 = m >> (126-exp).
		shift = uint32(14 - e)
		if shift > 25 {
			return sign // < 2^-25 even after rounding up
		}
	}
	q := m >> shift
	rem := m & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	if e <= 0 {
		// q ≤ 0x400; 0x400 is exactly the smallest normal's encoding.
		return sign | uint16(q)
	}
	// q carries the implicit bit (0x400..0x800); adding it to (e-1)<<10 lets a
	// rounding carry bump the exponent, up to 0x7c00 = Inf.
	return sign | uint16(uint32(e-1)<<10+q)
}

// BF16ToF32 widens a bfloat16 value (the high half of a binary32); exact.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 rounds to the nearest bfloat16, ties to even, keeping subnormals
// (no flush) and turning NaN into a quiet NaN, as ggml's GGML_FP32_TO_BF16.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}
