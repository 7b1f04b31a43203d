// Package sample turns a vector of logits into the next token: greedy,
// temperature, top-k, top-p, min-p and repetition penalty, applied in
// llama.cpp's order and with its semantics, driven by a small seeded PRNG of
// our own so that a seed gives the same draws on every platform and Go
// version (math/rand's streams are not a stability promise we want to lean on).
package sample

// RNG is xoshiro256** seeded through splitmix64: tiny, fast, statistically
// good, and fully specified, so the stream for a seed never changes.
type RNG struct {
	s [4]uint64
}

// NewRNG returns a generator whose stream depends only on seed.
func NewRNG(seed uint64) *RNG {
	r := &RNG{}
	x := seed
	for i := range r.s {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		r.s[i] = z ^ (z >> 31)
	}
	return r
}

func rotl(x uint64, k uint) uint64 { return (x << k) | (x >> (64 - k)) }

// Uint64 returns the next 64 random bits.
func (r *RNG) Uint64() uint64 {
	s := &r.s
	result := rotl(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = rotl(s[3], 45)
	return result
}

// Float64 returns a uniform value in [0, 1) built from the top 53 bits, so
// every representable step is equally likely.
func (r *RNG) Float64() float64 {
	return float64(r.Uint64()>>11) * (1.0 / (1 << 53))
}
