package kernels

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// The IQ2 goldens (testdata/golden/iq2.json, gen_iq2.py) are recorded from
// llama.cpp's ggml like ggml.json. Their dequantization vectors include
// blocks that visit every codebook index with random signs and scales, so
// they check iq2grid.go (read out of ggml by the same script) entry by entry
// through ggml's decoder, and the sign rules with it.
func loadIQ2Golden(t *testing.T) *goldenFile {
	t.Helper()
	b, err := os.ReadFile("testdata/golden/iq2.json")
	if err != nil {
		t.Fatalf("IQ2 golden vectors: %v (regenerate with testdata/golden/gen_iq2.py)", err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

func TestIQ2GoldenDequant(t *testing.T) {
	g := loadIQ2Golden(t)
	seen := map[ggml.Type]int{}
	for _, c := range g.Dequant {
		typ := parseType(t, c.Type)
		seen[typ] += c.N
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
	// Every grid index is visited: 8 weights per index.
	for typ, n := range map[ggml.Type]int{ggml.IQ2_XXS: len(iq2xxsGrid), ggml.IQ2_XS: len(iq2xsGrid), ggml.IQ2_S: len(iq2sGrid)} {
		if seen[typ] < 8*n {
			t.Errorf("%s: golden decodes %d weights, fewer than its %d grid entries need", typ, seen[typ], n)
		}
	}
}

// TestIQ2GoldenDot: every path's dot against ggml's SIMD and generic dots,
// within the sum of two error bounds (see TestGoldenDot). (ggml's generic
// dot has our scalar dot's operations, but the prebuilt library's compiler
// contracts sumf += d·bsum into an FMA, so the two differ in last bits.)
func TestIQ2GoldenDot(t *testing.T) {
	g := loadIQ2Golden(t)
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

// TestIQ2SignTables: the 7-bit sign fields expand with even parity, and
// the assembly's byte tables hold ±1 per sign bit.
func TestIQ2SignTables(t *testing.T) {
	for s := uint32(0); s < 128; s++ {
		e := iq2Signs7(s)
		n := 0
		for j := 0; j < 8; j++ {
			n += int(e >> j & 1)
		}
		if n%2 != 0 || uint32(e&127) != s {
			t.Fatalf("iq2Signs7(%d) = %#x", s, e)
		}
		if iq2SignTabs.signs7[s] != iq2SignTabs.signs8[e] {
			t.Fatalf("signs7[%d] != signs8[%#x]", s, e)
		}
	}
	for s := 0; s < 256; s++ {
		v := iq2SignTabs.signs8[s]
		for j := 0; j < 8; j++ {
			want := byte(1)
			if s>>j&1 != 0 {
				want = 0xff
			}
			if byte(v>>(8*j)) != want {
				t.Fatalf("signs8[%#x] byte %d = %#x", s, j, byte(v>>(8*j)))
			}
		}
	}
}

// TestIQ2SIMDMatchesScalar: the SIMD IQ2 dots form the scalar dot's exact
// int32 per super-block and its float steps in order, so they equal it bit
// for bit, for QuantizeAct's activations and for raw activation bytes
// (−128 included), and the four-row routines equal the dot on each row.
func TestIQ2SIMDMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(141, 142))
	for _, typ := range []ggml.Type{ggml.IQ2_XXS, ggml.IQ2_XS, ggml.IQ2_S} {
		for _, k := range fourRowPaths() {
			if k == Scalar() {
				continue
			}
			for _, nb := range []int{1, 2, 3, 7, 43} {
				n := 256 * nb
				a := encodeAct(typ, randActivations(r, n))
				if nb%2 == 1 {
					a = rawBytes(r, len(a))
					for b := 0; b < nb; b++ {
						binary.LittleEndian.PutUint32(a[292*b:], math.Float32bits(float32(r.Float64()+0.01)))
						if b%3 == 0 {
							for j := 4; j < 260; j += 1 + r.IntN(4) {
								a[292*b+j] = 0x80
							}
						}
					}
				}
				ws := n / 256 * typ.TypeSize()
				w := randWeights(r, typ, 4*n)
				var y [4]float32
				if f := k.DotRows4(typ); f != nil {
					f(n, w, a, ws, &y)
				}
				for row := 0; row < 4; row++ {
					wr := w[row*ws : (row+1)*ws]
					got, want := k.Dot(typ)(n, wr, a), Scalar().Dot(typ)(n, wr, a)
					if math.Float32bits(got) != math.Float32bits(want) {
						t.Errorf("%s %s n=%d row %d: %g, scalar %g", k.Name, typ, n, row, got, want)
					}
					if k.DotRows4(typ) != nil && math.Float32bits(y[row]) != math.Float32bits(want) {
						t.Errorf("%s %s n=%d: rows4[%d] %g, scalar %g", k.Name, typ, n, row, y[row], want)
					}
				}
			}
		}
	}
}
