package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/memvanta/memvanta/core/sample"
)

// samplingFlags are llama.cpp's sampling options, shared by generate, chat
// and serve (serve uses them as per-request defaults).
type samplingFlags struct {
	temp, topP, minP, repeatPenalty float32
	topK, repeatLastN               int
	seed                            string
	biases                          []string
	ignoreEOS                       bool
}

func (sf *samplingFlags) register(c *cli) {
	def := sample.DefaultParams()
	c.group("Sampling (llama.cpp's order: repetition penalty, top-k, top-p, min-p, temperature)")
	c.float32Var(&sf.temp, "temp", "N", def.Temp, "temperature (0 = greedy)")
	c.intVar(&sf.topK, "top-k", "N", def.TopK, "keep the N most likely tokens (0 = off)")
	c.float32Var(&sf.topP, "top-p", "N", def.TopP, "keep the smallest set with probability mass N (1 = off)")
	c.float32Var(&sf.minP, "min-p", "N", def.MinP, "drop tokens below N times the best one's probability (0 = off)")
	c.float32Var(&sf.repeatPenalty, "repeat-penalty", "N", def.RepeatPenalty, "penalty for tokens in the last --repeat-last-n (1 = off)")
	c.intVar(&sf.repeatLastN, "repeat-last-n", "N", def.RepeatLastN, "tokens the repeat penalty looks back over (0 = off)")
	c.stringVar(&sf.seed, "s|seed", "SEED", "-1", "RNG seed, 0 to 2^64-1 (-1 = random; the seed used is printed)")
	c.listVar(&sf.biases, "l|logit-bias", "TOKEN_ID(+|-)BIAS", "add BIAS to a token's logit, e.g. 15043+1, 15043-1, 2-inf (repeatable)")
	c.boolVar(&sf.ignoreEOS, "ignore-eos", "never end at an end-of-generation token (sets its logit bias to -inf)")
}

// tokenBias is one --logit-bias entry.
type tokenBias struct {
	id   int32
	bias float32
}

// sampling is the resolved sampling setup: sampler parameters with a
// concrete seed and the logit biases to add before each draw.
type sampling struct {
	params sample.Params
	biases []tokenBias
}

// build resolves the flags for a vocabulary of nVocab tokens (0: not known
// yet, token ids are checked later); isEOG names
// the end-of-generation tokens --ignore-eos bans. Errors are usage errors.
func (sf *samplingFlags) build(nVocab int, isEOG func(int32) bool) (*sampling, error) {
	p := sample.Params{Temp: sf.temp, TopK: sf.topK, TopP: sf.topP, MinP: sf.minP,
		RepeatPenalty: sf.repeatPenalty, RepeatLastN: sf.repeatLastN}
	seed, err := parseSeed(sf.seed)
	if err != nil {
		return nil, err
	}
	p.Seed = seed
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := &sampling{params: p}
	for _, b := range sf.biases {
		tb, err := parseLogitBias(b)
		if err != nil {
			return nil, err
		}
		if nVocab > 0 && int(tb.id) >= nVocab {
			return nil, fmt.Errorf("--logit-bias %q: token %d is outside the vocabulary (%d tokens)", b, tb.id, nVocab)
		}
		s.biases = append(s.biases, tb)
	}
	if sf.ignoreEOS && isEOG != nil {
		for id := int32(0); int(id) < nVocab; id++ {
			if isEOG(id) {
				s.biases = append(s.biases, tokenBias{id, float32(math.Inf(-1))})
			}
		}
	}
	return s, nil
}

// biasMap sums the biases by token, as the engine takes them. A sum that
// is not a number or +inf (no sampler can draw from it) is an error.
func (s *sampling) biasMap() (map[int32]float32, error) {
	m := map[int32]float32{}
	for _, b := range s.biases {
		m[b.id] += b.bias
	}
	for id, b := range m {
		if math.IsInf(float64(b), 1) || math.IsNaN(float64(b)) {
			return nil, fmt.Errorf("--logit-bias for token %d is not usable (%v)", id, b)
		}
	}
	return m, nil
}

// parseSeed reads a seed: -1 (or empty) draws a random 63-bit one.
func parseSeed(s string) (uint64, error) {
	if s == "" || s == "-1" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		return binary.LittleEndian.Uint64(b[:]) >> 1, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("--seed %q: must be -1 or an integer from 0 to 18446744073709551615", s)
	}
	return v, nil
}

// parseLogitBias reads llama.cpp's TOKEN_ID(+|-)BIAS, e.g. 15043+1,
// 15043-0.5 or 2-inf.
func parseLogitBias(s string) (tokenBias, error) {
	i := strings.IndexAny(s, "+-")
	if i <= 0 {
		return tokenBias{}, fmt.Errorf("--logit-bias %q: want TOKEN_ID(+|-)BIAS, e.g. 15043+1", s)
	}
	id, err := strconv.ParseUint(s[:i], 10, 31)
	if err != nil {
		return tokenBias{}, fmt.Errorf("--logit-bias %q: token id %q is not a non-negative integer", s, s[:i])
	}
	v, err := strconv.ParseFloat(s[i+1:], 32)
	if err != nil || math.IsNaN(v) || s[i+1:] == "" || strings.ContainsAny(s[i+1:i+2], "+-") {
		return tokenBias{}, fmt.Errorf("--logit-bias %q: bias %q is not a number", s, s[i+1:])
	}
	if s[i] == '-' {
		v = -v
	}
	return tokenBias{int32(id), float32(v)}, nil
}
