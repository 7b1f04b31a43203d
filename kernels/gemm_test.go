package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// Error bound of the packed MatMul (gemm.go), derived as in harness_test.go.
//
// For one output y = Σ_b d_w,b·d_a,b·s_b over the n blocks of a row, where
// s_b is the block's integer sum: s_b is exact in int32 (|s_b| ≤ 32·8·128
// for Q4_0, 32·128·128 for Q8_0) and exact in f32 (< 2^24). The kernel
// forms t_b = fl(d_w·s_b) (one rounding: d_w is an fp16 value, exact in
// f32) and then acc = fl(acc + d_a·t_b) with one fused multiply-add per
// block, blocks in order, starting from an exact 0 (K-ranges continue the
// same chain through y). That is n roundings on the path of each term, so
// (Higham, Accuracy and Stability, §4.2, with γ_n = n·u/(1-n·u) ≤ (n+1)·u
// for n·u < 1/(n+1))
//
//	|y − exact| ≤ (n+1)·u·Σ_b |d_w,b·d_a,b·s_b|.
//
// No product underflows into subnormals (|d_w·d_a| ≥ 2^-48 when both are
// nonzero, fp16's smallest subnormal squared) and none overflows (≤ 65504²
// ·2^19·n ≪ 2^128), so the relative model holds for every finite fp16 scale.
// The scalar Dot has the same structure (fl(fl(d_w·d_a)·s) with d_w·d_a
// exact, then a rounded add), so |y − Dot| ≤ 2·(n+1)·u·Σ_b|…|. The float64
// reference sums exact float64 products (each ≤ 53 bits) and adds at most
// n·2^-53·Σ_b|…|.
func gemmBound(n int, mag float64) float64 {
	return (float64(n)+1)*u*mag + float64(n)*0x1p-53*mag
}

// blockSums returns Σ_b d_w·d_a·s_b in float64 and Σ_b |d_w·d_a·s_b|, with
// s_b computed from the dequantized rows (exact: every dequantized element
// is an fp16 scale times a small integer, and their products are exact in
// float64).
func blockSums(wd, ad []float32) (exact, mag float64) {
	for b := 0; b < len(wd); b += 32 {
		var s float64
		for i := b; i < b+32; i++ {
			s += float64(wd[i]) * float64(ad[i])
		}
		exact += s
		mag += math.Abs(s)
	}
	return exact, mag
}

// extremeF16 are fp16 scales at the edges of the format, and zero.
var extremeF16 = []float32{65504, -65504, 0x1p-24, -0x1p-24, 0x1p-14, 0, 1, -2}

// gemmWeights is rows random weight rows of cols elements of t (harness
// scales), with about one block in eight given an extreme scale and, for
// Q8_0, about one in eight made all -128 or all +127 (against gemmActs'
// blocks of ±127 these reach the largest pair sums: 2·128·127 for the
// AVX2 kernel's |w|·sign(a, w)).
func gemmWeights(r *rand.Rand, t ggml.Type, rows, cols int) []byte {
	w := randWeights(r, t, rows*cols)
	bs := t.TypeSize()
	for b := 0; b < len(w); b += bs {
		if r.IntN(8) == 0 {
			putF16(w[b:], extremeF16[r.IntN(len(extremeF16))])
		}
		if t == ggml.Q8_0 {
			switch r.IntN(16) {
			case 0:
				for j := 2; j < 34; j++ {
					w[b+j] = 0x80
				}
			case 1:
				for j := 2; j < 34; j++ {
					w[b+j] = 0x7f
				}
			}
		}
	}
	return w
}

// gemmActs is nb Q8_0 activation rows: half quantized from realistic
// values, half raw blocks whose quants are uniform in [-127, 127] (the range
// QuantizeAct produces, which the packed kernels may rely on: gemm.go; so
// both extremes occur, and whole blocks of -127 or +127 are forced now and
// then) with random or extreme scales.
func gemmActs(r *rand.Rand, t ggml.Type, nb, cols int) []byte {
	var a []byte
	for i := 0; i < nb; i++ {
		if i%2 == 0 {
			a = append(a, encodeAct(t, randActivations(r, cols))...)
			continue
		}
		row := rawBytes(r, cols/32*34)
		for b := 0; b < len(row); b += 34 {
			for j := 2; j < 34; j++ {
				if row[b+j] == 0x80 {
					row[b+j] = 0x81
				}
			}
			switch r.IntN(8) {
			case 0:
				for j := 2; j < 34; j++ {
					row[b+j] = 0x81
				}
			case 1:
				for j := 2; j < 34; j++ {
					row[b+j] = 0x7f
				}
			}
			if r.IntN(6) == 0 {
				putF16(row[b:], extremeF16[r.IntN(len(extremeF16))])
			} else {
				putF16(row[b:], float32(math.Ldexp(1+r.Float64(), -8-r.IntN(6))))
			}
		}
		a = append(a, row...)
	}
	return a
}

