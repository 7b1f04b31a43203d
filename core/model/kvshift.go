package model

import (
	"cmp"
	"errors"
	"fmt"
	"sync"

	"github.com/memvanta/memvanta/kernels"
)

// Context shift (llama.cpp's --context-shift): when a sequence fills its
// context, positions [keep, keep+n) are forgotten and the later ones move
// down by n, so generation continues over the first keep tokens and the
// most recent ones. A cached key carries its position only through RoPE,
// and RoPE's angles are linear in the position (every scheme here: plain,
// NeoX, linear scaling, frequency factors, LongRoPE, YaRN's blend), so
// rotating a key stored at p by the angles of -n gives the key at p-n:
// R(θ(-n))·R(θ(p))·k = R(θ(p-n))·k. Values carry no position and move as
// they are.
//
// The shifted key differs from one computed at p-n only by rounding: the
// f32 angles (θ(p) + θ(-n) against θ(p-n), each a product of f32 factors),
// the rotation's f32 arithmetic, and one more encoding of the key in the
// cache type (an F16 key gains at most one more half-ulp of F16; a Q8_0
// key one more rounding to its block's step). TestShiftKV derives and
// checks the bound.
//
// llama.cpp rotates by the same delta but passes its RoPE magnitude
// factor again (YaRN's mscale, LongRoPE's attn_factor), so each of its
// shifts scales those keys once more; here the delta rotation has
// magnitude 1, so a shifted key is the recomputed one.
//
// What a shift cannot make equal to recomputation is the context: keys
// and values of the layers above the first were computed by tokens that
// attended to the discarded ones. That is the approximation context shift
// is (in llama.cpp too); the kept prefix [0, keep) is untouched.

// ErrShiftUnsupported marks a model whose cache cannot be shifted.
var ErrShiftUnsupported = errors.New("context shift not supported")

// ErrShiftWindow marks a shift the sliding-window rings cannot make: the
// window of the next position would need positions the rings have
// already overwritten (a long kept prefix whose tail falls inside the
// shifted window). The caller can recompute the kept tokens instead.
var ErrShiftWindow = errors.New("context shift: the sliding-window rings no longer hold the shifted window")

// CanShift reports (as an error wrapping ErrShiftUnsupported) why the
// model's cache cannot be shifted, or nil when it can: keys must carry
// their position by RoPE alone. Encoders keep no cache; architectures
// without RoPE (learned or no positions) have nothing to rotate, and
// their keys could not move.
func (m *Model) CanShift() error {
	switch c := m.Cfg; {
	case c.Encoder:
		return fmt.Errorf("model: %w: %s is an encoder (no generation cache)", ErrShiftUnsupported, c.Arch)
	case c.NoRope:
		return fmt.Errorf("model: %w: %s has no rotary position embedding to re-rotate its cached keys", ErrShiftUnsupported, c.Arch)
	}
	return nil
}

// ShiftKV forgets kv's positions [keep, keep+n) and moves the later ones
// down by n, re-rotating their keys (see above). kv must have the model's
// geometry (NewKV). A shift the rings cannot make (ErrShiftWindow) leaves
// kv as it was.
func (m *Model) ShiftKV(kv *KVCache, keep, n int) error {
	if err := m.CanShift(); err != nil {
		return err
	}
	if !m.sameGeometry(kv) {
		return fmt.Errorf("model: context shift: cache geometry does not match the model")
	}
	if keep < 0 || n <= 0 || keep+n > kv.n {
		return fmt.Errorf("model: context shift: cannot discard positions [%d, %d) of %d", keep, keep+n, kv.n)
	}
	c := m.Cfg
	cs := make([]float32, c.NRot)
	csSWA := make([]float32, c.NRot)
	m.deltaCache(&m.rope, &m.yarn, -n, cs)
	m.deltaCache(&m.ropeSWA, &m.yarnSWA, -n, csSWA)
	return kv.shift(m.k, keep, n, func(l int, head []float32) {
		if c.Sliding(l) {
			m.ropeSWA.ApplyCache(head, c.HeadDim, csSWA)
			return
		}
		m.rope.ApplyCache(head, c.HeadDim, cs)
	}, m.pool.Run)
}

