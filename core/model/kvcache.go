package model

import (
	"errors"
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/kernels"
)

// PageSize is the number of positions per KV page. Pages are the unit of
// allocation, so a short conversation never pays for the whole context.
const PageSize = 256

// ErrContextFull is returned when a token would not fit in the context.
var ErrContextFull = errors.New("context is full")

// KVSpec describes a KV cache: its geometry, the encodings of keys and
// values, and which layers keep only a sliding window.
type KVSpec struct {
	K, V                     ggml.Type // key and value encodings (F32, F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1)
	NLayer, NHeadKV, HeadDim int
	MaxCtx                   int // context limit in positions
	// Window > 0 with Sliding[l] set: layer l attends to the last Window
	// positions only, so it keeps a ring of RingCap(Window, Slack)
	// positions instead of the whole context (llama.cpp's SWA cache).
	// Attention reads attnReach(Window) positions back (its first position
	// is aligned), which is what the ring holds besides the slack.
	Window  int
	Sliding []bool
	// Slack is how many positions past the window the rings keep: at least
	// the largest batch a Forward runs at once (the batch's first token
	// still sees its window while the last is stored) and what a caller may
	// Truncate without losing the window (speculative decoding's rejected
	// tokens, a benchmark's generated ones).
	Slack int
}

// RingCap is the ring size of a sliding layer: the positions attention
// reads (the window, aligned) + slack, rounded up to whole pages so a page
// span never wraps.
func RingCap(window, slack int) int {
	return (attnReach(window) + slack + PageSize - 1) / PageSize * PageSize
}

// kvSide is one half of the cache (keys or values): its encoding and pages.
type kvSide struct {
	typ   ggml.Type
	headB int        // bytes of one head of one position
	pages [][][]byte // [layer][page] -> [head][PageSize][headB]
}

// KVCache stores each layer's keys and values in fixed-size pages
// allocated as the sequence grows. A page holds PageSize positions head by
// head: each kv head's rows for the page's positions lie next to each
// other, encoded in the cache type, so the attention kernels read one
// head's keys or values over a page as one sequential stream.
// (Position-major rows put a head's rows a whole row apart, one 4 KiB page
// per row with multi-head attention's 8 KiB rows: generation at depth 2048
// with a 7B model spent more time on TLB misses than on the attention
// arithmetic.)
//
// A sliding-window layer (KVSpec.Window) keeps a ring of ringCap
// positions: position p lives in ring slot p mod ringCap, so its memory is
// bounded by the window whatever the context. A ring slot is reused by
// position p+ringCap; oldest records the first position from which every
// ring still holds all positions up to Len, which bounds how far back the
// cache can be truncated.
type KVCache struct {
	k, v    kvSide
	nLayer  int
	kvDim   int
	headDim int
	maxCtx  int
	window  int
	reach   int    // attnReach(window)
	ringCap int    // positions per ring; 0 = no sliding layer keeps a ring
	ring    []bool // per layer: keeps a ring
	oldest  int    // rings hold every position in [oldest, n)
	n       int    // positions filled
}

// NewKVCache prepares a cache of up to maxCtx positions with one encoding
// for keys and values and no rings; no page is allocated until a position
// is stored.
func NewKVCache(typ ggml.Type, nLayer, nHeadKV, headDim, maxCtx int) (*KVCache, error) {
	return NewKVCacheSpec(KVSpec{K: typ, V: typ, NLayer: nLayer, NHeadKV: nHeadKV, HeadDim: headDim, MaxCtx: maxCtx})
}

