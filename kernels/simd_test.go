//go:build amd64 || arm64

package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/internal/kerneltest"
)

// These tests check every SIMD path of this architecture against the scalar
// reference on seeded random rows; architectures without SIMD have nothing to
// compare.

// simdTypes are the executed weight types.
var simdTypes = []ggml.Type{
	ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1, ggml.Q8_0,
	ggml.Q2_K, ggml.Q3_K, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K,
	ggml.IQ4_NL, ggml.IQ4_XS, ggml.MXFP4, ggml.TQ1_0, ggml.TQ2_0,
	ggml.F32, ggml.F16, ggml.BF16,
}

// simdScaleFields lists, per block type, the byte offsets of its fp16 scale
// fields: the multiplicative ones (d) and the additive ones (m/dmin/s). Every
// other byte of a block is a quant and may hold any value.
var simdScaleFields = map[ggml.Type]struct{ d, m []int }{
	ggml.Q4_0:   {d: []int{0}},
	ggml.Q4_1:   {d: []int{0}, m: []int{2}},
	ggml.Q5_0:   {d: []int{0}},
	ggml.Q5_1:   {d: []int{0}, m: []int{2}},
	ggml.Q8_0:   {d: []int{0}},
	ggml.Q8_1:   {d: []int{0}, m: []int{2}},
	ggml.Q2_K:   {d: []int{80}, m: []int{82}},
	ggml.Q3_K:   {d: []int{108}},
	ggml.Q4_K:   {d: []int{0}, m: []int{2}},
	ggml.Q5_K:   {d: []int{0}, m: []int{2}},
	ggml.Q6_K:   {d: []int{208}},
	ggml.IQ4_NL: {d: []int{0}},
	ggml.IQ4_XS: {d: []int{0}},
	ggml.MXFP4:  {},
	ggml.TQ1_0:  {d: []int{52}},
	ggml.TQ2_0:  {d: []int{64}},
}

// simdHalf is a finite fp16 in ±[2^-9, 2^-1): scales of realistic size
// whose products stay far from overflow and underflow.
func simdHalf(r *rand.Rand) uint16 {
	return uint16(r.IntN(2))<<15 | uint16(6+r.IntN(8))<<10 | uint16(r.IntN(1024))
}

// simdRow returns a row of n elements of t: raw random quants (every byte
// pattern, including -128 activations) with finite scales, or for an
// activation type with raw=false the quantization of random normals (the
// values a forward pass produces).
func simdRow(t testing.TB, r *rand.Rand, typ ggml.Type, n int, raw bool) []byte {
	size, err := RowSize(typ, n)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, size)
	if !raw || typ == ggml.F32 || typ == ggml.BF16 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		if err := QuantizeAct(typ, x, b); err != nil {
			t.Fatalf("QuantizeAct %s: %v", typ, err)
		}
		return b
	}
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	switch typ {
	case ggml.F16:
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint16(b[2*i:], simdHalf(r))
		}
		return b
	case ggml.Q8_K:
		for o := 0; o < size; o += typ.TypeSize() {
			binary.LittleEndian.PutUint32(b[o:], math.Float32bits(float32(r.Float64()/64)))
			for g := 0; g < 16; g++ {
				s := 0
				for j := 0; j < 16; j++ {
					s += int(int8(b[o+4+16*g+j]))
				}
				binary.LittleEndian.PutUint16(b[o+260+2*g:], uint16(int16(s)))
			}
		}
		return b
	}
	f := simdScaleFields[typ]
	for o := 0; o < size; o += typ.TypeSize() {
		for _, off := range append(f.d, f.m...) {
			binary.LittleEndian.PutUint16(b[o+off:], simdHalf(r))
		}
		for _, off := range kerneltest.E8M0Fields[typ] {
			b[o+off] = byte(119 + r.IntN(8)) // 2^(e-128) in [2^-9, 2^-1]
		}
	}
	return b
}

// simdZeroFields returns a copy of w with the listed fp16 fields of every
// block set to zero.
func simdZeroFields(typ ggml.Type, w []byte, offs []int) []byte {
	c := append([]byte(nil), w...)
	for o := 0; o < len(c); o += typ.TypeSize() {
		for _, off := range offs {
			c[o+off], c[o+off+1] = 0, 0
		}
	}
	return c
}

