package model

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/internal/archfixtures"
	"github.com/memvanta/memvanta/kernels"
)

// TestSlidingRing: with its sliding-window layers in rings (window 8: a
// ring of 512 positions with the default slack), a model generates exactly
// the logits of the unbounded cache (--swa-full) for every architecture
// with a window, over a prompt and a generation that wrap the rings, after
// a truncation within the slack, and for quantized cache types; the rings
// hold a bounded number of pages; and a truncation further back than the
// slack empties the cache rather than attending to overwritten positions;
// ForwardBatch over ring caches from NewKV gives Forward's logits.
func TestSlidingRing(t *testing.T) {
	ctx := context.Background()
	for _, am := range archfixtures.All() {
		if am.Arch.Window == 0 {
			continue
		}
		for _, kv := range []struct{ k, v ggml.Type }{{ggml.F16, ggml.F16}, {ggml.Q8_0, ggml.Q4_0}} {
			t.Run(fmt.Sprintf("%s/%s-%s", am.Label, kv.k, kv.v), func(t *testing.T) {
				opt := Options{Threads: 2, Batch: 32, KVType: kv.k, KVTypeV: kv.v, KVTypeVSet: true, Ctx: 2048}
				ring := openArch(t, am.Arch, ggml.F32, opt)
				opt.SWAFull = true
				full := openArch(t, am.Arch, ggml.F32, opt)
				w, rc := ring.KV().Window()
				if w != am.Arch.Window || rc != RingCap(w, DefaultSWASlack) {
					t.Fatalf("ring cache: window %d ring %d, want %d and %d", w, rc, am.Arch.Window, RingCap(am.Arch.Window, DefaultSWASlack))
				}
				if _, rf := full.KV().Window(); rf != 0 {
					t.Fatalf("--swa-full cache has a ring of %d", rf)
				}
				prompt := make([]int32, 300)
				for i := range prompt {
					prompt[i] = int32(1 + (i*7)%250)
				}
				step := func(toks []int32) {
					t.Helper()
					a, err := ring.Forward(ctx, toks)
					if err != nil {
						t.Fatal(err)
					}
					b, err := full.Forward(ctx, toks)
					if err != nil {
						t.Fatal(err)
					}
					for i := range a {
						if a[i] != b[i] {
							t.Fatalf("position %d: logit %d = %v with rings, %v unbounded", ring.Pos()-1, i, a[i], b[i])
						}
					}
				}
				step(prompt)
				gen := func(n int) {
					for i := 0; i < n; i++ {
						tok := int32(kernels.Argmax(ring.logits))
						step([]int32{tok})
					}
				}
				gen(400) // 700 positions: past the 512-position rings
				pos := ring.Pos()
				ring.KV().Truncate(pos - 100)
				full.KV().Truncate(pos - 100)
				if ring.Pos() != pos-100 {
					t.Fatalf("truncating 100 positions (within the slack) left %d, want %d", ring.Pos(), pos-100)
				}
				step([]int32{5, 6, 7})
				gen(20)
				nr, nf := ring.KV().Bytes(), full.KV().Bytes()
				var slide int
				for l := 0; l < ring.Cfg.NLayer; l++ {
					if ring.Cfg.Sliding(l) {
						slide++
					}
				}
				if slide == 0 || nr >= nf {
					t.Fatalf("%d sliding layers: rings hold %d bytes, the unbounded cache %d", slide, nr, nf)
				}
				// Per layer the unbounded cache holds ceil(pos/PageSize)
				// pages, a ring rc/PageSize.
				perPage := nf / int64(ring.Cfg.NLayer*((ring.Pos()+PageSize-1)/PageSize))
				want := nf - int64(slide)*perPage*int64((ring.Pos()+PageSize-1)/PageSize-rc/PageSize)
				if nr != want {
					t.Fatalf("rings hold %d bytes, want %d", nr, want)
				}
				ring.KV().Truncate(100)
				if ring.Pos() != 0 {
					t.Fatalf("truncating to 100 of %d positions: %d left, want an emptied cache", pos, ring.Pos())
				}
				// ForwardBatch: two sequences with ring caches from NewKV,
				// a prompt that wraps the rings, against Forward.
				long := append(append([]int32(nil), prompt...), prompt...)
				ring.Reset()
				lg, err := ring.Forward(ctx, long)
				if err != nil {
					t.Fatal(err)
				}
				ref := append([]float32(nil), lg...)
				var sb []SeqBatch
				for i := 0; i < 2; i++ {
					kv, err := ring.NewKV(0)
					if err != nil {
						t.Fatal(err)
					}
					sb = append(sb, SeqBatch{KV: kv, Tokens: long[:len(long)-i*50], Logits: make([]float32, ring.Cfg.NVocab)})
				}
				if err := ring.ForwardBatch(ctx, sb); err != nil {
					t.Fatal(err)
				}
				for i, v := range sb[0].Logits {
					if v != ref[i] {
						t.Fatalf("ForwardBatch with rings: logit %d = %v, Forward %v", i, v, ref[i])
					}
				}
			})
		}
	}
}

// TestRingGeometry: a ring only where it is smaller than the context, the
// 32k-context gemma3 shape (5 of 6 layers sliding, window 1024) holds at
// most a quarter of the unbounded cache, and a cache whose rings cannot
// hold a batch plus the window is refused by ForwardBatch's check.
func TestRingGeometry(t *testing.T) {
	sl := make([]bool, 6)
	for l := range sl {
		sl[l] = l%6 < 5
	}
	spec := KVSpec{K: ggml.F16, V: ggml.F16, NLayer: 6, NHeadKV: 4, HeadDim: 128, MaxCtx: 32768, Window: 1024, Sliding: sl, Slack: DefaultSWASlack}
	c, err := NewKVCacheSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.Sliding = nil
	f, err := NewKVCacheSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*KVCache{c, f} {
		if err := x.reserve(0, 32768); err != nil {
			t.Fatal(err)
		}
	}
	if r := float64(c.Bytes()) / float64(f.Bytes()); r > 0.25 {
		t.Errorf("32k gemma3 shape: rings hold %.3f of the unbounded cache, want <= 1/4", r)
	}
	spec.Sliding, spec.MaxCtx = sl, 1024
	small, err := NewKVCacheSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, rc := small.Window(); rc != 0 {
		t.Errorf("context 1024 with window 1024: ring of %d, want none", rc)
	}
}
