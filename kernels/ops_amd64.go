package kernels

import "math"

// The AVX2+FMA+F16C attention ops (ops_amd64.s). Both SIMD paths use them:
// the work is L1-resident f32 arithmetic where 256-bit vectors already
// saturate the load/store ports on the CPUs we target. archImpls only
// builds the avx2/avx512 paths (and so installs these) after checking
// AVX2, FMA3 and F16C.

// avx2Ops installs the AVX2 ops (the avx2 path; avx512 starts from them).
func avx2Ops(o *opsTable) {
	o.addScaled = addScaledSIMD
	o.scoresF16 = scoresF16AVX2
	o.accumF16 = accumF16SIMD
	o.accumF32 = accumF32SIMD
	o.scoresQ = scoresQSIMD
	o.softmax = softmaxSIMD
	o.siluMul = siluMulSIMD
	o.roundF16 = roundF16SIMD
}

// avx512Ops replaces the ops that have AVX-512 routines (head size 64).
func avx512Ops(o *opsTable) {
	o.scoresF16 = scoresF16AVX512
	o.accumF16 = accumF16AVX512Op
	o.softmax = softmaxAVX512
}

func addScaledSIMD(dst, x []float32, s float32) { addScaledAVX2(&dst[0], &x[0], len(dst), s) }

// scoresF16AVX2 and scoresF16AVX512 are the SIMD paths' ScoresF16 ops:
// four query rows at a time where the head size is a multiple of 16, on
// AVX-512 through its own routines (hd 64 with the query in registers).
func scoresF16AVX2(q []float32, nq, hd int, keys []byte, stride, n int, scale float32, out []float32, ws int) {
	scoresFourRow(false, q, nq, hd, keys, stride, n, scale, out, ws)
}

func scoresF16AVX512(q []float32, nq, hd int, keys []byte, stride, n int, scale float32, out []float32, ws int) {
	scoresFourRow(true, q, nq, hd, keys, stride, n, scale, out, ws)
}

// scoresFourRow is ScoresF16 (nq, n, hd positive) through the four-row
// routines (wide: the AVX-512 ones) and their one-row
// companions; other head sizes take the portable function.
func scoresFourRow(wide bool, q []float32, nq, hd int, keys []byte, stride, n int, scale float32, out []float32, ws int) {
	if hd%16 != 0 {
		ScoresF16(q, nq, hd, keys, stride, n, scale, out, ws)
		return
	}
	n4 := nq &^ 3
	if n4 > 0 {
		scores4(wide, q, n4, hd, keys, stride, n, scale, out, ws)
	}
	// The last nq mod 4 rows go one at a time through routines that reduce
	// each dot by the four-row routine's tree, so a row's scores do not
	// depend on nq or its place in it: batched prefill (many rows per kv
	// head) stays bit-identical to generation (one token's group of rows,
	// a single row with multi-head attention).
	for j := n4; j < nq; j++ {
		switch {
		case hd == 64 && wide:
			scoresF16x64x1AVX512(&q[j*hd], &keys[0], stride, n, scale, &out[j*ws])
		case wide:
			scoresF16x1AVX512(&q[j*hd], hd, &keys[0], stride, n, scale, &out[j*ws])
		default:
			scoresF16x1AVX2(&q[j*hd], hd, &keys[0], stride, n, scale, &out[j*ws])
		}
	}
}

// scores4 runs a four-row score routine; nq is a positive multiple of 4,
// hd a multiple of 16, n > 0.
func scores4(wide bool, q []float32, nq, hd int, keys []byte, stride, n int, scale float32, out []float32, ws int) {
	switch {
	case hd == 64 && wide:
		scoresF16x64x2AVX512(&q[0], nq, &keys[0], stride, n, scale, &out[0], ws)
	case wide:
		for j := 0; j < nq; j += 4 {
			scoresF16x4AVX512(&q[j*hd], hd, &keys[0], stride, n, scale, &out[j*ws], ws)
		}
	case hd == 64:
		scoresF16x64x2AVX2(&q[0], nq, &keys[0], stride, n, scale, &out[0], ws)
	default:
		scoresF16x4AVX2(&q[0], nq, hd, &keys[0], stride, n, scale, &out[0], ws)
	}
}