// NewKVCacheSpec prepares the cache s describes; no page is allocated
// until a position is stored.
func NewKVCacheSpec(s KVSpec) (*KVCache, error) {
	for _, t := range []ggml.Type{s.K, s.V} {
		if !kernels.KVTypeOK(t, max(s.HeadDim, 32)) {
			return nil, fmt.Errorf("model: KV cache type %s not supported (f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1)", t)
		}
		if !kernels.KVTypeOK(t, s.HeadDim) {
			return nil, fmt.Errorf("model: KV cache type %s cannot hold heads of %d values (a multiple of 32 is needed)", t, s.HeadDim)
		}
	}
	if s.MaxCtx <= 0 {
		return nil, fmt.Errorf("model: context size %d must be > 0", s.MaxCtx)
	}
	if s.NLayer < 0 || s.NHeadKV <= 0 || s.Window < 0 || s.Slack < 0 {
		return nil, fmt.Errorf("model: KV cache geometry %+v", s)
	}
	c := &KVCache{nLayer: s.NLayer, kvDim: s.NHeadKV * s.HeadDim, headDim: s.HeadDim, maxCtx: s.MaxCtx}
	for _, sd := range []struct {
		d *kvSide
		t ggml.Type
	}{{&c.k, s.K}, {&c.v, s.V}} {
		hb, err := ggml.RowSize(sd.t, uint64(s.HeadDim))
		if err != nil {
			return nil, fmt.Errorf("model: KV cache type %s cannot hold heads of %d: %w", sd.t, s.HeadDim, err)
		}
		*sd.d = kvSide{typ: sd.t, headB: int(hb), pages: make([][][]byte, s.NLayer)}
	}
	if s.Window > 0 && s.Sliding != nil {
		if len(s.Sliding) != s.NLayer {
			return nil, fmt.Errorf("model: KV cache: %d sliding flags for %d layers", len(s.Sliding), s.NLayer)
		}
		// A ring only pays when it is smaller than the context.
		if rc := RingCap(s.Window, max(s.Slack, 1)); rc < s.MaxCtx {
			c.window, c.reach, c.ringCap = s.Window, attnReach(s.Window), rc
			c.ring = append([]bool(nil), s.Sliding...)
		}
	}
	return c, nil
}

// Type is the key encoding (the value encoding when they are the same).
func (c *KVCache) Type() ggml.Type { return c.k.typ }

// Types are the key and value encodings.
func (c *KVCache) Types() (k, v ggml.Type) { return c.k.typ, c.v.typ }

// Len is the number of positions stored (in every layer).
func (c *KVCache) Len() int { return c.n }

// Cap is the context limit.
func (c *KVCache) Cap() int { return c.maxCtx }

// Window is the sliding window of the layers that keep a ring, and the
// ring size in positions (0, 0: no ring).
func (c *KVCache) Window() (window, ring int) { return c.window, c.ringCap }

// Bytes is the memory held by allocated pages.
func (c *KVCache) Bytes() int64 {
	nh := c.kvDim / c.headDim
	var n int64
	for l := 0; l < c.nLayer; l++ {
		n += int64(len(c.k.pages[l])) * int64(PageSize*nh*c.k.headB)
		n += int64(len(c.v.pages[l])) * int64(PageSize*nh*c.v.headB)
	}
	return n
}

// BytesFor is the memory the pages covering n positions take (rings
// capped at their size): what a sequence of n positions costs, whatever
// pages an earlier, longer one left allocated.
func (c *KVCache) BytesFor(n int) int64 {
	nh := c.kvDim / c.headDim
	pages := int64((n + PageSize - 1) / PageSize)
	page := int64(PageSize * nh * (c.k.headB + c.v.headB))
	var b int64
	for l := 0; l < c.nLayer; l++ {
		if c.ringed(l) {
			b += min(pages, int64(c.ringCap/PageSize)) * page
		} else {
			b += pages * page
		}
	}
	return b
}

// TypeName is the cache's encodings by their ggml names: "F16", or
// "Q8_0/Q4_0" for keys and values that differ.
func (c *KVCache) TypeName() string {
	if c.k.typ == c.v.typ {
		return c.k.typ.String()
	}
	return c.k.typ.String() + "/" + c.v.typ.String()
}

// Reset empties the cache, keeping pages for reuse.
func (c *KVCache) Reset() { c.n, c.oldest = 0, 0 }

// Truncate forgets positions >= n. With sliding-window rings the positions
// a token at n would attend to (its window, aligned: [n+1-reach, n)) must
// still be in the rings, which holds while n is no more than the rings' slack below the
// furthest position ever stored (KVSpec.Slack); further back, the cache
// is emptied instead (Len becomes 0), so callers that truncate far back
// (prefix reuse) must read Len afterwards.
func (c *KVCache) Truncate(n int) {
	if n >= c.n || n < 0 {
		return
	}
	if c.ringCap > 0 && max(0, n+1-c.reach) < c.oldest {
		c.Reset()
		return
	}
	c.n = n
}

