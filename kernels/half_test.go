package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// f16Value is binary16's definition: (-1)^s × 2^(e-15) × 1.m for normal
// numbers and 2^-14 × 0.m for subnormals, computed with math.Ldexp in float64
// (exact: at most 11 significant bits).
func f16Value(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0:
		return s * math.Ldexp(m, -24)
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return s * math.Inf(1)
	}
	return s * math.Ldexp(1024+m, e-25)
}

// bf16Value is bfloat16's definition: 1 sign, 8 exponent (bias 127), 7
// mantissa bits.
func bf16Value(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e := int(h>>7) & 0xff
	m := float64(h & 0x7f)
	switch e {
	case 0:
		return s * math.Ldexp(m, -133)
	case 0xff:
		if m != 0 {
			return math.NaN()
		}
		return s * math.Inf(1)
	}
	return s * math.Ldexp(128+m, e-134)
}

// nearestRef rounds v to the format decoded by value, from first principles:
// it searches the monotone positive encodings for the neighbours of |v| and
// compares exact (big.Float) distances, ties going to the even encoding. The
// encoding inf (the one above maxFinite) takes part with the value
// "next binade" (overflow threshold), which is exactly IEEE's overflow rule.
func nearestRef(v float32, value func(uint16) float64, inf uint16, infAs float64) uint16 {
	var sign uint16
	if math.Signbit(float64(v)) {
		sign = 0x8000
	}
	x := math.Abs(float64(v))
	val := func(h uint16) float64 {
		if h == inf {
			return infAs
		}
		return value(h)
	}
	if x >= infAs {
		return sign | inf
	}
	// largest h in [0, inf] with val(h) <= x
	lo, hi := uint16(0), inf
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if val(mid) <= x {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if val(lo) == x || lo == inf {
		return sign | lo
	}
	up := lo + 1
	dLo := new(big.Float).Sub(big.NewFloat(x), big.NewFloat(val(lo)))
	dUp := new(big.Float).Sub(big.NewFloat(val(up)), big.NewFloat(x))
	switch dLo.Cmp(dUp) {
	case -1:
		return sign | lo
	case 1:
		return sign | up
	}
	if lo&1 == 0 {
		return sign | lo
	}
	return sign | up
}

func TestF16ToF32AllValues(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		got := F16ToF32(h)
		want := f16Value(h)
		if math.IsNaN(want) {
			if !math.IsNaN(float64(got)) {
				t.Fatalf("F16ToF32(%#04x) = %v, want NaN", h, got)
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
			t.Fatalf("F16ToF32(%#04x) = %v, want %v", h, got, want)
		}
		// Every finite or infinite half survives the round trip.
		if back := F32ToF16(got); back != h {
			t.Fatalf("F32ToF16(F16ToF32(%#04x)) = %#04x", h, back)
		}
	}
}

func TestF32ToF16Boundaries(t *testing.T) {
	// For each pair of adjacent positive halves, the midpoint (exact in f32)
	// and its f32 neighbours are where rounding decisions happen.
	for h := uint16(0); h < 0x7c00; h++ {
		a, b := f16Value(h), f16Value(h+1)
		if h+1 == 0x7c00 {
			b = 65536 // overflow threshold: next binade
		}
		mid := float32((a + b) / 2)
		if float64(mid) != (a+b)/2 {
			t.Fatalf("midpoint of %#04x not exact in f32", h)
		}
		for _, v := range []float32{mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, math.MaxFloat32)} {
			for _, s := range []float32{1, -1} {
				x := s * v
				want := nearestRef(x, f16Value, 0x7c00, 65536)
				if got := F32ToF16(x); got != want {
					t.Fatalf("F32ToF16(%g [%#08x]) = %#04x, want %#04x", x, math.Float32bits(x), got, want)
				}
			}
		}
	}
}

func TestF32ToF16Random(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for i := 0; i < n; i++ {
		b := r.Uint32()
		if i%2 == 0 { // half the samples inside the f16 range
			b = b&0x80000000 | (0x33000000 + b%0x0c000000)
		}
		x := math.Float32frombits(b)
		got := F32ToF16(x)
		if math.IsNaN(float64(x)) {
			if !math.IsNaN(f16Value(got)) {
				t.Fatalf("F32ToF16(NaN %#08x) = %#04x, not NaN", b, got)
			}
			continue
		}
		if want := nearestRef(x, f16Value, 0x7c00, 65536); got != want {
			t.Fatalf("F32ToF16(%g [%#08x]) = %#04x, want %#04x", x, b, got, want)
		}
	}
}

func TestF32ToF16Specials(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000},
		{float32(math.Inf(1)), 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{65504, 0x7bff}, {65519.99, 0x7bff}, {65520, 0x7c00}, {-65520, 0xfc00},
		{math.MaxFloat32, 0x7c00},
		{float32(math.Ldexp(1, -24)), 0x0001}, {float32(math.Ldexp(1, -25)), 0}, // tie to even (0)
		{float32(math.Ldexp(1.5, -25)), 0x0001}, {float32(math.Ldexp(3, -25)), 0x0002}, // 1.5 ulp tie → even 2
		{math.SmallestNonzeroFloat32, 0},
	}
	for _, c := range cases {
		if got := F32ToF16(c.in); got != c.want {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	if h := F32ToF16(float32(math.NaN())); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("F32ToF16(NaN) = %#04x, not a NaN", h)
	}
}

func TestBF16AllValues(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		got := BF16ToF32(h)
		want := bf16Value(h)
		if math.IsNaN(want) {
			if !math.IsNaN(float64(got)) || !math.IsNaN(float64(BF16ToF32(F32ToBF16(got)))) {
				t.Fatalf("bf16 NaN %#04x mishandled", h)
			}
			continue
		}
		if float64(got) != want {
			t.Fatalf("BF16ToF32(%#04x) = %v, want %v", h, got, want)
		}
		if back := F32ToBF16(got); back != h {
			t.Fatalf("F32ToBF16(BF16ToF32(%#04x)) = %#04x", h, back)
		}
	}
}

func TestF32ToBF16Rounding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	maxBF := bf16Value(0x7f7f)
	infAs := maxBF + math.Ldexp(1, 127-7) // next binade after the largest finite
	check := func(x float32) {
		if math.IsNaN(float64(x)) {
			return
		}
		if want, got := nearestRef(x, bf16Value, 0x7f80, infAs), F32ToBF16(x); got != want {
			t.Fatalf("F32ToBF16(%g [%#08x]) = %#04x, want %#04x", x, math.Float32bits(x), got, want)
		}
	}
	for i := 0; i < 100000; i++ {
		check(math.Float32frombits(r.Uint32()))
	}
	// Exact ties and their neighbours, including subnormals and overflow.
	for _, hi := range []uint32{0x0000, 0x0001, 0x0002, 0x3f80, 0x3f81, 0x7f7e, 0x7f7f, 0x8001} {
		for _, lo := range []uint32{0x7fff, 0x8000, 0x8001} {
			check(math.Float32frombits(hi<<16 | lo))
		}
	}
}
