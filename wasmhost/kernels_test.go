package wasmhost

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/wasmhost/kvec"
)

// Cross-target differential test of the kernels: every type and operation,
// seeded random inputs of many lengths (odd block counts, non-multiple-of-lane
// float lengths), run as the portable scalar code compiled to wasm inside the
// sandbox and natively on the selected SIMD path.
//
// Bounds (from the kernels package's error model, kernels/harness_test.go,
// re-derived here because the test helpers there are unexported):
//   - dequantize, quantize, activation quantize: bit-exact.
//   - dot, matvec, matmul: |wasm − native| ≤ (tol_scalar + tol_simd)·u·mag,
//     tol_scalar = 2·blocks + 8 (quantized) or 2 (float types), tol_simd =
//     n/16 + 24 (quantized) or n/4 + 18 (float), mag = Σ|terms| as the
//     kernels harness defines it (scale and min parts separately).
//   - f32 ops: the same Go code on both sides, so bit-exact except where
//     math.Exp differs (amd64 has an assembly Exp, wasm the pure-Go one, each
//     within 1 ulp of float64): softmax, silu-mul and rope allow 2 f32 ulps.
//   - on amd64 the wasm result must also equal native *scalar* bit for bit
//     for every operation but those three: Go does not fuse multiply-adds
//     there, so the same source must round the same way.

const unitRoundoff = 1.0 / (1 << 24)

// Offsets of each block's fp16 scale/min fields, so random blocks get sane
// scales (random bits would give Inf/NaN), and the byte ranges that zero the
// quants or the min scale for types with an additive min (used for mag).
var (
	scaleFields = map[ggml.Type][]int{
		ggml.Q4_0: {0}, ggml.Q4_1: {0, 2}, ggml.Q5_0: {0}, ggml.Q5_1: {0, 2}, ggml.Q8_0: {0},
		ggml.Q2_K: {80, 82}, ggml.Q3_K: {108}, ggml.Q4_K: {0, 2}, ggml.Q5_K: {0, 2}, ggml.Q6_K: {208},
		ggml.IQ4_NL: {0}, ggml.IQ4_XS: {0},
	}
	minZero = map[ggml.Type]struct{ quants, mins [2]int }{
		ggml.Q4_1: {[2]int{4, 20}, [2]int{2, 4}},
		ggml.Q5_1: {[2]int{4, 24}, [2]int{2, 4}},
		ggml.Q2_K: {[2]int{16, 80}, [2]int{82, 84}},
		ggml.Q4_K: {[2]int{16, 144}, [2]int{2, 4}},
		ggml.Q5_K: {[2]int{16, 176}, [2]int{2, 4}},
	}
)

func rowSize(t ggml.Type, n int) int {
	s, err := kernels.RowSize(t, n)
	if err != nil {
		panic(err)
	}
	return s
}

func randWeights(r *rand.Rand, t ggml.Type, n int) []byte {
	w := make([]byte, rowSize(t, n))
	if !t.Quantized() {
		if err := kernels.Quantize(t, randNormal(r, n), w); err != nil {
			panic(err)
		}
		return w
	}
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	for b := 0; b < len(w); b += t.TypeSize() {
		for k, off := range scaleFields[t] {
			v := float32(math.Ldexp(1+r.Float64(), -4-r.IntN(9)))
			if k == 0 && r.IntN(4) == 0 {
				v = -v
			}
			binary.LittleEndian.PutUint16(w[b+off:], kernels.F32ToF16(v))
		}
	}
	return w
}

// randNormal is N(0,1) with occasional ×20 outliers, as hidden states have.
func randNormal(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		if r.IntN(97) == 0 {
			x[i] *= 20
		}
	}
	return x
}

func encodeAct(t ggml.Type, x []float32) []byte {
	at := kernels.ActType(t)
	if at == kernels.NoType {
		at = t
	}
	a := make([]byte, rowSize(at, len(x)))
	if err := kernels.QuantizeAct(t, x, a); err != nil {
		panic(err)
	}
	return a
}