// gemmPaths are the paths with a packed routine for t.
func gemmPaths(t ggml.Type) []*Impl {
	var out []*Impl
	for _, k := range Available() {
		if k.gemmFor(t) != nil {
			out = append(out, k)
		}
	}
	return out
}

// TestMatMulPacked checks every packed MatMul output against the float64
// block sum and against the scalar Dot, within the bound above, for row
// counts around the 16-row tile, widths of 1 to 176 blocks, batches around
// the 8-token group, 1 and 2 threads, and K-ranges of gemmKB blocks (one
// range per row here) as well as 32 and 5 blocks (outputs continued
// through y range by range, with short last ranges). Weights and activations are made
// once per (type, width) at the largest shape; each case uses a prefix of
// both, so the references are computed once. y starts as NaN with a NaN
// guard after it: every output must be written, nothing past it.
func TestMatMulPacked(t *testing.T) {
	types := []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL}
	if len(gemmPaths(ggml.Q4_0))+len(gemmPaths(ggml.Q8_0))+len(gemmPaths(ggml.IQ4_NL)) == 0 {
		t.Skip("no dispatch path on this CPU has packed MatMul routines")
	}
	rowsList := []int{1, 5, 15, 16, 17, 33, 100}
	colsList := []int{32, 64, 96, 2048, 5632}
	if gemmRace {
		colsList = colsList[:4]
	}
	nbList := []int{1, 2, 3, 4, 5, 7, 31, 32, 33, 64}
	const maxRows, maxNB = 100, 64
	pools := map[int]*Pool{1: NewPool(1), 2: NewPool(2)}
	defer pools[1].Close()
	defer pools[2].Close()
	r := rand.New(rand.NewPCG(101, 102))
	scalar := Scalar()
	for _, typ := range types {
		paths := gemmPaths(typ)
		for _, cols := range colsList {
			n := cols / 32
			w := gemmWeights(r, typ, maxRows, cols)
			a := gemmActs(r, typ, maxNB, cols)
			ws, _ := RowSize(typ, cols)
			as, _ := RowSize(ActType(typ), cols)
			exact := make([]float64, maxNB*maxRows)
			mag := make([]float64, maxNB*maxRows)
			sdot := make([]float32, maxNB*maxRows)
			wd := dequant(typ, w, maxRows*cols)
			ad := dequant(ggml.Q8_0, a, maxNB*cols)
			for b := 0; b < maxNB; b++ {
				for row := 0; row < maxRows; row++ {
					i := b*maxRows + row
					exact[i], mag[i] = blockSums(wd[row*cols:(row+1)*cols], ad[b*cols:(b+1)*cols])
					sdot[i] = scalar.Dot(typ)(cols, w[row*ws:(row+1)*ws], a[b*as:(b+1)*as])
				}
			}
			for _, k := range paths {
				g := k.gemmFor(typ)
				for _, rows := range rowsList {
					for _, nb := range nbList {
						for _, c := range []struct{ th, kb int }{{1, gemmKB}, {2, gemmKB}, {2, 5}, {1, 32}} {
							th := c.th
							name := fmt.Sprintf("%s/%s/%dx%d/nb%d/t%d/kb%d", k.Name, typ, rows, cols, nb, th, c.kb)
							y := make([]float32, nb*rows+16)
							for i := range y {
								y[i] = float32(math.NaN())
							}
							matMulPacked(pools[th], g, typ, rows, cols, w[:rows*ws], a[:nb*as], nb, y[:nb*rows], ws, as, c.kb)
							for i := nb * rows; i < len(y); i++ {
								if !math.IsNaN(float64(y[i])) {
									t.Fatalf("%s: wrote y[%d] past the %d outputs", name, i, nb*rows)
								}
							}
							for b := 0; b < nb; b++ {
								for row := 0; row < rows; row++ {
									got := float64(y[b*rows+row])
									i := b*maxRows + row
									tol := gemmBound(n, mag[i])
									if d := math.Abs(got - exact[i]); !(d <= tol) {
										t.Fatalf("%s: y[b=%d, row=%d] = %g, exact %g, |diff| %g > %g", name, b, row, got, exact[i], d, tol)
									}
									if d := math.Abs(got - float64(sdot[i])); !(d <= 2*tol) {
										t.Fatalf("%s: y[b=%d, row=%d] = %g, scalar dot %g, |diff| %g > %g", name, b, row, got, sdot[i], d, 2*tol)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// packedAt lists which (path, type) pairs have packed routines: the avx512
// and avx2 paths for Q4_0, Q8_0 and IQ4_NL (avx2's Q8_0 with signed quants,
// its IQ4_NL nibble-split), and neon with ASIMDDP (added by
// extra_arm64_test.go).
var packedAt = map[string][]ggml.Type{
	"avx512":  {ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL},
	"avx2":    {ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL},
	"avxvnni": {ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL},
}

// MatMul takes the packed path exactly when the path has one and the batch
// is at least gemmMinBatch; every other (path, type) and smaller batches
// keep the Dot4/Dot loop, bit-identical to Dot: scalar everywhere and
// neon without ASIMDDP.
func TestMatMulPathsWithoutGemmUnchanged(t *testing.T) {
	r := rand.New(rand.NewPCG(103, 104))
	p := NewPool(2)
	defer p.Close()
	const rows, cols = 21, 7 * 32
	for _, k := range Available() {
		for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL} {
			want := false
			for _, pt := range packedAt[k.Name] {
				want = want || pt == typ
			}
			if k.gemmFor(typ) != nil != want {
				t.Errorf("%s %s: packed routines %v, want %v", k.Name, typ, k.gemmFor(typ) != nil, want)
			}
			ws, _ := RowSize(typ, cols)
			as, _ := RowSize(ActType(typ), cols)
			w := gemmWeights(r, typ, rows, cols)
			for _, nb := range []int{1, 2, 3, gemmMinBatch, 9} {
				if k.gemmFor(typ) != nil && nb >= gemmMinBatch {
					continue // packed: TestMatMulPacked
				}
				a := gemmActs(r, typ, nb, cols)
				y := make([]float32, nb*rows)
				k.MatMul(p, typ, rows, cols, w, a, nb, y)
				for b := 0; b < nb; b++ {
					for row := 0; row < rows; row++ {
						want := k.Dot(typ)(cols, w[row*ws:(row+1)*ws], a[b*as:(b+1)*as])
						if got := y[b*rows+row]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%s %s nb=%d: y[%d,%d] = %g, dot %g", k.Name, typ, nb, b, row, got, want)
						}
					}
				}
			}
		}
	}
}

// MatMul on a packed path agrees with the packed routine called directly
// (the dispatch and the geometry handed to it are right).
func TestMatMulUsesPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(105, 106))
	p := NewPool(2)
	defer p.Close()
	const rows, cols, nb = 40, 9 * 32, 12
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL} {
		for _, k := range gemmPaths(typ) {
			ws, _ := RowSize(typ, cols)
			as, _ := RowSize(ActType(typ), cols)
			w := gemmWeights(r, typ, rows, cols)
			a := gemmActs(r, typ, nb, cols)
			y1 := make([]float32, nb*rows)
			y2 := make([]float32, nb*rows)
			k.MatMul(p, typ, rows, cols, w, a, nb, y1)
			matMulPacked(nil, k.gemmFor(typ), typ, rows, cols, w, a, nb, y2, ws, as, gemmKB)
			for i := range y1 {
				if math.Float32bits(y1[i]) != math.Float32bits(y2[i]) {
					t.Fatalf("%s %s: MatMul y[%d] = %g, packed %g", k.Name, typ, i, y1[i], y2[i])
				}
			}
		}
	}
}

// refPack is the packed layout written from its definition in gemm.go: for
// block b, vector j, lane r: bytes 4j..4j+3 of row r's block as unsigned
// quants (Q4_0: element e is the low nibble of qs[e] for e < 16, the high
// nibble of qs[e-16] otherwise; Q8_0: the byte + off, the routines' offset:
// 128 for VPDPBUSD, 0 for AVX2's signed layout; IQ4_NL: the codebook value
// of Q4_0's nibble + 128), then the 16 scales.
func refPack(t ggml.Type, n int, w []byte, ws, off int) []byte {
	bs := t.TypeSize()
	out := make([]byte, n*gemmBlockB)
	for b := 0; b < n; b++ {
		o := out[b*gemmBlockB:]
		for r := 0; r < gemmTileRows; r++ {
			blk := w[r*ws+b*bs:]
			for e := 0; e < 32; e++ {
				var q byte
				switch t {
				case ggml.Q4_0:
					if e < 16 {
						q = blk[2+e] & 15
					} else {
						q = blk[2+e-16] >> 4
					}
				case ggml.IQ4_NL: // neon's packed IQ4_NL (gemm_arm64.go)
					q = byte(iq4Codebook[blk[2+e%16]>>(4*(e/16))&15] + 128)
				default:
					q = blk[2+e] + byte(off)
				}
				o[(e/4)*64+r*4+e%4] = q
			}
			bits := math.Float32bits(getF16(blk))
			o[512+4*r], o[513+4*r], o[514+4*r], o[515+4*r] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
		}
	}
	return out
}

// refPackSplit is the nibble-split layout of gemmsplit.go from its definition:
// for block b, vector j (high nibbles) and 8+j (low nibbles), lane r: the
// nibbles of elements 4j..4j+3 of row r as value + 128 (Q8_0: the quant
// byte; IQ4_NL: the codebook value of its index), then the 16 scales.
func refPackSplit(t ggml.Type, n int, w []byte, ws int) []byte {
	bs := t.TypeSize()
	out := make([]byte, n*gemmSplitBlockB)
	for b := 0; b < n; b++ {
		o := out[b*gemmSplitBlockB:]
		for r := 0; r < gemmTileRows; r++ {
			blk := w[r*ws+b*bs:]
			for e := 0; e < 32; e++ {
				var u byte
				if t == ggml.IQ4_NL {
					u = byte(iq4Codebook[blk[2+e%16]>>(4*(e/16))&15] + 128)
				} else {
					u = blk[2+e] + 128
				}
				o[(e/4)*64+r*4+e%4] = u >> 4
				o[512+(e/4)*64+r*4+e%4] = u & 15
			}
			bits := math.Float32bits(getF16(blk))
			o[1024+4*r], o[1025+4*r], o[1026+4*r], o[1027+4*r] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
		}
	}
	return out
}

// The packers must produce refPack's bytes exactly for raw random blocks
// (any quant byte; scales of any finite fp16 value), at a row stride wider
// than the packed range (a K-range inside a longer row).
func TestGemmPackLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(107, 108))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL} {
		for _, k := range gemmPaths(typ) {
			g := k.gemmFor(typ)
			bs := typ.TypeSize()
			for _, n := range []int{1, 2, 3, 32} {
				ws := (n + 3) * bs
				w := rawBytes(r, 15*ws+n*bs)
				for b := 0; b+bs <= len(w); b += bs {
					v := float32(math.Ldexp(r.Float64(), r.IntN(40)-24))
					if r.IntN(2) == 0 {
						v = -v
					}
					putF16(w[b:], v) // clamps to ±65504 / rounds subnormals
				}
				if g.prepByToken {
					continue // the int16 layouts: their own layout tests
				}
				var want []byte
				if g.blockB == gemmSplitBlockB {
					want = refPackSplit(typ, n, w, ws)
				} else {
					want = refPack(typ, n, w, ws, g.off)
				}
				got := make([]byte, n*g.blockB)
				g.pack(n, w, ws, got)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s %s n=%d: packed byte %d (block %d, vector %d, lane %d) = %#02x, want %#02x",
							k.Name, typ, n, i, i/g.blockB, i%g.blockB/64, i%64/4, got[i], want[i])
					}
				}
			}
		}
	}
}

