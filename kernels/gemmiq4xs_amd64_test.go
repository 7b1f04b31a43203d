//go:build linux

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// BenchmarkGemmIQ4XSAlt compares, on one thread, the int16 IQ4_XS packed
// MatMul (gemmiq4xs_amd64.go) with the index-layout one it replaced
// (gemmk.go's layout, gemmKernelIQ4XSAVX2), alternating one call of each
// and reporting the smallest process CPU time of each and their ratio, at
// TinyLlama's shapes (attention 2048×2048, FFN gate/up 5632×2048, down
// 2048×5632).
func BenchmarkGemmIQ4XSAlt(b *testing.B) {
	const typ = ggml.IQ4_XS
	r := rand.New(rand.NewPCG(117, 118))
	old := gemmK(gemmIQ4XSBlockB, gemmIQ4XSKB, packIQ4XS, gemmKernelIQ4XSAVX2, gemmIQ4XSMinBatch)(typ)
	cur := newGemmIQ4XS16(typ)
	benchGemmPair(b, typ, r, []int{32, 128, 512}, gemmRival{"old", old, gemmKB}, gemmRival{"new", cur, gemmKB})
}

// BenchmarkGemmIQ4XSAVX512 compares, on one thread, the avx2 path's
// packed IQ4_XS MatMul (int16 layout, VPMADDWD) with the avx512 path's
// (byte layout, VPDPBUSD: gemmiq4xs8_amd64.go), alternating
// (benchGemmPair).
func BenchmarkGemmIQ4XSAVX512(b *testing.B) {
	if !cpuHasAVX512VNNI() {
		b.Skip("no AVX-512 VNNI")
	}
	const typ = ggml.IQ4_XS
	r := rand.New(rand.NewPCG(119, 120))
	old, cur := newGemmIQ4XS16(typ), newGemmIQ4XS8AVX512(typ)
	benchGemmPair(b, typ, r, []int{32, 128, 512}, gemmRival{"avx2", old, gemmKB}, gemmRival{"avx512", cur, gemmKB})
}

// The AVX-512 byte-layout IQ4_XS MatMul forms the AVX2 int16 kernel's
// exact int32 super-block sums (gemmiq4xs8_amd64.go) and finishes each with
// the same float instructions in the same order, so its outputs must equal
// the AVX2 one's bit for bit (packer, prep and kernel together): for row counts around the 16-row
// tile (short tiles masked), widths of 1 to 22 super-blocks, batches
// through every token group and tail (12, 8, 4, 2, 1 tokens), K-ranges
// of 24, 3 and 1 super-blocks (later ranges continue from y: the
// kernel's not-first path), 1 and 2 threads, with the extreme scales and
// all −128/+127 activation blocks of gemmKWeights and gemmKActs. Each
// output starts as a different NaN payload and a guard follows the
// outputs, so a skipped or stray write fails too. A direct kernel call
// with a y stride wider than the tile and random starting values checks
// that the lanes past nr of each token are left alone.
func TestGemmIQ4XSAVX512MatchesAVX2(t *testing.T) {
	if !cpuHasAVX512VNNI() {
		t.Skip("no AVX-512 VNNI")
	}
	const typ = ggml.IQ4_XS
	ref, g := newGemmIQ4XS16(typ), newGemmIQ4XS8AVX512(typ)
	r := rand.New(rand.NewPCG(135, 136))
	pools := map[int]*Pool{1: NewPool(1), 2: NewPool(2)}
	defer pools[1].Close()
	defer pools[2].Close()
	const maxRows, maxNB = 49, 41
	nbList := []int{1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 15, 19, 20, 23, 24, 25, 27, 31, 36, 41}
	for _, cols := range []int{256, 768, 2048, 5632} {
		w := gemmKWeights(r, typ, maxRows, cols)
		a := gemmKActs(r, typ, maxNB, cols)
		ws, _ := RowSize(typ, cols)
		as, _ := RowSize(ActType(typ), cols)
		for _, rows := range []int{1, 5, 16, 17, 33, 49} {
			for _, nb := range nbList {
				for _, c := range []struct{ th, kb int }{{1, g.kb}, {2, g.kb}, {2, 3}, {1, 1}} {
					name := fmt.Sprintf("%dx%d/nb%d/t%d/kb%d", rows, cols, nb, c.th, c.kb)
					want := make([]float32, nb*rows+16)
					got := make([]float32, nb*rows+16)
					for i := range got {
						got[i] = math.Float32frombits(0x7fc00000 | uint32(i))
						want[i] = got[i]
					}
					matMulPacked(pools[c.th], ref, typ, rows, cols, w[:rows*ws], a[:nb*as], nb, want[:nb*rows], ws, as, c.kb)
					matMulPacked(pools[c.th], g, typ, rows, cols, w[:rows*ws], a[:nb*as], nb, got[:nb*rows], ws, as, c.kb)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s: y[%d] = %g (%#x), AVX2 kernel %g (%#x)", name, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
						}
					}
				}
			}
		}
	}

	// Direct kernel calls, not first: y rows 16 wide plus 7 guard lanes
	// per token, random values; nr of the 16 lanes are updated.
	const n, ys = 3, 23
	w := gemmKWeights(r, typ, 16, n*256)
	pw := make([]byte, n*ref.blockB)
	gpw := make([]byte, n*g.blockB)
	ref.pack(n, w, n*136, pw)
	g.pack(n, w, n*136, gpw)
	for _, ntok := range []int{1, 6, 12, 13, 23, 29} {
		a := gemmKActs(r, typ, ntok, n*256)
		prep := make([]byte, ntok*n*ref.prepB)
		gprep := make([]byte, ntok*n*g.prepB)
		for i := 0; i < ntok; i++ {
			ref.prep(n, a[i*n*292:], prep[i*n*ref.prepB:], ref.prepB)
			g.prep(n, a[i*n*292:], gprep[i*n*g.prepB:], g.prepB)
		}
		for _, nr := range []int{1, 7, 15, 16} {
			y0 := make([]float32, ntok*ys)
			for i := range y0 {
				y0[i] = float32(r.NormFloat64())
			}
			want := append([]float32(nil), y0...)
			got := append([]float32(nil), y0...)
			ref.kernel(n, pw, nil, 0, prep, n*ref.prepB, want, ys, ntok, nr, false)
			g.kernel(n, gpw, nil, 0, gprep, n*g.prepB, got, ys, ntok, nr, false)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("kernel ntok=%d nr=%d: y[%d] = %g, AVX2 kernel %g", ntok, nr, i, got[i], want[i])
				}
				if i%ys >= nr && got[i] != y0[i] {
					t.Fatalf("kernel ntok=%d nr=%d: y[%d] (lane %d) changed", ntok, nr, i, i%ys)
				}
			}
		}
	}
}
