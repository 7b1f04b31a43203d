package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// The int16 IQ4_XS packing (gemmiq4xs_amd64.go) recombines to Dequantize's
// values bit for bit: for every row and element, the packed int16 is
// sc·value for a codebook value with fl(d·sc)·value equal to the
// dequantized element (sc the sub-block's scale code − 32, d the packed
// f32). And the assembly packer writes exactly the Go reference's bytes,
// for random blocks and for raw bytes (any scale bits, any d).
func TestGemmPackIQ4XS16Layout(t *testing.T) {
	r := rand.New(rand.NewPCG(133, 134))
	le := binary.LittleEndian
	for _, n := range []int{1, 2, 5} {
		ws := (n + 2) * 136
		for _, raw := range []bool{false, true} {
			var w []byte
			if raw {
				w = rawBytes(r, 16*ws)
			} else {
				w = randWeights(r, ggml.IQ4_XS, 16*(n+2)*256)
			}
			dst := rawBytes(r, n*gemmIQ4XS16BlockB)
			ref := rawBytes(r, n*gemmIQ4XS16BlockB)
			packIQ4XS16(n, w, ws, dst)
			packIQ4XS16Go(n, w, ws, ref)
			for i := range dst {
				if dst[i] != ref[i] {
					t.Fatalf("n=%d raw=%v: packed byte %d (block %d offset %d) = %#x, Go reference %#x", n, raw, i, i/gemmIQ4XS16BlockB, i%gemmIQ4XS16BlockB, dst[i], ref[i])
				}
			}
			if raw {
				continue
			}
			for row := 0; row < 16; row++ {
				want := dequant(ggml.IQ4_XS, w[row*ws:row*ws+n*136], n*256)
				for b := 0; b < n; b++ {
					o := dst[b*gemmIQ4XS16BlockB:]
					x := w[row*ws+b*136:]
					d := math.Float32frombits(le.Uint32(o[gemmIQ4XS16D+4*row:]))
					for e := 0; e < 256; e++ {
						s, j := e/32, e%32
						p := int16(le.Uint16(o[64*(16*s+j/2)+4*row+2*(j%2):]))
						sc := int16(iq4xsScale(x, s) - 32)
						wv := want[b*256+e]
						if sc == 0 {
							if p != 0 || wv != 0 {
								t.Fatalf("n=%d row %d block %d elem %d: scale 0, packed %d, dequantized %g", n, row, b, e, p, wv)
							}
							continue
						}
						ok := false
						for _, v := range kvaluesIQ4NL {
							if int16(v)*sc == p && math.Float32bits(float32(d*float32(sc))*float32(v)) == math.Float32bits(wv) {
								ok = true
							}
						}
						if !ok {
							t.Fatalf("n=%d row %d block %d elem %d: packed %d (scale %d, d %g) is no codebook value giving the dequantized %g", n, row, b, e, p, sc, d, wv)
						}
					}
				}
			}
		}
	}
}
