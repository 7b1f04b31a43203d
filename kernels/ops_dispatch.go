package kernels

import (
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
)

// Attention and f32 vector ops with a per-path implementation. They are
// methods on *Impl (not package functions) so that MEMVANTA_KERNELS=scalar
// runs the portable Go below and the SIMD paths run assembly: each path's
// opsTable is filled in once when the path is built (portableOps, then the
// arch file's edits in derive), after the CPU check. The methods validate
// their arguments and call the field. Where the assembly is bit-identical
// to the portable function the doc says so; where only the summation order
// differs the tests derive the bound.

// opsTable holds one path's ops. The methods have validated lengths and
// geometry before calling a field, and call scoresF16/accumF16 only with
// nq, n and hd all positive.
type opsTable struct {
	addScaled func(dst, x []float32, s float32)
	scoresF16 scoresFunc
	accumF16  func(out []float32, nq, hd int, w []float32, ws int, vals []byte, stride, n int)
	// accumF32 is AccumQ's accumulate over decoded value rows (kvattn.go);
	// nq, hd and n positive, v holds n contiguous rows of hd.
	accumF32 func(out []float32, nq, hd int, w []float32, ws int, v []float32, n int)
	// scoresQ is ScoresQ after its checks (kvattn.go; sc grown).
	scoresQ  func(k *Impl, t ggml.Type, q []float32, nq, hd int, keys []byte, stride, row, n int, scale float32, out []float32, ws int, sc *KVScratch)
	softmax  func(x []float32)
	siluMul  func(gate, up []float32)
	roundF16 func(dst, x []float32)
	// Portable on every path today; fields so that model code reaches
	// them through its Impl like every other op, and a SIMD version is one
	// field edit.
	rmsNorm func(out, x, weight []float32, eps float32)
	add     func(dst, x []float32)
	scale   func(x []float32, s float32)
	geluMul func(gate, up []float32)
}

// scoresFunc is ScoresF16's signature.
type scoresFunc func(q []float32, nq, hd int, keys []byte, stride, n int, scale float32, out []float32, ws int)

// portableOps is the scalar path's op table: the package functions.
func portableOps() opsTable {
	return opsTable{
		addScaled: AddScaled,
		scoresF16: ScoresF16,
		accumF16:  AccumF16,
		accumF32:  accumF32,
		scoresQ:   scoresQ,
		softmax:   Softmax,
		siluMul:   SiLUMul,
		roundF16:  roundF16,
		rmsNorm:   RMSNorm,
		add:       Add,
		scale:     Scale,
		geluMul:   GeLUMul,
	}
}

// RMSNorm is the package RMSNorm through this path (see ops.go).
func (k *Impl) RMSNorm(out, x, weight []float32, eps float32) { k.ops.rmsNorm(out, x, weight, eps) }

// Add is the package Add through this path.
func (k *Impl) Add(dst, x []float32) { k.ops.add(dst, x) }

// Scale is the package Scale through this path.
func (k *Impl) Scale(x []float32, s float32) { k.ops.scale(x, s) }

// GeLUMul is the package GeLUMul (GeGLU) through this path.
func (k *Impl) GeLUMul(gate, up []float32) { k.ops.geluMul(gate, up) }

// AddScaled does dst += s×x. On SIMD paths it is bit-identical to the
// package AddScaled (separate multiply and add, no FMA).
func (k *Impl) AddScaled(dst, x []float32, s float32) {
	if len(x) < len(dst) {
		panic(fmt.Sprintf("kernels: AddScaled: len(dst)=%d > len(x)=%d", len(dst), len(x)))
	}
	if len(dst) == 0 {
		return
	}
	k.ops.addScaled(dst, x, s)
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
	k.ops.scoresF16(q, nq, hd, keys, stride, n, scale, out, ws)
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
	k.ops.accumF16(out, nq, hd, w, ws, vals, stride, n)
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
func (k *Impl) Softmax(x []float32) { k.ops.softmax(x) }

// SiLUMul is the package SiLUMul; on SIMD paths every element uses the
// vector e^x (see Softmax) and a vector divide.
func (k *Impl) SiLUMul(gate, up []float32) {
	if len(up) < len(gate) {
		panic(fmt.Sprintf("kernels: SiLUMul: len(gate)=%d > len(up)=%d", len(gate), len(up)))
	}
	k.ops.siluMul(gate, up)
}

// QuantizeAct is the package QuantizeAct through this path's encoders; on
// SIMD paths the Q8_0 and F16 encodings (the activations of Q4_0/Q5_0/Q8_0
// and F16 weights) run in assembly, bit-exact with the package encoders for
// finite inputs (TestQuantizeActSIMD). Activations are finite unless the
// model already diverged.
func (k *Impl) QuantizeAct(t ggml.Type, x []float32, dst []byte) error {
	return quantizeAct(&k.types, t, x, dst)
}

// Quantize is the package Quantize through this path's encoders; on SIMD
// paths F16 (the KV cache encoding) runs in assembly, bit-exact.
func (k *Impl) Quantize(t ggml.Type, src []float32, dst []byte) error {
	return quantize(&k.types, t, src, dst)
}

// RoundF16 sets dst[i] to x[i] rounded to the nearest F16 value (ties to
// even) and widened back, exactly F16ToF32(F32ToF16(x[i])) on every path.
// Attention rounds queries this way for an F16 cache, as llama.cpp does.
func (k *Impl) RoundF16(dst, x []float32) {
	if len(dst) < len(x) {
		panic(fmt.Sprintf("kernels: RoundF16: len(dst)=%d < len(x)=%d", len(dst), len(x)))
	}
	k.ops.roundF16(dst, x)
}

// roundF16 is the portable RoundF16 (lengths checked by the caller).
func roundF16(dst, x []float32) {
	for i := range x {
		dst[i] = F16ToF32(F32ToF16(x[i]))
	}
}
