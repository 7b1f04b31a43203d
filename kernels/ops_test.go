package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

func relClose(got float32, want float64, rel float64) bool {
	return math.Abs(float64(got)-want) <= rel*math.Abs(want)+1e-30
}

func TestRMSNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	for _, n := range []int{1, 5, 64, 4096} {
		x := randActivations(r, n)
		w := randActivations(r, n)
		const eps = 1e-5
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		scale := 1 / math.Sqrt(ss/float64(n)+eps)
		out := make([]float32, n)
		RMSNorm(out, x, w, eps)
		noW := make([]float32, n)
		RMSNorm(noW, x, nil, eps)
		// f32 steps: square (1u each, summed in f64), mean, +eps, sqrt,
		// reciprocal, ×scale, ×weight: ≤ 8u relative.
		for i := range x {
			if !relClose(out[i], float64(x[i])*scale*float64(w[i]), 8*u) || !relClose(noW[i], float64(x[i])*scale, 7*u) {
				t.Fatalf("n=%d i=%d: %g / %g, want %g / %g", n, i, out[i], noW[i], float64(x[i])*scale*float64(w[i]), float64(x[i])*scale)
			}
		}
		// In place.
		RMSNorm(x, x, w, eps)
		for i := range x {
			if x[i] != out[i] {
				t.Fatal("in-place RMSNorm differs")
			}
		}
	}
}

func TestSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	x := randActivations(r, 300)
	x[7] = float32(math.Inf(-1))
	want := make([]float64, len(x))
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var sum float64
	for i, v := range x {
		want[i] = math.Exp(float64(v) - m)
		sum += want[i]
	}
	Softmax(x)
	for i := range x {
		// exp rounded (1u) after x-max (1u, amplified by |x-max| ≤ ~60 here)
		// and one scale multiply: well under 1e-5 relative.
		if !relClose(x[i], want[i]/sum, 1e-5) {
			t.Fatalf("softmax[%d] = %g, want %g", i, x[i], want[i]/sum)
		}
	}
	if x[7] != 0 {
		t.Errorf("masked entry = %g", x[7])
	}
	allMasked := []float32{float32(math.Inf(-1)), float32(math.Inf(-1))}
	Softmax(allMasked)
	if allMasked[0] != 0 || allMasked[1] != 0 {
		t.Errorf("all-masked row = %v", allMasked)
	}
	Softmax(nil)
}

func TestSiLUMulAddScale(t *testing.T) {
	g := []float32{-20, -1, 0, 0.5, 3, 30}
	up := []float32{1, 2, 3, -4, 5, 0.5}
	want := make([]float64, len(g))
	for i := range g {
		want[i] = float64(g[i]) / (1 + math.Exp(-float64(g[i]))) * float64(up[i])
	}
	SiLUMul(g, up)
	for i := range g {
		if !relClose(g[i], want[i], 6*u) {
			t.Errorf("silu*up[%d] = %g, want %g", i, g[i], want[i])
		}
	}
	a := []float32{1, 2, 3}
	Add(a, []float32{0.5, -2, 1})
	Scale(a, 2)
	AddScaled(a, []float32{1, 1, 1}, -1)
	if a[0] != 2 || a[1] != -1 || a[2] != 7 {
		t.Errorf("Add/Scale/AddScaled = %v", a)
	}
	if d := DotF32([]float32{1, 2, 3}, []float32{4, 5, 6}); d != 32 {
		t.Errorf("DotF32 = %g", d)
	}
}

func TestArgmax(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		x    []float32
		want int
	}{
		{nil, -1}, {[]float32{nan}, -1}, {[]float32{1, 3, 3, 2}, 1},
		{[]float32{nan, -5, -4}, 2}, {[]float32{float32(math.Inf(-1))}, 0},
	}
	for _, c := range cases {
		if got := Argmax(c.x); got != c.want {
			t.Errorf("Argmax(%v) = %d, want %d", c.x, got, c.want)
		}
	}
}

// TestRoPE checks rotation against the definition θ_i = pos·scale·base^(-2i/d)/ff_i
// evaluated in float64. ggml (and we) build θ by repeated f32 multiplication,
// so θ_i carries up to (2i+3)·u relative error; the rotated values then err
// by at most |Δθ|·|(x0,x1)| plus ~4u·|(x0,x1)| from the f32 trig and products.
func TestRoPE(t *testing.T) {
	r := rand.New(rand.NewPCG(75, 76))
	const headDim, heads = 128, 3
	for _, c := range []struct {
		name string
		rp   Rope
		pos  int
	}{
		{"llama", Rope{Dims: 128, Base: 10000}, 17},
		{"neox", Rope{Dims: 128, Base: 1000000, NeoX: true}, 300},
		{"partial+scale", Rope{Dims: 64, Base: 10000, Scale: 0.25}, 1000},
		{"freqfactors", Rope{Dims: 128, Base: 500000, FreqFactors: func() []float32 {
			f := make([]float32, 64)
			for i := range f {
				f[i] = 1 + float32(i%8)
			}
			return f
		}()}, 77},
		{"pos0", Rope{Dims: 128, Base: 10000}, 0},
	} {
		if err := c.rp.Check(headDim); err != nil {
			t.Fatal(err)
		}
		x := randActivations(r, headDim*heads)
		orig := append([]float32(nil), x...)
		c.rp.Apply(x, headDim, c.pos)
		scale := float64(c.rp.Scale)
		if scale == 0 {
			scale = 1
		}
		half := c.rp.Dims / 2
		for h := 0; h < heads; h++ {
			o, v := orig[h*headDim:(h+1)*headDim], x[h*headDim:(h+1)*headDim]
			for i := 0; i < half; i++ {
				a, b := 2*i, 2*i+1
				if c.rp.NeoX {
					a, b = i, i+half
				}
				ff := 1.0
				if c.rp.FreqFactors != nil {
					ff = float64(c.rp.FreqFactors[i])
				}
				theta := float64(c.pos) * scale * math.Pow(float64(c.rp.Base), -2*float64(i)/float64(c.rp.Dims)) / ff
				cs, sn := math.Cos(theta), math.Sin(theta)
				w0 := float64(o[a])*cs - float64(o[b])*sn
				w1 := float64(o[a])*sn + float64(o[b])*cs
				norm := math.Hypot(float64(o[a]), float64(o[b]))
				tol := (float64(2*i+3)*u*math.Abs(theta) + 6*u) * norm
				if math.Abs(float64(v[a])-w0) > tol || math.Abs(float64(v[b])-w1) > tol {
					t.Fatalf("%s head %d pair %d: (%g,%g) want (%g,%g) tol %g", c.name, h, i, v[a], v[b], w0, w1, tol)
				}
			}
			for i := c.rp.Dims; i < headDim; i++ {
				if v[i] != o[i] {
					t.Fatalf("%s: unrotated dim %d changed", c.name, i)
				}
			}
		}
	}
	bad := []Rope{{Dims: 3, Base: 1e4}, {Dims: 256, Base: 1e4}, {Dims: 64, Base: 0}, {Dims: 64, Base: 1e4, FreqFactors: make([]float32, 3)}}
	for _, b := range bad {
		if err := b.Check(128); err == nil {
			t.Errorf("Check(%+v) accepted", b)
		}
	}
}
