package kernels

// Layout tests: blocks are packed here from their logical fields following
// the block definitions in ggml-common.h and the packing loops of ggml's
// quantize_row_*_ref (the encode direction, written independently of the
// decoders under test), then Dequantize must give exactly ggml's
// dequantize_row_* formula for every element, bit for bit.

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// logical is one block's content before packing.
type logical struct {
	d, dmin float32 // already fp16-representable
	q       []int   // per-element stored quant (unsigned, before any offset)
	sc, mn  []int   // per-sub-block scale and min codes
}

func f16Round(r *rand.Rand) float32 {
	v := float32(math.Ldexp(1+r.Float64(), -3-r.IntN(10)))
	if r.IntN(3) == 0 {
		v = -v
	}
	return F16ToF32(F32ToF16(v))
}

func randLogical(r *rand.Rand, n, qmax, nsub, scmax, mnmax int) logical {
	l := logical{d: f16Round(r), dmin: f16Round(r), q: make([]int, n), sc: make([]int, nsub), mn: make([]int, nsub)}
	for i := range l.q {
		l.q[i] = r.IntN(qmax + 1)
	}
	// Force the extremes to occur so every bit of every field is exercised.
	l.q[0], l.q[n-1] = 0, qmax
	for i := range l.sc {
		l.sc[i] = r.IntN(scmax + 1)
		l.mn[i] = r.IntN(mnmax + 1)
	}
	if nsub > 1 {
		l.sc[0], l.sc[nsub-1], l.mn[0], l.mn[nsub-1] = scmax, 0, 0, mnmax
	}
	return l
}

type layoutCase struct {
	t     ggml.Type
	qmax  int
	nsub  int // sub-blocks with their own scale (1 for legacy types)
	scmax int
	mnmax int
	pack  func(l logical) []byte
	want  func(l logical, i int) float32
}

