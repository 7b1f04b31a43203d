package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// Differential tests of the per-path attention ops against their portable
// references, on every path this CPU runs (the scalar path must be
// identical to the reference by construction; the SIMD paths are the ones
// under test). Sizes cover SIMD widths, tails and the fall-back geometries.

var opsSizes = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 33, 63, 64, 65, 128, 2048}

func randF32s(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}

// randHalfRow returns n F16 values (as bytes) and their f32 values: mostly
// normal-range values, with some zeros, subnormals and large values so the
// conversions see every class except Inf/NaN.
func randHalfRow(r *rand.Rand, n int) ([]byte, []float32) {
	b := make([]byte, 2*n)
	f := make([]float32, n)
	for i := 0; i < n; i++ {
		var v float32
		switch r.IntN(16) {
		case 0:
			v = 0
		case 1:
			v = float32(r.NormFloat64() * 1e-6) // f16 subnormal range
		case 2:
			v = float32(r.NormFloat64() * 1000)
		default:
			v = float32(r.NormFloat64())
		}
		h := F32ToF16(v)
		b[2*i], b[2*i+1] = byte(h), byte(h>>8)
		f[i] = F16ToF32(h)
	}
	return b, f
}

func TestAddScaledSIMD(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range Available() {
		for _, n := range opsSizes {
			for _, off := range []int{0, 1, 3} { // unaligned starts
				x := randF32s(r, n+off, 3)[off:]
				d0 := randF32s(r, n+off, 3)[off:]
				s := float32(r.NormFloat64())
				want := append([]float32(nil), d0...)
				AddScaled(want, x, s)
				got := append([]float32(nil), d0...)
				k.AddScaled(got, x, s)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s n=%d off=%d: [%d] = %v, reference %v (must be bit-identical)", k.Name, n, off, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// attnCase is one attention-op geometry: nq query/output rows of hd, n
// cached rows at stride bytes, score/weight rows at ws elements.
type attnCase struct{ nq, hd, n, stride, ws int }

func attnCases() []attnCase {
	var cs []attnCase
	for _, hd := range []int{8, 16, 24, 32, 48, 64, 80, 128, 256, 65} {
		for _, nq := range []int{1, 2, 3, 8, 9} {
			for _, n := range []int{1, 2, 3, 5, 8, 16, 17, 33} {
				// stride: a head inside a row of several heads, plus odd padding.
				cs = append(cs, attnCase{nq, hd, n, 2*hd*4 + 2*(n%3), n + nq%4})
			}
		}
	}
	return cs
}

// TestScoresF16SIMD bounds |SIMD − reference| per score. The products
// q_i·k_i of F16-valued operands are exact in f32 (11-bit significands),
// so the only errors are the additions. The SIMD routines add each product
// through at most m = hd/8 + 4 roundings (AVX2 four-row blocks: a chain of
// hd/8, 2 VHADDPS levels, 1 halves add; AVX-512 hd 64: hd/16, 1 halves
// add, 2 VHADDPS, 1; remainder rows take one-row routines with the same
// trees), so the error
// is ≤ γ_m·Σ|q_i k_i|
// (γ_m = m·u/(1−m·u), u = 2⁻²⁴). The reference sums in float64 (error
// ≤ hd·2⁻⁵³·Σ|q_i k_i|) and rounds once to f32 (≤ u·|S|). Both then round
// the product with scale (≤ u each). Hence
//
//	|got − want| ≤ scale·Σ|q_i k_i|·(γ_m + 3u + hd·2⁻⁵³)
//
// with a factor 1.0001 for the second-order terms.
func TestScoresF16SIMD(t *testing.T) {
	const u = 1.0 / (1 << 24)
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range Available() {
		for _, c := range attnCases() {
			keys := make([]byte, (c.n-1)*c.stride+2*c.hd)
			kf := make([][]float32, c.n)
			for p := 0; p < c.n; p++ {
				var b []byte
				b, kf[p] = randHalfRow(r, c.hd)
				copy(keys[p*c.stride:], b)
			}
			q := make([]float32, c.nq*c.hd)
			_, qv := randHalfRow(r, c.nq*c.hd)
			copy(q, qv)
			scale := float32(1 / math.Sqrt(float64(c.hd)))
			want := make([]float32, (c.nq-1)*c.ws+c.n)
			got := make([]float32, len(want))
			for i := range got {
				got[i], want[i] = -7, -7 // untouched cells must stay
			}
			ScoresF16(q, c.nq, c.hd, keys, c.stride, c.n, scale, want, c.ws)
			k.ScoresF16(q, c.nq, c.hd, keys, c.stride, c.n, scale, got, c.ws)
			m := float64(c.hd/8 + 4)
			gamma := m * u / (1 - m*u)
			for j := 0; j < c.nq; j++ {
				for p := 0; p < c.ws && j*c.ws+p < len(got); p++ {
					i := j*c.ws + p
					if p >= c.n {
						if got[i] != -7 {
							t.Fatalf("%s %+v: wrote outside the n columns at [%d][%d]", k.Name, c, j, p)
						}
						continue
					}
					var abs, exact float64
					for d := 0; d < c.hd; d++ {
						pr := float64(q[j*c.hd+d]) * float64(kf[p][d])
						abs += math.Abs(pr)
						exact += pr
					}
					if k.Name == "scalar" || c.hd%16 != 0 {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s %+v [%d][%d]: %v, reference %v (portable branch must be identical)", k.Name, c, j, p, got[i], want[i])
						}
						continue
					}
					tol := float64(scale) * abs * (gamma + 3*u + float64(c.hd)/(1<<53)) * 1.0001
					if d := math.Abs(float64(got[i]) - float64(want[i])); d > tol {
						t.Fatalf("%s %+v [%d][%d]: %v, reference %v: |diff| %g > bound %g", k.Name, c, j, p, got[i], want[i], d, tol)
					}
					// The reference itself against the exact sum (checks the test).
					if d := math.Abs(float64(want[i]) - exact*float64(scale)); d > float64(scale)*abs*3*u*1.0001+1e-45 {
						t.Fatalf("reference %+v [%d][%d]: %v vs exact %v", c, j, p, want[i], exact*float64(scale))
					}
				}
			}
		}
	}
}

// accumTestBlock is the amd64 route's accumBlock (accum_amd64_test.go
// checks that they agree), named here so the cases build on every arch.
const accumTestBlock = 4096

// accumLongCases are runs of positions longer than one widening block of
// the AVX2 route (accumBlock/hd positions) with its head sizes (multiples
// of 32) and row pairings (odd and even nq), as generation (nq = the GQA
// group) and prefill (nq = block × group) pass them.
func accumLongCases() []attnCase {
	const accumBlock = accumTestBlock
	var cs []attnCase
	for _, hd := range []int{32, 64, 96, 128, 256} {
		for _, nq := range []int{1, 2, 5, 8} {
			for _, n := range []int{4, accumBlock/hd - 1, accumBlock / hd, accumBlock/hd + 1, 2*accumBlock/hd + 7} {
				cs = append(cs, attnCase{nq, hd, n, 2*hd*4 + 2, n + 3})
			}
		}
	}
	return cs
}

// TestAccumF16SIMD: the SIMD path must be bit-identical to the reference,
// which must equal per-position AddScaled of the converted value rows.
func TestAccumF16SIMD(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range Available() {
		for _, c := range append(attnCases(), accumLongCases()...) {
			vals := make([]byte, (c.n-1)*c.stride+2*c.hd)
			vf := make([][]float32, c.n)
			for p := 0; p < c.n; p++ {
				var b []byte
				b, vf[p] = randHalfRow(r, c.hd)
				copy(vals[p*c.stride:], b)
			}
			w := randF32s(r, (c.nq-1)*c.ws+c.n, 0.3)
			out0 := randF32s(r, c.nq*c.hd, 1)
			want := append([]float32(nil), out0...)
			AccumF16(want, c.nq, c.hd, w, c.ws, vals, c.stride, c.n)
			got := append([]float32(nil), out0...)
			k.AccumF16(got, c.nq, c.hd, w, c.ws, vals, c.stride, c.n)
			naive := append([]float32(nil), out0...)
			for p := 0; p < c.n; p++ {
				for j := 0; j < c.nq; j++ {
					AddScaled(naive[j*c.hd:(j+1)*c.hd], vf[p], w[j*c.ws+p])
				}
			}
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(naive[i]) {
					t.Fatalf("reference %+v [%d]: %v, per-position AddScaled %v", c, i, want[i], naive[i])
				}
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s %+v [%d]: %v, reference %v (must be bit-identical)", k.Name, c, i, got[i], want[i])
				}
			}
		}
	}
}

func TestAttnOpsGeometryPanics(t *testing.T) {
	k := Scalar()
	for i, f := range []func(){
		func() { k.ScoresF16(make([]float32, 63), 1, 64, make([]byte, 128), 128, 1, 1, make([]float32, 1), 1) },
		func() { k.ScoresF16(make([]float32, 64), 1, 64, make([]byte, 127), 128, 1, 1, make([]float32, 1), 1) },
		func() { k.ScoresF16(make([]float32, 64), 1, 64, make([]byte, 128), 126, 1, 1, make([]float32, 1), 1) },
		func() { k.AccumF16(make([]float32, 64), 2, 64, make([]float32, 3), 2, make([]byte, 128), 128, 1) },
		func() { k.AccumF16(make([]float32, 64), 1, 64, make([]float32, 2), 2, make([]byte, 200), 128, 2) },
		func() { k.AddScaled(make([]float32, 3), make([]float32, 2), 1) },
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic on a bad geometry")
				}
			}()
			f()
		})
	}
}

