package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// TestMXFP4ScaleAllExponents runs every path's MXFP4 dot, four-row routines
// and dequantization on one block per exponent byte 0..255 (every code
// value 1, activations all 1 with d = 1), where every path's result is
// 32·2^(e-128) exactly (or +Inf past f32's range): this checks each entry of
// the assembly's exponent table, the subnormal ones included, against
// e8m0Half.
func TestMXFP4ScaleAllExponents(t *testing.T) {
	a := make([]byte, 34)
	putF16(a, 1)
	for j := 2; j < 34; j++ {
		a[j] = 1
	}
	a4 := append(append(append(append([]byte(nil), a...), a...), a...), a...)
	for _, k := range fourRowPaths() {
		for e := 0; e < 256; e++ {
			w := make([]byte, mxfp4BlockBytes)
			w[0] = byte(e)
			for j := 1; j < mxfp4BlockBytes; j++ {
				w[j] = 0x11 // code 1 (value 1) in both nibbles
			}
			want := float32(32) * e8m0Half(byte(e))
			if got := k.Dot(ggml.MXFP4)(32, w, a); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%s dot e=%d: %g, want %g", k.Name, e, got, want)
			}
			w4 := append(append(append(append([]byte(nil), w...), w...), w...), w...)
			var y [4]float32
			if f := k.DotRows4(ggml.MXFP4); f != nil {
				f(32, w4, a, mxfp4BlockBytes, &y)
				for r := range y {
					if math.Float32bits(y[r]) != math.Float32bits(want) {
						t.Fatalf("%s rows4 e=%d row %d: %g, want %g", k.Name, e, r, y[r], want)
					}
				}
			}
			if f := k.Dot4(ggml.MXFP4); f != nil {
				f(32, w, a4, 34, &y)
				for r := range y {
					if math.Float32bits(y[r]) != math.Float32bits(want) {
						t.Fatalf("%s dot4 e=%d row %d: %g, want %g", k.Name, e, r, y[r], want)
					}
				}
			}
			d := make([]float32, 32)
			if err := k.Dequantize(ggml.MXFP4, w, d); err != nil {
				t.Fatal(err)
			}
			if math.Float32bits(d[5]) != math.Float32bits(e8m0Half(byte(e))) {
				t.Fatalf("%s dequantize e=%d: %g, want %g", k.Name, e, d[5], e8m0Half(byte(e)))
			}
		}
	}
}

// mxfp4GemmWeights is a random MXFP4 matrix for the packed MatMul tests:
// random codes, exponents around 2^-8, and one block in eight with an
// extreme one (0 and 1: subnormal scales; up to 2^12).
func mxfp4GemmWeights(r *rand.Rand, rows, cols int) []byte {
	w := randWeights(r, ggml.MXFP4, rows*cols)
	for b := 0; b < len(w); b += mxfp4BlockBytes {
		if r.IntN(8) == 0 {
			w[b] = []byte{0, 1, 2, 60, 140}[r.IntN(5)]
		}
	}
	return w
}

// TestMXFP4MatMulPacked checks every path's packed MXFP4 MatMul, as
// TestMatMulPacked does the other 32-element types: each output against the
// float64 block sum (gemmBound) and the scalar dot, for row counts around
// the 16-row tile, widths with short K-ranges, one and two threads.
func TestMXFP4MatMulPacked(t *testing.T) {
	const typ = ggml.MXFP4
	paths := gemmPaths(typ)
	if len(paths) == 0 {
		t.Skip("no dispatch path on this CPU has a packed MXFP4 MatMul")
	}
	pools := map[int]*Pool{1: NewPool(1), 2: NewPool(2)}
	defer pools[1].Close()
	defer pools[2].Close()
	r := rand.New(rand.NewPCG(111, 112))
	scalar := Scalar()
	const maxRows, maxNB = 40, 9
	for _, cols := range []int{32, 96, 2048} {
		n := cols / 32
		w := mxfp4GemmWeights(r, maxRows, cols)
		a := gemmActs(r, typ, maxNB, cols)
		ws, _ := RowSize(typ, cols)
		as, _ := RowSize(ActType(typ), cols)
		wd := dequant(typ, w, maxRows*cols)
		ad := dequant(ggml.Q8_0, a, maxNB*cols)
		for _, k := range paths {
			g := k.gemmFor(typ)
			for _, rows := range []int{1, 15, 16, 17, 40} {
				for _, nb := range []int{1, 2, 3, 9} {
					for _, c := range []struct{ th, kb int }{{1, gemmKB}, {2, gemmKB}, {2, 5}} {
						name := fmt.Sprintf("%s/%dx%d/nb%d/t%d/kb%d", k.Name, rows, cols, nb, c.th, c.kb)
						y := make([]float32, nb*rows+16)
						for i := range y {
							y[i] = float32(math.NaN())
						}
						matMulPacked(pools[c.th], g, typ, rows, cols, w[:rows*ws], a[:nb*as], nb, y[:nb*rows], ws, as, c.kb)
						for i := nb * rows; i < len(y); i++ {
							if !math.IsNaN(float64(y[i])) {
								t.Fatalf("%s: wrote y[%d] past the %d outputs", name, i, nb*rows)
							}
						}
						for b := 0; b < nb; b++ {
							for row := 0; row < rows; row++ {
								exact, mag := blockSums(wd[row*cols:(row+1)*cols], ad[b*cols:(b+1)*cols])
								sdot := scalar.Dot(typ)(cols, w[row*ws:(row+1)*ws], a[b*as:(b+1)*as])
								got := float64(y[b*rows+row])
								tol := gemmBound(n, mag)
								if d := math.Abs(got - exact); !(d <= tol) {
									t.Fatalf("%s: y[%d,%d] = %g, exact %g, |diff| %g > %g", name, b, row, got, exact, d, tol)
								}
								if d := math.Abs(got - float64(sdot)); !(d <= 2*tol) {
									t.Fatalf("%s: y[%d,%d] = %g, scalar dot %g, |diff| %g > %g", name, b, row, got, sdot, d, 2*tol)
								}
							}
						}
					}
				}
			}
			// MatMul dispatches to the packed routine from gemmMinBatch on.
			y1 := make([]float32, maxNB*maxRows)
			y2 := make([]float32, maxNB*maxRows)
			k.MatMul(pools[2], typ, maxRows, cols, w, a, maxNB, y1)
			matMulPacked(nil, g, typ, maxRows, cols, w, a, maxNB, y2, ws, as, gemmKB)
			for i := range y1 {
				if math.Float32bits(y1[i]) != math.Float32bits(y2[i]) {
					t.Fatalf("%s: MatMul y[%d] = %g, packed %g", k.Name, i, y1[i], y2[i])
				}
			}
		}
	}
}
