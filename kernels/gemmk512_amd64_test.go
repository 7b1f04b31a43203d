package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/cpuid/v2"

	"github.com/memvanta/memvanta/core/ggml"
)

// gemmKAVX512Pairs are the packed K-quant routines with an AVX-512 VNNI
// kernel and the AVX2 routines on the same layout they must equal.
func gemmKAVX512Pairs() []struct {
	typ          ggml.Type
	avx2, avx512 *gemmRoutines
} {
	type pk = func(n int, w []byte, ws int, dst []byte)
	mk := func(typ ggml.Type, blockB, kb int, pack pk, k2, k512 asmKernel) struct {
		typ          ggml.Type
		avx2, avx512 *gemmRoutines
	} {
		return struct {
			typ          ggml.Type
			avx2, avx512 *gemmRoutines
		}{typ, newGemmK(typ, blockB, kb, pack, k2, 16), newGemmK(typ, blockB, kb, pack, k512, 16)}
	}
	return []struct {
		typ          ggml.Type
		avx2, avx512 *gemmRoutines
	}{
		mk(ggml.Q4_K, gemmQ4KBlockB, gemmQ4KKB, packQ4K, gemmKernelQ4KAVX2, gemmKernelQ4KAVX512),
		mk(ggml.Q5_K, gemmQ4KBlockB, gemmQ4KKB, packQ5K, gemmKernelQ5KAVX2, gemmKernelQ4KAVX512),
		mk(ggml.Q6_K, gemmQ6KBlockB, gemmQ6KKB, packQ6K, gemmKernelQ6KAVX2, gemmKernelQ6KAVX512),
		mk(ggml.Q3_K, gemmQ6KBlockB, gemmQ6KKB, packQ3K, gemmKernelQ6KAVX2, gemmKernelQ6KAVX512),
	}
}

// TestGemmKAVX512MatchesAVX2: the AVX-512 VNNI packed K-quant kernels form
// the AVX2 kernels' exact integers and finish them with the same float
// instructions (gemmk512_amd64.go), so every packed MatMul output equals the
// AVX2 packed path's bit for bit — for random weights with extreme fp16
// scales, activations with all -128 / all +127 blocks, row counts around
// the 16-row tile (masked lanes), widths of 1 to 22 super-blocks, every
// batch through the 8/4/2/1-token groups up to 19 and a few larger, and
// K-ranges of kb, 3 and 1 super-blocks (outputs continued through y). y
// starts as NaN with a NaN guard after it. (TestMatMulPackedK holds the
// registered avx512 routines to the error bound against the exact dot.)
func TestGemmKAVX512MatchesAVX2(t *testing.T) {
	if !cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512VNNI) {
		t.Skip("no AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(541, 542))
	const maxRows, maxNB = 33, 40
	nbList := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 32, 37, 40}
	for _, c := range gemmKAVX512Pairs() {
		for _, cols := range []int{256, 768, 2048, 5632} {
			w := gemmKWeights(r, c.typ, maxRows, cols)
			a := gemmKActs(r, c.typ, maxNB, cols)
			ws, _ := RowSize(c.typ, cols)
			as, _ := RowSize(ActType(c.typ), cols)
			for _, rows := range []int{1, 5, 15, 16, 17, 33} {
				for _, nb := range nbList {
					for _, kb := range []int{c.avx2.kb, 3, 1} {
						var y [2][]float32
						for i, g := range []*gemmRoutines{c.avx2, c.avx512} {
							y[i] = make([]float32, nb*rows+16)
							for j := range y[i] {
								y[i][j] = float32(math.NaN())
							}
							matMulPacked(nil, g, c.typ, rows, cols, w[:rows*ws], a[:nb*as], nb, y[i][:nb*rows], ws, as, kb)
						}
						name := fmt.Sprintf("%s/%dx%d/nb%d/kb%d", c.typ, rows, cols, nb, kb)
						for j := range y[1] {
							if j >= nb*rows {
								if !math.IsNaN(float64(y[1][j])) {
									t.Fatalf("%s: wrote y[%d] past the %d outputs", name, j, nb*rows)
								}
								continue
							}
							if math.Float32bits(y[0][j]) != math.Float32bits(y[1][j]) {
								t.Fatalf("%s: y[%d] (token %d, row %d) = %g, AVX2 %g", name, j, j/rows, j%rows, y[1][j], y[0][j])
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkGemmKAVX512Alt: the AVX-512 VNNI packed K-quant kernels against
// the AVX2 ones on the same layout and packer (benchGemmPair: one thread,
// TinyLlama shapes, alternating calls, smallest CPU time of each).
func BenchmarkGemmKAVX512Alt(b *testing.B) {
	if !cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512VNNI) {
		b.Skip("no AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(543, 544))
	for _, c := range gemmKAVX512Pairs() {
		b.Run(c.typ.String(), func(b *testing.B) {
			benchGemmPair(b, c.typ, r, []int{32, 512}, gemmRival{"avx2", c.avx2, c.avx2.kb}, gemmRival{"avx512", c.avx512, c.avx512.kb})
		})
	}
}
