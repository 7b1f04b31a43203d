package kernels

import (
	"fmt"
	"math"
)

// The f32 vector ops follow ggml's CPU definitions (ops.cpp / vec.h) in
// operation order and precision, so the graph's activations track llama.cpp's
// to rounding. float32(a*b) forms keep Go from fusing into FMAs.

// RMSNorm writes out[i] = x[i] / sqrt(mean(x²) + eps) × weight[i]. As in
// ggml_compute_forward_rms_norm, the squares are summed in float64, the mean
// and scale are f32, and the weight multiply (a separate ggml_mul in
// llama.cpp) is applied to the already-rounded normalised value. weight may
// be nil (no scale). out may alias x.
func RMSNorm(out, x, weight []float32, eps float32) {
	if len(out) < len(x) || (weight != nil && len(weight) < len(x)) {
		panic(fmt.Sprintf("kernels: RMSNorm: len(x)=%d, len(out)=%d, len(weight)=%d", len(x), len(out), len(weight)))
	}
	if len(x) == 0 {
		return
	}
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	if weight == nil {
		for i, v := range x {
			out[i] = v * scale
		}
		return
	}
	for i, v := range x {
		out[i] = float32(v*scale) * weight[i]
	}
}

// Softmax replaces x by exp(x - max) / Σ, summing in float64 and scaling by
// the f32 reciprocal as ggml_compute_forward_soft_max does. -Inf entries
// (masked positions) become 0; a row that is entirely -Inf becomes all 0
// instead of NaN.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	m := float32(math.Inf(-1))
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	if math.IsInf(float64(m), -1) {
		clear(x)
		return
	}
	var sum float64
	for i, v := range x {
		e := float32(math.Exp(float64(v - m)))
		x[i] = e
		sum += float64(e)
	}
	Scale(x, float32(1/sum))
}

// SiLUMul is SwiGLU in place: gate[i] = silu(gate[i]) × up[i], with
// silu(g) = g / (1 + e^-g) as ggml_silu_f32.
func SiLUMul(gate, up []float32) {
	if len(up) < len(gate) {
		panic(fmt.Sprintf("kernels: SiLUMul: len(gate)=%d > len(up)=%d", len(gate), len(up)))
	}
	for i, g := range gate {
		s := g / (1 + float32(math.Exp(float64(-g))))
		gate[i] = s * up[i]
	}
}

// Add adds x into dst element-wise.
func Add(dst, x []float32) {
	if len(x) < len(dst) {
		panic(fmt.Sprintf("kernels: Add: len(dst)=%d > len(x)=%d", len(dst), len(x)))
	}
	for i := range dst {
		dst[i] += x[i]
	}
}

