package kernels

// Golden vectors from llama.cpp's own ggml (testdata/golden/gen.py calls the
// prebuilt libggml-base / libggml-cpu shipped with the reference harness via
// ctypes): dequantization and quantization must match ggml bit for bit, and
// every path's dot must be within the derived tolerance of ggml's result.

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

type goldenFile struct {
	Oracle  string
	Dequant []struct {
		Type     string
		N        int
		Src, Out string
	}
	Quant []struct {
		Type     string
		N        int
		Src, Out string
		Runtime  string // llama.cpp's SIMD activation quantizer, when recorded
	}
	Dot []struct {
		Type    string
		N       int
		W, A    string
		SIMD    uint32 `json:"simd"`
		Generic *uint32
	}
}

func loadGolden(t *testing.T) *goldenFile {
	t.Helper()
	b, err := os.ReadFile("testdata/golden/ggml.json")
	if err != nil {
		t.Fatalf("golden vectors: %v (regenerate with testdata/golden/gen.py)", err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	// Vectors for later types live in their own files (ggml-*.json, each
	// from its own generator) so ggml.json stays byte-identical.
	more, err := filepath.Glob("testdata/golden/ggml-*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range more {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m goldenFile
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		g.Dequant = append(g.Dequant, m.Dequant...)
		g.Quant = append(g.Quant, m.Quant...)
		g.Dot = append(g.Dot, m.Dot...)
	}
	return &g
}

func b64d(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parseType(t *testing.T, s string) ggml.Type {
	t.Helper()
	typ, ok := ggml.Parse(s)
	if !ok {
		t.Fatalf("unknown type %q in golden file", s)
	}
	return typ
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = f32at(b[4*i:])
	}
	return out
}

func TestGoldenDequant(t *testing.T) {
	g := loadGolden(t)
	if len(g.Dequant) == 0 {
		t.Fatal("no dequant vectors")
	}
	for _, c := range g.Dequant {
		typ := parseType(t, c.Type)
		src, want := b64d(t, c.Src), f32s(b64d(t, c.Out))
		for _, k := range Available() {
			got := make([]float32, c.N)
			if err := k.Dequantize(typ, src, got); err != nil {
				t.Fatalf("%s %s: %v", k.Name, typ, err)
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s dequant %s n=%d elem %d: %g (%#08x), ggml %g (%#08x)", k.Name, typ, c.N, i,
						got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
}

func TestGoldenQuantize(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Quant {
		typ := parseType(t, c.Type)
		src, want := f32s(b64d(t, c.Src)), b64d(t, c.Out)
		got := make([]byte, len(want))
		var err error
		if isActType(typ) && typ.Quantized() {
			err = QuantizeAct(typ, src, got)
		} else {
			err = Quantize(typ, src, got)
		}
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("quantize %s n=%d: byte %d (block %d) = %#02x, ggml %#02x", typ, c.N, i, i/typ.TypeSize(), got[i], want[i])
			}
		}
		if c.Runtime != "" {
			rt := b64d(t, c.Runtime)
			for i := range got {
				if got[i] != rt[i] {
					t.Fatalf("quantize %s n=%d: byte %d = %#02x, llama.cpp runtime quantizer %#02x", typ, c.N, i, got[i], rt[i])
				}
			}
		}
	}
}

// TestGoldenDot compares every path's dot with ggml's SIMD and generic
// results. Both sides are approximations of the same exact sum with the
// error bounds of dotTolerance (ggml's generic and SIMD kernels have the same
// structure our scalar and SIMD paths are bounded by), so the allowed gap is
// the sum of two such bounds.
func TestGoldenDot(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Dot {
		typ := parseType(t, c.Type)
		w, a := b64d(t, c.W), b64d(t, c.A)
		_, mag := exactDot(typ, c.N, w, a)
		refs := map[string]float32{"ggml-simd": math.Float32frombits(c.SIMD)}
		if c.Generic != nil {
			refs["ggml-generic"] = math.Float32frombits(*c.Generic)
		}
		for _, k := range Available() {
			got := k.Dot(typ)(c.N, w, a)
			for name, ref := range refs {
				tol := 2 * dotTolerance(typ, c.N, true) * u * mag
				if d := math.Abs(float64(got - ref)); !(d <= tol) {
					t.Errorf("%s %s n=%d: %g vs %s %g: diff %g > %g", k.Name, typ, c.N, got, name, ref, d, tol)
				}
			}
		}
	}
}
