package kernels

// The AVX2 halves of AccumQ (kvattn.go): value rows decoded by
// deqQ8_0AVX2/deqQ4_0AVX2 (bit-exact with deqQ8_0/deqQ4_0: each value is
// q×d or (q−8)×d, a product exact in f32) and accumulated by
// accumF32x32AVX2, which is bit-identical to AddScaled per output and
// position. Both SIMD paths use them.

// accumF32SIMD is the ops table's accumF32 on amd64: head sizes that are
// multiples of 32 through accumF32x32AVX2, others portable.
func accumF32SIMD(out []float32, nq, hd int, w []float32, ws int, v []float32, n int) {
	if hd%32 == 0 {
		_ = out[nq*hd-1]
		_ = w[(nq-1)*ws+n-1]
		_ = v[n*hd-1]
		accumF32x32AVX2(&out[0], nq, hd, &w[0], ws, &v[0], n)
		return
	}
	accumF32(out, nq, hd, w, ws, v, n)
}

// deqQ8_0SIMD and deqQ4_0SIMD are the avx2 rows' deq for Q8_0 and Q4_0
// (lengths checked by dequantize: whole blocks).
func deqQ8_0SIMD(src []byte, dst []float32) {
	if nb := len(dst) / 32; nb > 0 {
		_ = src[nb*34-1]
		deqQ8_0AVX2(&src[0], &dst[0], nb)
	}
}

func deqQ4_0SIMD(src []byte, dst []float32) {
	if nb := len(dst) / 32; nb > 0 {
		_ = src[nb*18-1]
		deqQ4_0AVX2(&src[0], &dst[0], nb)
	}
}

// deqQ8_0AVX2 decodes nb Q8_0 blocks (kvdeq_amd64.s).
//
//go:noescape
func deqQ8_0AVX2(src *byte, dst *float32, nb int)

// deqQ4_0AVX2 decodes nb Q4_0 blocks (kvdeq_amd64.s).
//
//go:noescape
func deqQ4_0AVX2(src *byte, dst *float32, nb int)