// The activation prep is -off·Σq (off: the routines' offset, which
// TestGemmPackLayout ties to the packed bytes) and the f32 scale of each
// block, for blocks of all -128, all +127 and random quants.
func TestGemmPrep(t *testing.T) {
	r := rand.New(rand.NewPCG(109, 110))
	for _, c := range []struct {
		typ ggml.Type
	}{{ggml.Q4_0}, {ggml.Q8_0}, {ggml.IQ4_NL}} {
		for _, k := range gemmPaths(c.typ) {
			if k.gemmFor(c.typ).prepByToken {
				continue // the int16 layouts: their own prep tests
			}
			off := int32(k.gemmFor(c.typ).off)
			const n, stride = 11, 24
			a := gemmActs(r, c.typ, 2, n*32)[n*34:] // the raw row
			for j := 2; j < 34; j++ {
				a[j] = 0x80
				a[34+j] = 0x7f
			}
			dst := rawBytes(r, (n-1)*stride+8)
			k.gemmFor(c.typ).prep(n, a, dst, stride)
			for b := 0; b < n; b++ {
				var s int32
				for j := 2; j < 34; j++ {
					s += int32(int8(a[b*34+j]))
				}
				bias := int32(uint32(dst[b*stride]) | uint32(dst[b*stride+1])<<8 | uint32(dst[b*stride+2])<<16 | uint32(dst[b*stride+3])<<24)
				sc := math.Float32frombits(uint32(dst[b*stride+4]) | uint32(dst[b*stride+5])<<8 | uint32(dst[b*stride+6])<<16 | uint32(dst[b*stride+7])<<24)
				if bias != -off*s || math.Float32bits(sc) != math.Float32bits(getF16(a[b*34:])) {
					t.Fatalf("%s %s block %d: prep (%d, %g), want (%d, %g)", k.Name, c.typ, b, bias, sc, -off*s, getF16(a[b*34:]))
				}
			}
		}
	}
}

