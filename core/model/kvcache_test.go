package model

import (
	"bytes"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/kernels"
)

// TestKVCacheHeadLayout: what store writes for a position and head is what
// keyHead/valueHead return, and headSpan's rows (headB apart) are those
// same slots in position order, up to the page end, for every cache type.
func TestKVCacheHeadLayout(t *testing.T) {
	ki, err := kernels.ByName("scalar")
	if err != nil {
		t.Fatal(err)
	}
	const layers, heads, hd = 2, 3, 32
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0, ggml.Q4_0, ggml.Q5_1} {
		c, err := NewKVCacheSpec(KVSpec{K: typ, V: ggml.Q8_0, NLayer: layers, NHeadKV: heads, HeadDim: hd, MaxCtx: 2*PageSize + 5})
		if err != nil {
			t.Fatal(err)
		}
		n := 2*PageSize + 3
		if err := c.reserve(0, n); err != nil {
			t.Fatal(err)
		}
		k, v := make([]float32, heads*hd), make([]float32, heads*hd)
		val := func(l, p, i int, key bool) float32 {
			x := float32((l*7+p*3+i)%61) - 30
			if key {
				return x
			}
			return -x / 2
		}
		for l := 0; l < layers; l++ {
			for p := 0; p < n; p++ {
				for i := range k {
					k[i], v[i] = val(l, p, i, true), val(l, p, i, false)
				}
				if err := c.store(ki, l, p, k, v); err != nil {
					t.Fatal(err)
				}
			}
		}
		want, wantV := make([]byte, c.k.headB), make([]byte, c.v.headB)
		for l := 0; l < layers; l++ {
			for h := 0; h < heads; h++ {
				for p := 0; p < n; p++ {
					x := make([]float32, hd)
					for i := range x {
						x[i] = val(l, p, h*hd+i, true)
					}
					if err := ki.Quantize(typ, x, want); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(c.keyHead(l, p, h), want) {
						t.Fatalf("%s: keyHead(%d, %d, %d) is not the stored key", typ, l, p, h)
					}
					for i := range x {
						x[i] = val(l, p, h*hd+i, false)
					}
					if err := ki.Quantize(ggml.Q8_0, x, wantV); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(c.valueHead(l, p, h), wantV) {
						t.Fatalf("%s: valueHead(%d, %d, %d) is not the stored value", typ, l, p, h)
					}
				}
				for p := 0; p < n; {
					rows, cnt := c.headSpan(&c.k, l, h, p, n-p)
					if cnt < 1 || len(rows) != cnt*c.k.headB || (p+cnt)%PageSize != 0 && p+cnt != n {
						t.Fatalf("%s: headSpan(%d, %d, %d) = %d bytes, %d rows", typ, l, h, p, len(rows), cnt)
					}
					for i := 0; i < cnt; i++ {
						if !bytes.Equal(rows[i*c.k.headB:(i+1)*c.k.headB], c.keyHead(l, p+i, h)) {
							t.Fatalf("%s: headSpan row %d from %d is not keyHead's", typ, i, p)
						}
					}
					p += cnt
				}
			}
		}
	}
}
