package kernels

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// TestMXFP4PackMatchesGo: the AVX-512 and AVX2 packers write
// packGemm32MXFP4(128, ...)'s and packGemm32MXFP4(0, ...)'s bytes, for padded row strides and every
// exponent byte.
func TestMXFP4PackMatchesGo(t *testing.T) {
	if !cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL) {
		t.Skip("no AVX-512")
	}
	r := rand.New(rand.NewPCG(121, 122))
	for _, nblk := range []int{1, 2, 3, 8, 31} {
		for _, pad := range []int{0, 5, 17} {
			ws := nblk*mxfp4BlockBytes + pad
			w := rawBytes(r, gemmTileRows*ws)
			want := make([]byte, nblk*gemmBlockB)
			got := make([]byte, nblk*gemmBlockB)
			packGemm32MXFP4(128, nblk, w, ws, want)
			gemmPackMXFP4AVX512(nblk, &w[0], ws, &got[0])
			comparePack(t, "avx512", nblk, ws, got, want)
			packGemm32MXFP4(0, nblk, w, ws, want)
			gemmPackMXFP4AVX2(nblk, &w[0], ws, &got[0])
			comparePack(t, "avx2", nblk, ws, got, want)
		}
	}
}

func comparePack(t *testing.T, name string, nblk, ws int, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s nblk %d ws %d: byte %d (block %d, offset %d) = %#x, Go packer %#x", name, nblk, ws, i, i/gemmBlockB, i%gemmBlockB, got[i], want[i])
			}
		}
	}
}
