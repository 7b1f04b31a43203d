package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/cpuid/v2"

	"github.com/memvanta/memvanta/core/ggml"
)

// A short last tile (fewer than 16 rows) goes through the NEON kernel's
// 16-wide stack scratch in groups of gemmNEONTmpTok tokens; its outputs must
// equal the same rows computed in a full tile bit for bit (same kernel, same
// per-lane operations), for batches spanning several groups and K-ranges.
func TestGemmNEONShortTileGroups(t *testing.T) {
	if !cpuid.CPU.Supports(cpuid.ASIMDDP) {
		t.Skip("no ASIMDDP: no NEON packed MatMul")
	}
	k, err := ByName("neon")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(401, 402))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL, ggml.Q2_K, ggml.Q3_K, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.IQ4_XS} {
		g := k.gemmFor(typ)
		if g == nil {
			t.Fatalf("%s: no packed routine on neon", typ)
		}
		cols := 7 * 32
		weights, acts := gemmWeights, gemmActs
		if typ.BlockSize() == 256 {
			cols = 3 * 256
			weights, acts = gemmKWeights, gemmKActs
		}
		ws, _ := RowSize(typ, cols)
		as, _ := RowSize(ActType(typ), cols)
		w := weights(r, typ, 16, cols)
		for _, nb := range []int{gemmNEONTmpTok - 1, gemmNEONTmpTok + 1, 2*gemmNEONTmpTok + 5} {
			a := acts(r, typ, nb, cols)
			for _, kb := range []int{g.kb, 2} {
				full := make([]float32, nb*16)
				matMulPacked(nil, g, typ, 16, cols, w, a, nb, full, ws, as, kb)
				for _, rows := range []int{1, 5, 15} {
					y := make([]float32, nb*rows)
					matMulPacked(nil, g, typ, rows, cols, w[:rows*ws], a, nb, y, ws, as, kb)
					for b := 0; b < nb; b++ {
						for row := 0; row < rows; row++ {
							got, want := y[b*rows+row], full[b*16+row]
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%s nb=%d kb=%d rows=%d: y[%d,%d] = %g, full tile %g", typ, nb, kb, rows, b, row, got, want)
							}
						}
					}
				}
			}
		}
	}
}