func layoutCases() []layoutCase {
	sub16 := func(i int) int { return i / 16 }
	sub32 := func(i int) int { return i / 32 }
	return []layoutCase{
		{t: ggml.Q4_0, qmax: 15, nsub: 1,
			pack: func(l logical) []byte {
				b := make([]byte, 18)
				putF16(b, l.d)
				for j := 0; j < 16; j++ {
					b[2+j] = byte(l.q[j] | l.q[j+16]<<4)
				}
				return b
			},
			want: func(l logical, i int) float32 { return float32(l.q[i]-8) * l.d }},
		{t: ggml.Q4_1, qmax: 15, nsub: 1,
			pack: func(l logical) []byte {
				b := make([]byte, 20)
				putF16(b, l.d)
				putF16(b[2:], l.dmin)
				for j := 0; j < 16; j++ {
					b[4+j] = byte(l.q[j] | l.q[j+16]<<4)
				}
				return b
			},
			want: func(l logical, i int) float32 { return float32(float32(l.q[i])*l.d) + l.dmin }},
		{t: ggml.Q5_0, qmax: 31, nsub: 1,
			pack: func(l logical) []byte {
				b := make([]byte, 22)
				putF16(b, l.d)
				var qh uint32
				for j := 0; j < 16; j++ {
					b[6+j] = byte(l.q[j]&15 | (l.q[j+16]&15)<<4)
					qh |= uint32(l.q[j]>>4) << j
					qh |= uint32(l.q[j+16]>>4) << (j + 16)
				}
				binary.LittleEndian.PutUint32(b[2:], qh)
				return b
			},
			want: func(l logical, i int) float32 { return float32(l.q[i]-16) * l.d }},
		{t: ggml.Q5_1, qmax: 31, nsub: 1,
			pack: func(l logical) []byte {
				b := make([]byte, 24)
				putF16(b, l.d)
				putF16(b[2:], l.dmin)
				var qh uint32
				for j := 0; j < 16; j++ {
					b[8+j] = byte(l.q[j]&15 | (l.q[j+16]&15)<<4)
					qh |= uint32(l.q[j]>>4) << j
					qh |= uint32(l.q[j+16]>>4) << (j + 16)
				}
				binary.LittleEndian.PutUint32(b[4:], qh)
				return b
			},
			want: func(l logical, i int) float32 { return float32(float32(l.q[i])*l.d) + l.dmin }},
		{t: ggml.Q8_0, qmax: 255, nsub: 1,
			pack: func(l logical) []byte {
				b := make([]byte, 34)
				putF16(b, l.d)
				for j := 0; j < 32; j++ {
					b[2+j] = byte(l.q[j]) // stored as int8 two's complement
				}
				return b
			},
			want: func(l logical, i int) float32 { return float32(int8(l.q[i])) * l.d }},
		{t: ggml.Q2_K, qmax: 3, nsub: 16, scmax: 15, mnmax: 15,
			pack: func(l logical) []byte {
				b := make([]byte, 84)
				for j := 0; j < 16; j++ {
					b[j] = byte(l.sc[j] | l.mn[j]<<4)
				}
				for j := 0; j < 256; j += 128 {
					for i := 0; i < 32; i++ {
						b[16+j/4+i] = byte(l.q[j+i] | l.q[j+i+32]<<2 | l.q[j+i+64]<<4 | l.q[j+i+96]<<6)
					}
				}
				putF16(b[80:], l.d)
				putF16(b[82:], l.dmin)
				return b
			},
			want: func(l logical, i int) float32 {
				s := sub16(i)
				return float32(float32(l.d*float32(l.sc[s]))*float32(l.q[i])) - float32(l.dmin*float32(l.mn[s]))
			}},
		{t: ggml.Q3_K, qmax: 7, nsub: 16, scmax: 63,
			pack: func(l logical) []byte {
				b := make([]byte, 110)
				// q here is L = value+4 in 0..7: high bit goes to hmask
				// (element j → byte j%32, bit j/32), low two bits to qs.
				low := make([]int, 256)
				for j := 0; j < 256; j++ {
					low[j] = l.q[j] & 3
					if l.q[j] > 3 {
						b[j%32] |= 1 << (j / 32)
					}
				}
				for j := 0; j < 256; j += 128 {
					for i := 0; i < 32; i++ {
						b[32+j/4+i] = byte(low[j+i] | low[j+i+32]<<2 | low[j+i+64]<<4 | low[j+i+96]<<6)
					}
				}
				sc := b[96:108]
				for j := 0; j < 16; j++ {
					v := l.sc[j]
					if j < 8 {
						sc[j] = byte(v & 15)
					} else {
						sc[j-8] |= byte(v&15) << 4
					}
					sc[j%4+8] |= byte(v>>4) << (2 * (j / 4))
				}
				putF16(b[108:], l.d)
				return b
			},
			want: func(l logical, i int) float32 {
				return float32(l.d*float32(l.sc[sub16(i)]-32)) * float32(l.q[i]-4)
			}},
		{t: ggml.Q4_K, qmax: 15, nsub: 8, scmax: 63, mnmax: 63,
			pack: func(l logical) []byte {
				b := make([]byte, 144)
				putF16(b, l.d)
				putF16(b[2:], l.dmin)
				packKScales(b[4:16], l.sc, l.mn)
				for j := 0; j < 256; j += 64 {
					for i := 0; i < 32; i++ {
						b[16+j/2+i] = byte(l.q[j+i] | l.q[j+i+32]<<4)
					}
				}
				return b
			},
			want: func(l logical, i int) float32 {
				s := sub32(i)
				return float32(float32(l.d*float32(l.sc[s]))*float32(l.q[i])) - float32(l.dmin*float32(l.mn[s]))
			}},
		{t: ggml.Q5_K, qmax: 31, nsub: 8, scmax: 63, mnmax: 63,
			pack: func(l logical) []byte {
				b := make([]byte, 176)
				putF16(b, l.d)
				putF16(b[2:], l.dmin)
				packKScales(b[4:16], l.sc, l.mn)
				qh, ql := b[16:48], b[48:176]
				m1, m2 := byte(1), byte(2)
				for n := 0; n < 256; n += 64 {
					for j := 0; j < 32; j++ {
						l1, l2 := l.q[n+j], l.q[n+j+32]
						if l1 > 15 {
							l1 -= 16
							qh[j] |= m1
						}
						if l2 > 15 {
							l2 -= 16
							qh[j] |= m2
						}
						ql[n/2+j] = byte(l1 | l2<<4)
					}
					m1 <<= 2
					m2 <<= 2
				}
				return b
			},
			want: func(l logical, i int) float32 {
				s := sub32(i)
				return float32(float32(l.d*float32(l.sc[s]))*float32(l.q[i])) - float32(l.dmin*float32(l.mn[s]))
			}},
		{t: ggml.Q6_K, qmax: 63, nsub: 16, scmax: 255,
			pack: func(l logical) []byte {
				b := make([]byte, 210)
				for j := 0; j < 256; j += 128 {
					ql, qh := b[j/2:], b[128+j/4:]
					for i := 0; i < 32; i++ {
						L := l.q[j+i : j+i+97]
						ql[i] = byte(L[0]&15 | (L[64]&15)<<4)
						ql[i+32] = byte(L[32]&15 | (L[96]&15)<<4)
						qh[i] = byte(L[0]>>4 | (L[32]>>4)<<2 | (L[64]>>4)<<4 | (L[96]>>4)<<6)
					}
				}
				for j := 0; j < 16; j++ {
					b[192+j] = byte(l.sc[j]) // int8
				}
				putF16(b[208:], l.d)
				return b
			},
			want: func(l logical, i int) float32 {
				return float32(l.d*float32(int8(l.sc[sub16(i)]))) * float32(l.q[i]-32)
			}},
		{t: ggml.IQ4_NL, qmax: 15, nsub: 1,
			pack: func(l logical) []byte {
				b := make([]byte, 18)
				putF16(b, l.d)
				for j := 0; j < 16; j++ {
					b[2+j] = byte(l.q[j] | l.q[j+16]<<4)
				}
				return b
			},
			want: func(l logical, i int) float32 { return l.d * float32(iq4Codebook[l.q[i]]) }},
		{t: ggml.IQ4_XS, qmax: 15, nsub: 8, scmax: 63,
			pack: func(l logical) []byte {
				// block_iq4_xs: d, scales_h (2 bits per sub-block), scales_l
				// (4 bits per sub-block), qs as in quantize_row_iq4_xs.
				b := make([]byte, 136)
				putF16(b, l.d)
				var sh uint16
				for ib := 0; ib < 8; ib++ {
					b[4+ib/2] |= byte(l.sc[ib]&15) << (4 * (ib % 2))
					sh |= uint16(l.sc[ib]>>4) << (2 * ib)
					for j := 0; j < 16; j++ {
						b[8+16*ib+j] = byte(l.q[32*ib+j] | l.q[32*ib+16+j]<<4)
					}
				}
				binary.LittleEndian.PutUint16(b[2:], sh)
				return b
			},
			want: func(l logical, i int) float32 {
				return float32(l.d*float32(l.sc[sub32(i)]-32)) * float32(iq4Codebook[l.q[i]])
			}},
	}
}

