package kernels

// The AVX2+FMA+F16C attention ops (ops_amd64.s). Both SIMD paths use them:
// the work is L1-resident f32 arithmetic where 256-bit vectors already
// saturate the load/store ports on the CPUs we target. archImpls only names
// a path "avx2"/"avx512" after checking AVX2, FMA3 and F16C.
const hasOpsAsm = true

// addScaledAVX2 does dst[i] += s*x[i] for n elements (VMULPS then VADDPS).
//
//go:noescape
func addScaledAVX2(dst, x *float32, n int, s float32)

// scoresF16AVX2 is (*Impl).ScoresF16 for hd a positive multiple of 16,
// nq > 0, n > 0; stride in bytes, ws in elements.
//
//go:noescape
func scoresF16AVX2(q *float32, nq, hd int, keys *byte, stride, n int, scale float32, out *float32, ws int)

// accumF16AVX2 is (*Impl).AccumF16 for hd a positive multiple of 16, nq > 0,
// n > 0; stride in bytes, ws in elements.
//
//go:noescape
func accumF16AVX2(out *float32, nq, hd int, w *float32, ws int, vals *byte, stride, n int)
