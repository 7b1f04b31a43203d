package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// iqGridTypes are the grid i-quants of iq3.go and iq1.go.
var iqGridTypes = []ggml.Type{ggml.IQ3_XXS, ggml.IQ3_S, ggml.IQ1_S, ggml.IQ1_M}

// TestIQGridDotsMatchScalar: the IQ3/IQ1 SIMD dots form the scalar dot's
// exact int32 per super-block and keep its float steps, so they are
// bit-identical to it, for every activation byte (-128 included: raw
// random rows) and every quant byte. (IQ1_S takes the delta term from the
// Q8_K group sums, so its rows come from QuantizeAct.)
func TestIQGridDotsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(231, 232))
	for _, typ := range iqGridTypes {
		for _, k := range fourRowPaths() {
			if k == Scalar() || k.Dot(typ) == nil {
				continue
			}
			for _, nb := range []int{1, 2, 3, 7, 43} {
				n := 256 * nb
				for _, raw := range []bool{false, true} {
					w := randWeights(r, typ, n)
					a := encodeAct(typ, randActivations(r, n))
					if raw && typ != ggml.IQ1_S {
						for b := 0; b < nb; b++ {
							for i := 0; i < 256; i++ {
								a[b*292+4+i] = byte(r.Uint32())
							}
						}
					}
					got, want := k.Dot(typ)(n, w, a), Scalar().Dot(typ)(n, w, a)
					if math.Float32bits(got) != math.Float32bits(want) {
						t.Errorf("%s %s n=%d raw=%v: %g, scalar %g", k.Name, typ, n, raw, got, want)
					}
				}
			}
		}
	}
}

// TestGemmPackIQLayout: the grid i-quants' Q6_K-layout packings
// (gemmiq.go) recombine to Dequantize's values bit for bit: for every row
// and element, float32(d·sc)·(q−32) from the packed fields equals the
// dequantized element, with every packed value in 1..63, each scale pair
// (sc, sc) and the offset pairs holding the scales of groups 2k, 2k+1.
func TestGemmPackIQLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(233, 234))
	packs := map[ggml.Type]func(n int, w []byte, ws int, dst []byte){
		ggml.IQ3_XXS: packIQ3_XXS, ggml.IQ3_S: packIQ3_S, ggml.IQ1_S: packIQ1_S, ggml.IQ1_M: packIQ1_M,
	}
	le := binary.LittleEndian
	for _, typ := range iqGridTypes {
		bs := typ.TypeSize()
		for _, n := range []int{1, 2, 5} {
			ws := (n + 2) * bs
			w := randWeights(r, typ, 16*(n+2)*256)
			dst := rawBytes(r, n*gemmQ6KBlockB)
			packs[typ](n, w, ws, dst)
			for row := 0; row < 16; row++ {
				want := dequant(typ, w[row*ws:row*ws+n*bs], n*256)
				for b := 0; b < n; b++ {
					o := dst[b*gemmQ6KBlockB:]
					d := math.Float32frombits(le.Uint32(o[gemmQ6KD+4*row:]))
					for e := 0; e < 256; e++ {
						g := e / 16
						q := o[64*(e/4)+4*row+e%4]
						sc := le.Uint32(o[gemmQ6KSc+64*g+4*row:])
						off := le.Uint32(o[gemmQ6KOff+64*(g/2)+4*row:])
						if q < 1 || q > 63 || sc>>16 != sc&0xffff || uint16(off>>(16*(g%2))) != uint16(sc) {
							t.Fatalf("%s n=%d row %d block %d elem %d: q %d, scale pair %#x, offset pair %#x", typ, n, row, b, e, q, sc, off)
						}
						got := float32(d*float32(int16(sc))) * float32(int(q)-32)
						if math.Float32bits(got) != math.Float32bits(want[b*256+e]) {
							t.Fatalf("%s n=%d row %d block %d elem %d: packed gives %g, dequantized %g", typ, n, row, b, e, got, want[b*256+e])
						}
					}
				}
			}
		}
	}
}