// TestSoftmaxSIMD bounds the SIMD softmax against the package one per
// element. The vector e^r is the degree-7 Taylor polynomial on |r| ≤ ln2/2
// (truncation ≤ 0.347⁸/8! < 0.1u relative, u = 2⁻²⁴) evaluated by Horner
// with FMA (≤ 1.6u: one rounding per step, each earlier one damped by |r|),
// after a reduction r = x − n·ln2 whose n·ln2hi part is exact and whose
// ln2lo part and subtraction add ≤ 0.4u relative to e^r; the reference
// math.Exp rounds once to f32 (0.5u). So each exponential is within 2.6u
// of the reference's, and so is the float64 sum; the reciprocal and the
// product round once more on each side (2u). Hence |got−want| ≤ 8u·want,
// plus 3e-38 for inputs below −86.5 that the vector exp flushes to 0.
func TestSoftmaxSIMD(t *testing.T) {
	const u = 1.0 / (1 << 24)
	r := rand.New(rand.NewPCG(7, 8))
	for _, k := range Available() {
		for _, n := range opsSizes {
			for trial := 0; trial < 3; trial++ {
				x := randF32s(r, n, []float64{1, 5, 30}[trial])
				for i := range x {
					if r.IntN(10) == 0 {
						x[i] = float32(math.Inf(-1)) // masked
					}
				}
				want := append([]float32(nil), x...)
				Softmax(want)
				got := append([]float32(nil), x...)
				k.Softmax(got)
				for i := range want {
					tol := 8*u*float64(want[i]) + 3e-38
					if d := math.Abs(float64(got[i]) - float64(want[i])); d > tol {
						t.Fatalf("%s n=%d trial %d: [%d] = %v, reference %v (bound %g)", k.Name, n, trial, i, got[i], want[i], tol)
					}
				}
			}
		}
		x := []float32{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)),
			float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))}
		k.Softmax(x)
		for i, v := range x {
			if v != 0 {
				t.Fatalf("%s: all -Inf row: [%d] = %v, want 0", k.Name, i, v)
			}
		}
	}
}

