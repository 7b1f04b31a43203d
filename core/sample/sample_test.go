package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func ln(x float64) float32 { return float32(math.Log(x)) }

func TestSplitmixSeeding(t *testing.T) {
	// First outputs of Vigna's reference splitmix64 from state 0.
	r := NewRNG(0)
	want := [2]uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4}
	if r.s[0] != want[0] || r.s[1] != want[1] {
		t.Fatalf("splitmix64 seeding = %#x %#x, want %#x %#x", r.s[0], r.s[1], want[0], want[1])
	}
}

func TestRNGUniform(t *testing.T) {
	r := NewRNG(42)
	const n = 100000
	sum := 0.0
	var buckets [10]int
	for range n {
		f := r.Float64()
		if f < 0 || f >= 1 {
			t.Fatalf("Float64 = %v outside [0,1)", f)
		}
		sum += f
		buckets[int(f*10)]++
	}
	if m := sum / n; math.Abs(m-0.5) > 0.01 {
		t.Errorf("mean = %v, want ~0.5", m)
	}
	for i, b := range buckets {
		if b < n/10*9/10 || b > n/10*11/10 {
			t.Errorf("bucket %d has %d of %d draws", i, b, n)
		}
	}
	a, b := NewRNG(7), NewRNG(7)
	c := NewRNG(8)
	same := 0
	for range 100 {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		if x != y {
			t.Fatal("same seed gave different streams")
		}
		if x == z {
			same++
		}
	}
	if same > 1 {
		t.Errorf("seeds 7 and 8 agree on %d of 100 draws", same)
	}
}

func TestValidate(t *testing.T) {
	ok := DefaultParams()
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	cases := []struct {
		name string
		mod  func(*Params)
	}{
		{"negative temp", func(p *Params) { p.Temp = -1 }},
		{"nan temp", func(p *Params) { p.Temp = float32(math.NaN()) }},
		{"negative top-k", func(p *Params) { p.TopK = -1 }},
		{"top-p above 1", func(p *Params) { p.TopP = 1.5 }},
		{"negative min-p", func(p *Params) { p.MinP = -0.1 }},
		{"zero penalty", func(p *Params) { p.RepeatPenalty = 0 }},
		{"negative last-n", func(p *Params) { p.RepeatLastN = -2 }},
	}
	for _, c := range cases {
		p := DefaultParams()
		c.mod(&p)
		if _, err := New(p); err == nil {
			t.Errorf("%s: New accepted %+v", c.name, p)
		}
	}
}

func TestGreedyAndPenalty(t *testing.T) {
	cases := []struct {
		name    string
		logits  []float32
		history []int32
		penalty float32
		lastN   int
		want    int32
	}{
		{"argmax", []float32{0.1, 3, 2.9, -5}, nil, 1, 64, 1},
		{"tie lowest id", []float32{1, 4, 4, 0}, nil, 1, 64, 1},
		{"nan ignored", []float32{float32(math.NaN()), 1, 2}, nil, 1, 64, 2},
		// 2/1.1 = 1.818 < 1.9: the penalised leader loses.
		{"positive divided", []float32{2, 1.9, -1}, []int32{0}, 1.1, 64, 1},
		// -1*1.1 = -1.1 < -1.05: a negative logit is pushed further down.
		{"negative multiplied", []float32{-1, -1.05, -3}, []int32{0}, 1.1, 64, 1},
		// Counted once, however often it repeats: 2/1.1 > 1.8.
		{"once per token", []float32{2, 1.8}, []int32{0, 0, 0, 0}, 1.1, 64, 0},
		// Token 0 slid out of a window of 2.
		{"window", []float32{2, 1.9, 0}, []int32{0, 2, 2}, 1.1, 2, 0},
		{"last-n 0 disables", []float32{2, 1.9}, []int32{0}, 1.5, 0, 0},
		{"penalty 1 no-op", []float32{2, 1.9}, []int32{0}, 1, 64, 0},
		{"out of range history ignored", []float32{2, 1.9}, []int32{99, -1}, 1.5, 64, 0},
	}
	for _, c := range cases {
		p := DefaultParams()
		p.Temp, p.RepeatPenalty, p.RepeatLastN = 0, c.penalty, c.lastN
		s, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range c.history {
			s.Accept(h)
		}
		in := append([]float32(nil), c.logits...)
		if got := s.Sample(in); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
		for i := range in {
			if in[i] != c.logits[i] && !(in[i] != in[i]) {
				t.Errorf("%s: logits modified", c.name)
			}
		}
	}
}