// iq4Codebook is kvalues_iq4nl as printed in ggml-common.h, written out here
// independently of the kernels' table (the golden test checks both against
// ggml itself).
var iq4Codebook = [16]int{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// packKScales is the 6-bit (scale, min) packing of quantize_row_q4_K_ref:
// pairs 0..3 in the low 6 bits of bytes 0..3 (scales) and 4..7 (mins); pairs
// 4..7 split into low nibbles in bytes 8..11 and top 2 bits in the high bits
// of bytes 0..7.
func packKScales(b []byte, sc, mn []int) {
	for j := 0; j < 8; j++ {
		ls, lm := sc[j], mn[j]
		if j < 4 {
			b[j] = byte(ls)
			b[j+4] = byte(lm)
		} else {
			b[j+4] = byte(ls&15 | (lm&15)<<4)
			b[j-4] |= byte(ls>>4) << 6
			b[j] |= byte(lm>>4) << 6
		}
	}
}

func TestDequantLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range layoutCases() {
		n := c.t.BlockSize()
		for rep := 0; rep < 200; rep++ {
			nblocks := 1 + rep%3
			var row []byte
			var blocks []logical
			for b := 0; b < nblocks; b++ {
				l := randLogical(r, n, c.qmax, c.nsub, c.scmax, c.mnmax)
				blocks = append(blocks, l)
				row = append(row, c.pack(l)...)
			}
			if len(row) != nblocks*c.t.TypeSize() {
				t.Fatalf("%s: packed %d bytes, want %d", c.t, len(row), nblocks*c.t.TypeSize())
			}
			got := dequant(c.t, row, nblocks*n)
			for b, l := range blocks {
				for i := 0; i < n; i++ {
					want := c.want(l, i)
					if g := got[b*n+i]; math.Float32bits(g) != math.Float32bits(want) {
						t.Fatalf("%s block %d element %d: got %g want %g", c.t, b, i, g, want)
					}
				}
			}
		}
	}
}

