package kernels

import (
	"encoding/binary"
	"math"
)

// quantQ8_KSIMD is quantQ8_K (the Q8_K activation encoder every K-quant
// and IQ4_XS MatMul starts from) with the block's |max| search and the
// scaling, rounding and sums of 16 in AVX2, bit-exact with quantQ8_K for
// every input: the search returns the largest |v| and the largest and
// smallest v (NaN ignored, as quantQ8_K's comparisons ignore it), which
// name the signed maximum unless both +amax and −amax occur, where the
// portable first-occurrence search decides; VCVTPS2DQ rounds half to even
// as math.RoundToEven does and gives 0x80000000 for NaN and out-of-range
// products as Go's conversion does, and the quants are the low bytes of
// min(q, 127) as quantQ8_K stores them. Lengths are checked by the caller.
func quantQ8_KSIMD(x []float32, dst []byte) {
	for b := 0; b*256 < len(x); b++ {
		xb := (*[256]float32)(x[b*256:])
		o := (*[292]byte)(dst[b*292:])
		amax, vmax, vmin := absMax256AVX2(&xb[0])
		if amax == 0 {
			clear(o[:])
			continue
		}
		var max float32
		switch {
		case vmax == amax && -vmin != amax:
			max = vmax
		case -vmin == amax && vmax != amax:
			max = vmin
		default:
			_, max = absMax(xb[:])
		}
		iscale := -127 / max
		quantQ8KBlockAVX2(&xb[0], iscale, &o[0])
		binary.LittleEndian.PutUint32(o[:], math.Float32bits(1/iscale))
	}
}

//go:noescape
func absMax256AVX2(x *float32) (amax, vmax, vmin float32)

//go:noescape
func quantQ8KBlockAVX2(x *float32, iscale float32, dst *byte)
