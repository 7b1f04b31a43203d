//go:build linux

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// BenchmarkGemmQ8Alt compares the AVX2 packed Q8_0 MatMul's two routine
// sets: the byte kernel (signed layout, |w|·sign(a, w):
// gemmKernelQ8PFAVX2) and the int16 one MatMul takes from batch
// gemmQ8I16MinBatch (gemmq8i16_amd64.go), on one thread, alternating one call of each and keeping the smallest process
// CPU time of each, as BenchmarkGemmAlt does: the ratio to trust on a
// shared machine. Shapes are TinyLlama's (attention, FFN gate/up, FFN
// down) at batches around the switch and bench's 512.
func BenchmarkGemmQ8Alt(b *testing.B) {
	k, err := ByName("avx2")
	if err != nil {
		b.Skip("no avx2 path on this CPU")
	}
	const typ = ggml.Q8_0
	r := rand.New(rand.NewPCG(131, 132))
	signed := k.gemmFor(typ)
	i16 := signed.big
	benchGemmPair(b, typ, r, []int{4, 16, 64, 128, 512}, gemmRival{"signed", signed, signed.kb}, gemmRival{"int16", i16, i16.kb})
}
