package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/cpuid/v2"

	"github.com/memvanta/memvanta/core/ggml"
)

// cpuHasAVX512VNNI reports whether the avx512 path's requirements hold.
func cpuHasAVX512VNNI() bool {
	return cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512VNNI)
}

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

// The int16 IQ4_XS routines refuse (panic on) every input too short for
// what the assembly would touch, one at a time from a valid call (which
// must not panic): the kernel reads the activations only through the
// token-major prep, so its bounds are the prep's.
func TestGemmIQ4XS16ShortInputsPanic(t *testing.T) {
	g := newGemmIQ4XS16(ggml.IQ4_XS)
	const n, ntok = 2, 3
	pb, qb, abs := gemmIQ4XS16BlockB, gemmIQ4XS16PrepB, 292
	ps := n * qb
	kernel := func(pw, prep []byte, ps int, y []float32, ys, nr int) func() {
		return func() { g.kernel(n, pw, nil, 0, prep, ps, y, ys, ntok, nr, true) }
	}
	for _, c := range []struct {
		name  string
		f     func()
		valid bool
	}{
		{"valid kernel", kernel(make([]byte, n*pb), make([]byte, ntok*ps), ps, make([]float32, ntok*16), 16, 16), true},
		{"valid prep", func() { g.prep(n, make([]byte, n*abs), make([]byte, ps), qb) }, true},
		{"kernel short pw", kernel(make([]byte, n*pb-1), make([]byte, ntok*ps), ps, make([]float32, ntok*16), 16, 16), false},
		{"kernel short prep", kernel(make([]byte, n*pb), make([]byte, ntok*ps-1), ps, make([]float32, ntok*16), 16, 16), false},
		{"kernel prep stride", kernel(make([]byte, n*pb), make([]byte, ntok*ps), ps-1, make([]float32, ntok*16), 16, 16), false},
		{"kernel short y", kernel(make([]byte, n*pb), make([]byte, ntok*ps), ps, make([]float32, ntok*16-1), 16, 16), false},
		{"kernel y stride", kernel(make([]byte, n*pb), make([]byte, ntok*ps), ps, make([]float32, ntok*16), 15, 16), false},
		{"kernel 17 rows", kernel(make([]byte, n*pb), make([]byte, ntok*ps), ps, make([]float32, ntok*32), 32, 17), false},
		{"prep short a", func() { g.prep(n, make([]byte, n*abs-1), make([]byte, ps), qb) }, false},
		{"prep short dst", func() { g.prep(n, make([]byte, n*abs), make([]byte, ps-1), qb) }, false},
		{"prep stride", func() { g.prep(n, make([]byte, n*abs), make([]byte, ps), qb-1) }, false},
	} {
		func() {
			defer func() {
				if p := recover(); (p == nil) != c.valid {
					t.Errorf("%s: panic %v", c.name, p)
				}
			}()
			c.f()
		}()
	}
}

// The byte IQ4_XS packing (gemmiq4xs8_amd64.go) recombines to Dequantize's
// values bit for bit: for every row and element, the packed byte − 128 is a
// codebook value v and the packed scale sc with fl(fl(d·sc)·v) equal to the
// dequantized element. The assembly packer writes exactly the Go
// reference's bytes, for random blocks and for raw bytes (any scale bits,
// any d); the assembly prep writes exactly the Go reference's bytes, whose
// corrections come from the quants, for blocks with true bsums.
func TestGemmPackIQ4XS8Layout(t *testing.T) {
	if !cpuHasAVX512VNNI() {
		t.Skip("no AVX-512 VNNI")
	}
	r := rand.New(rand.NewPCG(137, 138))
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
			dst := rawBytes(r, n*gemmIQ4XS8BlockB)
			ref := rawBytes(r, n*gemmIQ4XS8BlockB)
			packIQ4XS8(n, w, ws, dst)
			packIQ4XS8Go(n, w, ws, ref)
			for i := range dst {
				if dst[i] != ref[i] {
					t.Fatalf("n=%d raw=%v: packed byte %d (block %d offset %d) = %#x, Go reference %#x", n, raw, i, i/gemmIQ4XS8BlockB, i%gemmIQ4XS8BlockB, dst[i], ref[i])
				}
			}
			if raw {
				continue
			}
			for row := 0; row < 16; row++ {
				want := dequant(ggml.IQ4_XS, w[row*ws:row*ws+n*136], n*256)
				for b := 0; b < n; b++ {
					o := dst[b*gemmIQ4XS8BlockB:]
					d := math.Float32frombits(le.Uint32(o[gemmIQ4XS8D+4*row:]))
					for e := 0; e < 256; e++ {
						s, j := e/32, e%32
						v := int(o[576*s+64*(j/4)+4*row+j%4]) - 128
						sc := int32(le.Uint32(o[576*s+512+4*row:]))
						wv := want[b*256+e]
						ok := false
						for _, cv := range kvaluesIQ4NL {
							ok = ok || int(cv) == v
						}
						if !ok || sc < -32 || sc > 31 || math.Float32bits(float32(d*float32(sc))*float32(v)) != math.Float32bits(wv) {
							t.Fatalf("n=%d row %d block %d elem %d: packed value %d, scale %d, d %g; dequantized %g", n, row, b, e, v, sc, d, wv)
						}
					}
				}
			}
		}
		a := gemmKActs(r, ggml.IQ4_XS, 2, n*256)
		g := newGemmIQ4XS8AVX512(ggml.IQ4_XS)
		const stride = gemmIQ4XS8PrepB + 8
		got := rawBytes(r, 2*n*stride)
		want := append([]byte(nil), got...)
		g.prep(2*n, a, got, stride)
		for i := 0; i < 2*n; i++ {
			prepQ8KI8Go(a[i*292:], want[i*stride:])
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("n=%d: prep byte %d (block %d offset %d) = %#x, Go reference %#x", n, i, i/stride, i%stride, got[i], want[i])
			}
		}
	}
}

