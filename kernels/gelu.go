package kernels

import (
	"fmt"
	"math"
	"sync"
)

// GeLUMul is GeGLU in place: gate[i] = gelu(gate[i]) × up[i], with gelu the
// tanh approximation as ggml computes it on the CPU: arguments ≤ -10 give
// 0, ≥ 10 give the argument itself, and others are rounded to f16 and
// looked up in a table of f16-rounded gelu values (ggml's GGML_GELU_FP16
// path, always compiled in), so results match llama.cpp's bit for bit
// wherever both use the same gate value.
func GeLUMul(gate, up []float32) {
	if len(up) < len(gate) {
		panic(fmt.Sprintf("kernels: GeLUMul: len(gate)=%d > len(up)=%d", len(gate), len(up)))
	}
	t := geluTable()
	for i, g := range gate {
		switch {
		case g <= -10:
			gate[i] = 0
		case g >= 10:
			gate[i] = g * up[i]
		default:
			gate[i] = F16ToF32(t[F32ToF16(g)]) * up[i]
		}
	}
}

// geluF32 is ggml_gelu_f32: 0.5·x·(1 + tanh(sqrt(2/π)·x·(1 + 0.044715·x²)))
// evaluated in f32 steps (tanh in f64, rounded).
func geluF32(x float32) float32 {
	const a, s = float32(0.044715), float32(0.79788456080286535587989211986876)
	in := float32(float32(s*x) * float32(1+float32(float32(a*x)*x)))
	th := float32(math.Tanh(float64(in)))
	return float32(float32(0.5*x) * float32(1+th))
}

// geluTable maps every f16 bit pattern to f16(gelu(x)), built on first use
// (128 KiB) and never changed after.
var geluTable = sync.OnceValue(func() *[1 << 16]uint16 {
	var t [1 << 16]uint16
	for i := range t {
		t[i] = F32ToF16(geluF32(F16ToF32(uint16(i))))
	}
	return &t
})