func simdDeq(t *testing.T, typ ggml.Type, b []byte, n int) []float64 {
	f := make([]float32, n)
	if err := Dequantize(typ, b, f); err != nil {
		t.Fatalf("Dequantize %s: %v", typ, err)
	}
	out := make([]float64, n)
	for i, v := range f {
		out[i] = float64(v)
	}
	return out
}

// simdMagnitude is Σ|term| over the terms of the exact expansion of w·a:
// Σ|w_d,i·a_i| for the multiplicative part and Σ|w_m,i·a_i| for the additive
// (min) part, computed separately so cancellation between them cannot hide
// rounding. For Q4_1/Q5_1 the additive part is Σ_b |m_b·s_b| (the kernels use
// the activation's stored s).
func simdMagnitude(t *testing.T, typ ggml.Type, w, a []byte, n int) float64 {
	at := ActType(typ)
	af := simdDeq(t, at, a, n)
	f := simdScaleFields[typ]
	mag := 0.0
	wd := simdDeq(t, typ, simdZeroFields(typ, w, f.m), n)
	for i := range wd {
		mag += math.Abs(wd[i] * af[i])
	}
	if len(f.m) == 0 {
		return mag
	}
	if at == ggml.Q8_1 {
		for b := 0; b < n/32; b++ {
			m := F16ToF32(binary.LittleEndian.Uint16(w[b*typ.TypeSize()+2:]))
			s := F16ToF32(binary.LittleEndian.Uint16(a[b*36+2:]))
			mag += math.Abs(float64(m) * float64(s))
		}
		return mag
	}
	wm := simdDeq(t, typ, simdZeroFields(typ, w, f.d), n)
	for i := range wm {
		mag += math.Abs(wm[i] * af[i])
	}
	return mag
}

// TestSIMDDiffScalar compares every SIMD dot with the scalar one. Both sum
// each block's integer products exactly and differ only in how the per-block
// (or per-lane) float terms are rounded and added. Each result is the exact
// sum with every term perturbed by at most K roundings, K = (terms in the
// longest accumulation chain: blocks, or elements for float types) + 8 (scale
// product, scale×sum, FMA, up to 4 horizontal-add levels, min combine), so
// |simd - scalar| ≤ 2·γ_K·Σ|term| with γ_K = K·u/(1-K·u), u = 2^-24.
func TestSIMDDiffScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	ref := Scalar()
	paths := simdExtraPaths()
	for _, k := range Available() {
		if k != ref {
			paths = append(paths, k)
		}
	}
	if len(paths) == 0 {
		t.Skip("no SIMD path on this CPU")
	}
	for _, typ := range simdTypes {
		bs := typ.BlockSize()
		counts := []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 64}
		if bs == 1 {
			counts = []int{1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 4099}
		} else {
			counts = append(counts, 11008/bs, 14336/bs)
		}
		for _, nb := range counts {
			n := nb * bs
			for _, raw := range []bool{false, true} {
				w := simdRow(t, r, typ, n, true)
				a := simdRow(t, r, ActType(typ), n, raw)
				want := ref.Dot(typ)(n, w, a)
				terms := nb
				if bs == 1 {
					terms = n
				}
				k := float64(terms + 8)
				u := math.Ldexp(1, -24)
				tol := 2 * k * u / (1 - k*u) * simdMagnitude(t, typ, w, a, n)
				for _, p := range paths {
					got := p.Dot(typ)(n, w, a)
					if d := math.Abs(float64(got) - float64(want)); !(d <= tol) {
						t.Errorf("%s %s n=%d raw=%v: got %g, scalar %g, |diff| %g > tol %g",
							p.Name, typ, n, raw, got, want, d, tol)
					}
				}
			}
		}
	}
}

// TestSIMDShortRowPanics checks that a row shorter than n claims fails in Go
// (bounds check in the wrapper) instead of letting assembly read past it.
func TestSIMDShortRowPanics(t *testing.T) {
	for _, p := range append(simdExtraPaths(), Available()...) {
		if p == Scalar() {
			continue
		}
		for _, typ := range simdTypes {
			n := 2 * max(typ.BlockSize(), 32)
			ws, _ := RowSize(typ, n)
			as, _ := RowSize(ActType(typ), n)
			for _, c := range []struct {
				name string
				w, a []byte
			}{{"short w", make([]byte, ws-1), make([]byte, as)}, {"short a", make([]byte, ws), make([]byte, as-1)}} {
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("%s %s %s: no panic", p.Name, typ, c.name)
						}
					}()
					p.Dot(typ)(n, c.w, c.a)
				}()
			}
		}
	}
}