// The byte IQ4_XS routines refuse (panic on) every input too short for what
// the assembly would touch, one at a time from a valid call.
func TestGemmIQ4XS8ShortInputsPanic(t *testing.T) {
	if !cpuHasAVX512VNNI() {
		t.Skip("no AVX-512 VNNI")
	}
	g := newGemmIQ4XS8AVX512(ggml.IQ4_XS)
	const n, ntok = 2, 3
	pb, qb, abs := gemmIQ4XS8BlockB, gemmIQ4XS8PrepB, 292
	ps := n * qb
	kernel := func(pw, prep []byte, ps int, y []float32, ys, nr int) func() {
		return func() { g.kernel(n, pw, nil, 0, prep, ps, y, ys, ntok, nr, true) }
	}
	for _, c := range []struct {
		name  string
		f     func()
		valid bool
	}{
		{"valid kernel", kernel(make([]byte, n*pb), make([]byte, ntok*ps), ps, make([]float32, ntok*16), 16, 16), true},
		{"valid prep", func() { g.prep(n, make([]byte, n*abs), make([]byte, ps), qb) }, true},
		{"valid pack", func() { g.pack(n, make([]byte, 16*n*136), n*136, make([]byte, n*pb)) }, true},
		{"kernel short pw", kernel(make([]byte, n*pb-1), make([]byte, ntok*ps), ps, make([]float32, ntok*16), 16, 16), false},
		{"kernel short prep", kernel(make([]byte, n*pb), make([]byte, ntok*ps-1), ps, make([]float32, ntok*16), 16, 16), false},
		{"kernel prep stride", kernel(make([]byte, n*pb), make([]byte, ntok*ps), ps-1, make([]float32, ntok*16), 16, 16), false},
		{"kernel short y", kernel(make([]byte, n*pb), make([]byte, ntok*ps), ps, make([]float32, ntok*16-1), 16, 16), false},
		{"kernel y stride", kernel(make([]byte, n*pb), make([]byte, ntok*ps), ps, make([]float32, ntok*16), 15, 16), false},
		{"kernel 17 rows", kernel(make([]byte, n*pb), make([]byte, ntok*ps), ps, make([]float32, ntok*32), 32, 17), false},
		{"prep short a", func() { g.prep(n, make([]byte, n*abs-1), make([]byte, ps), qb) }, false},
		{"prep short dst", func() { g.prep(n, make([]byte, n*abs), make([]byte, ps-1), qb) }, false},
		{"prep stride", func() { g.prep(n, make([]byte, n*abs), make([]byte, ps), qb-1) }, false},
		{"pack short w", func() { g.pack(n, make([]byte, 16*n*136-1), n*136, make([]byte, n*pb)) }, false},
		{"pack short dst", func() { g.pack(n, make([]byte, 16*n*136), n*136, make([]byte, n*pb-1)) }, false},
		{"pack stride", func() { g.pack(n, make([]byte, 16*n*136), n*136-1, make([]byte, n*pb)) }, false},
	} {
		func() {
			defer func() {
				if p := recover(); (p == nil) != c.valid {
					t.Errorf("%s: panic %v", c.name, p)
				}
			}()
			c.f()
		}()
	}
}
