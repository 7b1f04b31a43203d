//go:build linux

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// gemmIQ4NLPair is the avx2 path's packed IQ4_NL MatMul (nibble-split
// layout, VPMADDUBSW: gemmsplit.go) and the avx512 path's (gemm.go's layout
// with the codebook values + 128 as Q8_0's packer stores w+128, VPDPBUSD:
// gemmKernel), as avx2Rows and avx512Rows build them.
func gemmIQ4NLPair() (avx2, avx512 *gemmRoutines) {
	const typ = ggml.IQ4_NL
	return gemmSplit(128, gemmPackIQ4_NLSplitAVX2, gemmKernelSplitAVX2)(typ),
		gemm32(128, gemmPackIQ4_NL, gemmKernel)(typ)
}

// BenchmarkGemmIQ4NLAVX512 compares, on one thread, the avx2 path's packed
// IQ4_NL MatMul with the avx512 path's, alternating (benchGemmPair).
func BenchmarkGemmIQ4NLAVX512(b *testing.B) {
	if !cpuHasAVX512VNNI() {
		b.Skip("no AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(137, 138))
	old, cur := gemmIQ4NLPair()
	benchGemmPair(b, ggml.IQ4_NL, r, []int{32, 512}, gemmRival{"avx2", old, old.kb}, gemmRival{"avx512", cur, cur.kb})
}

// Both packed IQ4_NL MatMuls form each block's exact int32 Σ value·a
// (from -128·Σa in the prep: the split kernel adds 16·Σ high nibbles·a and
// Σ low nibbles·a, VPDPBUSD the whole bytes) and finish it with the same
// float instructions in the same order, y += d_a·(d_w·float(sum)) block by
// block, the partial sums of a K-range passing through y as f32 either
// way; so the avx512 outputs equal the avx2 ones bit for bit, whatever
// their K-ranges (128 and 256 blocks). Checked for row counts around the
// 16-row tile, widths of 1 to 176 blocks, batches through the 8/4/1-token
// groups, K-ranges of each routine's own, 5 and 1 blocks, 1 and 2 threads,
// with gemmWeights' extreme scales and gemmActs' raw and all -127/+127
// blocks. Each output starts as a different NaN payload and a guard
// follows the outputs, so a skipped or stray write fails too.
func TestGemmIQ4NLAVX512MatchesAVX2(t *testing.T) {
	if !cpuHasAVX512VNNI() {
		t.Skip("no AVX-512 VNNI")
	}
	const typ = ggml.IQ4_NL
	ref, g := gemmIQ4NLPair()
	r := rand.New(rand.NewPCG(139, 140))
	pools := map[int]*Pool{1: NewPool(1), 2: NewPool(2)}
	defer pools[1].Close()
	defer pools[2].Close()
	const maxRows, maxNB = 33, 21
	nbList := []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 21}
	for _, cols := range []int{32, 96, 2048, 5632} {
		w := gemmWeights(r, typ, maxRows, cols)
		a := gemmActs(r, typ, maxNB, cols)
		ws, _ := RowSize(typ, cols)
		as, _ := RowSize(ActType(typ), cols)
		for _, rows := range []int{1, 5, 16, 17, 33} {
			for _, nb := range nbList {
				for _, c := range []struct{ th, kb int }{{1, 0}, {2, 0}, {2, 5}, {1, 1}} {
					name := fmt.Sprintf("%dx%d/nb%d/t%d/kb%d", rows, cols, nb, c.th, c.kb)
					want := make([]float32, nb*rows+16)
					got := make([]float32, nb*rows+16)
					for i := range got {
						got[i] = math.Float32frombits(0x7fc00000 | uint32(i))
						want[i] = got[i]
					}
					kb2, kb512 := ref.kb, g.kb
					if c.kb > 0 {
						kb2, kb512 = c.kb, c.kb
					}
					matMulPacked(pools[c.th], ref, typ, rows, cols, w[:rows*ws], a[:nb*as], nb, want[:nb*rows], ws, as, kb2)
					matMulPacked(pools[c.th], g, typ, rows, cols, w[:rows*ws], a[:nb*as], nb, got[:nb*rows], ws, as, kb512)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s: y[%d] = %g (%#x), avx2 %g (%#x)", name, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
						}
					}
				}
			}
		}
	}
}
