package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// Error bound of the packed K-quant MatMul (gemmk.go), derived as gemmBound.
//
// Per super-block the kernel has two exact integers (isum, summs for Q4_K;
// |isum| < 2^25, so int→f32 may round once) and adds
// fl(d_w·d_a)·isum and −fl(dmin·d_a)·summs to the row's f32 sum with one
// fused multiply-add each, super-blocks in order from an exact 0. Each term
// thus carries at most 2 roundings of its own (scale product, conversion)
// plus one per fused add on its way to the result, 2n for n super-blocks:
//
//	|y − exact| ≤ (2n+2)·u·mag,  mag = Σ |d·d_a·isum| + |dmin·d_a·summs|,
//
// which the harness's mag (Σ|a_i|·(|scale part_i| + |min part_i|)) bounds
// from above. The scalar Dot's bound (dotTolerance) is 2n+8 roundings; the
// two differ by at most the sum. The float64 reference adds n·2^-53·mag.
func gemmKBound(n int, mag float64) float64 {
	return (2*float64(n)+2)*u*mag + float64(n)*0x1p-53*mag
}

// gemmKActs is nb Q8_K activation rows: quantized realistic values, and raw
// blocks of uniform quants (-128 included, some blocks all -128 or all
// +127) whose sums of 16 are the true sums, with random f32 scales.
func gemmKActs(r *rand.Rand, t ggml.Type, nb, cols int) []byte {
	var a []byte
	for i := 0; i < nb; i++ {
		if i%2 == 0 {
			a = append(a, encodeAct(t, randActivations(r, cols))...)
			continue
		}
		row := rawBytes(r, cols/256*292)
		for b := 0; b < len(row); b += 292 {
			switch r.IntN(6) {
			case 0:
				for j := 4; j < 260; j++ {
					row[b+j] = 0x80
				}
			case 1:
				for j := 4; j < 260; j++ {
					row[b+j] = 0x7f
				}
			}
			binary.LittleEndian.PutUint32(row[b:], math.Float32bits(float32(math.Ldexp(1+r.Float64(), -10-r.IntN(6)))))
			for g := 0; g < 16; g++ {
				s := 0
				for j := 0; j < 16; j++ {
					s += int(int8(row[b+4+16*g+j]))
				}
				binary.LittleEndian.PutUint16(row[b+260+2*g:], uint16(int16(s)))
			}
		}
		a = append(a, row...)
	}
	return a
}

// gemmKWeights is random weight rows (harness scales) with about one
// super-block in eight given extreme fp16 d and dmin.
func gemmKWeights(r *rand.Rand, t ggml.Type, rows, cols int) []byte {
	w := randWeights(r, t, rows*cols)
	bs := t.TypeSize()
	for b := 0; b < len(w); b += bs {
		if r.IntN(8) == 0 {
			for _, off := range scaleFields(t) {
				putF16(w[b+off:], extremeF16[r.IntN(len(extremeF16))])
			}
		}
	}
	return w
}

