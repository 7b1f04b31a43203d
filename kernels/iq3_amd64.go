package kernels

// The IQ3 AVX2 routines (iq3_amd64.s): for IQ3_XXS and IQ3_S a one-row dot
// and a four-weight-row MatVec routine bit-identical to it and to the
// scalar dot. The avx512 path keeps them.

//go:noescape
func dotIQ3_XXSQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4IQ3_XXSQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotIQ3_SQ8_KAVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4IQ3_SQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

// The smallest batches the grid i-quants' packed MatMuls (gemmiq.go) take:
// their one-row dots cost more per block than the K-quants' (a gather per
// 32 weights), so the packed kernels pay off from smaller batches than
// Q6_K's own 16 / 4. Chosen, not yet measured against BenchmarkGemmAlt.
const (
	gemmIQMinBatch       = 4
	gemmIQMinBatchAVX512 = 2
)

// iq3xxsSignMask is ksigns (kSigns) spread to bytes: byte j of entry i
// is 0xff where bit j of ksigns[i] is set, so an IQ3_XXS sign field is one
// 8-byte load (iq3_amd64.s). Built once at initialization, never written.
var iq3xxsSignMask = func() (t [128]uint64) {
	for i, s := range kSigns {
		for j := 0; j < 8; j++ {
			if s>>j&1 != 0 {
				t[i] |= 0xff << (8 * j)
			}
		}
	}
	return t
}()