// Short buffers and bad strides are caller bugs: the wrappers panic in Go
// before the assembly could read or write out of bounds.
func TestGemmShortInputsPanic(t *testing.T) {
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL} {
		for _, k := range gemmPaths(typ) {
			g := k.gemmFor(typ)
			bs := typ.TypeSize()
			const n = 3
			ws := n * bs
			for _, c := range []struct {
				name string
				f    func()
			}{
				{"pack short w", func() { g.pack(n, make([]byte, 16*ws-1), ws, make([]byte, n*g.blockB)) }},
				{"pack short dst", func() { g.pack(n, make([]byte, 16*ws), ws, make([]byte, n*g.blockB-1)) }},
				{"pack stride", func() { g.pack(n, make([]byte, 16*ws), ws-1, make([]byte, n*g.blockB)) }},
				{"prep short a", func() { g.prep(n, make([]byte, n*34-1), make([]byte, n*8), 8) }},
				{"kernel short y", func() {
					g.kernel(n, make([]byte, n*g.blockB), make([]byte, 2*n*34), n*34, make([]byte, n*16), 16, make([]float32, 16+15), 16, 2, 16, true)
				}},
				{"kernel short a", func() {
					g.kernel(n, make([]byte, n*g.blockB), make([]byte, 2*n*34-1), n*34, make([]byte, n*16), 16, make([]float32, 32), 16, 2, 16, true)
				}},
				{"kernel 17 rows", func() {
					g.kernel(n, make([]byte, n*g.blockB), make([]byte, 2*n*34), n*34, make([]byte, n*16), 16, make([]float32, 64), 32, 2, 17, true)
				}},
			} {
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("%s %s %s: no panic", k.Name, typ, c.name)
						}
					}()
					c.f()
				}()
			}
		}
	}
}

