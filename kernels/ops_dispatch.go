package kernels

import (
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
)

// Attention and f32 vector ops with a per-path implementation. They are
// methods on *Impl (not package functions) so that MEMVANTA_KERNELS=scalar
// runs the portable Go below and the SIMD paths run assembly: the choice is
// made from k.Name, which only archImpls sets to a SIMD name after checking
// the CPU. Where the assembly is bit-identical to the portable function the
// doc says so; where only the summation order differs the tests derive the
// bound.

// simdOps reports whether k runs the assembly attention ops.
func (k *Impl) simdOps() bool {
	return hasOpsAsm && k != nil && (k.Name == "avx2" || k.Name == "avx512")
}

// AddScaled does dst += s×x. On SIMD paths it is bit-identical to the
// package AddScaled (separate multiply and add, no FMA).
func (k *Impl) AddScaled(dst, x []float32, s float32) {
	if len(x) < len(dst) {
		panic(fmt.Sprintf("kernels: AddScaled: len(dst)=%d > len(x)=%d", len(dst), len(x)))
	}
	if len(dst) == 0 {
		return
	}
	if k.simdOps() {
		addScaledAVX2(&dst[0], &x[0], len(dst), s)
		return
	}
	AddScaled(dst, x, s)
}

// checkAttn validates the geometry shared by ScoresF16 and AccumF16: nq
// f32 rows of hd in q (or out), n F16 rows of hd at stride bytes in rows,
// and a weight/score matrix w of nq rows at stride ws covering n columns.
func checkAttn(op string, nq, hd, lq int, rows []byte, stride, n int, lw, ws int) {
	if nq < 0 || hd < 0 || n < 0 || stride < 2*hd || ws < n ||
		lq < nq*hd || (n > 0 && len(rows) < (n-1)*stride+2*hd) || (nq > 0 && lw < (nq-1)*ws+n) {
		panic(fmt.Sprintf("kernels: %s: nq=%d hd=%d n=%d stride=%d ws=%d with len(q/out)=%d len(rows)=%d len(w)=%d",
			op, nq, hd, n, stride, ws, lq, len(rows), lw))
	}
}

// ScoresF16 computes attention scores for nq query rows against n F16 key
// rows: out[j*ws+p] = scale × (q_j · k_p), with q_j = q[j*hd:(j+1)*hd] and k_p
// the hd F16 values at keys[p*stride:]. Each key row is read once for all
// query rows, so grouped-query heads and a block of prefill tokens share
// the pass over the cache.
//
// The queries are f32 holding F16-representable values (llama.cpp rounds Q
// to F16 for an F16 cache), so every product is exact; the portable path
// sums them in float64 in index order, the SIMD paths in f32 (lane-wise
// accumulators, then a horizontal reduction; with hd 64 four rows at a
// time); see TestScoresF16SIMD for the bound.
func (k *Impl) ScoresF16(q []float32, nq, hd int, keys []byte, stride, n int, scale float32, out []float32, ws int) {
	checkAttn("ScoresF16", nq, hd, len(q), keys, stride, n, len(out), ws)
	if nq == 0 || n == 0 || hd == 0 {
		if hd == 0 {
			for j := 0; j < nq; j++ {
				clear(out[j*ws : j*ws+n])
			}
		}
		return
	}
	if !k.simdOps() || hd%16 != 0 || hd > scorePad {
		ScoresF16(q, nq, hd, keys, stride, n, scale, out, ws)
		return
	}
	n4 := nq &^ 3
	if n4 > 0 {
		k.scores4(q, n4, hd, keys, stride, n, scale, out, ws)
	}
	if r := nq - n4; r > 0 {
		// The last r rows go through the same four-row routine, padded with
		// copies of the last row, so a row's scores do not depend on nq or
		// its place in it: batched prefill (many rows per kv head) stays
		// bit-identical to generation (one token's group of rows).
		var qp, op [4 * scorePad]float32
		for j := 0; j < 4; j++ {
			copy(qp[j*hd:(j+1)*hd], q[(n4+min(j, r-1))*hd:])
		}
		for p0 := 0; p0 < n; p0 += scorePad {
			c := min(scorePad, n-p0)
			k.scores4(qp[:4*hd], 4, hd, keys[p0*stride:], stride, c, scale, op[:], scorePad)
			for j := 0; j < r; j++ {
				copy(out[(n4+j)*ws+p0:(n4+j)*ws+p0+c], op[j*scorePad:j*scorePad+c])
			}
		}
	}
}

