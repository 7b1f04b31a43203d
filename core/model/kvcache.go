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

// KVCache stores each layer's keys and values in fixed-size pages
// allocated as the sequence grows. A page holds PageSize positions head by
// head: each kv head's rows for the page's positions lie next to each
// other, encoded in the cache type (F32, F16 or Q8_0), so the attention
// dot product runs through the same kernels as the weights and one head's
// keys or values over a page are one sequential stream. (Position-major
// rows put a head's rows a whole row apart, one 4 KiB page per row with
// multi-head attention's 8 KiB rows: generation at depth 2048 with a 7B
// model spent more time on TLB misses than on the attention arithmetic.)
type KVCache struct {
	typ      ggml.Type
	nLayer   int
	kvDim    int
	headDim  int
	maxCtx   int
	rowBytes int        // bytes of one position (all kv heads)
	headB    int        // bytes of one head of one position
	k, v     [][][]byte // [layer][page] -> [head][PageSize][headB]
	n        int        // positions filled
}

// NewKVCache prepares a cache of up to maxCtx positions; no page is
// allocated until a position is stored.
func NewKVCache(typ ggml.Type, nLayer, nHeadKV, headDim, maxCtx int) (*KVCache, error) {
	switch typ {
	case ggml.F32, ggml.F16, ggml.Q8_0:
	default:
		return nil, fmt.Errorf("model: KV cache type %s not supported (f32, f16, q8_0)", typ)
	}
	if maxCtx <= 0 {
		return nil, fmt.Errorf("model: context size %d must be > 0", maxCtx)
	}
	hb, err := ggml.RowSize(typ, uint64(headDim))
	if err != nil {
		return nil, fmt.Errorf("model: KV cache type %s cannot hold heads of %d: %w", typ, headDim, err)
	}
	c := &KVCache{typ: typ, nLayer: nLayer, kvDim: nHeadKV * headDim, headDim: headDim, maxCtx: maxCtx,
		rowBytes: int(hb) * nHeadKV, headB: int(hb)}
	c.k = make([][][]byte, nLayer)
	c.v = make([][][]byte, nLayer)
	return c, nil
}

// Type is the element encoding of cached rows.
func (c *KVCache) Type() ggml.Type { return c.typ }

// Len is the number of positions stored (in every layer).
func (c *KVCache) Len() int { return c.n }

// Cap is the context limit.
func (c *KVCache) Cap() int { return c.maxCtx }

// Bytes is the memory held by allocated pages.
func (c *KVCache) Bytes() int64 {
	var n int64
	for l := range c.k {
		n += int64(len(c.k[l])+len(c.v[l])) * int64(PageSize*c.rowBytes)
	}
	return n
}

// Reset empties the cache, keeping pages for reuse.
func (c *KVCache) Reset() { c.n = 0 }

// Truncate forgets positions >= n.
func (c *KVCache) Truncate(n int) {
	if n < c.n && n >= 0 {
		c.n = n
	}
}

// reserve checks that positions [pos, pos+count) fit and allocates their
// pages in every layer.
func (c *KVCache) reserve(pos, count int) error {
	if pos+count > c.maxCtx {
		return fmt.Errorf("model: %w: %d positions needed, limit is %d (raise -c)", ErrContextFull, pos+count, c.maxCtx)
	}
	need := (pos + count + PageSize - 1) / PageSize
	for l := 0; l < c.nLayer; l++ {
		for len(c.k[l]) < need {
			c.k[l] = append(c.k[l], make([]byte, PageSize*c.rowBytes))
			c.v[l] = append(c.v[l], make([]byte, PageSize*c.rowBytes))
		}
	}
	return nil
}

// store encodes one position's key and value rows (length kvDim) for layer
// l through kernel path ki (whose encoders are bit-exact on every path),
// head by head.
func (c *KVCache) store(ki *kernels.Impl, l, pos int, k, v []float32) error {
	nh := c.kvDim / c.headDim
	for h := 0; h < nh; h++ {
		x := h * c.headDim
		if err := ki.Quantize(c.typ, k[x:x+c.headDim], c.keyHead(l, pos, h)); err != nil {
			return fmt.Errorf("model: KV store: %w", err)
		}
		if err := ki.Quantize(c.typ, v[x:x+c.headDim], c.valueHead(l, pos, h)); err != nil {
			return fmt.Errorf("model: KV store: %w", err)
		}
	}
	return nil
}

// slot returns kv head h's encoded row at position pos in layer l.
func (c *KVCache) slot(pages [][][]byte, l, pos, h int) []byte {
	p := pages[l][pos/PageSize]
	o := (h*PageSize + pos%PageSize) * c.headB
	return p[o : o+c.headB : o+c.headB]
}

// keyHead returns the encoded key of kv head h at position pos in layer l.
func (c *KVCache) keyHead(l, pos, h int) []byte { return c.slot(c.k, l, pos, h) }

// valueHead returns the encoded value of kv head h at position pos in layer l.
func (c *KVCache) valueHead(l, pos, h int) []byte { return c.slot(c.v, l, pos, h) }

// headSpan returns kv head h's encoded rows for positions p.. in layer l, as
// far as p's page goes but at most want of them, and how many that is. Rows
// are headB apart (contiguous).
func (c *KVCache) headSpan(pages [][][]byte, l, h, p, want int) ([]byte, int) {
	pg := pages[l][p/PageSize]
	i := p % PageSize
	cnt := min(want, PageSize-i)
	o := (h*PageSize + i) * c.headB
	return pg[o : o+cnt*c.headB], cnt
}
