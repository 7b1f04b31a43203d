package kernels

import "testing"

// TestIQ3XXSSignMask: the AVX2 IQ3_XXS sign table spreads each ksigns
// entry's bits to 0x00/0xff bytes, and ksigns itself is the seven index
// bits plus their parity (ggml's construction).
func TestIQ3XXSSignMask(t *testing.T) {
	for i, m := range iq3xxsSignMask {
		s := kSigns[i]
		par := 0
		for j := 0; j < 7; j++ {
			par ^= i >> j & 1
		}
		if int(s) != i|par<<7 {
			t.Fatalf("ksigns[%d] = %#x, want %#x", i, s, i|par<<7)
		}
		for j := 0; j < 8; j++ {
			want := uint64(0)
			if s>>j&1 != 0 {
				want = 0xff
			}
			if got := m >> (8 * j) & 0xff; got != want {
				t.Fatalf("iq3xxsSignMask[%d] byte %d = %#x, want %#x", i, j, got, want)
			}
		}
	}
}
