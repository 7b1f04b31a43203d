package kernels

import (
	"testing"

	"github.com/klauspost/cpuid/v2"

	"github.com/memvanta/memvanta/core/ggml"
)

// The avx512 path, derived from avx2 by avx512Rows, keeps a four-weight-row
// MatVec routine for every type avx2 has one for (its own for Q4_0/Q8_0,
// Q2_K, Q4_K, Q5_K and Q6_K, which form the same exact integers and float steps as the
// AVX2 and AVX-512 dots, and by inheritance for
// IQ4_NL and IQ4_XS), except the K-quants whose AVX-512 one-row dot
// streams faster (see avx512Rows), which must then have none. The table is built here even on a CPU
// without AVX-512 (nothing is executed); that the routines match the
// avx512 dots bit for bit is TestDotRows4MatchesDot's on AVX-512 machines.
func TestAVX512KeepsRows4(t *testing.T) {
	if !cpuid.CPU.Supports(cpuid.AVX2, cpuid.FMA3, cpuid.F16C) {
		t.Skip("no AVX2")
	}
	avx2, err := ByName("avx2")
	if err != nil {
		t.Fatal(err)
	}
	avx512 := derive(avx2, "avx512", avx512Rows, avx512Ops)
	oneRow := map[ggml.Type]bool{ggml.Q3_K: true}
	n := 0
	for _, typ := range Executable() {
		if avx2.DotRows4(typ) == nil {
			continue
		}
		n++
		switch has := avx512.DotRows4(typ) != nil; {
		case !has && !oneRow[typ]:
			t.Errorf("avx512 path has no four-row MatVec routine for %s (avx2 has one)", typ)
		case has && oneRow[typ]:
			t.Errorf("avx512 path has a four-row MatVec routine for %s, which its AVX-512 one-row dot outruns", typ)
		}
	}
	if n < 9 {
		t.Errorf("avx2 has four-row MatVec routines for %d types, want the 9 of Q4_0, Q8_0, Q2_K..Q6_K, IQ4_NL, IQ4_XS", n)
	}
}