// TestQ8KLayout checks the activation block Q8_K: f32 d, int8 quants, int16
// sums of 16, by building one by hand.
func TestQ8KLayout(t *testing.T) {
	b := make([]byte, 292)
	binary.LittleEndian.PutUint32(b, math.Float32bits(0.25))
	for i := 0; i < 256; i++ {
		b[4+i] = byte(int8(i - 128))
	}
	y := dequant(ggml.Q8_K, b, 256)
	for i, v := range y {
		if v != 0.25*float32(i-128) {
			t.Fatalf("element %d: %g", i, v)
		}
	}
}

func TestDequantErrors(t *testing.T) {
	cases := []struct {
		t    ggml.Type
		src  int
		dst  int
		frag string
	}{
		{ggml.Q4_0, 18, 31, "not a multiple"},
		{ggml.Q4_0, 17, 32, "need 18 bytes"},
		{ggml.Q4_K, 144, 128, "not a multiple"},
		{ggml.I16, 512, 256, "not supported"},
		{ggml.Type(99), 1, 1, "unknown type"},
	}
	for _, c := range cases {
		err := Dequantize(c.t, make([]byte, c.src), make([]float32, c.dst))
		if err == nil || !contains(err.Error(), c.frag) {
			t.Errorf("Dequantize(%s, %d bytes, %d): err %v, want containing %q", c.t, c.src, c.dst, err, c.frag)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// FuzzDequantize: arbitrary bytes, types and lengths give a result or an
// error, never a panic (block contents are never validated: every bit
// pattern, including NaN/Inf scales, decodes to some f32).
func FuzzDequantize(f *testing.F) {
	f.Add(uint8(2), uint16(32), make([]byte, 18))
	f.Add(uint8(14), uint16(256), make([]byte, 210))
	f.Add(uint8(99), uint16(1), []byte{1})
	f.Fuzz(func(t *testing.T, typ uint8, n uint16, src []byte) {
		dst := make([]float32, n)
		_ = Dequantize(ggml.Type(typ), src, dst)
		for _, k := range Available() {
			_ = k.Dequantize(ggml.Type(typ), src, dst)
		}
		x := make([]float32, len(src)/4)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
		out := make([]byte, int(n))
		_ = Quantize(ggml.Type(typ), x, out)
		_ = QuantizeAct(ggml.Type(typ), x, out)
	})
}
