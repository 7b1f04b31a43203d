package sample

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Params are the sampling settings. Zero values disable a stage the way
// llama.cpp's do (TopK 0, TopP 1, MinP 0, RepeatPenalty 1); Temp <= 0 is
// greedy.
type Params struct {
	Temp          float32
	TopK          int
	TopP          float32
	MinP          float32
	RepeatPenalty float32
	RepeatLastN   int // window of recent tokens the penalty looks at; 0 disables the penalty
	Seed          uint64
}

// DefaultParams mirrors llama.cpp's common defaults so that flags mean the
// same thing to users coming from llama-cli.
func DefaultParams() Params {
	return Params{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.0, RepeatLastN: 64}
}

// Validate rejects settings that have no meaning, naming the offending one.
func (p Params) Validate() error {
	bad := func(name string, v any, want string) error {
		return fmt.Errorf("sample: %s = %v: must be %s", name, v, want)
	}
	switch {
	case isBad(p.Temp) || p.Temp < 0:
		return bad("temperature", p.Temp, ">= 0 (0 = greedy)")
	case p.TopK < 0:
		return bad("top-k", p.TopK, ">= 0 (0 = off)")
	case isBad(p.TopP) || p.TopP < 0 || p.TopP > 1:
		return bad("top-p", p.TopP, "in [0, 1] (1 = off)")
	case isBad(p.MinP) || p.MinP < 0 || p.MinP > 1:
		return bad("min-p", p.MinP, "in [0, 1] (0 = off)")
	case isBad(p.RepeatPenalty) || p.RepeatPenalty <= 0:
		return bad("repeat-penalty", p.RepeatPenalty, "> 0 (1 = off)")
	case p.RepeatLastN < 0:
		return bad("repeat-last-n", p.RepeatLastN, ">= 0")
	}
	return nil
}

func isBad(f float32) bool { return math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) }

// Greedy reports whether the settings pick the most likely token every time.
func (p Params) Greedy() bool { return p.Temp <= 0 }

type cand struct {
	id    int32
	logit float32
	p     float64
}

// Sampler holds the state one generation needs: the RNG stream, the
// penalty window and reusable scratch. It is not safe for concurrent use.
type Sampler struct {
	p       Params
	rng     *RNG
	history []int32 // ring of the last RepeatLastN accepted tokens
	next    int     // ring write position once history is full
	counts  map[int32]int
	cands   []cand
	tmp     []cand // sortCands' scratch
}

// New validates p and returns a sampler seeded with p.Seed.
func New(p Params) (*Sampler, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{p: p, rng: NewRNG(p.Seed), counts: map[int32]int{}}, nil
}

// Params returns the sampler's settings.
func (s *Sampler) Params() Params { return s.p }

// Accept records a token (prompt or generated) in the penalty window, as
// llama.cpp does for both, so a prompt's words are penalised too.
func (s *Sampler) Accept(tok int32) {
	n := s.p.RepeatLastN
	if n == 0 {
		return
	}
	if len(s.history) < n {
		s.history = append(s.history, tok)
		return
	}
	s.history[s.next] = tok
	s.next = (s.next + 1) % n
}

// Reset forgets the penalty window (the RNG stream continues).
func (s *Sampler) Reset() { s.history, s.next = s.history[:0], 0 }

// Sample picks the next token from logits (one per vocabulary entry; not
// modified). Stages run in llama.cpp's order: repetition penalty, top-k,
// top-p, min-p, temperature, then a draw from the softmax; with Temp <= 0
// the draw is replaced by argmax (lowest id wins a tie). NaN logits count as
// -Inf. It returns -1 only for an empty vocabulary.
func (s *Sampler) Sample(logits []float32) int32 {
	if len(logits) == 0 {
		return -1
	}
	penalised := s.penalties(logits)
	if s.p.Greedy() {
		best, bestV := int32(0), float32(math.Inf(-1))
		if penalised == nil { // no map lookup per entry
			for i, v := range logits {
				if v > bestV { // NaN never wins
					best, bestV = int32(i), v
				}
			}
			return best
		}
		for i, v := range logits {
			if pv, ok := penalised[int32(i)]; ok {
				v = pv
			}
			if v > bestV { // NaN never wins
				best, bestV = int32(i), v
			}
		}
		return best
	}
	// Tokens at -inf (banned by a logit bias, refused by a grammar's
	// mask) have probability 0 at every stage, so they are left out of the
	// candidates: the draw is the same, a masked step does not sort the
	// whole vocabulary, and the rounding fallback below cannot land on
	// one. Only when every logit is -inf are they all kept (as before).
	ninf := float32(math.Inf(-1))
	c := s.cands[:0]
	for pass := 0; pass < 2 && len(c) == 0; pass++ {
		for i, v := range logits {
			if penalised != nil {
				if pv, ok := penalised[int32(i)]; ok {
					v = pv
				}
			}
			if v != v {
				v = ninf
			}
			if v == ninf && pass == 0 {
				continue
			}
			c = append(c, cand{id: int32(i), logit: v})
		}
	}
	s.cands = c
	c = topK(c, s.p.TopK, &s.tmp)
	c = topP(c, s.p.TopP)
	c = minP(c, s.p.MinP)
	for i := range c {
		c[i].logit /= s.p.Temp
	}
	softmax(c)
	r := s.rng.Float64()
	cum := 0.0
	for i := range c {
		cum += c[i].p
		if r < cum {
			return c[i].id
		}
	}
	return c[len(c)-1].id // rounding left r beyond the last cumulative sum
}

