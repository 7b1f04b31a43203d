package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// withoutRows4 is k with its four-weight-row routines removed: MatVec's
// previous one-dot-per-weight-row loop, for comparison and benchmarks.
func withoutRows4(k *Impl) *Impl {
	c := k.clone(k.Name + "-rows1")
	for t := range c.types {
		c.types[t].dots.rows4 = nil
	}
	return c
}

// Every four-weight-row routine equals four calls of the one-row routine
// bit for bit (see checkFourRowMatchesDot).
func TestDotRows4MatchesDot(t *testing.T) {
	checkFourRowMatchesDot(t, rand.New(rand.NewPCG(193, 194)), rows4Kind)
}

func TestDotRows4ShortInputsPanic(t *testing.T) { checkFourRowShortInputsPanic(t, rows4Kind) }

// MatVec through the four-weight-row routines equals the row-by-row dot
// exactly, for row counts that are and are not multiples of four, in one
// chunk and spread over several pool chunks.
func TestMatVecRows4Exact(t *testing.T) {
	r := rand.New(rand.NewPCG(195, 196))
	p := NewPool(3)
	defer p.Close()
	tested := 0
	for _, k := range fourRowPaths() {
		for _, typ := range Executable() {
			if k.DotRows4(typ) == nil {
				continue
			}
			tested++
			t.Logf("%s %s", k.Name, typ)
			dot := k.Dot(typ)
			// Several blocks and super-blocks, and FFN width (43 super-blocks).
			colsList := []int{13 * 32, 344 * 32}
			if typ.BlockSize() == 256 {
				colsList = []int{256, 3 * 256, 43 * 256}
			}
			for _, cols := range colsList {
				ws, _ := RowSize(typ, cols)
				a := encodeAct(typ, randActivations(r, cols))
				for _, rows := range []int{1, 3, 4, 5, 7, 19, 64} {
					var w []byte
					for i := 0; i < rows; i++ {
						w = append(w, randWeights(r, typ, cols)...)
					}
					y := make([]float32, rows)
					k.MatVec(p, typ, rows, cols, w, a, y)
					for row := 0; row < rows; row++ {
						want := dot(cols, w[row*ws:(row+1)*ws], a)
						if got := y[row]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%s %s %dx%d: y[%d] = %g, dot %g", k.Name, typ, rows, cols, row, got, want)
						}
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no dispatch path on this CPU has a four-weight-row routine")
	}
}

// MatVecRows quarters pieces of up to rows4Piece rows for the four-row
// routine and transposes the results into place: every y[r] of [lo, hi)
// must equal the row's own dot exactly, for ranges of one, several and
// partial pieces and tails of 1–3 rows, and nothing outside [lo, hi) is
// written.
func TestMatVecRowsQuarters(t *testing.T) {
	r := rand.New(rand.NewPCG(201, 202))
	tested := 0
	for _, k := range fourRowPaths() {
		for _, typ := range Executable() {
			rows4 := k.DotRows4(typ)
			if rows4 == nil {
				continue
			}
			tested++
			dot := k.Dot(typ)
			cols := typ.BlockSize()
			if cols < 64 {
				cols *= 2
			}
			ws, _ := RowSize(typ, cols)
			a := encodeAct(typ, randActivations(r, cols))
			const total = 2*rows4Piece + 40
			var w []byte
			for i := 0; i < total; i++ {
				w = append(w, randWeights(r, typ, cols)...)
			}
			want := make([]float32, total)
			for row := range want {
				want[row] = dot(cols, w[row*ws:(row+1)*ws], a)
			}
			for _, rg := range [][2]int{{0, 1}, {3, 7}, {5, 9}, {2, 65}, {0, rows4Piece}, {1, rows4Piece + 4},
				{7, rows4Piece + 10}, {0, total}, {11, total - 2}} {
				lo, hi := rg[0], rg[1]
				y := make([]float32, total)
				for i := range y {
					y[i] = -1e30
				}
				MatVecRows(dot, rows4, cols, ws, w, a, y, lo, hi)
				for row, got := range y {
					exp := want[row]
					if row < lo || row >= hi {
						exp = -1e30
					}
					if math.Float32bits(got) != math.Float32bits(exp) {
						t.Fatalf("%s %s rows [%d,%d): y[%d] = %g, want %g", k.Name, typ, lo, hi, row, got, exp)
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no dispatch path on this CPU has a four-weight-row routine")
	}
}

// BenchmarkMatVecRows4 is generation's FFN shape: MatVec 4096×11008 through
// the four-weight-row routines ("rows4") against one dot per weight row
// ("rows1"), same path, 2 threads. Bytes are weight bytes.
func BenchmarkMatVecRows4(b *testing.B) {
	const rows, cols = 4096, 11008
	r := rand.New(rand.NewPCG(197, 198))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
		ms := benchMatrices(typ, rows, cols)
		a := encodeAct(typ, randActivations(r, cols))
		y := make([]float32, rows)
		for _, k := range Available() {
			if k.DotRows4(typ) == nil {
				continue
			}
			for _, v := range []struct {
				name string
				k    *Impl
			}{{"rows4", k}, {"rows1", withoutRows4(k)}} {
				b.Run(fmt.Sprintf("%s/%s/%s/t2", typ, k.Name, v.name), func(b *testing.B) {
					p := NewPool(2)
					defer p.Close()
					b.SetBytes(int64(len(ms[0])))
					i := 0
					for b.Loop() {
						v.k.MatVec(p, typ, rows, cols, ms[i%len(ms)], a, y)
						i++
					}
				})
			}
		}
	}
}