// TestSiLUMulSIMD bounds the SIMD SwiGLU against the package one. With the
// vector e^x within 2.6u of the reference's rounded exponential (see
// TestSoftmaxSIMD), 1+e, the divide and the product each round once on
// each side (6u), so |got−want| ≤ 9u·|want|; gates below −86.5 saturate
// e^−g at e^88 instead of +Inf, which moves a result that is ~0 by at most
// |g|·|up|/e^88, and gates above 86.5 flush e^−g to 0 (an
// error far below u·|g|).
func TestSiLUMulSIMD(t *testing.T) {
	const u = 1.0 / (1 << 24)
	r := rand.New(rand.NewPCG(9, 10))
	for _, k := range Available() {
		for _, n := range opsSizes {
			g := randF32s(r, n, 4)
			up := randF32s(r, n, 2)
			for i := range g {
				if r.IntN(12) == 0 {
					g[i] = float32(r.NormFloat64() * 100)
				}
			}
			want := append([]float32(nil), g...)
			SiLUMul(want, up)
			got := append([]float32(nil), g...)
			k.SiLUMul(got, up)
			for i := range want {
				tol := 9*u*math.Abs(float64(want[i])) + 1.01*math.Abs(float64(g[i])*float64(up[i]))/math.Exp(88)
				if d := math.Abs(float64(got[i]) - float64(want[i])); d > tol {
					t.Fatalf("%s n=%d: [%d] g=%v up=%v: %v, reference %v (bound %g)", k.Name, n, i, g[i], up[i], got[i], want[i], tol)
				}
			}
		}
	}
}

