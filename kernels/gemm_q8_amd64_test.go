//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// BenchmarkGemmQ8Alt compares the AVX2 packed Q8_0 MatMul (signed layout,
// |w|·sign(a, w): gemmKernelQ8PFAVX2) with the nibble-split routines it
// replaced (gemmq8.go's layout, two VPMADDUBSW per 32 products), on one
// thread, alternating one call of each and keeping the smallest process
// CPU time of each, as BenchmarkGemmAlt does: the ratio to trust on a
// shared machine. Shapes are TinyLlama's (attention, FFN gate/up, FFN
// down) at generate's and bench's batches.
func BenchmarkGemmQ8Alt(b *testing.B) {
	k, err := ByName("avx2")
	if err != nil {
		b.Skip("no avx2 path on this CPU")
	}
	const typ = ggml.Q8_0
	r := rand.New(rand.NewPCG(131, 132))
	split := gemmSplit(128, gemmPackQ8_0SplitAVX2, gemmKernelQ8SplitAVX2)(typ)
	signed := k.gemmFor(typ)
	benchGemmPair(b, typ, r, []int{32, 512}, gemmRival{"split", split, split.kb}, gemmRival{"signed", signed, signed.kb})
}