func dequant(t ggml.Type, b []byte, n int) []float32 {
	y := make([]float32, n)
	if err := kernels.Dequantize(t, b, y); err != nil {
		panic(err)
	}
	return y
}

// dotMag is Σ of the magnitudes of the terms a dot routine adds (see the
// kernels harness): Σ|w_i a_i|, or for types with a min Σ|a_i|·(|scale part|
// + |min part|), plus Q8_1's per-block m·s terms.
func dotMag(t ggml.Type, n int, w, a []byte) float64 {
	ad := dequant(kernels.ActType(t), a, n)
	mz, ok := minZero[t]
	if !ok {
		wd := dequant(t, w, n)
		var m float64
		for i := range wd {
			m += math.Abs(float64(wd[i]) * float64(ad[i]))
		}
		return m
	}
	sp, mp := append([]byte(nil), w...), append([]byte(nil), w...)
	for b := 0; b < len(w); b += t.TypeSize() {
		clear(sp[b+mz.mins[0] : b+mz.mins[1]])
		clear(mp[b+mz.quants[0] : b+mz.quants[1]])
	}
	s, m := dequant(t, sp, n), dequant(t, mp, n)
	var mag float64
	for i := range ad {
		mag += math.Abs(float64(ad[i])) * (math.Abs(float64(s[i])) + math.Abs(float64(m[i])))
	}
	if kernels.ActType(t) == ggml.Q8_1 {
		for b := 0; b*32 < n; b++ {
			mag += math.Abs(float64(m[32*b]) * float64(kernels.F16ToF32(binary.LittleEndian.Uint16(a[36*b+2:]))))
		}
	}
	return mag
}

func dotTol(t ggml.Type, n int) float64 {
	if !t.Quantized() {
		return 2 + float64(n)/4 + 18
	}
	return float64(2*(n/t.BlockSize())+8) + float64(n/16+16+8)
}

func testLengths(t ggml.Type) []int {
	bs := t.BlockSize()
	if bs == 1 {
		return []int{1, 3, 8, 17, 31, 32, 33, 64, 255, 4096, 11008}
	}
	out := []int{bs, 3 * bs, 7 * bs}
	for _, n := range []int{4096, 11008} {
		if n%bs == 0 {
			out = append(out, n)
		}
	}
	return out
}

// check compares one output vector; it returns "" or a description of the
// first mismatch with both values and the bound.
type check func(got, want []byte) string

func bitExact(got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("length %d, native %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at byte %d: wasm %#02x, native %#02x (bound: bit-exact)", i, got[i], want[i])
		}
	}
	return ""
}

func f32Exact(got, want []byte) string {
	return f32Within(func(int) float64 { return 0 }, 0)(got, want)
}

// f32Within allows |got−want| ≤ abs(i) or ≤ ulps f32 ulps of want.
func f32Within(abs func(i int) float64, ulps int) check {
	return func(gb, wb []byte) string {
		g, err1 := kvec.BytesF32(gb)
		w, err2 := kvec.BytesF32(wb)
		if err1 != nil || err2 != nil || len(g) != len(w) {
			return fmt.Sprintf("shape: %d vs %d bytes", len(gb), len(wb))
		}
		for i := range g {
			if math.Float32bits(g[i]) == math.Float32bits(w[i]) {
				continue
			}
			d := math.Abs(float64(g[i]) - float64(w[i]))
			ulp := math.Abs(float64(math.Nextafter32(w[i], float32(math.Inf(1))) - w[i]))
			if d <= abs(i) || d <= float64(ulps)*ulp {
				continue
			}
			return fmt.Sprintf("first difference at index %d: wasm %g, native %g, |diff| %g > bound %g (or %d ulp)", i, g[i], w[i], d, abs(i), ulps)
		}
		return ""
	}
}

