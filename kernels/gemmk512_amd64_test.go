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
		mk(ggml.Q5_K, gemmQ4KBlockB, gemmQ4KKB, packQ5K, packQ5KAVX512, gemmKernelQ5KAVX2, gemmKernelQ4KAVX512),
		mk(ggml.Q6_K, gemmQ6KBlockB, gemmQ6KKB, packQ6K, packQ6KAVX512, gemmKernelQ6KAVX2, gemmKernelQ6KAVX512),
		mk(ggml.Q3_K, gemmQ6KBlockB, gemmQ6KKB, packQ3K, packQ3KAVX512, gemmKernelQ6KAVX2, gemmKernelQ6KAVX512),
		mk(ggml.Q2_K, gemmQ2KBlockB, gemmQ2KKB, packQ2K, packQ2KAVX512, gemmKernelQ2KAVX2, gemmKernelQ2KAVX512),
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
	// The gather packers against the Go ones, both with the AVX-512 kernel.
	for _, c := range []struct {
		typ          ggml.Type
		blockB, kb   int
		goPack, pack func(n int, w []byte, ws int, dst []byte)
		kernel       asmKernel
	}{
		{ggml.Q4_K, gemmQ4KBlockB, gemmQ4KKB, packQ4K, packQ4KAVX512, gemmKernelQ4KAVX512},
		{ggml.Q5_K, gemmQ4KBlockB, gemmQ4KKB, packQ5K, packQ5KAVX512, gemmKernelQ4KAVX512},
		{ggml.Q6_K, gemmQ6KBlockB, gemmQ6KKB, packQ6K, packQ6KAVX512, gemmKernelQ6KAVX512},
		{ggml.Q3_K, gemmQ6KBlockB, gemmQ6KKB, packQ3K, packQ3KAVX512, gemmKernelQ6KAVX512},
		{ggml.Q2_K, gemmQ2KBlockB, gemmQ2KKB, packQ2K, packQ2KAVX512, gemmKernelQ2KAVX512},
	} {
		b.Run(c.typ.String()+"-pack", func(b *testing.B) {
			gop := newGemmK(c.typ, c.blockB, c.kb, c.goPack, c.kernel, 16)
			asm := newGemmK(c.typ, c.blockB, c.kb, c.pack, c.kernel, 16)
			benchGemmPair(b, c.typ, r, []int{32, 512}, gemmRival{"gopack", gop, gop.kb}, gemmRival{"asmpack", asm, asm.kb})
		})
	}
}

// TestGemmPackKAVX512MatchesGo: the gather packers write the Go packers'
// bytes for arbitrary bytes in the weights (every d / dmin pattern, scale
// codes, quants and high bits), widths of 1 to 17 super-blocks and padded row
// strides, with a signaling-NaN fp16 d or dmin packed as its quiet NaN; and
// they write nothing past n super-blocks.
func TestGemmPackKAVX512MatchesGo(t *testing.T) {
	if !cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512VNNI) {
		t.Skip("no AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(545, 546))
	for _, c := range []struct {
		typ          ggml.Type
		bs, blockB   int
		floats       []int
		goPack, pack func(n int, w []byte, ws int, dst []byte)
	}{
		{ggml.Q4_K, 144, gemmQ4KBlockB, []int{gemmQ4KD, gemmQ4KDmin}, packQ4K, packQ4KAVX512},
		{ggml.Q5_K, 176, gemmQ4KBlockB, []int{gemmQ4KD, gemmQ4KDmin}, packQ5K, packQ5KAVX512},
		{ggml.Q6_K, 210, gemmQ6KBlockB, []int{gemmQ6KD}, packQ6K, packQ6KAVX512},
		{ggml.Q3_K, 110, gemmQ6KBlockB, []int{gemmQ6KD}, packQ3K, packQ3KAVX512},
		{ggml.Q2_K, 84, gemmQ2KBlockB, []int{gemmQ6KD, gemmQ2KDmin}, packQ2K, packQ2KAVX512},
	} {
		for _, n := range []int{1, 2, 3, 5, 8, 17} {
			for _, pad := range []int{0, 1, c.bs * 3} {
				ws := n*c.bs + pad
				w := rawBytes(r, 15*ws+n*c.bs)
				want := make([]byte, n*c.blockB)
				c.goPack(n, w, ws, want)
				for b := 0; b < n; b++ {
					for _, f := range c.floats {
						for row := 0; row < 16; row++ {
							o := want[b*c.blockB+f+4*row:]
							v := binary.LittleEndian.Uint32(o)
							if v&0x7f800000 == 0x7f800000 && v&0x7fffff != 0 {
								binary.LittleEndian.PutUint32(o, v|0x400000)
							}
						}
					}
				}
				got := rawBytes(r, (n+1)*c.blockB)
				guard := append([]byte(nil), got[n*c.blockB:]...)
				c.pack(n, w, ws, got[:n*c.blockB])
				for i := range want {
					if got[i] != want[i] {
						b, o := i/c.blockB, i%c.blockB
						t.Fatalf("%s n=%d ws=%d: super-block %d byte %d = %#x, Go packer %#x", c.typ, n, ws, b, o, got[i], want[i])
					}
				}
				if !bytes.Equal(got[n*c.blockB:], guard) {
					t.Fatalf("%s n=%d ws=%d: wrote past %d super-blocks", c.typ, n, ws, n)
				}
			}
		}
	}
}
