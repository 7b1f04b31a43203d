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
	c.dotRows4 = [64]DotRows4Func{}
	return c
}

// Every four-weight-row routine must equal four calls of the same path's
// one-row routine bit for bit, for every block count (the one-row routines
// have 4-, 2- and 1-block steps, so counts 1..9 hit every tail), padded
// strides, and both realistic and raw random inputs (NaN/Inf scales).
func TestDotRows4MatchesDot(t *testing.T) {
	r := rand.New(rand.NewPCG(193, 194))
	tested := 0
	for _, k := range Available() {
		for _, typ := range Executable() {
			d4 := k.DotRows4(typ)
			if d4 == nil {
				continue
			}
			tested++
			dot := k.Dot(typ)
			bs := typ.BlockSize()
			at := ActType(typ)
			for _, nbk := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 31, 128} {
				n := nbk * bs
				ws, _ := RowSize(typ, n)
				rs, _ := RowSize(at, n)
				for trial := 0; trial < 6; trial++ {
					raw := trial%2 == 1
					stride := ws + r.IntN(3)*7
					w := rawBytes(r, 3*stride+ws)
					var a []byte
					if raw {
						a = rawBytes(r, rs)
					} else {
						for j := 0; j < 4; j++ {
							copy(w[j*stride:], randWeights(r, typ, n))
						}
						a = encodeAct(typ, randActivations(r, n))
					}
					y := [4]float32{1, 2, 3, 4}
					d4(n, w, a, stride, &y)
					for j := 0; j < 4; j++ {
						want := dot(n, w[j*stride:j*stride+ws], a)
						if math.Float32bits(y[j]) != math.Float32bits(want) {
							t.Fatalf("%s %s %d blocks raw=%v row %d: rows4 %g (%#08x), dot %g (%#08x)",
								k.Name, typ, nbk, raw, j, y[j], math.Float32bits(y[j]), want, math.Float32bits(want))
						}
					}
				}
			}
			y := [4]float32{1, 2, 3, 4}
			d4(0, nil, nil, 0, &y)
			if y != ([4]float32{}) {
				t.Errorf("%s %s: zero-length rows4 = %v, want zeros", k.Name, typ, y)
			}
		}
	}
	if tested == 0 {
		t.Skip("no dispatch path on this CPU has a four-weight-row routine")
	}
}

func TestDotRows4ShortInputsPanic(t *testing.T) {
	for _, k := range Available() {
		for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
			d4 := k.DotRows4(typ)
			if d4 == nil {
				continue
			}
			n := 4 * typ.BlockSize()
			ws, _ := RowSize(typ, n)
			rs, _ := RowSize(ActType(typ), n)
			for _, c := range []struct {
				name           string
				wlen, alen, st int
			}{
				{"short w", 4*ws - 1, rs, ws},
				{"short a", 4 * ws, rs - 1, ws},
				{"stride < row", 4 * ws, rs, ws - 1},
			} {
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("%s %s %s: no panic", k.Name, typ, c.name)
						}
					}()
					var y [4]float32
					d4(n, make([]byte, c.wlen), make([]byte, c.alen), c.st, &y)
				}()
			}
		}
	}
}

// MatVec through the four-weight-row routines equals the row-by-row dot
// exactly, for row counts that are and are not multiples of four, in one
// chunk and spread over several pool chunks.
func TestMatVecRows4Exact(t *testing.T) {
	r := rand.New(rand.NewPCG(195, 196))
	p := NewPool(3)
	defer p.Close()
	tested := 0
	for _, k := range Available() {
		for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
			if k.DotRows4(typ) == nil {
				continue
			}
			tested++
			dot := k.Dot(typ)
			for _, cols := range []int{13 * 32, 344 * 32} {
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
