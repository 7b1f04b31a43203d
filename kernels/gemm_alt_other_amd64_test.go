//go:build !linux

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// The A/B MatMul harness (gemm_alt_amd64_test.go) measures CPU time with
// Linux's getrusage; elsewhere its benchmarks skip, and the correctness
// tests in the files that call it still build and run.

type gemmRival struct {
	name string
	g    *gemmRoutines
	kb   int
}

func benchGemmPair(b *testing.B, _ ggml.Type, _ *rand.Rand, _ []int, _, _ gemmRival) {
	b.Skip("the alternating CPU-time harness needs Linux's getrusage (gemm_alt_amd64_test.go)")
}
