package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// kvTypes are the cache types ScoresQ/AccumQ serve.
var kvTypes = []ggml.Type{ggml.F32, ggml.Q8_0, ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1}

// kvRows returns n random rows of hd values of type t, stride bytes apart
// (the gap filled with junk that must not be read as data).
func kvRows(r *rand.Rand, t ggml.Type, hd, n, stride int) []byte {
	row := kt.Size(t, hd)
	b := make([]byte, (n-1)*stride+row)
	for i := range b {
		b[i] = 0xa5
	}
	for p := 0; p < n; p++ {
		copy(b[p*stride:], randWeights(r, t, hd))
	}
	return b
}

// TestScoresQ: every path's score is within its bound of the exact
// scale × Σ_d q_d·k_d over the decoded key (float64 reference), and equal to
// the score the same path gives that row and key alone (nq 1, n 1), so a
// score depends neither on the batch around it nor on its key's place in
// the run.
//
// Bound: the portable path sums exact products in float64 (error far below
// u·Σ|q_d k_d|) and rounds twice (to f32, × scale); a SIMD path's f32
// multiply-add chain over hd terms rounds once per term, |error| ≤
// hd·u·Σ|q_d k_d| (Higham §3.1), plus the × scale rounding: so
// (hd+3)·u·|scale|·Σ|q_d k_d| covers every path.
func TestScoresQ(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 28))
	for _, k := range Available() {
		for _, typ := range kvTypes {
			for _, hd := range []int{32, 64, 128} {
				for _, sh := range []struct{ nq, n, pad int }{{1, 1, 0}, {8, 13, 0}, {3, 37, 6}, {16, 4, 0}, {11, 70, 2}} {
					t.Run(fmt.Sprintf("%s/%s/hd%d/nq%d/n%d", k.Name, typ, hd, sh.nq, sh.n), func(t *testing.T) {
						row := kt.Size(typ, hd)
						stride := row + sh.pad
						keys := kvRows(r, typ, hd, sh.n, stride)
						q := make([]float32, sh.nq*hd)
						for i := range q {
							q[i] = float32(r.NormFloat64())
						}
						ws := sh.n + 5
						var sc KVScratch
						kd := make([]float32, hd)
						for _, scale := range []float32{1, 0.125} {
							out := make([]float32, sh.nq*ws)
							k.ScoresQ(typ, q, sh.nq, hd, keys, stride, sh.n, scale, out, ws, &sc)
							var one [1]float32
							for j := 0; j < sh.nq; j++ {
								qr := q[j*hd : (j+1)*hd]
								for p := 0; p < sh.n; p++ {
									kr := keys[p*stride : p*stride+row]
									if err := Dequantize(typ, kr, kd); err != nil {
										t.Fatal(err)
									}
									var exact, mag float64
									for d := range kd {
										exact += float64(qr[d]) * float64(kd[d])
										mag += math.Abs(float64(qr[d]) * float64(kd[d]))
									}
									exact *= float64(scale)
									tol := float64(hd+3) * u * float64(scale) * mag
									got := out[j*ws+p]
									if d := math.Abs(float64(got) - exact); !(d <= tol) {
										t.Fatalf("row %d key %d: %v, exact %v: |diff| %g > %g", j, p, got, exact, d, tol)
									}
									k.ScoresQ(typ, qr, 1, hd, kr, row, 1, scale, one[:], 1, &sc)
									if math.Float32bits(one[0]) != math.Float32bits(got) {
										t.Fatalf("row %d key %d: %v in the run, %v alone", j, p, got, one[0])
									}
								}
								for p := sh.n; p < ws; p++ {
									if out[j*ws+p] != 0 {
										t.Fatalf("row %d: column %d beyond n written", j, p)
									}
								}
							}
						}
					})
				}
			}
		}
	}
}

// TestAccumQ: on every path AccumQ is bit-identical to decoding each value
// row with the portable Dequantize (every path's decoder is bit-exact with
// it, TestDequantPathsBitExact) and calling the portable AddScaled per
// output and position in order: both do the same f32 multiply and add per
// element in the same order, so there is no rounding difference to bound.
func TestAccumQ(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 28))
	for _, k := range Available() {
		for _, typ := range kvTypes {
			for _, hd := range []int{32, 64, 128} {
				for _, sh := range []struct{ nq, n, pad int }{{1, 1, 0}, {8, 13, 0}, {3, 37, 6}, {7, 300, 0}, {2, 70, 2}} {
					t.Run(fmt.Sprintf("%s/%s/hd%d/nq%d/n%d", k.Name, typ, hd, sh.nq, sh.n), func(t *testing.T) {
						row := kt.Size(typ, hd)
						stride := row + sh.pad
						vals := kvRows(r, typ, hd, sh.n, stride)
						ws := sh.n + 3
						w := make([]float32, sh.nq*ws)
						for i := range w {
							w[i] = r.Float32()
						}
						init := make([]float32, sh.nq*hd)
						for i := range init {
							init[i] = float32(r.NormFloat64())
						}
						got := append([]float32(nil), init...)
						var sc KVScratch
						k.AccumQ(typ, got, sh.nq, hd, w, ws, vals, stride, sh.n, &sc)
						want := append([]float32(nil), init...)
						v := make([]float32, hd)
						for p := 0; p < sh.n; p++ {
							if err := Dequantize(typ, vals[p*stride:p*stride+row], v); err != nil {
								t.Fatal(err)
							}
							for j := 0; j < sh.nq; j++ {
								AddScaled(want[j*hd:(j+1)*hd], v, w[j*ws+p])
							}
						}
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("element %d: %v, reference %v", i, got[i], want[i])
							}
						}
					})
				}
			}
		}
	}
}

// TestKVQGeometry: a key run too short for its stride, or a type without a
// routine, is refused with a panic naming the op, not read out of bounds.
func TestKVQGeometry(t *testing.T) {
	k := Select()
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"short keys", func() {
			k.ScoresQ(ggml.Q8_0, make([]float32, 32), 1, 32, make([]byte, 60), 34, 2, 1, make([]float32, 2), 2, &KVScratch{})
		}},
		{"odd head", func() {
			k.AccumQ(ggml.Q8_0, make([]float32, 16), 1, 16, make([]float32, 1), 1, make([]byte, 34), 34, 1, &KVScratch{})
		}},
		{"K-quant", func() {
			k.AccumQ(ggml.Q4_K, make([]float32, 256), 1, 256, make([]float32, 1), 1, make([]byte, 144), 144, 1, &KVScratch{})
		}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: accepted", tc.name)
				}
			}()
			tc.f()
		}()
	}
}