// TestQuantizeActSIMD: the SIMD Q8_0 and F16 activation encoders and the
// F16 Quantize must be bit-identical to the package ones. Rows include
// all-zero blocks, exact .5 ties after scaling (amax 127 makes the scale 1),
// tiny, huge and (for F16) arbitrary bit patterns incl. Inf, NaN and
// subnormals.
func TestQuantizeActSIMD(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	rowQ8 := func(nb int) []float32 {
		x := make([]float32, 32*nb)
		for b := 0; b < nb; b++ {
			xb := x[32*b : 32*b+32]
			switch b % 5 {
			case 0: // zeros
			case 1: // ties: amax 127 gives d = 1, so k+0.5 stays a tie
				for i := range xb {
					xb[i] = float32(r.IntN(254)-127) + 0.5
				}
				xb[r.IntN(32)] = 127
			case 2:
				for i := range xb {
					xb[i] = float32(r.NormFloat64() * 1e-30)
				}
			case 3:
				for i := range xb {
					xb[i] = float32(r.NormFloat64() * 1e30)
				}
			default:
				for i := range xb {
					xb[i] = float32(r.NormFloat64() * 3)
				}
			}
		}
		return x
	}
	for _, k := range Available() {
		for _, nb := range []int{0, 1, 2, 3, 5, 7, 64, 176} {
			x := rowQ8(nb)
			for _, wt := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
				want := make([]byte, 34*nb)
				got := make([]byte, 34*nb)
				if err := QuantizeAct(wt, x, want); err != nil {
					t.Fatal(err)
				}
				if err := k.QuantizeAct(wt, x, got); err != nil {
					t.Fatal(err)
				}
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("%s Q8_0 act of %s, %d blocks: byte %d (block %d) = %#x, reference %#x", k.Name, wt, nb, i, i/34, got[i], want[i])
				}
			}
		}
		if err := k.QuantizeAct(ggml.Q8_0, make([]float32, 32), make([]byte, 33)); err == nil {
			t.Fatalf("%s: short Q8_0 buffer accepted", k.Name)
		}
		for _, n := range opsSizes {
			x := make([]float32, n)
			for i := range x {
				if r.IntN(2) == 0 {
					x[i] = math.Float32frombits(r.Uint32()) // any class
				} else {
					x[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-30)))
				}
			}
			want := make([]byte, 2*n)
			if err := Quantize(ggml.F16, x, want); err != nil {
				t.Fatal(err)
			}
			for _, f := range []func([]float32, []byte) error{
				func(x []float32, d []byte) error { return k.QuantizeAct(ggml.F16, x, d) },
				func(x []float32, d []byte) error { return k.Quantize(ggml.F16, x, d) },
			} {
				got := make([]byte, 2*n)
				if err := f(x, got); err != nil {
					t.Fatal(err)
				}
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("%s F16 n=%d: byte %d = %#x, reference %#x (x=%v)", k.Name, n, i, got[i], want[i], x[i/2])
				}
			}
			rd := make([]float32, n)
			k.RoundF16(rd, x)
			for i := range x {
				w := F16ToF32(F32ToF16(x[i]))
				if math.Float32bits(rd[i]) != math.Float32bits(w) && !(w != w && rd[i] != rd[i]) {
					t.Fatalf("%s RoundF16 n=%d [%d]: %v -> %v, want %v", k.Name, n, i, x[i], rd[i], w)
				}
			}
		}
	}
}

