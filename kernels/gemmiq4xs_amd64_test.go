//go:build linux

package kernels

import (
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
