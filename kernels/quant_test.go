package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// Hand-worked blocks whose expected bytes follow from ggml's definitions
// alone: the scale is chosen so that d = 1 exactly, which makes every quant
// a plain rounding decision visible in the test.
func TestQuantizeHandWorked(t *testing.T) {
	// Q8_0: amax = 127 → d = 1, id = 1; roundf rounds halves away from zero.
	x := make([]float32, 32)
	x[0], x[1], x[2], x[3], x[4] = 127, 2.5, -2.5, 0.49, -126.5
	b := make([]byte, 34)
	if err := Quantize(ggml.Q8_0, x, b); err != nil {
		t.Fatal(err)
	}
	if d := binary.LittleEndian.Uint16(b); d != 0x3c00 {
		t.Errorf("Q8_0 d = %#04x, want 0x3c00 (1.0)", d)
	}
	for i, want := range []int8{127, 3, -3, 0, -127} {
		if got := int8(b[2+i]); got != want {
			t.Errorf("Q8_0 q[%d] = %d, want %d", i, got, want)
		}
	}

	// Q8_1: the same quants, plus s = fp16(d·Σq) = 127+3-3-127 = 0.
	b1 := make([]byte, 36)
	if err := Quantize(ggml.Q8_1, x, b1); err != nil {
		t.Fatal(err)
	}
	if s := binary.LittleEndian.Uint16(b1[2:]); s != 0 || int8(b1[5]) != 3 {
		t.Errorf("Q8_1 s = %#04x q1 = %d, want 0 and 3", s, int8(b1[5]))
	}

	// Q4_0: signed max -8 → d = -8/-8 = 1; q = min(15, trunc(x + 8.5)).
	x = make([]float32, 32)
	x[0], x[1], x[2], x[3], x[16] = -8, 1.5, 7.9, -0.5, 2.49
	b = make([]byte, 18)
	if err := Quantize(ggml.Q4_0, x, b); err != nil {
		t.Fatal(err)
	}
	if d := binary.LittleEndian.Uint16(b); d != 0x3c00 {
		t.Errorf("Q4_0 d = %#04x, want 1.0", d)
	}
	// element 0 → 0, 1 → trunc(10) = 10, 2 → trunc(16.4) → 15, 3 → trunc(8) = 8,
	// 16 → trunc(10.99) = 10 (high nibble of byte 0), zeros → trunc(8.5) = 8.
	for i, want := range []byte{0 | 10<<4, 10 | 8<<4, 15 | 8<<4, 8 | 8<<4} {
		if b[2+i] != want {
			t.Errorf("Q4_0 qs[%d] = %#02x, want %#02x", i, b[2+i], want)
		}
	}

	// Q8_K: signed max -127 → iscale = -127/-127 = 1, d = 1; nearest_int
	// rounds halves to even.
	x = make([]float32, 256)
	x[0], x[1], x[2], x[3] = -127, 2.5, 3.5, -2.5
	bk := make([]byte, 292)
	if err := QuantizeAct(ggml.Q8_K, x, bk); err != nil {
		t.Fatal(err)
	}
	if d := math.Float32frombits(binary.LittleEndian.Uint32(bk)); d != 1 {
		t.Errorf("Q8_K d = %g, want 1", d)
	}
	for i, want := range []int8{-127, 2, 4, -2} {
		if got := int8(bk[4+i]); got != want {
			t.Errorf("Q8_K q[%d] = %d, want %d", i, got, want)
		}
	}
	if s := int16(binary.LittleEndian.Uint16(bk[260:])); s != -127+2+4-2 {
		t.Errorf("Q8_K bsums[0] = %d, want %d", s, -127+2+4-2)
	}
	// A positive signed max maps to -127 with a negative d.
	x[0] = 127
	if err := QuantizeAct(ggml.Q8_K, x, bk); err != nil {
		t.Fatal(err)
	}
	if d := math.Float32frombits(binary.LittleEndian.Uint32(bk)); d != -1 || int8(bk[4]) != -127 || int8(bk[5]) != -2 {
		t.Errorf("Q8_K with +127 max: d = %g q0 = %d q1 = %d, want -1, -127, -2", d, int8(bk[4]), int8(bk[5]))
	}
}

