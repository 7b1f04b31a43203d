package kernels

import (
	"bytes"
	"encoding/binary"
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
	mk := func(typ ggml.Type, blockB, kb int, pack, pack512 pk, k2, k512 asmKernel) struct {
		typ          ggml.Type
		avx2, avx512 *gemmRoutines
	} {
		return struct {
			typ          ggml.Type
			avx2, avx512 *gemmRoutines
		}{typ, newGemmK(typ, blockB, kb, pack, k2, 16), newGemmK(typ, blockB, kb, pack512, k512, 16)}
	}
	return []struct {
		typ          ggml.Type
		avx2, avx512 *gemmRoutines
	}{
		mk(ggml.Q4_K, gemmQ4KBlockB, gemmQ4KKB, packQ4K, packQ4KAVX512, gemmKernelQ4KAVX2, gemmKernelQ4KAVX512),
		mk(ggml.Q5_K, gemmQ4KBlockB, gemmQ4KKB, packQ5K, packQ5K, gemmKernelQ5KAVX2, gemmKernelQ4KAVX512),
		mk(ggml.Q6_K, gemmQ6KBlockB, gemmQ6KKB, packQ6K, packQ6K, gemmKernelQ6KAVX2, gemmKernelQ6KAVX512),
		mk(ggml.Q3_K, gemmQ6KBlockB, gemmQ6KKB, packQ3K, packQ3K, gemmKernelQ6KAVX2, gemmKernelQ6KAVX512),
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
	// The gather packer against packQ4K, both with the AVX-512 kernel.
	b.Run("Q4_K-pack", func(b *testing.B) {
		gop := newGemmK(ggml.Q4_K, gemmQ4KBlockB, gemmQ4KKB, packQ4K, gemmKernelQ4KAVX512, 16)
		asm := newGemmK(ggml.Q4_K, gemmQ4KBlockB, gemmQ4KKB, packQ4KAVX512, gemmKernelQ4KAVX512, 16)
		benchGemmPair(b, ggml.Q4_K, r, []int{32, 512}, gemmRival{"gopack", gop, gop.kb}, gemmRival{"asmpack", asm, asm.kb})
	})
}

// TestGemmPackQ4KAVX512MatchesGo: the gather packer writes packQ4K's bytes
// for arbitrary bytes in the weights (every d / dmin pattern, scale codes,
// nibbles), widths of 1 to 17 super-blocks and padded row strides, with a
// signaling-NaN fp16 d or dmin packed as its quiet NaN; and it writes
// nothing past n super-blocks.
func TestGemmPackQ4KAVX512MatchesGo(t *testing.T) {
	if !cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512VNNI) {
		t.Skip("no AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(545, 546))
	for _, n := range []int{1, 2, 3, 5, 8, 17} {
		for _, pad := range []int{0, 1, 144 * 3} {
			ws := n*144 + pad
			w := rawBytes(r, 15*ws+n*144)
			want := make([]byte, n*gemmQ4KBlockB)
			packQ4K(n, w, ws, want)
			for b := 0; b < n; b++ {
				for _, f := range []int{gemmQ4KD, gemmQ4KDmin} {
					for row := 0; row < 16; row++ {
						o := want[b*gemmQ4KBlockB+f+4*row:]
						v := binary.LittleEndian.Uint32(o)
						if v&0x7f800000 == 0x7f800000 && v&0x7fffff != 0 {
							binary.LittleEndian.PutUint32(o, v|0x400000)
						}
					}
				}
			}
			got := rawBytes(r, (n+1)*gemmQ4KBlockB)
			guard := append([]byte(nil), got[n*gemmQ4KBlockB:]...)
			packQ4KAVX512(n, w, ws, got[:n*gemmQ4KBlockB])
			for i := range want {
				if got[i] != want[i] {
					b, o := i/gemmQ4KBlockB, i%gemmQ4KBlockB
					t.Fatalf("n=%d ws=%d: super-block %d byte %d = %#x, packQ4K %#x", n, ws, b, o, got[i], want[i])
				}
			}
			if !bytes.Equal(got[n*gemmQ4KBlockB:], guard) {
				t.Fatalf("n=%d ws=%d: wrote past %d super-blocks", n, ws, n)
			}
		}
	}
}
