package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// The routines of rows4k_amd64.s equal four calls of the avx2 path's
// one-row routine bit for bit, whether or not the dispatch table uses them
// (TestDotRows4MatchesDot covers them through the table).
func TestRows4KMatchesAVX2Dot(t *testing.T) {
	if !cpuid.CPU.Supports(cpuid.AVX2, cpuid.FMA3, cpuid.F16C) {
		t.Skip("no AVX2")
	}
	k, err := ByName("avx2")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(211, 212))
	for _, d := range avx2Rows4K {
		checkFourRowRoutine(t, r, rows4Kind, "avx2 (direct)", d.t, wrapAsmRows4(d.t, d.f), k.Dot(d.t))
	}
}