// Scale multiplies x by s in place.
func Scale(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// AddScaled does dst += s×x (attention's weighted sum of values).
func AddScaled(dst, x []float32, s float32) {
	if len(x) < len(dst) {
		panic(fmt.Sprintf("kernels: AddScaled: len(dst)=%d > len(x)=%d", len(dst), len(x)))
	}
	for i := range dst {
		dst[i] += float32(s * x[i])
	}
}

// DotF32 is a plain f32 dot product of equal-length slices (attention scores),
// accumulated in float64 so it does not depend on the vector width.
func DotF32(a, b []float32) float32 {
	if len(b) < len(a) {
		panic(fmt.Sprintf("kernels: DotF32: len(a)=%d > len(b)=%d", len(a), len(b)))
	}
	var s0, s1 float64
	i := 0
	for ; i+1 < len(a); i += 2 {
		s0 += float64(a[i]) * float64(b[i])
		s1 += float64(a[i+1]) * float64(b[i+1])
	}
	if i < len(a) {
		s0 += float64(a[i]) * float64(b[i])
	}
	return float32(s0 + s1)
}

// Argmax returns the index of the first largest element, ignoring NaN, or -1
// for an empty (or all-NaN) slice.
func Argmax(x []float32) int {
	best := -1
	var bv float32
	for i, v := range x {
		if v != v {
			continue
		}
		if best < 0 || v > bv {
			best, bv = i, v
		}
	}
	return best
}

// Rope describes rotary position embedding as ggml_rope_ext applies it for
// llama-family models (no YaRN extrapolation: ext_factor 0, attn_factor 1).
type Rope struct {
	Dims  int     // rotated dimensions per head (n_rot); even, ≤ head size
	Base  float32 // freq_base (rope.freq_base), e.g. 10000
	Scale float32 // freq_scale = 1/(linear scaling factor); 0 means 1
	// NeoX pairs element i with i+Dims/2 (GPT-NeoX / Qwen2 ordering) instead
	// of with i+1 (original llama ordering).
	NeoX bool
	// FreqFactors, if not nil, divides each pair's angle (llama 3.1
	// rope_freqs); it has Dims/2 entries.
	FreqFactors []float32
	// AttnFactor multiplies every cos and sin (ggml's mscale: LongRoPE's
	// rope.scaling.attn_factor); 0 means 1.
	AttnFactor float32
}

// Check reports whether r can be applied to heads of headDim elements.
func (r *Rope) Check(headDim int) error {
	switch {
	case r.Dims <= 0 || r.Dims%2 != 0 || r.Dims > headDim:
		return fmt.Errorf("kernels: rope: rotated dims %d must be even and in (0, %d]", r.Dims, headDim)
	case !(r.Base > 0):
		return fmt.Errorf("kernels: rope: freq_base %v must be > 0", r.Base)
	case r.Scale < 0 || math.IsNaN(float64(r.Scale)):
		return fmt.Errorf("kernels: rope: freq_scale %v must be >= 0", r.Scale)
	case r.AttnFactor < 0 || math.IsNaN(float64(r.AttnFactor)):
		return fmt.Errorf("kernels: rope: attn factor %v must be >= 0", r.AttnFactor)
	case r.FreqFactors != nil && len(r.FreqFactors) != r.Dims/2:
		return fmt.Errorf("kernels: rope: %d freq factors for %d rotated dims (need %d)", len(r.FreqFactors), r.Dims, r.Dims/2)
	}
	return nil
}

// Cache fills cs (len ≥ Dims) with cos, sin pairs for position pos, in
// ggml_rope_cache_init's way: theta starts at pos and is multiplied by
// base^(-2/Dims) in f32 once per pair, then divided by the pair's frequency
// factor and multiplied by freq_scale.
func (r *Rope) Cache(pos int, cs []float32) {
	scale := r.Scale
	if scale == 0 {
		scale = 1
	}
	thetaScale := float32(math.Pow(float64(r.Base), float64(float32(-2)/float32(r.Dims))))
	theta := float32(pos)
	for i := 0; i < r.Dims/2; i++ {
		ff := float32(1)
		if r.FreqFactors != nil {
			ff = r.FreqFactors[i]
		}
		t := scale * (theta / ff)
		cs[2*i] = float32(math.Cos(float64(t)))
		cs[2*i+1] = float32(math.Sin(float64(t)))
		theta *= thetaScale
	}
	if m := r.AttnFactor; m != 0 && m != 1 {
		for i := range cs[:r.Dims] {
			cs[i] *= m
		}
	}
}

// Apply rotates every head in x (len(x) a multiple of headDim) for position
// pos; dimensions past Dims are left as they are. r must pass Check(headDim).
func (r *Rope) Apply(x []float32, headDim, pos int) {
	var buf [512]float32
	cs := buf[:]
	if r.Dims > len(buf) {
		cs = make([]float32, r.Dims)
	}
	r.Cache(pos, cs)
	r.ApplyCache(x, headDim, cs)
}

// ApplyCache is Apply with a precomputed Cache, so Q and K (and all heads)
// share one set of cos/sin evaluations.
func (r *Rope) ApplyCache(x []float32, headDim int, cs []float32) {
	if headDim <= 0 || len(x)%headDim != 0 || r.Dims > headDim || len(cs) < r.Dims {
		panic(fmt.Sprintf("kernels: rope: len(x)=%d headDim=%d dims=%d len(cache)=%d", len(x), headDim, r.Dims, len(cs)))
	}
	half := r.Dims / 2
	for h := 0; h+headDim <= len(x); h += headDim {
		v := x[h : h+headDim]
		for i := 0; i < half; i++ {
			c, s := cs[2*i], cs[2*i+1]
			a, b := 2*i, 2*i+1
			if r.NeoX {
				a, b = i, i+half
			}
			x0, x1 := v[a], v[b]
			v[a] = float32(x0*c) - float32(x1*s)
			v[b] = float32(x0*s) + float32(x1*c)
		}
	}
}