// accumBlock is the f32 scratch (on the stack, 16 KiB) that accumF16SIMD
// widens value rows into: 64 positions of a 64-wide head per block.
const accumBlock = 4096

// accumMinRun is the shortest run of positions worth widening first: the
// per-token tail calls of prefill's causal mask pass one position.
const accumMinRun = 4

// accumF16SIMD is AccumF16 with the AVX2 routines for head sizes that are
// multiples of 16. Where the head size is a multiple of 32, runs of
// positions are widened to f32 once into a stack block and then
// accumulated with each output row pair held in registers across the
// block (accumF32x32AVX2): same operations, same order, so bit-identical,
// without the per-position load and store of every output row that
// accumF16AVX2 pays (it is store-bound; this one is bound by the multiply
// and add ports).
func accumF16SIMD(out []float32, nq, hd int, w []float32, ws int, vals []byte, stride, n int) {
	if hd%32 == 0 && hd <= accumBlock && n >= accumMinRun {
		var buf [accumBlock]float32
		per := accumBlock / hd
		for p0 := 0; p0 < n; p0 += per {
			c := min(per, n-p0)
			f16ToF32RowsAVX2(&buf[0], hd, &vals[p0*stride], stride, c)
			accumF32x32AVX2(&out[0], nq, hd, &w[p0], ws, &buf[0], c)
		}
		return
	}
	if hd%16 == 0 {
		accumF16AVX2(&out[0], nq, hd, &w[0], ws, &vals[0], stride, n)
		return
	}
	AccumF16(out, nq, hd, w, ws, vals, stride, n)
}

// accumF16AVX512Op takes 64-column slabs through AVX-512 where the head
// size allows (bit-identical to accumF16AVX2), else accumF16SIMD.
func accumF16AVX512Op(out []float32, nq, hd int, w []float32, ws int, vals []byte, stride, n int) {
	if hd%64 != 0 {
		accumF16SIMD(out, nq, hd, w, ws, vals, stride, n)
		return
	}
	// Column slabs; elements are independent. Rows beyond the last four
	// take 128-column slabs where the head allows, reading each value row
	// once instead of twice (one query row per kv head in generation with
	// multi-head attention).
	n4 := nq &^ 3
	if hd%128 != 0 {
		n4 = nq
	}
	if n4 > 0 {
		for c := 0; c < hd; c += 64 {
			accumF16x64AVX512(&out[c], n4, &w[0], ws, &vals[2*c], stride, n, 4*hd)
		}
	}
	for j := n4; j < nq; j++ {
		for c := 0; c < hd; c += 128 {
			accumF16x128x1AVX512(&out[j*hd+c], &w[j*ws], &vals[2*c], stride, n)
		}
	}
}

func softmaxSIMD(x []float32) { softmaxExp(x, 8, expSubSumAVX2) }

// softmaxAVX512 is softmaxSIMD with sixteen exponentials at a time
// (EXP16: each bit-identical to EXP8's; only the float64 sum's order
// differs).
func softmaxAVX512(x []float32) { softmaxExp(x, 16, expSubSumAVX512) }

// softmaxExp is Softmax through a vector routine that exponentiates and
// sums a multiple of w elements, the tail in Go.
func softmaxExp(x []float32, w int, expSubSum func(x *float32, n int, m float32) float64) {
	if len(x) < w {
		Softmax(x)
		return
	}
	n8 := len(x) &^ 7 // the max and scale routines take multiples of 8
	m := maxAVX2(&x[0], n8)
	for _, v := range x[n8:] {
		if v > m {
			m = v
		}
	}
	if math.IsInf(float64(m), -1) {
		clear(x)
		return
	}
	nw := len(x) / w * w
	sum := expSubSum(&x[0], nw, m)
	for i := nw; i < len(x); i++ {
		e := float32(math.Exp(float64(x[i] - m)))
		x[i] = e
		sum += float64(e)
	}
	s := float32(1 / sum)
	scaleAVX2(&x[0], n8, s)
	for i := n8; i < len(x); i++ {
		x[i] *= s
	}
}