type vector struct {
	name     string
	c        kvec.Case
	simd     check // wasm vs native selected path
	exactOK  bool  // wasm must equal native scalar bit for bit (amd64)
	mayError bool
}

func kernelVectors() []vector {
	r := rand.New(rand.NewPCG(2026, 6))
	var vs []vector
	add := func(v vector) { vs = append(vs, v) }
	deqTypes := append(kernels.Executable(), ggml.Q8_K, ggml.Q8_1)
	for _, t := range deqTypes {
		for _, n := range testLengths(t) {
			var w []byte
			switch t {
			case ggml.Q8_K:
				w = encodeAct(ggml.Q4_K, randNormal(r, n))
			case ggml.Q8_1:
				w = encodeAct(ggml.Q4_1, randNormal(r, n))
			default:
				w = randWeights(r, t, n)
			}
			add(vector{name: fmt.Sprintf("dequantize %s n=%d", t, n), c: kvec.Case{Op: kvec.OpDequantize, Type: t, Blobs: [][]byte{w}}, simd: bitExact, exactOK: true})
		}
	}
	// Every f16 and bf16 bit pattern, NaNs and subnormals included: the
	// conversions are integer code, so even NaN payloads must agree.
	all := make([]byte, 2<<16)
	for i := range 1 << 16 {
		binary.LittleEndian.PutUint16(all[2*i:], uint16(i))
	}
	for _, t := range []ggml.Type{ggml.F16, ggml.BF16} {
		add(vector{name: fmt.Sprintf("dequantize every %s", t), c: kvec.Case{Op: kvec.OpDequantize, Type: t, Blobs: [][]byte{all}}, simd: bitExact, exactOK: true})
	}
	for _, t := range []ggml.Type{ggml.Q8_0, ggml.Q8_1, ggml.Q8_K, ggml.F32, ggml.F16, ggml.BF16} {
		for _, n := range testLengths(t) {
			x := kvec.F32Bytes(randNormal(r, n))
			add(vector{name: fmt.Sprintf("quantize-act %s n=%d", t, n), c: kvec.Case{Op: kvec.OpQuantizeAct, Type: t, Blobs: [][]byte{x}}, simd: bitExact, exactOK: true})
		}
	}
	for _, t := range []ggml.Type{ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1, ggml.Q8_0, ggml.F32, ggml.F16, ggml.BF16} {
		for _, n := range testLengths(t) {
			x := kvec.F32Bytes(randNormal(r, n))
			add(vector{name: fmt.Sprintf("quantize %s n=%d", t, n), c: kvec.Case{Op: kvec.OpQuantize, Type: t, Blobs: [][]byte{x}}, simd: bitExact, exactOK: true})
		}
	}
	for _, t := range kernels.Executable() {
		for _, n := range testLengths(t) {
			for rep := 0; rep < 2; rep++ {
				w := randWeights(r, t, n)
				a := encodeAct(t, randNormal(r, n))
				bound := dotTol(t, n) * unitRoundoff * dotMag(t, n, w, a)
				add(vector{name: fmt.Sprintf("dot %s n=%d #%d", t, n, rep),
					c:    kvec.Case{Op: kvec.OpDot, Type: t, Ints: []int64{int64(n)}, Blobs: [][]byte{w, a}},
					simd: f32Within(func(int) float64 { return bound }, 0), exactOK: true})
			}
		}
		// A small matrix, one activation row and a batch of three.
		cols := 3 * t.BlockSize()
		if t.BlockSize() == 1 {
			cols = 67
		}
		const rows, nb = 5, 3
		var w []byte
		for range rows {
			w = append(w, randWeights(r, t, cols)...)
		}
		var a []byte
		for range nb {
			a = append(a, encodeAct(t, randNormal(r, cols))...)
		}
		ws, as := rowSize(t, cols), rowSize(kernels.ActType(t), cols)
		bounds := make([]float64, rows*nb)
		for b := range nb {
			for rr := range rows {
				bounds[b*rows+rr] = dotTol(t, cols) * unitRoundoff * dotMag(t, cols, w[rr*ws:(rr+1)*ws], a[b*as:(b+1)*as])
			}
		}
		add(vector{name: fmt.Sprintf("matvec %s %dx%d", t, rows, cols),
			c:    kvec.Case{Op: kvec.OpMatVec, Type: t, Ints: []int64{rows, int64(cols)}, Blobs: [][]byte{w, a[:as]}},
			simd: f32Within(func(i int) float64 { return bounds[i] }, 0), exactOK: true})
		add(vector{name: fmt.Sprintf("matmul %s %dx%d batch %d", t, rows, cols, nb),
			c:    kvec.Case{Op: kvec.OpMatMul, Type: t, Ints: []int64{rows, int64(cols), nb}, Blobs: [][]byte{w, a}},
			simd: f32Within(func(i int) float64 { return bounds[i] }, 0), exactOK: true})
	}
	for _, n := range []int{1, 7, 64, 4096, 4099} {
		x, y := randNormal(r, n), randNormal(r, n)
		xb, yb := kvec.F32Bytes(x), kvec.F32Bytes(y)
		ex := func(name string, c kvec.Case) {
			add(vector{name: fmt.Sprintf("%s n=%d", name, n), c: c, simd: f32Exact, exactOK: true})
		}
		ex("rmsnorm", kvec.Case{Op: kvec.OpRMSNorm, Floats: []float32{1e-5}, Blobs: [][]byte{xb, yb}})
		ex("add", kvec.Case{Op: kvec.OpAdd, Blobs: [][]byte{xb, yb}})
		ex("scale", kvec.Case{Op: kvec.OpScale, Floats: []float32{0.125}, Blobs: [][]byte{xb}})
		ex("add-scaled", kvec.Case{Op: kvec.OpAddScaled, Floats: []float32{-0.3}, Blobs: [][]byte{xb, yb}})
		ex("dot-f32", kvec.Case{Op: kvec.OpDotF32, Blobs: [][]byte{xb, yb}})
		add(vector{name: fmt.Sprintf("argmax n=%d", n), c: kvec.Case{Op: kvec.OpArgmax, Blobs: [][]byte{xb}}, simd: bitExact, exactOK: true})
		add(vector{name: fmt.Sprintf("softmax n=%d", n), c: kvec.Case{Op: kvec.OpSoftmax, Blobs: [][]byte{xb}}, simd: f32Within(func(int) float64 { return 0 }, 2)})
		add(vector{name: fmt.Sprintf("silu-mul n=%d", n), c: kvec.Case{Op: kvec.OpSiLUMul, Blobs: [][]byte{xb, yb}}, simd: f32Within(func(int) float64 { return 0 }, 2)})
	}
	for _, rc := range []struct {
		dims, head, pos int
		neox, ff        bool
	}{{64, 64, 0, false, false}, {64, 64, 17, false, false}, {128, 128, 4095, true, false}, {32, 64, 3, false, true}, {16, 16, 100000, true, true}} {
		x := kvec.F32Bytes(randNormal(r, 3*rc.head))
		var ff []float32
		if rc.ff {
			ff = make([]float32, rc.dims/2)
			for i := range ff {
				ff[i] = 1 + 7*r.Float32()
			}
		}
		neox := int64(0)
		if rc.neox {
			neox = 1
		}
		// The angle pos·θ is formed in f32 on both sides; cos/sin of the
		// same f32 angle may differ by an ulp, each output by 2.
		add(vector{name: fmt.Sprintf("rope dims=%d head=%d pos=%d neox=%v ff=%v", rc.dims, rc.head, rc.pos, rc.neox, rc.ff),
			c: kvec.Case{Op: kvec.OpRope, Ints: []int64{int64(rc.dims), int64(rc.head), int64(rc.pos), neox}, Floats: []float32{10000, 1},
				Blobs: [][]byte{x, kvec.F32Bytes(ff)}},
			simd: f32Within(func(int) float64 { return 4 * unitRoundoff }, 4)})
	}
	// Malformed cases must come back as errors on both sides, not crashes.
	add(vector{name: "bad dot shape", c: kvec.Case{Op: kvec.OpDot, Type: ggml.Q4_0, Ints: []int64{32}, Blobs: [][]byte{{1, 2}, {3}}}, mayError: true})
	add(vector{name: "matvec shape panic", c: kvec.Case{Op: kvec.OpMatVec, Type: ggml.Q8_0, Ints: []int64{4, 32}, Blobs: [][]byte{{1}, {2}}}, mayError: true})
	add(vector{name: "unknown op", c: kvec.Case{Op: 200}, mayError: true})
	return vs
}