// penalties returns the penalised logits of the tokens in the window
// (llama.cpp: a positive logit is divided by the penalty, a non-positive one
// multiplied, once per distinct token).
func (s *Sampler) penalties(logits []float32) map[int32]float32 {
	if s.p.RepeatPenalty == 1 || len(s.history) == 0 {
		return nil
	}
	clear(s.counts)
	for _, t := range s.history {
		if t >= 0 && int(t) < len(logits) {
			s.counts[t]++
		}
	}
	out := make(map[int32]float32, len(s.counts))
	for t := range s.counts {
		v := logits[t]
		if v <= 0 {
			v *= s.p.RepeatPenalty
		} else {
			v /= s.p.RepeatPenalty
		}
		out[t] = v
	}
	return out
}

// less orders candidates by logit descending, then id ascending, so every
// platform sorts ties the same way.
func less(a, b cand) bool {
	if a.logit != b.logit {
		return a.logit > b.logit
	}
	return a.id < b.id
}

// cmpCand is less as a three-way comparison for slices.SortFunc. less is a
// strict total order (ids are unique), so every correct sort gives the same
// permutation: the sort algorithm never changes a result.
func cmpCand(a, b cand) int {
	switch {
	case less(a, b):
		return -1
	case less(b, a):
		return 1
	}
	return 0
}

// topK keeps the k best candidates, sorted; k <= 0 or k >= len keeps all
// (sorted, since the later stages walk them in order). The k best are
// found with a min-heap of size k (worst on top) over the candidates.
func topK(c []cand, k int, tmp *[]cand) []cand {
	if k <= 0 || k >= len(c) {
		sortCands(c, tmp)
		return c
	}
	h := make([]cand, 0, k)
	for _, x := range c {
		if len(h) < k {
			h = append(h, x)
			// sift up: a parent is never better than its children
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !less(h[p], h[i]) {
					break
				}
				h[p], h[i] = h[i], h[p]
				i = p
			}
		} else if less(x, h[0]) {
			h[0] = x
			// sift down
			for i := 0; ; {
				w, l, r := i, 2*i+1, 2*i+2
				if l < k && less(h[w], h[l]) {
					w = l
				}
				if r < k && less(h[w], h[r]) {
					w = r
				}
				if w == i {
					break
				}
				h[i], h[w] = h[w], h[i]
				i = w
			}
		}
	}
	out := c[:k]
	copy(out, h)
	slices.SortFunc(out, cmpCand)
	return out
}

// radixMin is the candidate count from which sortCands radix-sorts.
const radixMin = 256

// sortCands sorts c by less. From radixMin candidates it is a stable LSD
// radix sort on the logits' bits (four 8-bit passes, O(n)) over the
// candidates in ascending id order, so ties keep ascending ids: the order
// less defines, which is total, so the result is the comparison sort's
// (TestSortCandsMatchesComparison). A full vocabulary sorts in a tenth of
// the comparison sort's time.
// tmp is reused scratch (nil: allocated).
func sortCands(c []cand, tmp *[]cand) {
	if len(c) < radixMin || !slices.IsSortedFunc(c, func(a, b cand) int { return cmp.Compare(a.id, b.id) }) {
		slices.SortFunc(c, cmpCand)
		return
	}
	// key orders logits descending as unsigned integers ascending: the
	// IEEE bits made monotonic (negatives flipped, the sign bit set on
	// positives), then complemented; -0 is +0, as == sees them.
	key := func(v float32) uint32 {
		if v == 0 {
			v = 0
		}
		u := math.Float32bits(v)
		if u&0x8000_0000 != 0 {
			u = ^u
		} else {
			u |= 0x8000_0000
		}
		return ^u
	}
	if tmp == nil {
		tmp = new([]cand)
	}
	if cap(*tmp) < len(c) {
		*tmp = make([]cand, len(c))
	}
	src, dst := c, (*tmp)[:len(c)]
	for shift := 0; shift < 32; shift += 8 {
		var count [257]int
		for i := range src {
			count[(key(src[i].logit)>>shift&0xff)+1]++
		}
		if count[(key(src[0].logit)>>shift&0xff)+1] == len(src) {
			continue // every key has this byte: the pass would not move anything
		}
		for i := 1; i < 257; i++ {
			count[i] += count[i-1]
		}
		for i := range src {
			b := key(src[i].logit) >> shift & 0xff
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &c[0] {
		copy(c, src)
	}
}

// softmax fills p for sorted candidates (max first).
func softmax(c []cand) {
	if len(c) == 0 {
		return
	}
	m := float64(c[0].logit)
	sum := 0.0
	for i := range c {
		e := 0.0
		if !math.IsInf(float64(c[i].logit), -1) {
			e = math.Exp(float64(c[i].logit) - m)
		}
		c[i].p = e
		sum += e
	}
	for i := range c {
		c[i].p /= sum
	}
}

// topP keeps the smallest prefix whose probability mass reaches p (at least
// one candidate).
func topP(c []cand, p float32) []cand {
	if p >= 1 || len(c) == 0 {
		return c
	}
	softmax(c)
	cum := 0.0
	for i := range c {
		cum += c[i].p
		if cum >= float64(p) {
			return c[:i+1]
		}
	}
	return c
}

// minP drops candidates whose probability is below p times the best one's,
// comparing logits: p_i >= p*p_max  <=>  l_i >= l_max + ln p.
func minP(c []cand, p float32) []cand {
	if p <= 0 || len(c) == 0 {
		return c
	}
	minLogit := c[0].logit + float32(math.Log(float64(p)))
	i := 1
	for ; i < len(c); i++ {
		if c[i].logit < minLogit {
			break
		}
	}
	return c[:i]
}
