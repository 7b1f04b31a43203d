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
	for t := range c.types {
		c.types[t].dots.dot4 = nil
		c.types[t].gemm = nil
	}
	return c
}

// withoutGemm is k with its packed MatMul routines removed: MatMul through
// Dot4, as before gemm.go.
func withoutGemm(k *Impl) *Impl {
	c := k.clone(k.Name + "-dot4")
	for t := range c.types {
		c.types[t].gemm = nil
	}
	return c
}

// Every four-row routine equals four calls of the one-row routine bit for
// bit (see checkFourRowMatchesDot).
func TestDot4MatchesDot(t *testing.T) {
	checkFourRowMatchesDot(t, rand.New(rand.NewPCG(93, 94)), dot4Kind)
}

func TestDot4ShortInputsPanic(t *testing.T) { checkFourRowShortInputsPanic(t, dot4Kind) }

// MatMul through the four-row routines equals the row-by-row dot exactly,
// for batches that are and are not multiples of four and span several
// activation tiles. Paths with packed routines are checked with their
// packed routines removed (the packed path has its own bound: gemm_test.go).
func TestMatMulDot4Exact(t *testing.T) {
	r := rand.New(rand.NewPCG(95, 96))
	p := NewPool(3)
	defer p.Close()
	for _, k := range fourRowPaths() {
		k = withoutGemm(k)
		for _, typ := range Executable() {
			if k.Dot4(typ) == nil {
				continue
			}
			const rows = 19
			cols := 13 * typ.BlockSize()
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
