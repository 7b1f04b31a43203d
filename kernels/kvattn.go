package kernels

import (
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
)

// Attention over a quantized (or F32) KV cache: the score and accumulate
// routines of the cache types other than F16 (which has ScoresF16 and
// AccumF16). Key and value rows are decoded to f32 (exactly: each value is
// an integer times the block's F16 scale, plus its F16 min for Q4_1/Q5_1)
// a block of positions at a time into the caller's KVScratch; a score is
// the f32 query row's dot with the decoded key, a value row is accumulated
// as out += p·v. (ggml's CPU flash attention instead encodes the query in
// Q8_0 for such keys; the f32 query keeps its precision, at the same cost
// on the SIMD paths, whose score routine works on decoded keys.)
//
// The SIMD score routine needs no per-score horizontal reduction: eight
// query rows are laid out dimension-major (one 8-lane vector per head
// dimension), each key value is broadcast against them, so eight keys'
// scores for eight rows are eight accumulators, transposed once per eight
// keys. Each score is an f32 multiply-add chain over the dimensions in
// order, whatever the key's place in the run or the row's in the batch.

// KVScratch is the decoding buffer a ScoresQ/AccumQ caller owns (one per
// worker), so the routines allocate nothing once it has grown.
type KVScratch struct {
	keys, qt, tmp []float32
}

// grow returns s's buffers with at least the given lengths.
func (s *KVScratch) grow(keys, qt int) {
	if len(s.keys) < keys {
		s.keys = make([]float32, keys)
	}
	if len(s.qt) < qt {
		s.qt = make([]float32, qt)
	}
	if len(s.tmp) < 64 {
		s.tmp = make([]float32, 64)
	}
}

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

// kvBlock is how many f32 values of decoded rows ScoresQ and AccumQ take
// at a time: 64 positions of a 64-wide head (16 KiB, in L1).
const kvBlock = 4096

// kvRun returns how many rows of hd values a block holds (a multiple of 8,
// at least 8).
func kvRun(hd int) int { return max(8, kvBlock/hd&^7) }

// decodeRows decodes rows p0..p0+c-1 (stride bytes apart, row bytes each)
// into dst, c·hd floats, with one call for a contiguous run.
func (k *Impl) decodeRows(t ggml.Type, rows []byte, stride, row, hd, p0, c int, dst []float32) {
	// Cannot fail: the type and geometry were checked by the caller.
	if stride == row {
		_ = k.Dequantize(t, rows[p0*stride:(p0+c)*stride], dst[:c*hd])
		return
	}
	for i := 0; i < c; i++ {
		o := (p0 + i) * stride
		_ = k.Dequantize(t, rows[o:o+row], dst[i*hd:(i+1)*hd])
	}
}

// ScoresQ computes attention scores for nq f32 query rows (q[j*hd:]) against
// n key rows of type t at keys[p*stride:]: out[j*ws+p] = scale × Σ_d q_jd·k_pd
// with k_p the decoded key. The portable path sums exact products in
// float64 in index order; the SIMD paths in an f32 multiply-add chain in
// index order (see TestScoresQ for the bound). A score does not depend on
// n, nq or where its key or row falls.
func (k *Impl) ScoresQ(t ggml.Type, q []float32, nq, hd int, keys []byte, stride, n int, scale float32, out []float32, ws int, sc *KVScratch) {
	row := checkKVQ("ScoresQ", t, hd, keys, stride, n, nq, len(out), ws)
	if len(q) < nq*hd {
		panic(fmt.Sprintf("kernels: ScoresQ: %d query rows of %d in %d floats", nq, hd, len(q)))
	}
	if nq == 0 || n == 0 {
		return
	}
	per := kvRun(hd)
	sc.grow(per*hd, (nq+7)/8*8*hd)
	k.ops.scoresQ(k, t, q, nq, hd, keys, stride, row, n, scale, out, ws, sc)
}

// scoresQ is the portable ScoresQ (arguments checked).
func scoresQ(k *Impl, t ggml.Type, q []float32, nq, hd int, keys []byte, stride, row, n int, scale float32, out []float32, ws int, sc *KVScratch) {
	per := kvRun(hd)
	for p0 := 0; p0 < n; p0 += per {
		c := min(per, n-p0)
		k.decodeRows(t, keys, stride, row, hd, p0, c, sc.keys)
		for i := 0; i < c; i++ {
			kr := sc.keys[i*hd : (i+1)*hd]
			for j := 0; j < nq; j++ {
				var s float64
				for d, qv := range q[j*hd : (j+1)*hd] {
					s += float64(qv) * float64(kr[d])
				}
				out[j*ws+p0+i] = float32(s) * scale
			}
		}
	}
}

// AccumQ adds attention-weighted value rows of type t into nq output rows:
// for p = 0..n-1 in order, out_j += w[j*ws+p] × v_p, with v_p the row at
// vals[p*stride:] decoded by the path's Dequantize. Rows are decoded once
// per block of positions for all nq outputs, then accumulated by the
// path's f32 routine, which is bit-identical to AddScaled per output and
// position (separate multiply and add, positions in order), so every path
// gives the same result.
func (k *Impl) AccumQ(t ggml.Type, out []float32, nq, hd int, w []float32, ws int, vals []byte, stride, n int, sc *KVScratch) {
	row := checkKVQ("AccumQ", t, hd, vals, stride, n, nq, len(w), ws)
	if len(out) < nq*hd {
		panic(fmt.Sprintf("kernels: AccumQ: %d output rows of %d in %d floats", nq, hd, len(out)))
	}
	if nq == 0 || n == 0 {
		return
	}
	per := kvRun(hd)
	sc.grow(per*hd, 0)
	for p0 := 0; p0 < n; p0 += per {
		c := min(per, n-p0)
		k.decodeRows(t, vals, stride, row, hd, p0, c, sc.keys)
		k.ops.accumF32(out, nq, hd, w[p0:], ws, sc.keys[:c*hd], c)
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
