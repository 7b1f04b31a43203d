package kernels

import "github.com/memvanta/memvanta/core/ggml"

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

// scoresQSIMD is ScoresQ on amd64 (both SIMD paths): keys decoded a block
// at a time (padded to whole groups of eight with zero rows), query rows
// transposed eight at a time into dimension-major form (zero rows as
// padding), then scoresT8x8AVX2 per group of eight keys. A last group of
// fewer than eight keys is scored in full into sc.tmp and its columns
// copied out, so every score is the same chain whatever its key's place.
// Heads wider than 256 take the portable routine.
func scoresQSIMD(k *Impl, t ggml.Type, q []float32, nq, hd int, keys []byte, stride, row, n int, scale float32, out []float32, ws int, sc *KVScratch) {
	if hd > 256 {
		scoresQ(k, t, q, nq, hd, keys, stride, row, n, scale, out, ws, sc)
		return
	}
	ng := (nq + 7) / 8
	qt := sc.qt[:ng*8*hd]
	for g := 0; g < ng; g++ {
		blk := qt[g*8*hd : (g+1)*8*hd]
		for jj := 0; jj < 8; jj++ {
			j := g*8 + jj
			if j >= nq {
				for d := 0; d < hd; d++ {
					blk[d*8+jj] = 0
				}
				continue
			}
			for d, v := range q[j*hd : (j+1)*hd] {
				blk[d*8+jj] = v
			}
		}
	}
	per := kvRun(hd)
	for p0 := 0; p0 < n; p0 += per {
		c := min(per, n-p0)
		k.decodeRows(t, keys, stride, row, hd, p0, c, sc.keys)
		full, rest := c/8, c%8
		if rest > 0 {
			clear(sc.keys[c*hd : (full+1)*8*hd])
		}
		for g := 0; g < ng; g++ {
			rows := min(8, nq-g*8)
			if full > 0 {
				_ = out[(g*8+rows-1)*ws+p0+full*8-1]
				scoresT8x8AVX2(&qt[g*8*hd], hd, &sc.keys[0], full, scale, &out[g*8*ws+p0], ws, rows)
			}
			if rest > 0 {
				scoresT8x8AVX2(&qt[g*8*hd], hd, &sc.keys[full*8*hd], 1, scale, &sc.tmp[0], 8, rows)
				for j := 0; j < rows; j++ {
					copy(out[(g*8+j)*ws+p0+full*8:(g*8+j)*ws+p0+c], sc.tmp[j*8:j*8+rest])
				}
			}
		}
	}
}

// scoresT8x8AVX2 scores groups of eight keys (n8 groups; keys contiguous
// rows of hd floats) against eight query rows held dimension-major in qt
// (qt[d*8+j]): for each key, one accumulator over the eight rows, a
// broadcast of each key value times qt's vector, multiply-added in
// dimension order from zero; × scale; the eight accumulators transposed
// so row j's eight scores are stored at out[j*ws:] (ws in floats) for
// j < rows (kvscores_amd64.s).
//
//go:noescape
func scoresT8x8AVX2(qt *float32, hd int, keys *float32, n8 int, scale float32, out *float32, ws int, rows int)
