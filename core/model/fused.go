package model

import (
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/kernels"
)

// Generation multiplies one activation row by every matrix, so a token is a
// long series of short MatVecs; each pool dispatch wakes the workers and
// ends in a barrier. fusedMV puts several matrices that read the same input
// (q/k/v; gate/up) into one dispatch, and for gate/up also applies SwiGLU
// and encodes the down projection's input inside the same chunks, so the
// serial work between dispatches shrinks too. Each output row is the same
// kernel call MatVec makes (kernels.MatVecRows: the four-row routine over
// the chunk's quarters, the one-row routine for the rest; bit-identical either way per the kernels
// contract), so results do not depend on the fusion.
//
// The matrices of one dispatch need not share a type (llama.cpp's mixes
// give attn_v and ffn_down other types than q/k and gate/up): each fusedMat
// carries its own type's row routines, row size and chunk grain, and its
// own activation row, encoded once per distinct activation type
// (encodeOnce: at most three for q/k/v, two for gate/up). So mixed types
// stay in one dispatch instead of splitting into one per type; the work
// per row differs between types, but the chunks are sized per matrix as
// MatVec would size them.

// fusedMat is one matrix of a fused dispatch.
type fusedMat struct {
	dot   kernels.DotFunc
	rows4 kernels.DotRows4Func
	cols  int
	ws    int // weight row bytes
	w, a  []byte
	y     []float32
}

// fusedSeg is one pool item: rows [lo, hi) of matrix mat (of both gate and
// up in SwiGLU mode).
type fusedSeg struct{ mat, lo, hi int }

// fusedMV is the reusable state of a fused dispatch; run is bound once so a
// dispatch allocates nothing.
type fusedMV struct {
	k    *kernels.Impl
	mats [3]fusedMat
	segs []fusedSeg
	// SwiGLU mode: mats[0] is gate, mats[1] up; each chunk then computes
	// gate = silu(gate)·up on its rows and encodes them as actT into act
	// (blkBytes per block of blk elements; chunks are whole blocks).
	swiglu, geglu bool
	actT          ggml.Type
	act           []byte
	blk, blkBytes int
	run           func(lo, hi int)
}

func (f *fusedMV) rows(fm *fusedMat, lo, hi int) {
	kernels.MatVecRows(fm.dot, fm.rows4, fm.cols, fm.ws, fm.w, fm.a, fm.y, lo, hi)
}

func (f *fusedMV) work(lo, hi int) {
	for _, s := range f.segs[lo:hi] {
		if !f.swiglu {
			f.rows(&f.mats[s.mat], s.lo, s.hi)
			continue
		}
		g, u := &f.mats[0], &f.mats[1]
		f.rows(g, s.lo, s.hi)
		f.rows(u, s.lo, s.hi)
		if f.geglu {
			f.k.GeLUMul(g.y[s.lo:s.hi], u.y[s.lo:s.hi])
		} else {
			f.k.SiLUMul(g.y[s.lo:s.hi], u.y[s.lo:s.hi])
		}
		o0, o1 := s.lo/f.blk*f.blkBytes, s.hi/f.blk*f.blkBytes
		// Cannot fail: whole blocks of a type checked by the caller.
		_ = f.k.QuantizeAct(f.actT, g.y[s.lo:s.hi], f.act[o0:o1])
	}
}

// setMat fills fm for p over activation a (cols wide) and returns the
// rows per chunk that MatVec would use on threads threads.
func (f *fusedMV) setMat(fm *fusedMat, p proj, cols int, a []byte, threads int) (int, error) {
	ws, err := ggml.RowSize(p.t, uint64(cols))
	if err != nil {
		return 0, err
	}
	*fm = fusedMat{dot: f.k.Dot(p.t), rows4: f.k.DotRows4(p.t), cols: cols, ws: int(ws), w: p.w, a: a, y: p.y[:p.rows]}
	if fm.dot == nil {
		return 0, unsupported("no %s dot routine for %s", f.k.Name, p.t)
	}
	if len(p.w) < p.rows*int(ws) {
		return 0, unsupported("weight of %d bytes for %d rows of %d", len(p.w), p.rows, ws)
	}
	return kernels.MatVecGrain(p.rows, int(ws), threads), nil
}

// encodeOnce quantizes x (one row of cols) for each projection's activation
// type, once per distinct type, into m.actBuf, returning each projection's
// activation row.
func (m *Model) encodeOnce(x []float32, cols int, ps []proj, acts [][]byte) error {
	var encs actEncodings
	for i, p := range ps {
		at := kernels.ActType(p.t)
		idx, fresh := encs.slot(at)
		arb := actRowBytes(p.t, cols)
		if fresh {
			if err := m.k.QuantizeAct(at, x[:cols], m.actBuf[idx][:arb]); err != nil {
				return err
			}
		}
		acts[i] = m.actBuf[idx][:arb]
	}
	return nil
}

// fusedMatVec computes every projection of one input row x in a single
// pool dispatch (generation's q/k/v).
func (m *Model) fusedMatVec(x []float32, cols int, ps ...proj) error {
	f := &m.fz
	var acts [3][]byte
	if err := m.encodeOnce(x, cols, ps, acts[:len(ps)]); err != nil {
		return err
	}
	f.swiglu = false
	f.segs = f.segs[:0]
	for i, p := range ps {
		grain, err := f.setMat(&f.mats[i], p, cols, acts[i], m.pool.Threads())
		if err != nil {
			return err
		}
		for lo := 0; lo < p.rows; lo += grain {
			f.segs = append(f.segs, fusedSeg{i, lo, min(lo+grain, p.rows)})
		}
	}
	m.pool.Run(len(f.segs), 1, f.run)
	return nil
}

// fusedGLU computes gate and up of one input row x, gate = silu(gate)·up
// (gelu(gate)·up if geglu), and the down projection's encoded input
// (returned) in one dispatch.
func (m *Model) fusedGLU(x []float32, cols int, gate, up proj, downT ggml.Type, geglu bool) ([]byte, error) {
	f := &m.fz
	var acts [2][]byte
	ps := [2]proj{gate, up}
	if err := m.encodeOnce(x, cols, ps[:], acts[:]); err != nil {
		return nil, err
	}
	f.swiglu, f.geglu = true, geglu
	f.actT = kernels.ActType(downT)
	f.blk = f.actT.BlockSize()
	bb, err := ggml.RowSize(f.actT, uint64(f.blk))
	if err != nil {
		return nil, err
	}
	f.blkBytes = int(bb)
	F := gate.rows
	if up.rows != F || F%f.blk != 0 {
		return nil, unsupported("gate/up rows %d/%d not whole %s blocks", F, up.rows, f.actT)
	}
	f.act = m.actBuf[2][:F/f.blk*f.blkBytes]
	g0, err := f.setMat(&f.mats[0], gate, cols, acts[0], m.pool.Threads())
	if err != nil {
		return nil, err
	}
	if _, err := f.setMat(&f.mats[1], up, cols, acts[1], m.pool.Threads()); err != nil {
		return nil, err
	}
	step := f.blk * 4 / gcd(f.blk, 4) // whole blocks and whole groups of four
	grain := max(step, g0/step*step)
	f.segs = f.segs[:0]
	for lo := 0; lo < F; lo += grain {
		f.segs = append(f.segs, fusedSeg{0, lo, min(lo+grain, F)})
	}
	m.pool.Run(len(f.segs), 1, f.run)
	return f.act, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
