package kernels

// MXFP4's NEON routines (mxfp4_arm64.s): ARMv8.0 ones for every arm64 CPU,
// SDOT ones where ASIMDDP is present (with the packed MatMul, whose packer
// packGemm32 hands MXFP4 to packGemm32MXFP4 with the +128 offset Q8_0's
// kernel expects).

//go:noescape
func dotMXFP4Q8_0NEON(nb int, w, a *byte) float32

//go:noescape
func dotRows4MXFP4Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4MXFP4Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotMXFP4Q8_0NEONDot(nb int, w, a *byte) float32

//go:noescape
func dotRows4MXFP4Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4MXFP4Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)