// draws samples n times and returns the frequency of each token.
func draws(t *testing.T, p Params, logits []float32, n int) []float64 {
	t.Helper()
	s, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	f := make([]float64, len(logits))
	for range n {
		f[s.Sample(logits)]++
	}
	for i := range f {
		f[i] /= float64(n)
	}
	return f
}

func TestFilters(t *testing.T) {
	// Probabilities 0.5, 0.3, 0.15, 0.05 at temperature 1.
	logits := []float32{ln(0.5), ln(0.3), ln(0.15), ln(0.05)}
	cases := []struct {
		name string
		mod  func(*Params)
		want []float64 // expected frequencies (renormalised over the kept set)
	}{
		{"no filters", func(p *Params) {}, []float64{0.5, 0.3, 0.15, 0.05}},
		{"top-k 1", func(p *Params) { p.TopK = 1 }, []float64{1, 0, 0, 0}},
		{"top-k 2", func(p *Params) { p.TopK = 2 }, []float64{0.625, 0.375, 0, 0}},
		// Cumulative 0.5, 0.8: 0.7 is reached at the second token.
		{"top-p 0.7", func(p *Params) { p.TopP = 0.7 }, []float64{0.625, 0.375, 0, 0}},
		{"top-p 0.5", func(p *Params) { p.TopP = 0.5 }, []float64{1, 0, 0, 0}},
		// Keep p >= 0.25: 0.5 and 0.3.
		{"min-p 0.5", func(p *Params) { p.MinP = 0.5 }, []float64{0.625, 0.375, 0, 0}},
		// Keep p >= 0.05: all four.
		{"min-p 0.1", func(p *Params) { p.MinP = 0.1 }, []float64{0.5, 0.3, 0.15, 0.05}},
		// Temperature 0.5 squares the probabilities before renormalising.
		{"temp 0.5", func(p *Params) { p.Temp = 0.5 }, sq([]float64{0.5, 0.3, 0.15, 0.05})},
		// Filters see temperature-1 probabilities (llama.cpp applies temperature
		// last): top-p 0.7 still keeps two tokens at temperature 2.
		{"top-p before temp", func(p *Params) { p.TopP, p.Temp = 0.7, 2 }, norm([]float64{math.Sqrt(0.5), math.Sqrt(0.3), 0, 0})},
	}
	for _, c := range cases {
		p := Params{Temp: 1, TopK: 0, TopP: 1, MinP: 0, RepeatPenalty: 1, Seed: 1}
		c.mod(&p)
		got := draws(t, p, logits, 40000)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 0.012 {
				t.Errorf("%s: frequencies %.3f, want %.3f", c.name, got, c.want)
				break
			}
		}
	}
}

func sq(p []float64) []float64 {
	out := make([]float64, len(p))
	for i, v := range p {
		out[i] = v * v
	}
	return norm(out)
}

func norm(p []float64) []float64 {
	s := 0.0
	for _, v := range p {
		s += v
	}
	out := make([]float64, len(p))
	for i, v := range p {
		out[i] = v / s
	}
	return out
}

func TestSeedDeterminism(t *testing.T) {
	logits := make([]float32, 1000)
	g := NewRNG(3)
	for i := range logits {
		logits[i] = float32(g.Float64() * 4)
	}
	run := func(seed uint64) []int32 {
		p := DefaultParams()
		p.Seed = seed
		p.RepeatPenalty = 1.1
		s, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		var out []int32
		for range 50 {
			tok := s.Sample(logits)
			s.Accept(tok)
			out = append(out, tok)
		}
		return out
	}
	a, b, c := run(5), run(5), run(6)
	diff := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed diverged at %d", i)
		}
		if a[i] != c[i] {
			diff++
		}
	}
	if diff == 0 {
		t.Error("seeds 5 and 6 gave identical 50-token sequences")
	}
}

func TestTopKHeapMatchesSort(t *testing.T) {
	g := NewRNG(9)
	c := make([]cand, 500)
	for i := range c {
		c[i] = cand{id: int32(i), logit: float32(int(g.Float64() * 50))} // many ties
	}
	full := append([]cand(nil), c...)
	full = topK(full, 0, nil)
	part := topK(append([]cand(nil), c...), 37, nil)
	for i := range part {
		if part[i] != full[i] {
			t.Fatalf("top-k heap [%d] = %+v, sort = %+v", i, part[i], full[i])
		}
	}
}