func TestKernelsWasmVsNative(t *testing.T) {
	vs := kernelVectors()
	cases := make([]kvec.Case, len(vs))
	for i, v := range vs {
		cases[i] = v.c
	}
	h := testHost(t, Config{})
	got, err := h.Kernels(context.Background(), cases)
	if err != nil {
		t.Fatal(err)
	}
	pool := kernels.NewPool(2)
	defer pool.Close()
	scalar := kvec.RunAll(kernels.Scalar(), pool, cases)
	// Every path this CPU has, not only the selected one: each must agree
	// with the wasm scalar run.
	paths := kernels.Available()
	if raceEnabled {
		paths = []*kernels.Impl{kernels.Select(), kernels.Scalar()}
	}
	for _, k := range paths {
		native := kvec.RunAll(k, pool, cases)
		t.Logf("%d vectors vs native %s", len(vs), k.Name)
		for i, v := range vs {
			g, n, s := got[i], native[i], scalar[i]
			if v.mayError {
				if g.Err == "" || n.Err == "" || g.Err != n.Err {
					t.Errorf("%s: wasm error %q, native %s error %q; want the same error on both", v.name, g.Err, k.Name, n.Err)
				}
				continue
			}
			if g.Err != "" || n.Err != "" {
				t.Errorf("%s: wasm error %q, native %s error %q", v.name, g.Err, k.Name, n.Err)
				continue
			}
			if len(g.Blobs) != 1 || len(n.Blobs) != 1 {
				t.Errorf("%s: %d outputs from wasm, %d from native %s", v.name, len(g.Blobs), len(n.Blobs), k.Name)
				continue
			}
			if msg := v.simd(g.Blobs[0], n.Blobs[0]); msg != "" {
				t.Errorf("%s: wasm scalar vs native %s: %s", v.name, k.Name, msg)
			}
			if k == kernels.Scalar() && v.exactOK && runtime.GOARCH == "amd64" {
				if msg := bitExact(g.Blobs[0], s.Blobs[0]); msg != "" {
					t.Errorf("%s: wasm scalar vs native scalar: %s", v.name, msg)
				}
			}
		}
	}
}

// The tolerance check itself must be able to fail: a perturbed dot beyond
// the bound is reported with index, values and bound.
func TestKernelCheckCatchesDifference(t *testing.T) {
	want := kvec.F32Bytes([]float32{1, 2, 3})
	got := kvec.F32Bytes([]float32{1, 2.001, 3})
	if msg := f32Within(func(int) float64 { return 1e-4 }, 0)(got, want); msg == "" {
		t.Fatal("difference of 1e-3 passed a bound of 1e-4")
	}
	if msg := f32Within(func(int) float64 { return 1e-2 }, 0)(got, want); msg != "" {
		t.Fatalf("difference of 1e-3 failed a bound of 1e-2: %s", msg)
	}
	if msg := bitExact([]byte{1, 2}, []byte{1, 3}); msg == "" {
		t.Fatal("bitExact passed different bytes")
	}
}
