package kernels

import (
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
)

// Attention over a quantized (or F32) KV cache: the score and accumulate
// routines of the cache types other than F16 (which has ScoresF16 and
// AccumF16). They follow ggml's CPU flash attention for such caches: a query
// row is encoded once in the key type's activation encoding (Q8_0 for
// Q4_0/Q5_0/Q8_0 keys, Q8_1 for Q4_1/Q5_1, F32 for F32) and each score is
// that type's dot product; value rows are decoded to f32 and accumulated
// as out += p·v, positions in order.
//
// On every path a score is bit-identical to the path's own Dot on the same
// rows (the four-key-row routine DotRows4 promises that), and an
// accumulated output is bit-identical to decoding each value row with the
// path's Dequantize and calling AddScaled per output and position: the
// paths differ from the scalar one only where their Dot differs (integer
// block sums are exact; the f32 sum of the per-block terms is reordered,
// bounded in kvattn_test.go).

// KVTypeOK reports whether a KV cache of type t with heads of hd values
// has score and accumulate routines: F32 and the 32-element block types
// Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 (F16 takes ScoresF16/AccumF16).
func KVTypeOK(t ggml.Type, hd int) bool {
	switch t {
	case ggml.F32, ggml.F16:
		return hd > 0
	case ggml.Q8_0, ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1:
		return hd > 0 && hd%32 == 0
	}
	return false
}

// checkKVQ validates ScoresQ's and AccumQ's arguments: t a KV type, n rows
// of hd values of t at stride bytes in rows, and nq rows at stride ws in
// the score/weight matrix covering n columns.
func checkKVQ(op string, t ggml.Type, hd int, rows []byte, stride, n, nq, lw, ws int) int {
	if !KVTypeOK(t, hd) || t == ggml.F16 {
		panic(fmt.Sprintf("kernels: %s: KV type %s with heads of %d has no routine", op, t, hd))
	}
	rb, err := ggml.RowSize(t, uint64(hd))
	if err != nil {
		panic(fmt.Sprintf("kernels: %s: %v", op, err))
	}
	row := int(rb)
	if nq < 0 || n < 0 || stride < row || ws < n ||
		(n > 0 && len(rows) < (n-1)*stride+row) || (nq > 0 && lw < (nq-1)*ws+n) {
		panic(fmt.Sprintf("kernels: %s %s: nq=%d hd=%d n=%d stride=%d ws=%d with len(rows)=%d len(w)=%d",
			op, t, nq, hd, n, stride, ws, len(rows), lw))
	}
	return row
}

// ScoresQ computes attention scores for nq query rows against n key rows of
// type t: out[j*ws+p] = Dot_t(k_p, a_j) × scale, with a_j the query row j
// already encoded in ActType(t) at qa[j*qStride:] and k_p the row at
// keys[p*stride:]. Keys are taken four at a time through the path's
// DotRows4 where it has one (the query's blocks are loaded once for the
// four), so a score does not depend on n or on where its position falls.
func (k *Impl) ScoresQ(t ggml.Type, qa []byte, qStride, nq, hd int, keys []byte, stride, n int, scale float32, out []float32, ws int) {
	row := checkKVQ("ScoresQ", t, hd, keys, stride, n, nq, len(out), ws)
	ar := actRowBytes(t, hd)
	if qStride < ar || (nq > 0 && len(qa) < (nq-1)*qStride+ar) {
		panic(fmt.Sprintf("kernels: ScoresQ %s: %d query rows of %d bytes at stride %d in %d bytes", t, nq, ar, qStride, len(qa)))
	}
	if nq == 0 || n == 0 {
		return
	}
	dot, r4 := k.Dot(t), k.DotRows4(t)
	for j := 0; j < nq; j++ {
		a := qa[j*qStride : j*qStride+ar]
		o := out[j*ws : j*ws+n]
		p := 0
		if r4 != nil {
			var y [4]float32
			for ; p+4 <= n; p += 4 {
				r4(hd, keys[p*stride:(p+3)*stride+row], a, stride, &y)
				o[p], o[p+1], o[p+2], o[p+3] = y[0]*scale, y[1]*scale, y[2]*scale, y[3]*scale
			}
		}
		for ; p < n; p++ {
			o[p] = dot(hd, keys[p*stride:p*stride+row], a) * scale
		}
	}
}

// actRowBytes is the size of one hd-long row in t's activation encoding.
func actRowBytes(t ggml.Type, hd int) int {
	rb, err := ggml.RowSize(ActType(t), uint64(hd))
	if err != nil {
		panic(fmt.Sprintf("kernels: %s activations of %d: %v", t, hd, err))
	}
	return int(rb)
}

// kvAccumBlock is the f32 scratch (on the stack, 16 KiB) AccumQ decodes
// value rows into: 64 positions of a 64-wide head per block.
const kvAccumBlock = 4096

// AccumQ adds attention-weighted value rows of type t into nq output rows:
// for p = 0..n-1 in order, out_j += w[j*ws+p] × v_p, with v_p the row at
// vals[p*stride:] decoded by the path's Dequantize. Rows are decoded once
// per block of positions for all nq outputs (one Dequantize call for a run
// of contiguous rows), then accumulated by the path's f32 routine, which is
// bit-identical to AddScaled per output and position (separate multiply
// and add, positions in order).
func (k *Impl) AccumQ(t ggml.Type, out []float32, nq, hd int, w []float32, ws int, vals []byte, stride, n int) {
	row := checkKVQ("AccumQ", t, hd, vals, stride, n, nq, len(w), ws)
	if len(out) < nq*hd {
		panic(fmt.Sprintf("kernels: AccumQ: %d output rows of %d in %d floats", nq, hd, len(out)))
	}
	if nq == 0 || n == 0 {
		return
	}
	var buf [kvAccumBlock]float32
	per := kvAccumBlock / hd
	if per == 0 {
		// Heads wider than the block (none in practice) go a row at a time.
		v := make([]float32, hd)
		for p := 0; p < n; p++ {
			_ = k.Dequantize(t, vals[p*stride:p*stride+row], v) // geometry checked above
			k.ops.accumF32(out, nq, hd, w[p:], ws, v, 1)
		}
		return
	}
	for p0 := 0; p0 < n; p0 += per {
		c := min(per, n-p0)
		if stride == row {
			_ = k.Dequantize(t, vals[p0*stride:(p0+c)*stride], buf[:c*hd])
		} else {
			for i := 0; i < c; i++ {
				o := (p0 + i) * stride
				_ = k.Dequantize(t, vals[o:o+row], buf[i*hd:(i+1)*hd])
			}
		}
		k.ops.accumF32(out, nq, hd, w[p0:], ws, buf[:c*hd], c)
	}
}

// accumF32 is the portable f32 accumulate: for p in order, out_j +=
// w[j*ws+p] × v_p over n contiguous rows v_p of hd floats (AddScaled's
// operations).
func accumF32(out []float32, nq, hd int, w []float32, ws int, v []float32, n int) {
	for p := 0; p < n; p++ {
		vr := v[p*hd : (p+1)*hd]
		for j := 0; j < nq; j++ {
			AddScaled(out[j*hd:(j+1)*hd], vr, w[j*ws+p])
		}
	}
}
