package kernels

import (
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// Go stand-ins with the assembly conventions, so derive's rules are tested
// on every architecture (wasm included).
func fakeDot(nb int, w, a *byte) float32                      { return 1 }
func fakeDot4(nb int, w, a *byte, stride int, y *[4]float32)  { *y = [4]float32{2, 2, 2, 2} }
func fakeEncode(x []float32, dst []byte)                      { clear(dst) }
func fakeGemm(t ggml.Type) *gemmRoutines                      { return &gemmRoutines{minBatch: 7} }
func fakeRows4(nb int, w, a *byte, stride int, y *[4]float32) { *y = [4]float32{3, 3, 3, 3} }
func fakeDeq(src []byte, dst []float32)                       { clear(dst) }
func fakeSoftmax(x []float32)                                 {}

// derive applies rows field by field: a dot replaces the whole dotSet (so
// four-row routines written against the base's dot never pair with another
// one), other fields replace only themselves, and the base is not changed.
func TestDeriveRows(t *testing.T) {
	base := derive(Scalar(), "base", []archRow{
		{t: ggml.Q4_0, dot: fakeDot, dot4: fakeDot4, rows4: fakeRows4, gemm: fakeGemm},
		{t: ggml.Q8_0, dot: fakeDot, dot4: fakeDot4, rows4: fakeRows4},
	}, nil)
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
		if base.Dot(typ) == nil || base.Dot4(typ) == nil || base.DotRows4(typ) == nil {
			t.Fatalf("base %s: routines not installed", typ)
		}
	}
	d := derive(base, "derived", []archRow{
		{t: ggml.Q4_0, dot: fakeDot},                       // new dot alone: companions go
		{t: ggml.Q8_0, quantAct: fakeEncode, deq: fakeDeq}, // no dot: the dotSet stays
		{t: ggml.F16, dot: fakeDot, rows4: fakeRows4},      // new dot with its own rows4
		{t: ggml.Q4_K, gemm: fakeGemm, quant: fakeEncode},  // packed and encoder only
	}, func(o *opsTable) { o.softmax = fakeSoftmax })
	if d.Name != "derived" || base.Name != "base" {
		t.Errorf("names %q, %q", d.Name, base.Name)
	}
	if d.Dot(ggml.Q4_0) == nil || d.Dot4(ggml.Q4_0) != nil || d.DotRows4(ggml.Q4_0) != nil {
		t.Error("Q4_0: a replaced dot kept the base's four-row routines")
	}
	if d.gemmFor(ggml.Q4_0) != base.gemmFor(ggml.Q4_0) || d.gemmFor(ggml.Q4_0) == nil {
		t.Error("Q4_0: a row without gemm changed the packed routines")
	}
	if d.Dot4(ggml.Q8_0) == nil || d.DotRows4(ggml.Q8_0) == nil {
		t.Error("Q8_0: a row without a dot dropped the base's dotSet")
	}
	if d.types[ggml.Q8_0].quantAct == nil || d.types[ggml.Q8_0].deq == nil || d.types[ggml.Q8_0].quant == nil {
		t.Error("Q8_0: encoders/decoder lost")
	}
	if d.Dot4(ggml.F16) != nil || d.DotRows4(ggml.F16) == nil {
		t.Error("F16: the row's own rows4 not installed")
	}
	if g := d.gemmFor(ggml.Q4_K); g == nil || g.minBatch != 7 || d.Dot(ggml.Q4_K) == nil {
		t.Error("Q4_K: gemm not installed or dot lost")
	}
	if d.ops.softmax == nil || base.ops.softmax == nil || d.ops.siluMul == nil {
		t.Error("op edits lost fields")
	}
	// The base is untouched.
	if base.DotRows4(ggml.Q4_0) == nil || base.types[ggml.Q4_K].gemm != nil || base.Dot4(ggml.F16) != nil {
		t.Error("derive changed its base")
	}
	var y [4]float32
	base.DotRows4(ggml.Q4_0)(32, make([]byte, 4*18), make([]byte, 34), 18, &y)
	if y != [4]float32{3, 3, 3, 3} {
		t.Errorf("base rows4 gave %v, want the fake's 3s", y)
	}
}

// Malformed rows are refused when the path is built.
func TestDeriveRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		row  archRow
		want string
	}{
		{"dot4 without dot", archRow{t: ggml.Q4_0, dot4: fakeDot4}, "without the dot"},
		{"rows4 without dot", archRow{t: ggml.Q4_0, rows4: fakeRows4}, "without the dot"},
		{"dot for a type the base does not execute", archRow{t: ggml.Q8_K, dot: fakeDot}, "does not execute"},
		{"type beyond the table", archRow{t: ggml.Type(numTypes), dot: fakeDot}, "beyond the table"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, c.want) {
					t.Errorf("panic %v, want one containing %q", r, c.want)
				}
			}()
			derive(Scalar(), "bad", []archRow{c.row}, nil)
		})
	}
}

// Every path executes exactly the portable path's types with the same
// activation encodings, and has every op; Executes agrees with Dot.
func TestPathsCoverTheTable(t *testing.T) {
	exec := Executable()
	for _, k := range fourRowPaths() {
		for typ := ggml.Type(0); typ < numTypes+2; typ++ {
			if got, want := k.Dot(typ) != nil, Executes(typ); got != want {
				t.Errorf("%s %s: has dot %v, Executes %v", k.Name, typ, got, want)
			}
			if typ < numTypes && k.Dot(typ) != nil && k.types[typ].act != ActType(typ) {
				t.Errorf("%s %s: act %s, ActType %s", k.Name, typ, k.types[typ].act, ActType(typ))
			}
		}
		for _, typ := range exec {
			if k.types[typ].deq == nil || k.types[ActType(typ)].quantAct == nil {
				t.Errorf("%s %s: no decoder or activation encoder", k.Name, typ)
			}
		}
		o := k.ops
		if o.addScaled == nil || o.scoresF16 == nil || o.accumF16 == nil || o.softmax == nil || o.siluMul == nil || o.roundF16 == nil ||
			o.rmsNorm == nil || o.add == nil || o.scale == nil || o.geluMul == nil {
			t.Errorf("%s: op table has nil fields: %+v", k.Name, o)
		}
	}
	if Executes(NoType) || Executes(ggml.Q8_K) || !Executes(ggml.IQ4_XS) {
		t.Error("Executes misreports NoType, Q8_K or IQ4_XS")
	}
}
