package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// fourRowFunc is the shape Dot4Func and DotRows4Func share: four outputs,
// with one operand holding four rows at stride.
type fourRowFunc = func(n int, w, a []byte, stride int, y *[4]float32)

// fourRowKind names which operand a four-row routine strides: the
// activations (Dot4, for MatMul) or the weights (DotRows4, for MatVec).
type fourRowKind struct {
	name     string
	get      func(*Impl, ggml.Type) fourRowFunc
	stridedW bool
}

var (
	dot4Kind  = fourRowKind{"dot4", func(k *Impl, t ggml.Type) fourRowFunc { return k.Dot4(t) }, false}
	rows4Kind = fourRowKind{"rows4", func(k *Impl, t ggml.Type) fourRowFunc { return k.DotRows4(t) }, true}
)

// fourRowPaths are the dispatch paths whose four-row routines the tests
// check: every Available one plus the variants this CPU does not dispatch
// (arm64 with ASIMDDP: the ARMv8.0 table).
func fourRowPaths() []*Impl { return append(Available(), simdExtraPaths()...) }

// checkFourRowMatchesDot checks that every routine of kind equals four calls
// of the same path's one-row routine bit for bit, for every block count
// (the one-row routines have 4-, 2- and 1-block steps, so counts 1..9 hit
// every tail), padded strides, and both realistic and raw random inputs
// (NaN/Inf scales, every quant pattern).
func checkFourRowMatchesDot(t *testing.T, r *rand.Rand, kind fourRowKind) {
	tested := 0
	for _, k := range fourRowPaths() {
		for _, typ := range Executable() {
			d4 := kind.get(k, typ)
			if d4 == nil {
				continue
			}
			tested++
			t.Logf("%s %s %s", k.Name, kind.name, typ)
			checkFourRowRoutine(t, r, kind, k.Name, typ, d4, k.Dot(typ))
		}
	}
	if tested == 0 {
		t.Skipf("no dispatch path on this CPU has a %s routine", kind.name)
	}
}

// checkFourRowRoutine is checkFourRowMatchesDot for one routine d4 of kind
// against the one-row routine dot it must match bit for bit.
func checkFourRowRoutine(t *testing.T, r *rand.Rand, kind fourRowKind, label string, typ ggml.Type, d4 fourRowFunc, dot DotFunc) {
	t.Helper()
	at := ActType(typ)
	for _, nbk := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 31, 43, 128} {
		n := nbk * typ.BlockSize()
		ws, _ := RowSize(typ, n)
		rs, _ := RowSize(at, n)
		// one is the unstrided operand's row, four the strided one's.
		oneSize, fourSize := ws, rs
		oneRand := func() []byte { return randWeights(r, typ, n) }
		fourRand := func() []byte { return encodeAct(typ, randActivations(r, n)) }
		if kind.stridedW {
			oneSize, fourSize = rs, ws
			oneRand, fourRand = fourRand, oneRand
		}
		for trial := 0; trial < 6; trial++ {
			raw := trial%2 == 1
			one := rawBytes(r, oneSize)
			if !raw {
				one = oneRand()
			}
			stride := fourSize + r.IntN(3)*7
			four := rawBytes(r, 3*stride+fourSize)
			if !raw {
				for j := 0; j < 4; j++ {
					copy(four[j*stride:], fourRand())
				}
			}
			w, a := one, four
			if kind.stridedW {
				w, a = four, one
			}
			y := [4]float32{1, 2, 3, 4}
			d4(n, w, a, stride, &y)
			for j := 0; j < 4; j++ {
				wj, aj := one, four[j*stride:j*stride+fourSize]
				if kind.stridedW {
					wj, aj = aj, one
				}
				want := dot(n, wj, aj)
				if math.Float32bits(y[j]) != math.Float32bits(want) {
					t.Fatalf("%s %s %d blocks raw=%v row %d: %s %g (%#08x), dot %g (%#08x)",
						label, typ, nbk, raw, j, kind.name, y[j], math.Float32bits(y[j]), want, math.Float32bits(want))
				}
			}
		}
	}
	y := [4]float32{1, 2, 3, 4}
	d4(0, nil, nil, 0, &y)
	if y != ([4]float32{}) {
		t.Errorf("%s %s: zero-length %s = %v, want zeros", label, typ, kind.name, y)
	}
}

// checkFourRowShortInputsPanic checks that a routine of kind given a short
// weight or activation buffer, or a stride below a row, panics in Go
// instead of reading past the buffers in assembly.
func checkFourRowShortInputsPanic(t *testing.T, kind fourRowKind) {
	for _, k := range fourRowPaths() {
		for _, typ := range Executable() {
			d4 := kind.get(k, typ)
			if d4 == nil {
				continue
			}
			n := 4 * typ.BlockSize()
			ws, _ := RowSize(typ, n)
			rs, _ := RowSize(ActType(typ), n)
			wlen, alen, row := ws, 4*rs, rs
			if kind.stridedW {
				wlen, alen, row = 4*ws, rs, ws
			}
			for _, c := range []struct {
				name           string
				wlen, alen, st int
			}{
				{"short w", wlen - 1, alen, row},
				{"short a", wlen, alen - 1, row},
				{"stride < row", wlen, alen, row - 1},
			} {
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("%s %s %s %s: no panic", k.Name, typ, kind.name, c.name)
						}
					}()
					var y [4]float32
					d4(n, make([]byte, c.wlen), make([]byte, c.alen), c.st, &y)
				}()
			}
		}
	}
}
