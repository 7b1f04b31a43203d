package model

import (
	"math"

	"github.com/memvanta/memvanta/kernels"
)

// YaRN RoPE scaling (rope.scaling.type yarn: gpt-oss, and any architecture
// whose file declares it), as ggml_rope_ext computes it with llama.cpp's
// context parameters: ext_factor 1, beta_fast 32, beta_slow 1, n_ctx_orig
// = rope.scaling.original_context_length (default the training context).
// Each frequency pair i blends the interpolated angle (freq_scale·θ) with
// the extrapolated one (θ) by a ramp that is 1 for the high-frequency
// pairs below the "fast" correction dimension and 0 above the "slow" one,
// and every cos/sin is multiplied by
//
//	mscale = attn_factor · (1 + 0.1·ln(1/freq_scale)),
//
// where llama.cpp sets attn_factor = mscale(factor)/(1 + 0.1·ln factor) ·
// rope.scaling.attn_factor, mscale(f) being 1 + 0.1·ln f for f > 1 and 1
// otherwise (so for an upscaling factor the two cancel up to rounding, and
// the magnitude correction is YaRN's 1 + 0.1·ln factor). Every step is
// rounded to f32 as ggml's f32 code does. The rotation itself is
// kernels.Rope.ApplyCache; only the cos/sin cache differs.
type yarn struct {
	corr   [2]float32 // ramp ends: correction dimensions for beta_fast and beta_slow
	mscale float32
}

const yarnBetaFast, yarnBetaSlow = 32, 1

func logf(x float32) float32 { return float32(math.Log(float64(x))) }

// newYaRN prepares the cache parameters of a RoPE r (one per distinct
// base and scale: the sliding layers may have their own base).
func newYaRN(c Config, r kernels.Rope) yarn {
	scale := r.Scale
	if scale == 0 {
		scale = 1
	}
	factor := 1 / c.RopeFreqScale
	af := float32(1)
	if factor > 1 {
		af = 0.1*logf(factor) + 1
	}
	af *= 1 / (1 + 0.1*logf(factor))
	if c.RopeAttnFactor != 0 {
		af *= c.RopeAttnFactor
	}
	orig := c.RopeOrigCtx
	if orig == 0 {
		orig = c.NCtxTrain
	}
	corrDim := func(beta float32) float32 {
		return float32(r.Dims) * logf(float32(orig)/(beta*2*float32(math.Pi))) / (2 * logf(r.Base))
	}
	lo := float32(math.Floor(float64(corrDim(yarnBetaFast))))
	hi := float32(math.Ceil(float64(corrDim(yarnBetaSlow))))
	return yarn{corr: [2]float32{max(0, lo), min(float32(r.Dims-1), hi)}, mscale: af * (1 + 0.1*logf(1/scale))}
}

// cache fills cs with r's cos, sin pairs for position pos under YaRN
// (kernels.Rope.Cache's layout and theta recurrence).
func (y *yarn) cache(r *kernels.Rope, pos int, cs []float32) {
	scale := r.Scale
	if scale == 0 {
		scale = 1
	}
	thetaScale := float32(math.Pow(float64(r.Base), float64(float32(-2)/float32(r.Dims))))
	theta := float32(pos)
	den := max(0.001, y.corr[1]-y.corr[0])
	for i := 0; i < r.Dims/2; i++ {
		ff := float32(1)
		if r.FreqFactors != nil {
			ff = r.FreqFactors[i]
		}
		ext := theta / ff
		interp := scale * ext
		ramp := 1 - min(1, max(0, (float32(i)-y.corr[0])/den)) // × ext_factor 1
		t := float32(interp*(1-ramp)) + float32(ext*ramp)
		cs[2*i] = float32(math.Cos(float64(t))) * y.mscale
		cs[2*i+1] = float32(math.Sin(float64(t))) * y.mscale
		theta *= thetaScale
	}
}