func siluMulSIMD(gate, up []float32) {
	n8 := len(gate) &^ 7
	if n8 > 0 {
		siluMulAVX2(&gate[0], &up[0], n8)
	}
	if t := len(gate) - n8; t > 0 {
		// The tail goes through the vector routine too (padded), so an
		// element's result does not depend on where a call's range ends
		// (generation splits rows into chunks, prefill does whole rows).
		var g, u [8]float32
		copy(g[:], gate[n8:])
		copy(u[:], up[n8:len(gate)])
		siluMulAVX2(&g[0], &u[0], 8)
		copy(gate[n8:], g[:t])
	}
}

// quantQ8_0SIMD encodes len(x)/32 Q8_0 blocks (lengths checked by the caller).
func quantQ8_0SIMD(x []float32, dst []byte) {
	if len(x) > 0 {
		quantQ8_0AVX2(&x[0], len(x)/32, &dst[0])
	}
}

// f16RowSIMD encodes x as F16 into dst (len 2·len(x), checked by the caller).
func f16RowSIMD(x []float32, dst []byte) {
	n8 := len(x) &^ 7
	if n8 > 0 {
		f16RowAVX2(&x[0], n8, &dst[0])
	}
	for i := n8; i < len(x); i++ {
		h := F32ToF16(x[i])
		dst[2*i], dst[2*i+1] = byte(h), byte(h>>8)
	}
}

func roundF16SIMD(dst, x []float32) {
	n8 := len(x) &^ 7
	if n8 > 0 {
		roundF16AVX2(&dst[0], &x[0], n8)
	}
	for i := n8; i < len(x); i++ {
		dst[i] = F16ToF32(F32ToF16(x[i]))
	}
}

// addScaledAVX2 does dst[i] += s*x[i] for n elements (VMULPS then VADDPS).
//
//go:noescape
func addScaledAVX2(dst, x *float32, n int, s float32)

// accumF32x32AVX2 adds w-weighted f32 value rows (n rows of hd floats,
// contiguous) into nq output rows for hd a positive multiple of 32, nq > 0,
// n > 0: bit-identical to accumF16AVX2 on the same values (accum_amd64.s).
//
//go:noescape
func accumF32x32AVX2(out *float32, nq, hd int, w *float32, ws int, v *float32, n int)

// f16ToF32RowsAVX2 widens n F16 rows (hd a positive multiple of 16, stride
// bytes apart) into contiguous f32 rows, exactly.
//
//go:noescape
func f16ToF32RowsAVX2(dst *float32, hd int, src *byte, stride, n int)

// accumF16AVX2 is (*Impl).AccumF16 for hd a positive multiple of 16, nq > 0,
// n > 0; stride in bytes, ws in elements.
//
//go:noescape
func accumF16AVX2(out *float32, nq, hd int, w *float32, ws int, vals *byte, stride, n int)

// maxAVX2 returns the largest of n floats (n a positive multiple of 8).
//
//go:noescape
func maxAVX2(x *float32, n int) float32

// expSubSumAVX2 replaces x[i] by e^(x[i]−m) (vector exp, see EXP8) for n
// a multiple of 8 and returns their float64 sum.
//
//go:noescape
func expSubSumAVX2(x *float32, n int, m float32) float64

// scaleAVX2 multiplies n floats (a multiple of 8) by s.
//
//go:noescape
func scaleAVX2(x *float32, n int, s float32)

// siluMulAVX2 is SiLUMul for n a multiple of 8 with the vector exp.
//
//go:noescape
func siluMulAVX2(gate, up *float32, n int)