// TestQuantizeActQ8KSIMD: every path's Q8_K activation encoder is
// bit-identical to quantQ8_K, on blocks of zeros, of exact .5 ties after
// scaling (amax 127 gives iscale −1), with +amax and −amax both present
// (the first decides the sign), with NaNs and infinities among the values,
// with a subnormal amax (iscale overflows to −Inf), tiny, huge and ordinary
// values, and raw bit patterns of any class.
func TestQuantizeActQ8KSIMD(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	row := func(nb int) []float32 {
		x := make([]float32, 256*nb)
		for b := 0; b < nb; b++ {
			xb := x[256*b : 256*b+256]
			for i := range xb {
				xb[i] = float32(r.NormFloat64() * 3)
			}
			switch b % 9 {
			case 0:
				clear(xb)
			case 1:
				for i := range xb {
					xb[i] = float32(r.IntN(254)-127) + 0.5
				}
				xb[r.IntN(256)] = -127
			case 2:
				xb[r.IntN(256)], xb[r.IntN(256)] = 50, -50
				if r.IntN(2) == 0 {
					xb[r.IntN(256)] = -50
				}
			case 3:
				xb[r.IntN(256)] = float32(math.NaN())
				xb[r.IntN(256)] = float32(math.Inf(2*r.IntN(2) - 1))
			case 4:
				clear(xb)
				xb[r.IntN(256)] = math.Float32frombits(uint32(1 + r.IntN(100)))
				xb[r.IntN(256)] = -math.Float32frombits(uint32(1 + r.IntN(50)))
			case 5:
				for i := range xb {
					xb[i] = float32(r.NormFloat64() * 1e-37)
				}
			case 6:
				for i := range xb {
					xb[i] = float32(r.NormFloat64() * 1e37)
				}
			case 7:
				for i := range xb {
					xb[i] = math.Float32frombits(r.Uint32())
				}
			case 8:
				for i := range xb {
					xb[i] = float32(math.NaN())
				}
				xb[r.IntN(256)] = float32(r.NormFloat64())
			}
		}
		return x
	}
	for _, k := range Available() {
		for _, nb := range []int{0, 1, 2, 9, 27, 64} {
			x := row(nb)
			want := make([]byte, 292*nb)
			got := make([]byte, 292*nb)
			if err := QuantizeAct(ggml.Q8_K, x, want); err != nil {
				t.Fatal(err)
			}
			if err := k.QuantizeAct(ggml.Q4_K, x, got); err != nil {
				t.Fatal(err)
			}
			if i := firstDiff(got, want); i >= 0 {
				t.Fatalf("%s Q8_K act, %d blocks: byte %d (block %d, offset %d) = %#x, reference %#x", k.Name, nb, i, i/292, i%292, got[i], want[i])
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestScoresF16RowInvariant: a query row's scores must not depend on how
// many rows share the call or where the row sits among them (rows beyond
// the last four-row block take one-row routines that reduce by the same
// trees), or batched prefill would stop being bit-identical to one token
// at a time. Key counts cover the one-row routines' leftover keys (4 and
// 8 at a time) and head sizes the hd-64 AVX-512 routines and the generic
// ones up to beyond 256.
func TestScoresF16RowInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, k := range Available() {
		for _, c := range []struct{ hd, n int }{{16, 300}, {64, 300}, {64, 1}, {64, 7}, {64, 13}, {128, 300}, {128, 3}, {256, 9}, {320, 6}} {
			hd, n := c.hd, c.n
			const nq = 11
			stride := 2 * hd * 2
			keys := make([]byte, n*stride)
			for p := 0; p < n; p++ {
				b, _ := randHalfRow(r, hd)
				copy(keys[p*stride:], b)
			}
			_, q := randHalfRow(r, nq*hd)
			all := make([]float32, nq*n)
			k.ScoresF16(q, nq, hd, keys, stride, n, 0.125, all, n)
			for j := 0; j < nq; j++ {
				for _, m := range []int{1, 2, nq - j} {
					if j+m > nq {
						continue
					}
					one := make([]float32, m*n)
					k.ScoresF16(q[j*hd:(j+m)*hd], m, hd, keys, stride, n, 0.125, one, n)
					for p := 0; p < n; p++ {
						if math.Float32bits(one[p]) != math.Float32bits(all[j*n+p]) {
							t.Fatalf("%s hd=%d n=%d: row %d position %d: %v in a call of %d rows, %v as row %d of %d",
								k.Name, hd, n, j, p, one[p], m, all[j*n+p], j, nq)
						}
					}
				}
			}
		}
	}
}