// ringed reports whether layer l keeps a ring.
func (c *KVCache) ringed(l int) bool { return c.ringCap > 0 && c.ring[l] }

// reserve checks that positions [pos, pos+count) fit and allocates their
// pages in every layer.
func (c *KVCache) reserve(pos, count int) error {
	if pos+count > c.maxCtx {
		return fmt.Errorf("model: %w: %d positions needed, limit is %d (raise -c)", ErrContextFull, pos+count, c.maxCtx)
	}
	need := (pos + count + PageSize - 1) / PageSize
	nh := c.kvDim / c.headDim
	for l := 0; l < c.nLayer; l++ {
		nl := need
		if c.ringed(l) {
			nl = min(need, c.ringCap/PageSize)
		}
		for len(c.k.pages[l]) < nl {
			c.k.pages[l] = append(c.k.pages[l], make([]byte, PageSize*nh*c.k.headB))
			c.v.pages[l] = append(c.v.pages[l], make([]byte, PageSize*nh*c.v.headB))
		}
	}
	return nil
}

// writing records that positions [pos, pos+count) are about to be stored:
// the ring slots they reuse are lost from here on, even if the pass fails.
func (c *KVCache) writing(pos, count int) {
	if c.ringCap > 0 {
		c.oldest = max(c.oldest, pos+count-c.ringCap)
	}
}

// store encodes one position's key and value rows (length kvDim) for layer
// l through kernel path ki (whose encoders are bit-exact on every path),
// head by head.
func (c *KVCache) store(ki *kernels.Impl, l, pos int, k, v []float32) error {
	nh := c.kvDim / c.headDim
	for h := 0; h < nh; h++ {
		x := h * c.headDim
		if err := ki.Quantize(c.k.typ, k[x:x+c.headDim], c.keyHead(l, pos, h)); err != nil {
			return fmt.Errorf("model: KV store: %w", err)
		}
		if err := ki.Quantize(c.v.typ, v[x:x+c.headDim], c.valueHead(l, pos, h)); err != nil {
			return fmt.Errorf("model: KV store: %w", err)
		}
	}
	return nil
}

// page returns the page of layer l holding position pos and the position's
// index in it.
func (c *KVCache) page(s *kvSide, l, pos int) ([]byte, int) {
	if c.ringed(l) {
		pos %= c.ringCap
	}
	return s.pages[l][pos/PageSize], pos % PageSize
}

// slot returns kv head h's encoded row at position pos in layer l.
func (c *KVCache) slot(s *kvSide, l, pos, h int) []byte {
	p, i := c.page(s, l, pos)
	o := (h*PageSize + i) * s.headB
	return p[o : o+s.headB : o+s.headB]
}

// keyHead returns the encoded key of kv head h at position pos in layer l.
func (c *KVCache) keyHead(l, pos, h int) []byte { return c.slot(&c.k, l, pos, h) }

// valueHead returns the encoded value of kv head h at position pos in layer l.
func (c *KVCache) valueHead(l, pos, h int) []byte { return c.slot(&c.v, l, pos, h) }

// headSpan returns kv head h's encoded rows for positions p.. in layer l, as
// far as p's page goes but at most want of them, and how many that is. Rows
// are s.headB apart (contiguous). Rings are whole pages, so a span never
// wraps.
func (c *KVCache) headSpan(s *kvSide, l, h, p, want int) ([]byte, int) {
	pg, i := c.page(s, l, p)
	cnt := min(want, PageSize-i)
	o := (h*PageSize + i) * s.headB
	return pg[o : o+cnt*s.headB], cnt
}

// sameRows reports whether c and o hold the same rows: layers, heads and
// encodings.
func (c *KVCache) sameRows(o *KVCache) bool {
	return o != nil && c.nLayer == o.nLayer && c.kvDim == o.kvDim && c.headDim == o.headDim &&
		c.k.typ == o.k.typ && c.v.typ == o.v.typ
}

// sameLayout reports whether c and o can copy pages into each other: the
// same rows and rings.
func (c *KVCache) sameLayout(o *KVCache) bool {
	if !c.sameRows(o) || c.window != o.window || c.ringCap != o.ringCap {
		return false
	}
	for l := range c.ring {
		if c.ring[l] != o.ring[l] {
			return false
		}
	}
	return true
}
