package kernels

import "unsafe"

// MXFP4's amd64 routines (mxfp4_amd64.s). The packed MatMuls reuse the
// 32-element layout's kernels with MXFP4's values packed by
// packGemm32MXFP4: signed (offset 0) for avx2's |w|·sign(a, w) Q8_0 kernel,
// whose pairs stay exact for |w| ≤ 127, and + 128 for avx512's VPDPBUSD
// kernel, as IQ4_NL packs.

//go:noescape
func dotMXFP4Q8_0AVX2(nb int, w, a *byte) float32

//go:noescape
func dotRows4MXFP4Q8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)

// gemmPackMXFP4Signed and gemmPackMXFP4U128 adapt packGemm32MXFP4 to the
// asmPack convention; newGemm has checked that the 16 rows of nblk blocks
// and the nblk packed blocks lie inside the caller's slices.
func gemmPackMXFP4Signed(nblk int, w *byte, ws int, dst *byte) {
	packGemm32MXFP4(0, nblk, unsafe.Slice(w, (gemmTileRows-1)*ws+nblk*mxfp4BlockBytes), ws, unsafe.Slice(dst, nblk*gemmBlockB))
}

func gemmPackMXFP4U128(nblk int, w *byte, ws int, dst *byte) {
	packGemm32MXFP4(128, nblk, unsafe.Slice(w, (gemmTileRows-1)*ws+nblk*mxfp4BlockBytes), ws, unsafe.Slice(dst, nblk*gemmBlockB))
}

// dotRows4MXFP4Q8_0AVX512 forms dotMXFP4Q8_0AVX2's int32 lanes by VPDPBUSD
// on a block pair per ZMM and finishes with its float steps, bit-identical
// to it (mxfp4_amd64.s).
//
//go:noescape
func dotRows4MXFP4Q8_0AVX512(nb int, w, a *byte, stride int, y *[4]float32)
