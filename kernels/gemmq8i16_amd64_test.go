package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// gemmQ8Signed is the byte kernel the int16 Q8_0 MatMul replaced on the
// avx2 path (|w|·sign(a, w)), kept as the bit-identity reference and for
// BenchmarkGemmQ8Alt.
func gemmQ8Signed() *gemmRoutines {
	return gemm32PF(0, gemmPackQ8_0AVX2, gemmKernelQ8PFAVX2)(ggml.Q8_0)
}

// The assembly packer writes exactly packQ8I16Go's bytes, for raw blocks
// (any quant byte, -128 included; scales of any finite fp16 value) at a
// row stride wider than the packed range, and the packed values are the
// rows' quants and scales.
func TestGemmPackQ8I16Layout(t *testing.T) {
	if !cpuHasAVX2FMA() {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(141, 142))
	g := newGemmQ8I16(ggml.Q8_0)
	le := binary.LittleEndian
	for _, n := range []int{1, 2, 3, 7, 32} {
		ws := (n + 3) * 34
		w := rawBytes(r, 15*ws+n*34)
		for b := 0; b+34 <= len(w); b += 34 {
			v := float32(math.Ldexp(r.Float64(), r.IntN(40)-24))
			if r.IntN(2) == 0 {
				v = -v
			}
			putF16(w[b:], v)
		}
		for i := 2; i < 34; i++ {
			w[i] = 0x80 // a block of -128 in row 0
		}
		got := rawBytes(r, n*gemmQ8I16BlockB)
		want := rawBytes(r, n*gemmQ8I16BlockB)
		g.pack(n, w, ws, got)
		packQ8I16Go(n, w, ws, want)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("n=%d: packed byte %d (block %d offset %d) = %#02x, Go reference %#02x", n, i, i/gemmQ8I16BlockB, i%gemmQ8I16BlockB, got[i], want[i])
			}
		}
		for row := 0; row < 16; row++ {
			for b := 0; b < n; b++ {
				x := w[row*ws+b*34:]
				o := want[b*gemmQ8I16BlockB:]
				if d := le.Uint32(o[gemmQ8I16D+4*row:]); d != math.Float32bits(getF16(x)) {
					t.Fatalf("n=%d row %d block %d: scale %#x, want %g", n, row, b, d, getF16(x))
				}
				for e := 0; e < 32; e++ {
					if q := int16(le.Uint16(o[64*(e/2)+4*row+2*(e%2):])); q != int16(int8(x[2+e])) {
						t.Fatalf("n=%d row %d block %d element %d: packed %d, quant %d", n, row, b, e, q, int8(x[2+e]))
					}
				}
			}
		}
	}
}

// The prep is each block's quants as int16, its f32 scale and four zero
// bytes, at the given stride, for blocks of all -128, all +127 and random
// quants.
func TestGemmPrepQ8I16(t *testing.T) {
	if !cpuHasAVX2FMA() {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(143, 144))
	g := newGemmQ8I16(ggml.Q8_0)
	le := binary.LittleEndian
	const n, stride = 11, 80
	a := gemmActs(r, ggml.Q8_0, 2, n*32)[n*34:]
	for j := 2; j < 34; j++ {
		a[j] = 0x80
		a[34+j] = 0x7f
	}
	dst := rawBytes(r, (n-1)*stride+gemmQ8I16PrepB)
	g.prep(n, a, dst, stride)
	for b := 0; b < n; b++ {
		o := dst[b*stride:]
		for e := 0; e < 32; e++ {
			if q := int16(le.Uint16(o[2*e:])); q != int16(int8(a[b*34+2+e])) {
				t.Fatalf("block %d element %d: prep %d, quant %d", b, e, q, int8(a[b*34+2+e]))
			}
		}
		if d := le.Uint32(o[64:]); d != math.Float32bits(getF16(a[b*34:])) || le.Uint32(o[68:]) != 0 {
			t.Fatalf("block %d: prep scale %#x pad %#x, want %g and 0", b, d, le.Uint32(o[68:]), getF16(a[b*34:]))
		}
	}
}

// The int16 MatMul is the byte kernel's, bit for bit (same exact block
// sums, same float order) on QuantizeAct-range activations: short and
// full tiles, widths of 1 to 176 blocks, batches through the 6/4/2/1-token
// steps, K-ranges of one range per row and of 5 blocks, 1 and 2 threads.
func TestGemmQ8I16MatchesSigned(t *testing.T) {
	if !cpuHasAVX2FMA() {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(145, 146))
	pools := map[int]*Pool{1: NewPool(1), 2: NewPool(2)}
	defer pools[1].Close()
	defer pools[2].Close()
	const typ = ggml.Q8_0
	old, cur := gemmQ8Signed(), newGemmQ8I16(typ)
	for _, rows := range []int{1, 7, 16, 17, 40} {
		for _, cols := range []int{32, 96, 2048, 5632} {
			w := gemmWeights(r, typ, rows, cols)
			ws, _ := RowSize(typ, cols)
			as, _ := RowSize(ActType(typ), cols)
			for _, nb := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 31} {
				a := gemmActs(r, typ, nb, cols)
				for _, th := range []int{1, 2} {
					for _, kb := range []int{gemmKB, 5} {
						name := fmt.Sprintf("%dx%d/nb%d/t%d/kb%d", rows, cols, nb, th, kb)
						want := make([]float32, nb*rows)
						got := make([]float32, nb*rows)
						matMulPacked(pools[th], old, typ, rows, cols, w, a, nb, want, ws, as, kb)
						matMulPacked(pools[th], cur, typ, rows, cols, w, a, nb, got, ws, as, kb)
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s: y[%d] = %g int16, %g byte kernel", name, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// cpuHasAVX2FMA reports whether the avx2 path's requirements hold.
func cpuHasAVX2FMA() bool {
	_, err := ByName("avx2")
	return err == nil
}

// The avx2 path's MatMul takes the int16 routines exactly from batch
// gemmQ8I16MinBatch, and its results there are matMulPacked's through them.
func TestMatMulQ8I16Dispatch(t *testing.T) {
	k, err := ByName("avx2")
	if err != nil {
		t.Skip("no avx2 path on this CPU")
	}
	const typ = ggml.Q8_0
	g := k.gemmFor(typ)
	if g.big == nil || g.forBatch(gemmQ8I16MinBatch-1) != g || g.forBatch(gemmQ8I16MinBatch) != g.big || g.big.blockB != gemmQ8I16BlockB {
		t.Fatalf("avx2 Q8_0: int16 routines not taken from batch %d", gemmQ8I16MinBatch)
	}
	r := rand.New(rand.NewPCG(147, 148))
	p := NewPool(2)
	defer p.Close()
	const rows, cols = 40, 9 * 32
	ws, _ := RowSize(typ, cols)
	as, _ := RowSize(ActType(typ), cols)
	w := gemmWeights(r, typ, rows, cols)
	for _, nb := range []int{gemmQ8I16MinBatch - 1, gemmQ8I16MinBatch, gemmQ8I16MinBatch + 5} {
		a := gemmActs(r, typ, nb, cols)
		y1 := make([]float32, nb*rows)
		y2 := make([]float32, nb*rows)
		k.MatMul(p, typ, rows, cols, w, a, nb, y1)
		matMulPacked(nil, g.forBatch(nb), typ, rows, cols, w, a, nb, y2, ws, as, gemmKB)
		for i := range y1 {
			if math.Float32bits(y1[i]) != math.Float32bits(y2[i]) {
				t.Fatalf("nb=%d: MatMul y[%d] = %g, packed %g", nb, i, y1[i], y2[i])
			}
		}
	}
}