// scorePad bounds the head size of the SIMD score path (the padded
// remainder rows live on the stack) and is the position chunk for them.
const scorePad = 256

// scores4 runs the four-row score routine of k's path; nq is a positive
// multiple of 4, hd a multiple of 16, n > 0.
func (k *Impl) scores4(q []float32, nq, hd int, keys []byte, stride, n int, scale float32, out []float32, ws int) {
	switch {
	case hd == 64 && k.Name == "avx512":
		scoresF16x64AVX512(&q[0], nq, &keys[0], stride, n, scale, &out[0], ws)
	case hd == 64:
		scoresF16x64AVX2(&q[0], nq, &keys[0], stride, n, scale, &out[0], ws)
	default:
		scoresF16x4AVX2(&q[0], nq, hd, &keys[0], stride, n, scale, &out[0], ws)
	}
}

// ScoresF16 is the portable reference of (*Impl).ScoresF16.
func ScoresF16(q []float32, nq, hd int, keys []byte, stride, n int, scale float32, out []float32, ws int) {
	checkAttn("ScoresF16", nq, hd, len(q), keys, stride, n, len(out), ws)
	for p := 0; p < n; p++ {
		kr := keys[p*stride : p*stride+2*hd]
		for j := 0; j < nq; j++ {
			qr := q[j*hd : (j+1)*hd]
			var s float64
			for i, qv := range qr {
				s += float64(qv) * float64(F16ToF32(uint16(kr[2*i])|uint16(kr[2*i+1])<<8))
			}
			out[j*ws+p] = float32(s) * scale
		}
	}
}

// AccumF16 adds attention-weighted F16 value rows into nq output rows:
// for p = 0..n-1 in order, out_j += w[j*ws+p] × v_p, with v_p the hd F16
// values at vals[p*stride:]. Each value row is converted once for all nq
// outputs. On SIMD paths it is bit-identical to the portable function
// (and so to converting v_p and calling AddScaled per output and position):
// a separate multiply and add per element, positions in order.
func (k *Impl) AccumF16(out []float32, nq, hd int, w []float32, ws int, vals []byte, stride, n int) {
	checkAttn("AccumF16", nq, hd, len(out), vals, stride, n, len(w), ws)
	if nq == 0 || n == 0 || hd == 0 {
		return
	}
	if k.simdOps() && hd%64 == 0 && k.Name == "avx512" {
		for c := 0; c < hd; c += 64 { // 64-column slabs; elements are independent
			accumF16x64AVX512(&out[c], nq, &w[0], ws, &vals[2*c], stride, n, 4*hd)
		}
		return
	}
	if k.simdOps() && hd%16 == 0 {
		accumF16AVX2(&out[0], nq, hd, &w[0], ws, &vals[0], stride, n)
		return
	}
	AccumF16(out, nq, hd, w, ws, vals, stride, n)
}

// AccumF16 is the portable reference of (*Impl).AccumF16.
func AccumF16(out []float32, nq, hd int, w []float32, ws int, vals []byte, stride, n int) {
	checkAttn("AccumF16", nq, hd, len(out), vals, stride, n, len(w), ws)
	var buf [256]float32
	v := buf[:0]
	if hd > len(buf) {
		v = make([]float32, hd)
	}
	v = v[:hd]
	for p := 0; p < n; p++ {
		vr := vals[p*stride : p*stride+2*hd]
		for i := range v {
			v[i] = F16ToF32(uint16(vr[2*i]) | uint16(vr[2*i+1])<<8)
		}
		for j := 0; j < nq; j++ {
			AddScaled(out[j*hd:(j+1)*hd], v, w[j*ws+p])
		}
	}
}

