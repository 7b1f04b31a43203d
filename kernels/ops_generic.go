//go:build !amd64

package kernels

// Without the amd64 assembly, (*Impl) attention ops always take their
// portable branch; these stubs only satisfy the compiler.
const hasOpsAsm = false

func addScaledAVX2(dst, x *float32, n int, s float32) {
	panic("kernels: no assembly ops on this architecture")
}

func accumF16AVX2(out *float32, nq, hd int, w *float32, ws int, vals *byte, stride, n int) {
	panic("kernels: no assembly ops on this architecture")
}

func maxAVX2(x *float32, n int) float32 { panic("kernels: no assembly ops on this architecture") }

func expSubSumAVX2(x *float32, n int, m float32) float64 {
	panic("kernels: no assembly ops on this architecture")
}

func scaleAVX2(x *float32, n int, s float32) { panic("kernels: no assembly ops on this architecture") }

func siluMulAVX2(gate, up *float32, n int) { panic("kernels: no assembly ops on this architecture") }

func quantQ8_0AVX2(x *float32, nb int, dst *byte) {
	panic("kernels: no assembly ops on this architecture")
}

func f16RowAVX2(x *float32, n int, dst *byte) { panic("kernels: no assembly ops on this architecture") }

func roundF16AVX2(dst, x *float32, n int) { panic("kernels: no assembly ops on this architecture") }

func accumF16x64AVX512(out *float32, nq int, w *float32, ws int, vals *byte, stride, n, os int) {
	panic("kernels: no assembly ops on this architecture")
}

func scoresF16x64AVX512(q *float32, nq int, keys *byte, stride, n int, scale float32, out *float32, ws int) {
	panic("kernels: no assembly ops on this architecture")
}

func scoresF16x64AVX2(q *float32, nq int, keys *byte, stride, n int, scale float32, out *float32, ws int) {
	panic("kernels: no assembly ops on this architecture")
}

func scoresF16x4AVX2(q *float32, nq, hd int, keys *byte, stride, n int, scale float32, out *float32, ws int) {
	panic("kernels: no assembly ops on this architecture")
}