// TestQuantizeErrorBounds checks the reconstruction error each format
// guarantees by construction. With D the unrounded scale and d its fp16
// rounding (|d - D| ≤ 2^-11·|D|), a quant chosen by rounding x/D to the
// nearest level gives |x - q·d| ≤ |D|/2 + qmax·|d - D| (+ f32 noise); the
// truncating formats (Q4_0/Q5_0/Q4_1/Q5_1 use (int)(v + 0.5)) round half up,
// which is still nearest; Q4_0/Q5_0 clamp the level opposite the signed max
// (+8/+16 is not representable), so that one level may err by a full |D|.
func TestQuantizeErrorBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	type bound struct {
		t     ggml.Type
		steps float64 // levels spanned: D = range/steps
		qmax  float64 // largest |level| multiplying d
		clamp bool
	}
	for _, c := range []bound{
		{ggml.Q8_0, 127, 127, false}, {ggml.Q8_1, 127, 127, false},
		{ggml.Q4_0, 8, 8, true}, {ggml.Q5_0, 16, 16, true},
		{ggml.Q4_1, 15, 15, false}, {ggml.Q5_1, 31, 31, false},
		{ggml.Q8_K, 127, 127, false},
	} {
		bs := c.t.BlockSize()
		for rep := 0; rep < 50; rep++ {
			x := randActivations(r, bs*3)
			if rep%5 == 0 {
				for i := range x {
					x[i] = float32(math.Abs(float64(x[i]))) + 3 // all positive: exercises the min
				}
			}
			sz, _ := RowSize(c.t, len(x))
			b := make([]byte, sz)
			if err := Quantize(c.t, x, b); err != nil {
				t.Fatal(err)
			}
			y := dequant(c.t, b, len(x))
			for blk := 0; blk < 3; blk++ {
				xb := x[blk*bs : (blk+1)*bs]
				var D float64
				if c.t == ggml.Q4_1 || c.t == ggml.Q5_1 {
					lo, hi := minMax(xb)
					D = float64(hi-lo) / c.steps
				} else {
					amax, _ := absMax(xb)
					D = float64(amax) / c.steps
				}
				scaleErr := D / 2048 // fp16 scale rounding
				if c.t == ggml.Q8_K {
					scaleErr = D * 4 * u // f32 scale
				}
				tol := D/2 + c.qmax*scaleErr + 1e-5*D
				if c.t == ggml.Q4_1 || c.t == ggml.Q5_1 {
					lo, _ := minMax(xb)
					tol += math.Abs(float64(lo)) / 2048 // fp16 min
				}
				for i := range xb {
					e := math.Abs(float64(xb[i] - y[blk*bs+i]))
					lim := tol
					if c.clamp {
						lim = D + c.qmax*scaleErr + 1e-5*D
					}
					if e > lim {
						t.Fatalf("%s block %d elem %d: x=%g y=%g err %g > %g (D=%g)", c.t, blk, i, xb[i], y[blk*bs+i], e, lim, D)
					}
				}
			}
		}
	}
}

// TestQuantizeFloatTypes: F32 is a bit copy; F16/BF16 round each element
// exactly as the conversion functions (tested exhaustively in half_test).
func TestQuantizeFloatTypes(t *testing.T) {
	x := []float32{0, 1, -2.5, 65519, 1e-8, float32(math.Inf(-1))}
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.BF16} {
		sz, _ := RowSize(typ, len(x))
		b := make([]byte, sz)
		if err := Quantize(typ, x, b); err != nil {
			t.Fatal(err)
		}
		y := dequant(typ, b, len(x))
		for i, v := range x {
			var want float32
			switch typ {
			case ggml.F32:
				want = v
			case ggml.F16:
				want = F16ToF32(F32ToF16(v))
			case ggml.BF16:
				want = BF16ToF32(F32ToBF16(v))
			}
			if y[i] != want {
				t.Errorf("%s: element %d = %g, want %g", typ, i, y[i], want)
			}
		}
	}
}

func TestQuantizeZeroBlocks(t *testing.T) {
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1, ggml.Q8_0, ggml.Q8_1, ggml.Q8_K} {
		n := typ.BlockSize()
		sz, _ := RowSize(typ, n)
		b := make([]byte, sz)
		for i := range b {
			b[i] = 0xAA // must be overwritten
		}
		if err := Quantize(typ, make([]float32, n), b); err != nil {
			t.Fatal(err)
		}
		for i, v := range dequant(typ, b, n) {
			if v != 0 {
				t.Fatalf("%s: zero block element %d = %g", typ, i, v)
			}
		}
	}
}

func TestQuantizeErrors(t *testing.T) {
	cases := []struct {
		name string
		t    ggml.Type
		n    int
		dst  int
		bad  bool // include NaN
		frag string
	}{
		{"partial block", ggml.Q4_0, 31, 18, false, "not a multiple"},
		{"short dst", ggml.Q8_0, 32, 33, false, "need 34 bytes"},
		{"K weights unsupported", ggml.Q4_K, 256, 144, false, "not supported"},
		{"NaN", ggml.Q4_0, 32, 18, true, "element 3 is NaN"},
	}
	for _, c := range cases {
		x := make([]float32, c.n)
		if c.bad {
			x[3] = float32(math.NaN())
		}
		err := Quantize(c.t, x, make([]byte, c.dst))
		if err == nil || !contains(err.Error(), c.frag) {
			t.Errorf("%s: err %v, want containing %q", c.name, err, c.frag)
		}
	}
	if err := QuantizeAct(ggml.I16, make([]float32, 256), make([]byte, 292)); err == nil {
		t.Error("QuantizeAct(I16) succeeded")
	}
	// A weight type maps to its activation type.
	if err := QuantizeAct(ggml.Q4_K, make([]float32, 256), make([]byte, 292)); err != nil {
		t.Errorf("QuantizeAct(Q4_K → Q8_K): %v", err)
	}
}

