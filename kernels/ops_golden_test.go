package kernels

// f32 ops against llama.cpp's ggml (testdata/golden/ops.json from
// gen_ops.py, which runs ggml graphs through the prebuilt libggml).

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

type opsGolden struct {
	RMSNorm []struct {
		N         int
		Eps       float32
		X, W, Out string
	}
	Softmax []struct {
		N      int
		X, Out string
	}
	SwiGLU []struct {
		N             int
		Gate, Up, Out string
	}
	Rope []struct {
		Head, Heads, Dims int
		NeoX              bool
		Base, Scale       float32
		Positions         []int
		X, Out, FF        string
	}
}

func loadOps(t *testing.T) *opsGolden {
	b, err := os.ReadFile("testdata/golden/ops.json")
	if err != nil {
		t.Fatalf("ops golden: %v (regenerate with testdata/golden/gen_ops.py)", err)
	}
	var g opsGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// ulpDiff is |a-b| in units of u·max(|a|,|b|), i.e. relative error in
// units of float32 roundoff.
func ulpDiff(a, b float32) float64 {
	if a == b {
		return 0
	}
	m := math.Max(math.Abs(float64(a)), math.Abs(float64(b)))
	return math.Abs(float64(a)-float64(b)) / (m * u)
}

// Tolerances, in units of u (f32 roundoff) relative to the value:
//   - RMSNorm: the same f32/f64 operations in the same order as ggml's
//     rms_norm followed by mul, so bit-exact.
//   - Softmax: per element, ggml's SIMD expf (≤ 2u) vs ours (≤ 0.5u: f64 exp
//     rounded once), plus 1/sum and the scale multiply on each side (2u + 2u);
//     x−max is the same f32 subtraction on both sides: ≤ 8u.
//   - SwiGLU: exp (≤ 2u vs 0.5u), 1+e, divide and multiply on each side: ≤ 8u.
//   - RoPE: θ is the same sequence of f32 operations on both sides (pos,
//     ×θscale per pair, ÷factor, ×freq_scale), so only cos/sin rounding (glibc
//     cosf/sinf ≤ 1u, ours 0.5u) and the two products and sum per output
//     differ: ≤ 6u·|(x0, x1)| absolute.
func TestGoldenOps(t *testing.T) {
	g := loadOps(t)
	for _, c := range g.RMSNorm {
		x, w, want := f32s(b64d(t, c.X)), f32s(b64d(t, c.W)), f32s(b64d(t, c.Out))
		out := make([]float32, c.N)
		RMSNorm(out, x, w, c.Eps)
		for i := range out {
			if math.Float32bits(out[i]) != math.Float32bits(want[i]) {
				t.Fatalf("rmsnorm n=%d [%d] = %g, ggml %g", c.N, i, out[i], want[i])
			}
		}
	}
	for _, c := range g.Softmax {
		x, want := f32s(b64d(t, c.X)), f32s(b64d(t, c.Out))
		Softmax(x)
		for i := range x {
			if d := ulpDiff(x[i], want[i]); !(d <= 8) {
				t.Fatalf("softmax n=%d [%d] = %g, ggml %g (%.1fu)", c.N, i, x[i], want[i], d)
			}
		}
	}
	for _, c := range g.SwiGLU {
		gate, up, want := f32s(b64d(t, c.Gate)), f32s(b64d(t, c.Up)), f32s(b64d(t, c.Out))
		SiLUMul(gate, up)
		for i := range gate {
			if d := ulpDiff(gate[i], want[i]); !(d <= 8) {
				t.Fatalf("swiglu n=%d [%d] = %g, ggml %g (%.1fu)", c.N, i, gate[i], want[i], d)
			}
		}
	}
	for _, c := range g.Rope {
		x, want := f32s(b64d(t, c.X)), f32s(b64d(t, c.Out))
		r := Rope{Dims: c.Dims, Base: c.Base, Scale: c.Scale, NeoX: c.NeoX}
		if c.FF != "" {
			r.FreqFactors = f32s(b64d(t, c.FF))
		}
		if err := r.Check(c.Head); err != nil {
			t.Fatal(err)
		}
		per := c.Head * c.Heads
		for ti, pos := range c.Positions {
			tok := x[ti*per : (ti+1)*per]
			orig := append([]float32(nil), tok...)
			r.Apply(tok, c.Head, pos)
			for h := 0; h < c.Heads; h++ {
				for i := 0; i < c.Dims/2; i++ {
					a, b := h*c.Head+2*i, h*c.Head+2*i+1
					if c.NeoX {
						a, b = h*c.Head+i, h*c.Head+i+c.Dims/2
					}
					tol := 6 * u * math.Hypot(float64(orig[a]), float64(orig[b]))
					for _, j := range []int{a, b} {
						if d := math.Abs(float64(tok[j] - want[ti*per+j])); !(d <= tol) {
							t.Fatalf("rope %+v pos %d head %d elem %d = %g, ggml %g (diff %g > %g)",
								r, pos, h, j-h*c.Head, tok[j], want[ti*per+j], d, tol)
						}
					}
				}
				for j := h*c.Head + c.Dims; j < (h+1)*c.Head; j++ {
					if tok[j] != want[ti*per+j] {
						t.Fatalf("rope pos %d head %d: unrotated elem %d = %g, ggml %g", pos, h, j-h*c.Head, tok[j], want[ti*per+j])
					}
				}
			}
		}
	}
}