// TestMatMulPackedK checks every packed K-quant MatMul output against the
// exact float64 dot and the scalar Dot within the bounds above, for row
// counts around the 16-row tile, widths of 1 to 22 super-blocks, batches
// around the kernels' token steps, 1 and 2 threads, and K-ranges of the type's kb
// as well as 3 and 1 super-blocks (outputs continued through y). y starts
// as NaN with a NaN guard after it.
func TestMatMulPackedK(t *testing.T) {
	types := []ggml.Type{ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.IQ4_XS, ggml.Q3_K, ggml.Q2_K,
		ggml.IQ3_XXS, ggml.IQ3_S, ggml.IQ1_S, ggml.IQ1_M, ggml.IQ2_XXS, ggml.IQ2_XS, ggml.IQ2_S}
	rowsList := []int{1, 5, 15, 16, 17, 33}
	colsList := []int{256, 768, 2048, 5632}
	if gemmRace {
		colsList = colsList[:3]
	}
	// Batches around the kernels' token steps (two at a time for the
	// K-quants; six, four, two, one for IQ4_XS on AVX2; twelve, eight,
	// four, two, one on AVX-512: 25 = 12+12+1, 23 = 12+8+2+1).
	nbList := []int{1, 2, 3, 4, 5, 6, 7, 9, 10, 13, 23, 25}
	const maxRows, maxNB = 33, 25
	pools := map[int]*Pool{1: NewPool(1), 2: NewPool(2)}
	defer pools[1].Close()
	defer pools[2].Close()
	r := rand.New(rand.NewPCG(121, 122))
	scalar := Scalar()
	tested := 0
	for _, typ := range types {
		paths := gemmPaths(typ)
		for _, cols := range colsList {
			n := cols / 256
			w := gemmKWeights(r, typ, maxRows, cols)
			a := gemmKActs(r, typ, maxNB, cols)
			ws, _ := RowSize(typ, cols)
			as, _ := RowSize(ActType(typ), cols)
			exact := make([]float64, maxNB*maxRows)
			mag := make([]float64, maxNB*maxRows)
			sdot := make([]float32, maxNB*maxRows)
			for b := 0; b < maxNB; b++ {
				for row := 0; row < maxRows; row++ {
					i := b*maxRows + row
					wr, ar := w[row*ws:(row+1)*ws], a[b*as:(b+1)*as]
					exact[i], mag[i] = exactDot(typ, cols, wr, ar)
					sdot[i] = scalar.Dot(typ)(cols, wr, ar)
				}
			}
			for _, k := range paths {
				g := k.gemmFor(typ)
				for _, rows := range rowsList {
					for _, nb := range nbList {
						for _, c := range []struct{ th, kb int }{{1, g.kb}, {2, g.kb}, {2, 3}, {1, 1}} {
							name := fmt.Sprintf("%s/%s/%dx%d/nb%d/t%d/kb%d", k.Name, typ, rows, cols, nb, c.th, c.kb)
							y := make([]float32, nb*rows+16)
							for i := range y {
								y[i] = float32(math.NaN())
							}
							matMulPacked(pools[c.th], g, typ, rows, cols, w[:rows*ws], a[:nb*as], nb, y[:nb*rows], ws, as, c.kb)
							tested++
							for i := nb * rows; i < len(y); i++ {
								if !math.IsNaN(float64(y[i])) {
									t.Fatalf("%s: wrote y[%d] past the %d outputs", name, i, nb*rows)
								}
							}
							for b := 0; b < nb; b++ {
								for row := 0; row < rows; row++ {
									got := float64(y[b*rows+row])
									i := b*maxRows + row
									tol := gemmKBound(n, mag[i])
									if d := math.Abs(got - exact[i]); !(d <= tol) {
										t.Fatalf("%s: y[b=%d, row=%d] = %g, exact %g, |diff| %g > %g", name, b, row, got, exact[i], d, tol)
									}
									stol := tol + dotTolerance(typ, cols, false)*u*mag[i]
									if d := math.Abs(got - float64(sdot[i])); !(d <= stol) {
										t.Fatalf("%s: y[b=%d, row=%d] = %g, scalar dot %g, |diff| %g > %g", name, b, row, got, sdot[i], d, stol)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no dispatch path on this CPU has packed K-quant routines")
	}
}

// The Q4_K and Q5_K packings recombine to Dequantize's values bit for bit:
// for every row and element, d·sc·q − dmin·m (with dequantize_row_q4_K /
// _q5_K's roundings) from the packed fields equals the dequantized element.
func TestGemmPackQ4KLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(123, 124))
	for _, c := range []struct {
		typ  ggml.Type
		pack func(n int, w []byte, ws int, dst []byte)
		qmax byte
	}{{ggml.Q4_K, packQ4K, 15}, {ggml.Q5_K, packQ5K, 31}} {
		bs := c.typ.TypeSize()
		for _, n := range []int{1, 2, 5} {
			ws := (n + 2) * bs
			w := randWeights(r, c.typ, 16*(n+2)*256)
			dst := rawBytes(r, n*gemmQ4KBlockB)
			c.pack(n, w, ws, dst)
			le := binary.LittleEndian
			for row := 0; row < 16; row++ {
				want := dequant(c.typ, w[row*ws:row*ws+n*bs], n*256)
				for b := 0; b < n; b++ {
					o := dst[b*gemmQ4KBlockB:]
					d := math.Float32frombits(le.Uint32(o[gemmQ4KD+4*row:]))
					dmin := math.Float32frombits(le.Uint32(o[gemmQ4KDmin+4*row:]))
					for e := 0; e < 256; e++ {
						s, j := e/32, e%32/4
						q := o[64*(8*s+j)+4*row+e%4]
						sc := le.Uint32(o[gemmQ4KSc+64*s+4*row:])
						m := le.Uint32(o[gemmQ4KMin+64*s+4*row:])
						if q > c.qmax || sc>>16 != sc&0xffff || m>>16 != m&0xffff {
							t.Fatalf("%s n=%d row %d block %d elem %d: q %d, scale pair %#x, min pair %#x", c.typ, n, row, b, e, q, sc, m)
						}
						got := float32(float32(d*float32(sc&0xffff))*float32(q)) - float32(dmin*float32(m&0xffff))
						if math.Float32bits(got) != math.Float32bits(want[b*256+e]) {
							t.Fatalf("%s n=%d row %d block %d elem %d: packed gives %g, dequantized %g", c.typ, n, row, b, e, got, want[b*256+e])
						}
					}
				}
			}
		}
	}
}

// MatMul takes the packed K-quant path from the routine's minBatch up, and
// below it stays bit-identical to Dot.
func TestMatMulPackedKDispatch(t *testing.T) {
	r := rand.New(rand.NewPCG(125, 126))
	p := NewPool(2)
	defer p.Close()
	const rows, cols = 21, 3 * 256
	for _, typ := range []ggml.Type{ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.IQ4_XS, ggml.Q3_K, ggml.Q2_K,
		ggml.IQ2_XXS, ggml.IQ2_XS, ggml.IQ2_S} {
		for _, k := range gemmPaths(typ) {
			g := k.gemmFor(typ)
			ws, _ := RowSize(typ, cols)
			as, _ := RowSize(ActType(typ), cols)
			w := gemmKWeights(r, typ, rows, cols)
			for _, nb := range []int{1, g.minBatch - 1, g.minBatch, g.minBatch + 3} {
				a := gemmKActs(r, typ, nb, cols)
				y := make([]float32, nb*rows)
				k.MatMul(p, typ, rows, cols, w, a, nb, y)
				want := make([]float32, nb*rows)
				if nb >= g.minBatch {
					matMulPacked(nil, g, typ, rows, cols, w, a, nb, want, ws, as, g.kb)
				} else {
					for b := 0; b < nb; b++ {
						for row := 0; row < rows; row++ {
							want[b*rows+row] = k.Dot(typ)(cols, w[row*ws:(row+1)*ws], a[b*as:(b+1)*as])
						}
					}
				}
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s %s nb=%d: MatMul y[%d] = %g, want %g", k.Name, typ, nb, i, y[i], want[i])
					}
				}
			}
		}
	}
}

// Short buffers and bad strides panic in Go before the assembly runs.
func TestGemmKShortInputsPanic(t *testing.T) {
	for _, typ := range []ggml.Type{ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.IQ4_XS, ggml.Q3_K, ggml.Q2_K,
		ggml.IQ2_XXS, ggml.IQ2_XS, ggml.IQ2_S} {
		for _, k := range gemmPaths(typ) {
			g := k.gemmFor(typ)
			bs, abs, pb := typ.TypeSize(), 292, g.blockB
			const n = 2
			ws := n * bs
			for _, c := range []struct {
				name string
				f    func()
			}{
				{"pack short w", func() { g.pack(n, make([]byte, 16*ws-1), ws, make([]byte, n*pb)) }},
				{"pack short dst", func() { g.pack(n, make([]byte, 16*ws), ws, make([]byte, n*pb-1)) }},
				{"pack stride", func() { g.pack(n, make([]byte, 16*ws), ws-1, make([]byte, n*pb)) }},
				{"kernel short y", func() {
					g.kernel(n, make([]byte, n*pb), make([]byte, 2*n*abs), n*abs, nil, 0, make([]float32, 16+15), 16, 2, 16, true)
				}},
				{"kernel short a", func() {
					g.kernel(n, make([]byte, n*pb), make([]byte, 2*n*abs-1), n*abs, nil, 0, make([]float32, 32), 16, 2, 16, true)
				}},
				{"kernel short pw", func() {
					g.kernel(n, make([]byte, n*pb-1), make([]byte, 2*n*abs), n*abs, nil, 0, make([]float32, 32), 16, 2, 16, true)
				}},
				{"kernel 17 rows", func() {
					g.kernel(n, make([]byte, n*pb), make([]byte, 2*n*abs), n*abs, nil, 0, make([]float32, 64), 32, 2, 17, true)
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

// The Q6_K packing recombines to Dequantize's values bit for bit:
// (d·sc)·(q−32) from the packed fields, for every row and element, and the
// offset pairs hold the scales of groups 2k, 2k+1.
func TestGemmPackQ6KLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(127, 128))
	for _, n := range []int{1, 2, 5} {
		ws := (n + 2) * 210
		w := randWeights(r, ggml.Q6_K, 16*(n+2)*256)
		dst := rawBytes(r, n*gemmQ6KBlockB)
		packQ6K(n, w, ws, dst)
		le := binary.LittleEndian
		for row := 0; row < 16; row++ {
			want := dequant(ggml.Q6_K, w[row*ws:row*ws+n*210], n*256)
			for b := 0; b < n; b++ {
				o := dst[b*gemmQ6KBlockB:]
				d := math.Float32frombits(le.Uint32(o[gemmQ6KD+4*row:]))
				for e := 0; e < 256; e++ {
					g := e / 16
					q := o[64*(e/4)+4*row+e%4]
					sc := le.Uint32(o[gemmQ6KSc+64*g+4*row:])
					off := le.Uint32(o[gemmQ6KOff+64*(g/2)+4*row:])
					if q > 63 || sc>>16 != sc&0xffff || uint16(off>>(16*(g%2))) != uint16(sc) {
						t.Fatalf("n=%d row %d block %d elem %d: q %d, scale pair %#x, offset pair %#x", n, row, b, e, q, sc, off)
					}
					got := float32(d*float32(int16(sc))) * float32(int(q)-32)
					if math.Float32bits(got) != math.Float32bits(want[b*256+e]) {
						t.Fatalf("n=%d row %d block %d elem %d: packed gives %g, dequantized %g", n, row, b, e, got, want[b*256+e])
					}
				}
			}
		}
	}
}

// The IQ4_XS packing recombines to Dequantize's values bit for bit:
// (d·sc)·value from the packed index and scale, and the virtual sub-block
// and offset scales are 16·sc, sc and sc. (The kernel's nibble tables are
// checked end to end by TestMatMulPackedK.)
func TestGemmPackIQ4XSLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(129, 130))
	for _, n := range []int{1, 2, 5} {
		ws := (n + 2) * 136
		w := randWeights(r, ggml.IQ4_XS, 16*(n+2)*256)
		dst := rawBytes(r, n*gemmIQ4XSBlockB)
		packIQ4XS(n, w, ws, dst)
		le := binary.LittleEndian
		for row := 0; row < 16; row++ {
			want := dequant(ggml.IQ4_XS, w[row*ws:row*ws+n*136], n*256)
			for b := 0; b < n; b++ {
				o := dst[b*gemmIQ4XSBlockB:]
				d := math.Float32frombits(le.Uint32(o[gemmIQ4XSD+4*row:]))
				for e := 0; e < 256; e++ {
					s, j := e/32, e%32/4
					idx := o[64*(8*s+j)+4*row+e%4]
					s16 := le.Uint32(o[gemmIQ4XSSc+64*(2*s)+4*row:])
					s1 := le.Uint32(o[gemmIQ4XSSc+64*(2*s+1)+4*row:])
					off := le.Uint32(o[gemmIQ4XSOff+64*s+4*row:])
					sc := int16(s1)
					if idx > 15 || s1>>16 != s1&0xffff || off != s1 || int16(s16) != 16*sc || s16>>16 != s16&0xffff {
						t.Fatalf("n=%d row %d block %d elem %d: index %d, scale pairs %#x %#x, offset pair %#x", n, row, b, e, idx, s16, s1, off)
					}
					got := float32(d*float32(sc)) * float32(iq4Codebook[idx])
					if math.Float32bits(got) != math.Float32bits(want[b*256+e]) {
						t.Fatalf("n=%d row %d block %d elem %d: packed gives %g, dequantized %g", n, row, b, e, got, want[b*256+e])
					}
				}
			}
		}
	}
}

// The Q3_K packing (Q6_K's layout) recombines to Dequantize's values bit for
// bit: (d·sc)·(q−32) from the packed fields, as for Q6_K, with every packed
// value in 28..35 and the offset pairs holding the scales of groups 2k, 2k+1.
func TestGemmPackQ3KLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(131, 132))
	for _, n := range []int{1, 2, 5} {
		ws := (n + 2) * 110
		w := randWeights(r, ggml.Q3_K, 16*(n+2)*256)
		dst := rawBytes(r, n*gemmQ6KBlockB)
		packQ3K(n, w, ws, dst)
		le := binary.LittleEndian
		for row := 0; row < 16; row++ {
			want := dequant(ggml.Q3_K, w[row*ws:row*ws+n*110], n*256)
			for b := 0; b < n; b++ {
				o := dst[b*gemmQ6KBlockB:]
				d := math.Float32frombits(le.Uint32(o[gemmQ6KD+4*row:]))
				for e := 0; e < 256; e++ {
					g := e / 16
					q := o[64*(e/4)+4*row+e%4]
					sc := le.Uint32(o[gemmQ6KSc+64*g+4*row:])
					off := le.Uint32(o[gemmQ6KOff+64*(g/2)+4*row:])
					if q < 28 || q > 35 || sc>>16 != sc&0xffff || uint16(off>>(16*(g%2))) != uint16(sc) {
						t.Fatalf("n=%d row %d block %d elem %d: q %d, scale pair %#x, offset pair %#x", n, row, b, e, q, sc, off)
					}
					got := float32(d*float32(int16(sc))) * float32(int(q)-32)
					if math.Float32bits(got) != math.Float32bits(want[b*256+e]) {
						t.Fatalf("n=%d row %d block %d elem %d: packed gives %g, dequantized %g", n, row, b, e, got, want[b*256+e])
					}
				}
			}
		}
	}
}

// The Q2_K packing recombines to Dequantize's values bit for bit:
// (d·sc)·q − dmin·m from the packed fields, with every packed value in 0..3
// and the min pairs holding the mins of groups 2k, 2k+1.
func TestGemmPackQ2KLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(133, 134))
	for _, n := range []int{1, 2, 5} {
		ws := (n + 2) * 84
		w := randWeights(r, ggml.Q2_K, 16*(n+2)*256)
		dst := rawBytes(r, n*gemmQ2KBlockB)
		packQ2K(n, w, ws, dst)
		le := binary.LittleEndian
		for row := 0; row < 16; row++ {
			want := dequant(ggml.Q2_K, w[row*ws:row*ws+n*84], n*256)
			for b := 0; b < n; b++ {
				o := dst[b*gemmQ2KBlockB:]
				d := math.Float32frombits(le.Uint32(o[gemmQ6KD+4*row:]))
				dmin := math.Float32frombits(le.Uint32(o[gemmQ2KDmin+4*row:]))
				for e := 0; e < 256; e++ {
					g := e / 16
					q := o[64*(e/4)+4*row+e%4]
					sc := le.Uint32(o[gemmQ6KSc+64*g+4*row:])
					m := uint16(le.Uint32(o[gemmQ6KOff+64*(g/2)+4*row:]) >> (16 * (g % 2)))
					if q > 3 || sc>>16 != sc&0xffff || sc&0xffff > 15 || m > 15 {
						t.Fatalf("n=%d row %d block %d elem %d: q %d, scale pair %#x, min %d", n, row, b, e, q, sc, m)
					}
					got := float32(d*float32(sc&0xffff))*float32(q) - float32(dmin*float32(m))
					if math.Float32bits(got) != math.Float32bits(want[b*256+e]) {
						t.Fatalf("n=%d row %d block %d elem %d: packed gives %g, dequantized %g", n, row, b, e, got, want[b*256+e])
					}
				}
			}
		}
	}
}