// quantQ8_0AVX2 encodes nb blocks of 32 floats as Q8_0 (bit-exact with
// quantQ8_0 for finite inputs).
//
//go:noescape
func quantQ8_0AVX2(x *float32, nb int, dst *byte)

// f16RowAVX2 encodes n floats (a multiple of 8) as F16, bit-exact with F32ToF16.
//
//go:noescape
func f16RowAVX2(x *float32, n int, dst *byte)

// roundF16AVX2 rounds n floats (a multiple of 8) to F16 precision.
//
//go:noescape
func roundF16AVX2(dst, x *float32, n int)

// accumF16x64AVX512 is (*Impl).AccumF16 restricted to one 64-column slab
// (output rows os bytes apart), nq > 0, n > 0 on AVX-512, bit-identical to
// accumF16AVX2.
//
//go:noescape
func accumF16x64AVX512(out *float32, nq int, w *float32, ws int, vals *byte, stride, n, os int)

// scoresF16x64x2AVX2 is (*Impl).ScoresF16 for hd == 64, nq a positive
// multiple of 4, n > 0 on AVX2, two key rows at a time (each q chunk
// loaded once for both; scores_amd64.s).
//
//go:noescape
func scoresF16x64x2AVX2(q *float32, nq int, keys *byte, stride, n int, scale float32, out *float32, ws int)

// scoresF16x4AVX2 is (*Impl).ScoresF16 for hd a positive multiple of 8, nq
// a positive multiple of 4, n > 0.
//
//go:noescape
func scoresF16x4AVX2(q *float32, nq, hd int, keys *byte, stride, n int, scale float32, out *float32, ws int)

// scoresF16x1AVX2 is one query row's ScoresF16 for hd a positive multiple
// of 8, n > 0, bit-identical to that row's scores from scoresF16x4AVX2 and
// scoresF16x64x2AVX2 (scores1_amd64.s).
//
//go:noescape
func scoresF16x1AVX2(q *float32, hd int, keys *byte, stride, n int, scale float32, out *float32)

// scoresF16x64x1AVX512 is one query row's ScoresF16 for hd == 64, n > 0 on
// AVX-512, bit-identical to that row's scores from scoresF16x64x2AVX512
// (scores512_amd64.s).
//
//go:noescape
func scoresF16x64x1AVX512(q *float32, keys *byte, stride, n int, scale float32, out *float32)

// expSubSumAVX512 is expSubSumAVX2 for n a positive multiple of 16
// (ops_amd64.s).
//
//go:noescape
func expSubSumAVX512(x *float32, n int, m float32) float64

// scoresF16x4AVX512 is ScoresF16 for four query rows, hd a positive
// multiple of 16, n > 0 on AVX-512, two keys at a time (scores512_amd64.s).
//
//go:noescape
func scoresF16x4AVX512(q *float32, hd int, keys *byte, stride, n int, scale float32, out *float32, ws int)

// scoresF16x1AVX512 is one query row's ScoresF16 for hd a positive multiple
// of 16, n > 0 on AVX-512, bit-identical to that row's scores from
// scoresF16x4AVX512 (scores512_amd64.s).
//
//go:noescape
func scoresF16x1AVX512(q *float32, hd int, keys *byte, stride, n int, scale float32, out *float32)

// accumF16x128x1AVX512 is one output row's AccumF16 over a 128-column slab,
// n > 0 on AVX-512, bit-identical to accumF16x64AVX512 (scores512_amd64.s).
//
//go:noescape
func accumF16x128x1AVX512(out *float32, w *float32, vals *byte, stride, n int)

// scoresF16x64x2AVX512 is (*Impl).ScoresF16 for hd == 64, nq a positive
// multiple of 4, n > 0 on AVX-512, two key rows at a time (the two keys'
// reductions done jointly; ops_amd64.s).
//
//go:noescape
func scoresF16x64x2AVX512(q *float32, nq int, keys *byte, stride, n int, scale float32, out *float32, ws int)