// Softmax is the package Softmax; on SIMD paths the max, exponentials and
// scaling run 8 lanes at a time with a vector e^x (degree-7 Taylor after
// range reduction, a few ulp; see EXP8 in ops_amd64.s and TestSoftmaxSIMD
// for the bound) and the sum is still accumulated in float64. Masked (-Inf)
// entries become 0 and an all -Inf row becomes all 0, as in the package
// function.
func (k *Impl) Softmax(x []float32) {
	if !k.simdOps() || len(x) < 8 {
		Softmax(x)
		return
	}
	n8 := len(x) &^ 7
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
	sum := expSubSumAVX2(&x[0], n8, m)
	for i := n8; i < len(x); i++ {
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

// SiLUMul is the package SiLUMul; on SIMD paths every element uses the
// vector e^x (see Softmax) and a vector divide.
func (k *Impl) SiLUMul(gate, up []float32) {
	if len(up) < len(gate) {
		panic(fmt.Sprintf("kernels: SiLUMul: len(gate)=%d > len(up)=%d", len(gate), len(up)))
	}
	if !k.simdOps() {
		SiLUMul(gate, up)
		return
	}
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

// QuantizeAct is the package QuantizeAct; on SIMD paths the Q8_0 and F16
// encodings (the activations of Q4_0/Q5_0/Q8_0 and F16 weights) run in
// assembly, bit-exact with the package encoders for finite inputs
// (TestQuantizeActSIMD). Activations are finite unless the model already
// diverged.
func (k *Impl) QuantizeAct(t ggml.Type, x []float32, dst []byte) error {
	if !k.simdOps() {
		return QuantizeAct(t, x, dst)
	}
	a := t
	if !isActType(a) {
		a = ActType(t)
	}
	switch a {
	case ggml.Q8_0:
		if err := checkRow("quantize activations", a, len(x), len(dst)); err != nil {
			return err
		}
		if len(x) > 0 {
			quantQ8_0AVX2(&x[0], len(x)/32, &dst[0])
		}
		return nil
	case ggml.F16:
		if err := checkRow("quantize activations", a, len(x), len(dst)); err != nil {
			return err
		}
		k.f16Row(x, dst)
		return nil
	}
	return QuantizeAct(t, x, dst)
}

// f16Row encodes x as F16 into dst (len 2·len(x), checked by the caller).
func (k *Impl) f16Row(x []float32, dst []byte) {
	n8 := len(x) &^ 7
	if n8 > 0 {
		f16RowAVX2(&x[0], n8, &dst[0])
	}
	for i := n8; i < len(x); i++ {
		h := F32ToF16(x[i])
		dst[2*i], dst[2*i+1] = byte(h), byte(h>>8)
	}
}

// Quantize is the package Quantize; on SIMD paths F16 (the KV cache
// encoding) runs in assembly, bit-exact.
func (k *Impl) Quantize(t ggml.Type, src []float32, dst []byte) error {
	if !k.simdOps() || t != ggml.F16 {
		return Quantize(t, src, dst)
	}
	if err := checkRow("quantize", t, len(src), len(dst)); err != nil {
		return err
	}
	k.f16Row(src, dst)
	return nil
}

// RoundF16 sets dst[i] to x[i] rounded to the nearest F16 value (ties to
// even) and widened back, exactly F16ToF32(F32ToF16(x[i])) on every path.
// Attention rounds queries this way for an F16 cache, as llama.cpp does.
func (k *Impl) RoundF16(dst, x []float32) {
	if len(dst) < len(x) {
		panic(fmt.Sprintf("kernels: RoundF16: len(dst)=%d < len(x)=%d", len(dst), len(x)))
	}
	n8 := 0
	if k.simdOps() {
		n8 = len(x) &^ 7
		if n8 > 0 {
			roundF16AVX2(&dst[0], &x[0], n8)
		}
	}
	for i := n8; i < len(x); i++ {
		dst[i] = F16ToF32(F32ToF16(x[i]))
	}
}