func TestActType(t *testing.T) {
	want := map[ggml.Type]ggml.Type{
		ggml.Q4_0: ggml.Q8_0, ggml.Q5_0: ggml.Q8_0, ggml.Q8_0: ggml.Q8_0,
		ggml.Q4_1: ggml.Q8_1, ggml.Q5_1: ggml.Q8_1,
		ggml.Q2_K: ggml.Q8_K, ggml.Q3_K: ggml.Q8_K, ggml.Q4_K: ggml.Q8_K, ggml.Q5_K: ggml.Q8_K, ggml.Q6_K: ggml.Q8_K,
		ggml.F32: ggml.F32, ggml.F16: ggml.F16, ggml.BF16: ggml.BF16,
		ggml.IQ4_NL: ggml.Q8_0, ggml.IQ4_XS: ggml.Q8_K,
		ggml.Q8_K: NoType, ggml.I32: NoType, ggml.I16: NoType, ggml.Type(4): NoType,
		ggml.IQ3_XXS: ggml.Q8_K, ggml.IQ3_S: ggml.Q8_K, ggml.IQ1_S: ggml.Q8_K, ggml.IQ1_M: ggml.Q8_K,
		ggml.IQ2_XXS: ggml.Q8_K, ggml.IQ2_XS: ggml.Q8_K, ggml.IQ2_S: ggml.Q8_K,
		ggml.MXFP4: ggml.Q8_0, ggml.TQ1_0: ggml.Q8_K, ggml.TQ2_0: ggml.Q8_K,
	}
	for w, a := range want {
		if got := ActType(w); got != a {
			t.Errorf("ActType(%s) = %s, want %s", w, got, a)
		}
	}
}

// TestRoundAway checks the cheap roundf against math.Round on every float32
// within 4 ulps of each half-integer up to 2^12, on powers of two, and on
// random values in the activation range.
func TestRoundAway(t *testing.T) {
	check := func(v float32) {
		if got, want := roundAway(v), int32(math.Round(float64(v))); got != want {
			t.Fatalf("roundAway(%g [%#08x]) = %d, want %d", v, math.Float32bits(v), got, want)
		}
	}
	for k := -4096; k <= 4096; k++ {
		h := float32(k) + 0.5
		v := h
		for i := 0; i < 4; i++ {
			v = math.Nextafter32(v, float32(math.Inf(-1)))
		}
		for i := 0; i < 9; i++ {
			check(v)
			check(float32(k))
			v = math.Nextafter32(v, float32(math.Inf(1)))
		}
	}
	for e := -149; e < 31; e++ {
		p := float32(math.Ldexp(1, e))
		for _, v := range []float32{p, -p, math.Nextafter32(p, 0), -math.Nextafter32(p, 0)} {
			check(v)
		}
	}
	r := rand.New(rand.NewPCG(53, 54))
	for i := 0; i < 200000; i++ {
		check(float32(r.NormFloat64() * 100))
	}
	check(0)
	check(float32(math.Copysign(0, -1)))
	check(0.49999997)
	check(-0.49999997)
}

// TestUnexecutedTypesRefused: the types listed (those still without
// kernels, ids ggml removed, integer types no weight uses) have no
// kernels on any path; every entry point refuses them with an error (or a
// nil routine) that names the type, so a loader can say which tensor type a
// file needs.
func TestUnexecutedTypesRefused(t *testing.T) {
	for _, typ := range []ggml.Type{ggml.Type(4), ggml.Type(31), ggml.I8} {
		for _, k := range Available() {
			if k.Dot(typ) != nil || k.Dot4(typ) != nil || k.DotRows4(typ) != nil {
				t.Errorf("%s has a routine for %s", k.Name, typ)
			}
		}
		for _, c := range []struct {
			op  string
			err error
		}{
			{"dequantize", Dequantize(typ, make([]byte, typ.TypeSize()), make([]float32, 256))},
			{"quantize-act", QuantizeAct(typ, make([]float32, 256), make([]byte, 292))},
			{"quantize", Quantize(typ, make([]float32, 256), make([]byte, typ.TypeSize()))},
		} {
			if c.err == nil || !contains(c.err.Error(), typ.String()) {
				t.Errorf("%s %s: err %v, want one naming the type", c.op, typ, c.err)
			}
		}
		if slices.Contains(Executable(), typ) {
			t.Errorf("Executable() lists %s", typ)
		}
	}
	for _, typ := range []ggml.Type{ggml.IQ4_NL, ggml.IQ4_XS, ggml.MXFP4, ggml.TQ1_0, ggml.TQ2_0,
		ggml.IQ3_XXS, ggml.IQ3_S, ggml.IQ1_S, ggml.IQ1_M, ggml.IQ2_XXS, ggml.IQ2_XS, ggml.IQ2_S} {
		if !slices.Contains(Executable(), typ) {
			t.Errorf("Executable() lacks %s", typ)
		}
	}
}
