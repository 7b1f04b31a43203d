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

// accumF16AVX2 is (*Impl).AccumF16 for hd a positive multiple of 16, nq > 0,
// n > 0; stride in bytes, ws in elements.
//
//go:noescape
func accumF16AVX2(out *float32, nq, hd int, w *float32, ws int, vals *byte, stride, n int)

// maxAVX2 returns the largest of n floats (n a positive multiple of 8).
//
//go:noescape
func maxAVX2(x *float32, n int) float32

// expSubSumAVX2 replaces x[i] by e^(x[i]−m) (vector exp, see EXP8) for n
// a multiple of 8 and returns their float64 sum.
//
//go:noescape
func expSubSumAVX2(x *float32, n int, m float32) float64

// scaleAVX2 multiplies n floats (a multiple of 8) by s.
//
//go:noescape
func scaleAVX2(x *float32, n int, s float32)

// siluMulAVX2 is SiLUMul for n a multiple of 8 with the vector exp.
//
//go:noescape
func siluMulAVX2(gate, up *float32, n int)

// quantQ8_0AVX2 encodes nb blocks of 32 floats as Q8_0 (bit-exact with
// quantQ8_0 for finite inputs).
//
//go:noescape
func quantQ8_0AVX2(x *float32, nb int, dst *byte)

// f16RowAVX2 encodes n floats (a multiple of 8) as F16, bit-exact with F32ToF16.
//
//go:noescape
func f16RowAVX2(x *float32, n int, dst *byte)

// roundF16AVX2 rounds n floats (a multiple of 8) to F16 precision.
//
//go:noescape
func roundF16AVX2(dst, x *float32, n int)

// accumF16x64AVX512 is (*Impl).AccumF16 restricted to one 64-column slab
// (output rows os bytes apart), nq > 0, n > 0 on AVX-512, bit-identical to
// accumF16AVX2.
//
//go:noescape
func accumF16x64AVX512(out *float32, nq int, w *float32, ws int, vals *byte, stride, n, os int)

// scoresF16x64AVX512 is (*Impl).ScoresF16 for hd == 64, nq a positive
// multiple of 4, n > 0 on AVX-512.
//
//go:noescape
func scoresF16x64AVX512(q *float32, nq int, keys *byte, stride, n int, scale float32, out *float32, ws int)

// scoresF16x64AVX2 is (*Impl).ScoresF16 for hd == 64, nq a positive
// multiple of 4, n > 0.
//
//go:noescape
func scoresF16x64AVX2(q *float32, nq int, keys *byte, stride, n int, scale float32, out *float32, ws int)

// scoresF16x4AVX2 is (*Impl).ScoresF16 for hd a positive multiple of 8, nq
// a positive multiple of 4, n > 0.
//
//go:noescape
func scoresF16x4AVX2(q *float32, nq, hd int, keys *byte, stride, n int, scale float32, out *float32, ws int)
