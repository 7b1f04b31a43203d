package kernels

import (
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// The avx512 path, derived from avx2 by avx512Rows, keeps a four-weight-row
// MatVec routine for every type avx2 has one for: its own for Q4_0, Q8_0
// and Q2_K..Q6_K, which form the same exact integers and float steps as the
// AVX2 and AVX-512 dots, and for IQ4_XS and IQ4_NL, which form the AVX2
// dot's integers and finish with its float steps. (Until the AVX-512 Q2_K and Q3_K routines, those two ran the
// one-row dot, which streamed faster than the AVX2 routines; see
// avx512Rows.) The table is built here even on a CPU without AVX-512
// (nothing is executed); that the routines match the avx512 dots bit for
// bit is TestDotRows4MatchesDot's on AVX-512 machines.
func TestAVX512KeepsRows4(t *testing.T) {
	if !cpuid.CPU.Supports(cpuid.AVX2, cpuid.FMA3, cpuid.F16C) {
		t.Skip("no AVX2")
	}
	avx2, err := ByName("avx2")
	if err != nil {
		t.Fatal(err)
	}
	avx512 := derive(avx2, "avx512", avx512Rows, avx512Ops)
	n := 0
	for _, typ := range Executable() {
		if avx2.DotRows4(typ) == nil {
			continue
		}
		n++
		if avx512.DotRows4(typ) == nil {
			t.Errorf("avx512 path has no four-row MatVec routine for %s (avx2 has one)", typ)
		}
	}
	if n < 9 {
		t.Errorf("avx2 has four-row MatVec routines for %d types, want the 9 of Q4_0, Q8_0, Q2_K..Q6_K, IQ4_NL, IQ4_XS", n)
	}
}