// topK equals sorting everything by less and keeping the first k, with
// many ties, -Inf and every k from 1 to past the length.
func TestTopKMatchesFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 200; trial++ {
		n := 1 + r.IntN(300)
		c := make([]cand, n)
		for i := range c {
			v := float32(r.IntN(8)) // many ties
			if r.IntN(10) == 0 {
				v = float32(math.Inf(-1))
			}
			c[i] = cand{id: int32(i), logit: v}
		}
		r.Shuffle(n, func(i, j int) { c[i], c[j] = c[j], c[i] })
		want := append([]cand(nil), c...)
		for i := 1; i < len(want); i++ { // insertion sort: independent of the code under test
			for j := i; j > 0 && less(want[j], want[j-1]); j-- {
				want[j], want[j-1] = want[j-1], want[j]
			}
		}
		k := r.IntN(n + 2)
		got := topK(append([]cand(nil), c...), k, nil)
		w := want
		if k > 0 && k < n {
			w = want[:k]
		}
		if !slices.Equal(got, w) {
			t.Fatalf("n %d k %d: got %v, want %v", n, k, got, w)
		}
	}
}

// sortCands (a radix sort from radixMin candidates in id order) gives the
// comparison sort's order on logits with ties, both zeros, infinities,
// subnormals and wide magnitudes, and with ids not in order.
func TestSortCandsMatchesComparison(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(-1)), float32(math.Inf(1)),
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, 1, -1}
	var tmp []cand
	for trial := 0; trial < 300; trial++ {
		n := r.IntN(1200)
		if trial%50 == 0 {
			n = 32000
		}
		c := make([]cand, n)
		for i := range c {
			var v float32
			switch r.IntN(4) {
			case 0:
				v = special[r.IntN(len(special))]
			case 1:
				v = float32(r.IntN(5) - 2) // ties
			default:
				v = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(12)-6)))
			}
			c[i] = cand{id: int32(i), logit: v}
		}
		if trial%7 == 3 {
			r.Shuffle(n, func(i, j int) { c[i], c[j] = c[j], c[i] })
		}
		want := append([]cand(nil), c...)
		slices.SortFunc(want, cmpCand)
		if !slices.IsSortedFunc(want, cmpCand) {
			t.Fatal("comparison sort broken")
		}
		got := append([]cand(nil), c...)
		sortCands(got, &tmp)
		if !slices.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("trial %d n %d: [%d] = %+v, comparison sort %+v", trial, n, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkSample times one token's sampling over a 32000-entry vocabulary:
// greedy, OpenAI's defaults (temperature 1, no top-k: every candidate is
// sorted) and llama.cpp's defaults (top-k 40 first).
func BenchmarkSample(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	lg := make([]float32, 32000)
	for i := range lg {
		lg[i] = float32(r.NormFloat64()) * 3
	}
	for _, c := range []struct {
		name string
		p    Params
	}{{"greedy", Params{Temp: 0, TopP: 1, RepeatPenalty: 1}}, {"openai-defaults", Params{Temp: 1, TopP: 1, RepeatPenalty: 1}}, {"llama-defaults", DefaultParams()}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := New(c.p)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < 64; i++ {
				s.Accept(int32(i))
			}
			for b.Loop() {
				s.Sample(lg)
			}
		})
	}
}

// TestMaskedLogits: tokens at -inf (a grammar's mask, a banning bias) are
// left out of the candidates, which draws exactly what sampling the
// remaining tokens alone draws, and never one of them.
func TestMaskedLogits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ninf := float32(math.Inf(-1))
	for trial := range 300 {
		n := 50 + rng.IntN(3000)
		logits := make([]float32, n)
		var keep []int32
		for i := range logits {
			logits[i] = float32(rng.NormFloat64() * 3)
			if rng.IntN(4) == 0 { // ties
				logits[i] = float32(rng.IntN(3))
			}
			if rng.IntN(3) > 0 {
				logits[i] = ninf
			} else {
				keep = append(keep, int32(i))
			}
		}
		if len(keep) == 0 {
			continue
		}
		compact := make([]float32, len(keep))
		for j, id := range keep {
			compact[j] = logits[id]
		}
		p := Params{Temp: 0.3 + rng.Float32()*1.5, TopK: rng.IntN(3) * 20, TopP: []float32{1, 0.9, 0.5}[rng.IntN(3)],
			MinP: []float32{0, 0.05}[rng.IntN(2)], RepeatPenalty: 1, Seed: uint64(trial)}
		full, _ := New(p)
		small, _ := New(p)
		for k := 0; k < 5; k++ {
			got := full.Sample(logits)
			want := keep[small.Sample(compact)]
			if got != want {
				t.Fatalf("trial %d draw %d (%+v): %d, sampling the unmasked tokens alone gives %d", trial, k, p, got, want)
			}
		}
	}
	all := []float32{ninf, ninf, ninf}
	s, _ := New(Params{Temp: 1, TopP: 1, RepeatPenalty: 1})
	if id := s.Sample(all); id < 0 || id > 2 {
		t.Errorf("all -inf: %d", id)
	}
}