// The packed kernels may rely on activation quants in [-127, 127] (the AVX2
// Q8_0 kernel's sign(a, w) would wrap at -128): every path's Q8_0 encoder
// keeps them there for every finite input whose block scale is nonzero in
// fp16 (a block with scale 0 contributes 0 whatever its quants). Inputs:
// random rows, blocks of one value, ties, and magnitudes from fp16's
// subnormals to the largest f32.
func TestQuantizeActQ8_0Range(t *testing.T) {
	r := rand.New(rand.NewPCG(133, 134))
	mags := []float64{math.MaxFloat32, 1e30, 65504, 1, 0.5, 1e-3, 0x1p-14, 0x1p-24 * 127, 0x1p-24 * 63.5, 1e-9, 1e-38, 1e-44}
	var x []float32
	for _, m := range mags {
		for b := 0; b < 8; b++ {
			for i := 0; i < 32; i++ {
				v := m
				switch b {
				case 0: // one value, the block's extreme
				case 1: // ties at every step of d
					v = m * float64(i-16) / 127 * 1.5
				case 2: // a single nonzero element
					if i != 5 {
						v = 0
					}
				default:
					v = m * (2*r.Float64() - 1)
				}
				if b%2 == 1 && i%3 == 0 {
					v = -v
				}
				x = append(x, float32(v))
			}
		}
	}
	dst := make([]byte, len(x)/32*34)
	for _, k := range append(Available(), Scalar()) {
		if err := k.QuantizeAct(ggml.Q8_0, x, dst); err != nil {
			t.Fatal(err)
		}
		for b := 0; b < len(dst); b += 34 {
			if getF16(dst[b:]) == 0 {
				continue
			}
			for j := 2; j < 34; j++ {
				if dst[b+j] == 0x80 {
					t.Fatalf("%s: block %d (x[%d:]) has quant -128 at %d, scale %g", k.Name, b/34, b/34*32, j-2, getF16(dst[b:]))
				}
			}
		}
	}
}