// deltaCache fills cs with the cos, sin pairs of r's rotation by d
// positions with magnitude 1: the angles ropeStore uses, without the
// magnitude factor (AttnFactor, YaRN's mscale) a stored key already has.
func (m *Model) deltaCache(r *kernels.Rope, y *yarn, d int, cs []float32) {
	if m.Cfg.RopeYaRN {
		y1 := *y
		y1.mscale = 1
		y1.cache(r, d, cs)
		return
	}
	r1 := *r
	r1.AttnFactor = 0
	r1.Cache(d, cs)
}

// shift moves positions [keep+n, Len) to [keep, Len-n), passing each moved
// key head (decoded to f32) through rot(layer, head) and encoding it again
// through ki; run spreads the layers over workers (kernels.Pool.Run).
// Full-context layers move in place, in increasing position order (a
// destination is always below its source). A ring holds at most ringCap
// positions, and position p lives in slot p mod ringCap, so the positions
// a ring keeps after the shift ([oldest', Len-n)) are gathered first and
// written to their new slots after.
func (c *KVCache) shift(ki *kernels.Impl, keep, n int, rot func(l int, head []float32), run func(n, grain int, f func(lo, hi int))) error {
	L := c.n - n
	start := 0 // first position the rings hold after the shift
	if c.ringCap > 0 {
		start = max(0, L-c.ringCap)
		if c.oldest <= keep {
			start = max(start, c.oldest)
		} else {
			start = max(start, keep, c.oldest-n)
		}
		if need := max(0, L+1-c.reach); need < start {
			return fmt.Errorf("model: %w (the next position's window starts at %d, the rings hold from %d; keep fewer tokens)", ErrShiftWindow, need, start)
		}
	}
	var mu sync.Mutex
	var firstErr error
	run(c.nLayer, 1, func(lo, hi int) {
		sh := layerShift{c: c, ki: ki, rot: rot, keep: keep, n: n, L: L, start: start, buf: make([]float32, c.headDim)}
		for l := lo; l < hi; l++ {
			if err := sh.layer(l); err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
				return
			}
		}
	})
	if firstErr != nil {
		c.Reset() // half-moved rows are no sequence's state
		return fmt.Errorf("model: context shift: %w", firstErr)
	}
	c.n, c.oldest = L, start
	return nil
}

// layerShift is one worker's share of a shift: its buffers and the
// shift's parameters.
type layerShift struct {
	c                 *KVCache
	ki                *kernels.Impl
	rot               func(l int, head []float32)
	keep, n, L, start int
	buf               []float32
	tk, tv            []byte // a ring's rows while they move
}

// moveKey decodes the key src of layer l, rotates it and encodes it into dst.
func (s *layerShift) moveKey(dst, src []byte, l int) error {
	if err := s.ki.Dequantize(s.c.k.typ, src, s.buf); err != nil {
		return err
	}
	s.rot(l, s.buf)
	return s.ki.Quantize(s.c.k.typ, s.buf, dst)
}

// layer shifts layer l.
func (s *layerShift) layer(l int) error {
	c := s.c
	nh := c.kvDim / c.headDim
	if !c.ringed(l) {
		for p := s.keep; p < s.L; p++ {
			for h := 0; h < nh; h++ {
				if err := s.moveKey(c.keyHead(l, p, h), c.keyHead(l, p+s.n, h), l); err != nil {
					return err
				}
				copy(c.valueHead(l, p, h), c.valueHead(l, p+s.n, h))
			}
		}
		return nil
	}
	kb, vb := c.k.headB, c.v.headB
	if rows := (s.L - s.start) * nh; s.tk == nil {
		s.tk, s.tv = make([]byte, rows*kb), make([]byte, rows*vb)
	}
	for p := s.start; p < s.L; p++ {
		for h := 0; h < nh; h++ {
			i := (p-s.start)*nh + h
			dk, dv := s.tk[i*kb:(i+1)*kb], s.tv[i*vb:(i+1)*vb]
			if p < s.keep {
				copy(dk, c.keyHead(l, p, h))
				copy(dv, c.valueHead(l, p, h))
				continue
			}
			if err := s.moveKey(dk, c.keyHead(l, p+s.n, h), l); err != nil {
				return err
			}
			copy(dv, c.valueHead(l, p+s.n, h))
		}
	}
	for p := s.start; p < s.L; p++ {
		for h := 0; h < nh; h++ {
			i := (p-s.start)*nh + h
			copy(c.keyHead(l, p, h), s.tk[i*kb:(i+1)*kb])
			copy(c.valueHead(l, p, h), s.tv[i*vb:(i+1)*vb])
		}
	}
	return nil
}
