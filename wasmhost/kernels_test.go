package wasmhost

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/internal/kerneltest"
	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/wasmhost/kvec"
)

// Cross-target differential test of the kernels: every type and operation,
// seeded random inputs of many lengths (odd block counts, non-multiple-of-lane
// float lengths), run as the portable scalar code compiled to wasm inside the
// sandbox and natively on the selected SIMD path.
//
// Bounds (internal/kerneltest's error model, shared with the kernels tests):
//   - dequantize, quantize, activation quantize: bit-exact.
//   - dot, matvec, matmul: |wasm − native| ≤ kerneltest.PathsTolerance·u·mag
//     (the scalar path's bound plus any other path's; mag = Σ|terms| as
//     kerneltest.ExactDot defines it, scale and min parts separately).
//   - f32 ops: the same Go code on both sides, so bit-exact except where
//     math.Exp differs (amd64 has an assembly Exp, wasm the pure-Go one, each
//     within 1 ulp of float64): softmax, silu-mul and rope allow 2 f32 ulps.
//   - on amd64 the wasm result must also equal native *scalar* bit for bit
//     for every operation but those three: Go does not fuse multiply-adds
//     there, so the same source must round the same way.

const unitRoundoff = kerneltest.U

var kt = kerneltest.API{
	RowSize: kernels.RowSize, Quantize: kernels.Quantize, QuantizeAct: kernels.QuantizeAct,
	Dequantize: kernels.Dequantize, ActType: kernels.ActType,
	F32ToF16: kernels.F32ToF16, F16ToF32: kernels.F16ToF32,
}

func rowSize(t ggml.Type, n int) int { return kt.Size(t, n) }

// dotBound is the bound on |wasm − native| for one dot of n elements.
func dotBound(t ggml.Type, n int, w, a []byte) float64 {
	_, mag := kt.ExactDot(t, n, w, a)
	return kerneltest.PathsTolerance(t, n) * unitRoundoff * mag
}

// check compares one output vector; it returns "" or a description of the
// first mismatch with both values and the bound.
type check func(got, want []byte) string

// bitExact and f32Within compare wasm's output (got) with native's (want).
func bitExact(got, want []byte) string { return kerneltest.BitExact(got, want) }

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
		return kerneltest.F32Within(g, w, abs, ulps)
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
		for _, n := range kerneltest.TestLengths(t) {
			var w []byte
			switch t {
			case ggml.Q8_K:
				w = kt.EncodeAct(ggml.Q4_K, kerneltest.RandActivations(r, n))
			case ggml.Q8_1:
				w = kt.EncodeAct(ggml.Q4_1, kerneltest.RandActivations(r, n))
			default:
				w = kt.RandWeights(r, t, n)
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
		for _, n := range kerneltest.TestLengths(t) {
			x := kvec.F32Bytes(kerneltest.RandActivations(r, n))
			add(vector{name: fmt.Sprintf("quantize-act %s n=%d", t, n), c: kvec.Case{Op: kvec.OpQuantizeAct, Type: t, Blobs: [][]byte{x}}, simd: bitExact, exactOK: true})
		}
	}
	for _, t := range []ggml.Type{ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1, ggml.Q8_0, ggml.F32, ggml.F16, ggml.BF16} {
		for _, n := range kerneltest.TestLengths(t) {
			x := kvec.F32Bytes(kerneltest.RandActivations(r, n))
			add(vector{name: fmt.Sprintf("quantize %s n=%d", t, n), c: kvec.Case{Op: kvec.OpQuantize, Type: t, Blobs: [][]byte{x}}, simd: bitExact, exactOK: true})
		}
	}
	for _, t := range kernels.Executable() {
		for _, n := range kerneltest.TestLengths(t) {
			for rep := 0; rep < 2; rep++ {
				w := kt.RandWeights(r, t, n)
				a := kt.EncodeAct(t, kerneltest.RandActivations(r, n))
				bound := dotBound(t, n, w, a)
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
			w = append(w, kt.RandWeights(r, t, cols)...)
		}
		var a []byte
		for range nb {
			a = append(a, kt.EncodeAct(t, kerneltest.RandActivations(r, cols))...)
		}
		ws, as := rowSize(t, cols), rowSize(kernels.ActType(t), cols)
		bounds := make([]float64, rows*nb)
		for b := range nb {
			for rr := range rows {
				bounds[b*rows+rr] = dotBound(t, cols, w[rr*ws:(rr+1)*ws], a[b*as:(b+1)*as])
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
		x, y := kerneltest.RandActivations(r, n), kerneltest.RandActivations(r, n)
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
		x := kvec.F32Bytes(kerneltest.RandActivations(r, 3*rc.head))
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
