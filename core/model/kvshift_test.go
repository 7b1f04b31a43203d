package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/internal/archfixtures"
	"github.com/memvanta/memvanta/kernels"
)

// openShiftModel opens architecture a with the given number of layers and
// options; the same arguments give the same weights.
func openShiftModel(t testing.TB, a synth.Arch, layers int, opt Options) *Model {
	return openShiftShape(t, a, layers, 128, 2, opt)
}

// openShiftShape is openShiftModel with embd wide rows and kvHeads of the
// 4 heads' width.
func openShiftShape(t testing.TB, a synth.Arch, layers, embd, kvHeads int, opt Options) *Model {
	t.Helper()
	c := synth.Config{Embd: embd, Layers: layers, Heads: 4, KVHeads: kvHeads, FF: 128, Ctx: 4096, RopeBase: 10000, Eps: 1e-6,
		Type: ggml.F32, VocabSize: 300, Seed: 5, Quantize: kernels.Quantize, Arch: a}
	var buf bytes.Buffer
	if err := synth.Write(context.Background(), &buf, c, nil); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	f := parse(t, b)
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	w, err := MemWeightsFromBytes(f, b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(cfg, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// quantBound bounds |decode(encode(x)) - x| for every element of a head
// row whose elements are all at most amax in magnitude, from each
// encoding's rounding: F16 half an ulp (10 stored mantissa bits), Q8_0
// half a step of amax/127 plus its F16 scale's rounding over 127 steps,
// Q4_0 a whole step of amax/8 (ggml clips the largest value to 7 steps)
// plus its scale's rounding over 8 steps. The absolute term covers F16's
// subnormals.
func quantBound(t ggml.Type, amax float64) float64 {
	switch t {
	case ggml.F32:
		return amax * 0x1p-24
	case ggml.F16:
		return amax*0x1p-11 + 0x1p-25
	case ggml.Q8_0:
		return amax / 127 * (0.5 + 127*0x1p-11 + 1e-4)
	case ggml.Q4_0:
		return amax / 8 * (1 + 8*0x1p-11 + 1e-4)
	}
	panic(fmt.Sprint("quantBound: ", t))
}

// TestShiftKV: after ShiftKV, a one-layer model's cached keys and values
// are, within a bound derived from the encodings' and f32's rounding, the
// ones a fresh forward pass over the kept tokens at their new positions
// computes (for layer 0 a key depends only on its token and position, so
// the comparison is exact up to rounding), and attention of a query over
// the shifted cache matches attention over the fresh one within the bound
// those keys imply. Fixtures: llama's RoPE (adjacent pairs), qwen2's
// NeoX, phi3's partial NeoX rotation with LongRoPE factors and magnitude,
// llama3's frequency factors, gpt-oss's YaRN with sliding-window rings
// (two layers, the second a full-context one; its rows are checked to have
// moved), over F32, F16, Q8_0 and Q4_0 keys.
func TestShiftKV(t *testing.T) {
	ctx := context.Background()
	fixtures := map[string]archfixtures.Fixture{}
	for _, f := range archfixtures.All() {
		fixtures[f.Label] = f
	}
	cases := []struct {
		label       string
		layers, ctx int
		seq, keep   int
	}{
		{"llama-fused", 1, 512, 300, 5},
		{"qwen2", 1, 512, 300, 5},
		{"phi3", 1, 512, 300, 0},
		{"llama3", 1, 512, 257, 40},
		{"gpt-oss", 2, 2048, 700, 4}, // rings of 512: the sequence wraps them
		{"gemma3", 2, 2048, 600, 3},
	}
	for _, tc := range cases {
		fx, ok := fixtures[tc.label]
		if !ok {
			t.Fatalf("no fixture %s", tc.label)
		}
		for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0, ggml.Q4_0} {
			t.Run(fmt.Sprintf("%s/%s", tc.label, typ), func(t *testing.T) {
				opt := Options{Threads: 1, Batch: 1, Ctx: tc.ctx, KVType: typ}
				m := openShiftModel(t, fx.Arch, tc.layers, opt)
				opt.KVType = ggml.F32
				ref := openShiftModel(t, fx.Arch, tc.layers, opt)
				if err := m.CanShift(); err != nil {
					t.Fatal(err)
				}
				toks := make([]int32, tc.seq)
				for i := range toks {
					toks[i] = int32(1 + (i*37+i*i)%290)
				}
				if _, err := m.Forward(ctx, toks); err != nil {
					t.Fatal(err)
				}
				kv := m.KV()
				n := (tc.seq - tc.keep) / 2
				L := tc.seq - n
				// The rows each layer holds before the shift, by position.
				nh, hd := m.Cfg.NHeadKV, m.Cfg.HeadDim
				type rows struct{ k, v [][]byte }
				before := make([]map[int]rows, m.Cfg.NLayer)
				lo0 := 0
				if kv.ringCap > 0 {
					lo0 = kv.oldest
				}
				for l := range before {
					before[l] = map[int]rows{}
					from := 0
					if kv.ringed(l) {
						from = lo0
					}
					for p := from; p < tc.seq; p++ {
						var r rows
						for h := 0; h < nh; h++ {
							r.k = append(r.k, append([]byte(nil), kv.keyHead(l, p, h)...))
							r.v = append(r.v, append([]byte(nil), kv.valueHead(l, p, h)...))
						}
						before[l][p] = r
					}
				}
				if err := m.ShiftKV(kv, tc.keep, n); err != nil {
					t.Fatal(err)
				}
				if kv.Len() != L {
					t.Fatalf("after discarding %d of %d positions: Len %d", n, tc.seq, kv.Len())
				}
				kept := append(append([]int32(nil), toks[:tc.keep]...), toks[tc.keep+n:]...)
				fresh, err := m.NewKV(0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := m.SwapKV(fresh); err != nil {
					t.Fatal(err)
				}
				if _, err := m.Forward(ctx, kept); err != nil {
					t.Fatal(err)
				}
				if _, err := ref.Forward(ctx, kept); err != nil {
					t.Fatal(err)
				}
				old := func(p int) int {
					if p < tc.keep {
						return p
					}
					return p + n
				}
				first := 0 // first position the shifted cache holds in every layer
				if kv.ringCap > 0 {
					first = kv.oldest
					if need := max(0, L+1-kv.reach); first > need {
						t.Fatalf("rings hold from %d, the next position attends from %d", first, need)
					}
				}
				// Moved rows: values bit for bit; keys unchanged below keep.
				for l := 0; l < m.Cfg.NLayer; l++ {
					from := 0
					if kv.ringed(l) {
						from = first
					}
					for p := from; p < L; p++ {
						b, ok := before[l][old(p)]
						if !ok {
							t.Fatalf("layer %d: position %d came from %d, which the cache did not hold", l, p, old(p))
						}
						for h := 0; h < nh; h++ {
							if !bytes.Equal(kv.valueHead(l, p, h), b.v[h]) {
								t.Fatalf("layer %d position %d head %d: value not moved from position %d", l, p, h, old(p))
							}
							if p < tc.keep && !bytes.Equal(kv.keyHead(l, p, h), b.k[h]) {
								t.Fatalf("layer %d position %d head %d: kept key changed", l, p, h)
							}
						}
					}
				}
				// Layer 0 against the fresh pass (encoding typ) and the f32
				// reference (ref's F32 cache).
				ki := m.Kernels()
				rc := ref.KV()
				rot := m.Cfg.NRot
				ropeR := m.rope
				if m.Cfg.Sliding(0) {
					ropeR = m.ropeSWA
				}
				scale := float64(ropeR.Scale)
				if scale == 0 {
					scale = 1
				}
				ks, kf, kr := make([]float32, hd), make([]float32, hd), make([]float32, hd)
				const u = 0x1p-24
				from := 0
				if kv.ringed(0) {
					from = first
				}
				// The query position attends to [lo, L) (its window on a
				// sliding layer).
				lo := from
				if m.Cfg.Sliding(0) {
					lo = max(lo, L-m.Cfg.SlidingWindow+1)
				}
				keyBound := make([][]float64, L) // [position][head*hd+j]: |shifted - fresh| bound
				worst := 0.0
				for p := from; p < L; p++ {
					keyBound[p] = make([]float64, nh*hd)
					for h := 0; h < nh; h++ {
						if !bytes.Equal(kv.valueHead(0, p, h), fresh.valueHead(0, p, h)) {
							t.Fatalf("position %d head %d: shifted value differs from the fresh pass's", p, h)
						}
						must(t, ki.Dequantize(typ, kv.keyHead(0, p, h), ks))
						must(t, ki.Dequantize(typ, fresh.keyHead(0, p, h), kf))
						must(t, ki.Dequantize(ggml.F32, rc.keyHead(0, p, h), kr))
						amax := 0.0
						radius := make([]float64, hd) // each element's pair radius (itself past the rotated dims)
						for j := 0; j < hd; j++ {
							a, b := j, j
							if j < rot {
								switch {
								case m.rope.NeoX && j < rot/2:
									b = j + rot/2
								case m.rope.NeoX:
									a = j - rot/2
								default:
									a = j &^ 1
									b = a + 1
								}
							}
							radius[j] = math.Hypot(float64(kr[a]), float64(kr[b]))
							amax = max(amax, radius[j])
						}
						eq := quantBound(typ, amax*(1+1e-6))
						for j := 0; j < hd; j++ {
							// The fresh key is the reference encoded once.
							if d := math.Abs(float64(kf[j] - kr[j])); d > eq {
								t.Fatalf("position %d head %d elem %d: fresh key %v, f32 %v: |diff| %g > encoding bound %g", p, h, j, kf[j], kr[j], d, eq)
							}
							// The shifted key: the pair's first encoding (both
							// elements, rotated together), the angle error of
							// θ(old)+θ(-n) against θ(p) (each angle a product
							// of f32 factors, relative error at most (i+6)u for
							// pair i; base^(-2/rot)'s own rounding is common to
							// the three and cancels), the three rotations'
							// cos/sin and arithmetic (5u of the radius each),
							// and the second encoding.
							bnd := 3 * eq
							if j < rot {
								i := j / 2
								if m.rope.NeoX {
									i = j % (rot / 2)
								}
								ff := 1.0
								if ropeR.FreqFactors != nil {
									ff = float64(ropeR.FreqFactors[i])
								}
								omega := max(scale, 1) * math.Pow(float64(ropeR.Base), -2*float64(i)/float64(rot)) / ff
								dTheta := float64(old(p)+n+p) * omega * float64(i+6) * u * 1.01
								bnd += radius[j] * (dTheta + 15*u)
							}
							d := math.Abs(float64(ks[j] - kr[j]))
							if d > bnd {
								t.Fatalf("position %d (from %d) head %d elem %d: shifted key %v, recomputed %v: |diff| %g > bound %g", p, old(p), h, j, ks[j], kr[j], d, bnd)
							}
							worst = max(worst, d/max(bnd, 1e-30))
							keyBound[p][h*hd+j] = bnd + eq // shifted against fresh
						}
					}
				}
				// Attention of a query over positions [lo, L): scores differ
				// by at most Δ = Σ|q_j|·bound_j, so each softmax weight by a
				// factor within e^(±2Δ) and the output (values identical) by
				// at most (e^(2Δmax)-1)·max|v|.
				vs := make([]float32, hd)
				for h := 0; h < nh; h++ {
					q := make([]float64, hd)
					for j := range q {
						q[j] = math.Sin(float64(7*j+h)) * 2
					}
					score := func(c *KVCache, typ ggml.Type, p int) float64 {
						must(t, ki.Dequantize(typ, c.keyHead(0, p, h), ks))
						s := 0.0
						for j := range q {
							s += q[j] * float64(ks[j])
						}
						return s / math.Sqrt(float64(hd))
					}
					var ss, sf []float64
					dmax, vmax := 0.0, 0.0
					for p := lo; p < L; p++ {
						ss = append(ss, score(kv, typ, p))
						sf = append(sf, score(fresh, typ, p))
						d := 0.0
						for j := range q {
							d += math.Abs(q[j]) * keyBound[p][h*hd+j]
						}
						dmax = max(dmax, d/math.Sqrt(float64(hd)))
						must(t, ki.Dequantize(m.kvSpec.V, kv.valueHead(0, p, h), vs))
						for _, v := range vs {
							vmax = max(vmax, math.Abs(float64(v)))
						}
					}
					os, of := attend(t, ki, kv, m.kvSpec.V, h, lo, ss), attend(t, ki, fresh, m.kvSpec.V, h, lo, sf)
					bnd := (math.Exp(2*dmax)-1)*vmax + 1e-6*vmax
					for j := range os {
						if d := math.Abs(os[j] - of[j]); d > bnd {
							t.Fatalf("head %d: attention output %d over the shifted cache %v, fresh %v: |diff| %g > %g", h, j, os[j], of[j], d, bnd)
						}
					}
				}
				t.Logf("%d positions, keep %d, discard %d: worst key error %.3f of its bound", tc.seq, tc.keep, n, worst)
			})
		}
	}
}

// attend is softmax(scores)·V over layer 0's head h from position lo, in
// float64.
func attend(t *testing.T, ki *kernels.Impl, c *KVCache, vt ggml.Type, h, lo int, scores []float64) []float64 {
	t.Helper()
	mx := math.Inf(-1)
	for _, s := range scores {
		mx = max(mx, s)
	}
	out := make([]float64, c.headDim)
	v := make([]float32, c.headDim)
	sum := 0.0
	for i, s := range scores {
		w := math.Exp(s - mx)
		sum += w
		must(t, ki.Dequantize(vt, c.valueHead(0, lo+i, h), v))
		for j := range out {
			out[j] += w * float64(v[j])
		}
	}
	for j := range out {
		out[j] /= sum
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestShiftKVRefused: an encoder (no RoPE: bert; and nomic-bert, an
// encoder) cannot shift; bad ranges are errors; a shift that would need
// ring positions already overwritten is ErrShiftWindow and leaves the
// cache as it was.
func TestShiftKVRefused(t *testing.T) {
	for _, f := range archfixtures.All() {
		if !f.Encoder() {
			continue
		}
		m := openShiftModel(t, f.Arch, 1, Options{Threads: 1, Ctx: 64})
		if err := m.CanShift(); !errors.Is(err, ErrShiftUnsupported) {
			t.Fatalf("%s: CanShift = %v, want ErrShiftUnsupported", f.Label, err)
		}
		if err := m.ShiftKV(m.KV(), 0, 1); !errors.Is(err, ErrShiftUnsupported) {
			t.Fatalf("%s: ShiftKV = %v, want ErrShiftUnsupported", f.Label, err)
		}
	}
	var gptoss archfixtures.Fixture
	for _, f := range archfixtures.All() {
		if f.Label == "gpt-oss" {
			gptoss = f
		}
	}
	ctx := context.Background()
	m := openShiftModel(t, gptoss.Arch, 1, Options{Threads: 1, Batch: 16, Ctx: 2048, KVType: ggml.F16})
	toks := make([]int32, 1100)
	for i := range toks {
		toks[i] = int32(1 + i%250)
	}
	if _, err := m.Forward(ctx, toks); err != nil {
		t.Fatal(err)
	}
	kv := m.KV()
	for _, r := range [][2]int{{-1, 3}, {0, 0}, {1000, 101}} {
		if err := m.ShiftKV(kv, r[0], r[1]); err == nil || errors.Is(err, ErrShiftWindow) {
			t.Fatalf("ShiftKV(keep %d, n %d) of %d positions: %v, want a range error", r[0], r[1], kv.Len(), err)
		}
	}
	// Keeping 578 and discarding 520 leaves 580 positions whose window
	// reaches below 578, into positions the 512-slot rings lost at 588.
	snap := append([]byte(nil), kv.keyHead(0, 1000, 0)...)
	if err := m.ShiftKV(kv, 578, 520); !errors.Is(err, ErrShiftWindow) {
		t.Fatalf("ShiftKV past the rings: %v, want ErrShiftWindow", err)
	}
	if kv.Len() != 1100 || !bytes.Equal(kv.keyHead(0, 1000, 0), snap) {
		t.Fatalf("a refused shift changed the cache (Len %d)", kv.Len())
	}
	// The llama.cpp split (half of what follows keep) shifts.
	if err := m.ShiftKV(kv, 578, (1100-578)/2); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkShiftKV: one llama.cpp-sized shift (half of a full 4096-position
// cache moves) with TinyLlama's cache geometry (22 layers, 4 kv heads of
// 64), by key type: what a generating stream pauses for at a shift.
func BenchmarkShiftKV(b *testing.B) {
	for _, typ := range []ggml.Type{ggml.F16, ggml.Q8_0} {
		b.Run(typ.String(), func(b *testing.B) {
			m := openShiftShape(b, synth.Arch{}, 22, 256, 4, Options{Threads: 2, Ctx: 4096, KVType: typ})
			kv := m.KV()
			const full = 4096
			if err := kv.reserve(0, full); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				kv.n = full
				if err := m.ShiftKV(kv, 1, (full-1)/2); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/shift")
		})
	}
}
