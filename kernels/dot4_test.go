package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// rawBytes is n uniformly random bytes: scales may be NaN, Inf or subnormal
// and quants take every pattern, so the four-row routine must reproduce the
// one-row routine's float operations exactly, NaN payloads included.
func rawBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// withoutDot4 is k with its four-row (and packed) routines removed:
// MatMul's previous one-dot-per-activation-row loop, for comparison and
// benchmarks.
func withoutDot4(k *Impl) *Impl {
	c := k.clone(k.Name + "-rows")
	c.dot4 = [64]Dot4Func{}
	c.gemm = [64]*gemmRoutines{}
	return c
}

// withoutGemm is k with its packed MatMul routines removed: MatMul through
// Dot4, as before gemm.go.
func withoutGemm(k *Impl) *Impl {
	c := k.clone(k.Name + "-dot4")
	c.gemm = [64]*gemmRoutines{}
	return c
}

// Every four-row routine must equal four calls of the same path's one-row
// routine bit for bit, for every block count (the one-row routines have
// 4-, 2- and 1-block steps, so counts 1..9 hit every tail), padded strides,
// and both realistic and raw random inputs.
func TestDot4MatchesDot(t *testing.T) {
	r := rand.New(rand.NewPCG(93, 94))
	tested := 0
	for _, k := range Available() {
		for _, typ := range Executable() {
			d4 := k.Dot4(typ)
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
					var w []byte
					if raw {
						w = rawBytes(r, ws)
					} else {
						w = randWeights(r, typ, n)
					}
					stride := rs + r.IntN(3)*7
					a := rawBytes(r, 3*stride+rs)
					if !raw {
						for j := 0; j < 4; j++ {
							copy(a[j*stride:], encodeAct(typ, randActivations(r, n)))
						}
					}
					y := [4]float32{1, 2, 3, 4}
					d4(n, w, a, stride, &y)
					for j := 0; j < 4; j++ {
						want := dot(n, w, a[j*stride:j*stride+rs])
						if math.Float32bits(y[j]) != math.Float32bits(want) {
							t.Fatalf("%s %s %d blocks raw=%v row %d: dot4 %g (%#08x), dot %g (%#08x)",
								k.Name, typ, nbk, raw, j, y[j], math.Float32bits(y[j]), want, math.Float32bits(want))
						}
					}
				}
			}
			y := [4]float32{1, 2, 3, 4}
			d4(0, nil, nil, 0, &y)
			if y != ([4]float32{}) {
				t.Errorf("%s %s: zero-length dot4 = %v, want zeros", k.Name, typ, y)
			}
		}
	}
	if tested == 0 {
		t.Skip("no dispatch path on this CPU has a four-row routine")
	}
}

func TestDot4ShortInputsPanic(t *testing.T) {
	for _, k := range Available() {
		d4 := k.Dot4(ggml.Q4_0)
		if d4 == nil {
			continue
		}
		n := 4 * ggml.Q4_0.BlockSize()
		ws, _ := RowSize(ggml.Q4_0, n)
		rs, _ := RowSize(ggml.Q8_0, n)
		for _, c := range []struct {
			name           string
			wlen, alen, st int
		}{
			{"short w", ws - 1, 4 * rs, rs},
			{"short a", ws, 4*rs - 1, rs},
			{"stride < row", ws, 4 * rs, rs - 1},
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s %s: no panic", k.Name, c.name)
					}
				}()
				var y [4]float32
				d4(n, make([]byte, c.wlen), make([]byte, c.alen), c.st, &y)
			}()
		}
	}
}

// MatMul through the four-row routines equals the row-by-row dot exactly,
// for batches that are and are not multiples of four and span several
// activation tiles. Paths with packed routines are checked with their
// packed routines removed (the packed path has its own bound: gemm_test.go).
func TestMatMulDot4Exact(t *testing.T) {
	r := rand.New(rand.NewPCG(95, 96))
	p := NewPool(3)
	defer p.Close()
	for _, k := range Available() {
		k = withoutGemm(k)
		for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
			if k.Dot4(typ) == nil {
				continue
			}
			const rows, cols = 19, 13 * 32
			ws, _ := RowSize(typ, cols)
			as, _ := RowSize(ActType(typ), cols)
			w := make([]byte, 0, rows*ws)
			for i := 0; i < rows; i++ {
				w = append(w, randWeights(r, typ, cols)...)
			}
			for _, nb := range []int{4, 5, 8, 11, 150} {
				var a []byte
				for b := 0; b < nb; b++ {
					a = append(a, encodeAct(typ, randActivations(r, cols))...)
				}
				y := make([]float32, nb*rows)
				k.MatMul(p, typ, rows, cols, w, a, nb, y)
				dot := k.Dot(typ)
				for b := 0; b < nb; b++ {
					for row := 0; row < rows; row++ {
						want := dot(cols, w[row*ws:(row+1)*ws], a[b*as:(b+1)*as])
						if got := y[b*rows+row]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%s %s nb=%d: y[b=%d, row=%d] = %g, dot %g", k.Name, typ, nb, b, row, got, want)
						}
					}
				}
			}
		}
	}
}

// BenchmarkMatMulDot4 is prefill at a 32-row batch: MatMul through the
// four-row routines ("dot4") against one dot per activation row ("rows"),
// same path, 2 threads. Bytes are weight bytes.
func BenchmarkMatMulDot4(b *testing.B) {
	const rows, cols, nb = 4096, 4096, 32
	r := rand.New(rand.NewPCG(97, 98))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0} {
		ms := benchMatrices(typ, rows, cols)
		var a []byte
		for i := 0; i < nb; i++ {
			a = append(a, encodeAct(typ, randActivations(r, cols))...)
		}
		y := make([]float32, rows*nb)
		for _, k := range Available() {
			if k.Dot4(typ) == nil {
				continue
			}
			for _, v := range []struct {
				name string
				k    *Impl
			}{{"dot4", withoutGemm(k)}, {"rows", withoutDot4(k)}} {
				b.Run(fmt.Sprintf("%s/%s/%s/b%d/t2", typ, k.Name, v.name, nb), func(b *testing.B) {
					p := NewPool(2)
					defer p.Close()
					b.SetBytes(int64(len(ms[0])))
					i := 0
					for b.Loop() {
						v.k.MatMul(p, typ, rows, cols, ms[i%len(ms)], a, nb, y)
						i++
					}
				})
			}
		}
	}
}
