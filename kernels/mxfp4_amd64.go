package kernels

// MXFP4's amd64 routines (mxfp4_amd64.s, mxfp4gemm_amd64.s). The packed
// MatMuls reuse the 32-element layout's kernels with MXFP4's values packed
// as packGemm32MXFP4 defines: signed (offset 0) for avx2's |w|·sign(a, w)
// Q8_0 kernel, whose pairs stay exact for |w| ≤ 127, and + 128 for avx512's
// VPDPBUSD kernel, as IQ4_NL packs.

//go:noescape
func dotMXFP4Q8_0AVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4MXFP4Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)

// dotRows4MXFP4Q8_0AVX512 forms dotMXFP4Q8_0AVX2's int32 lanes by VPDPBUSD
// on a block pair per ZMM and finishes with its float steps, bit-identical
// to it (mxfp4_amd64.s).
//
//go:noescape
func dotRows4MXFP4Q8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)

// gemmPackMXFP4AVX512 is packGemm32MXFP4(128, ...) in AVX-512
// (mxfp4gemm_amd64.s), the avx512 path's packer.
//
//go:noescape
func gemmPackMXFP4AVX512(nblk int, w *byte, ws int, dst *byte)

// gemmPackMXFP4AVX2 is packGemm32MXFP4(0, ...) in AVX2
// (mxfp4gemm_amd64.s), the avx2 path's packer.
//
//go:noescape
func gemmPackMXFP4AVX2(nblk int, w *byte, ws int, dst *byte)
