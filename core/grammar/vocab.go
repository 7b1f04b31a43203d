package grammar

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Vocab is the index a Matcher computes token masks from: every token's
// text, sorted, with the length of the prefix each shares with the one
// before it. A mask is one walk over the sorted pieces: the matcher state
// after a prefix is computed once and reused by every token that shares
// the prefix (a trie walk without the trie's pointers), and a prefix the
// grammar refuses skips every token under it at once. This is the
// precomputed index llguidance and XGrammar build instead of re-tokenising
// candidates each step; with the matcher's memoised transitions, a step
// costs a walk over the live part of the vocabulary, and a state seen
// before costs a cache lookup.
type Vocab struct {
	n      int
	ids    []int32 // token ids in piece order (tokens with a usable piece)
	buf    []byte  // their pieces (cut at NUL as llama.cpp's C strings are), back to back
	off    []int32 // piece i is buf[off[i]:off[i+1]]
	lcp    []int32 // common prefix length with the previous piece
	eog    []int32 // end-of-generation tokens: allowed when the grammar accepts
	maxLen int
}

// NewVocab indexes n tokens: piece(id) is the text llama.cpp's grammar
// matches (llama_token_to_piece with special=true), eog(id) marks
// end-of-generation tokens. Tokens whose text is empty or starts with NUL
// are never allowed, as in llama.cpp.
func NewVocab(n int, piece func(int32) []byte, eog func(int32) bool) (*Vocab, error) {
	if n <= 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("grammar: vocabulary of %d tokens", n)
	}
	v := &Vocab{n: n}
	type tp struct {
		id int32
		p  []byte
	}
	var all []tp
	for id := int32(0); int(id) < n; id++ {
		if eog(id) {
			v.eog = append(v.eog, id)
			continue
		}
		p := cstr(piece(id))
		if len(p) == 0 {
			continue
		}
		all = append(all, tp{id, p})
	}
	slices.SortFunc(all, func(a, b tp) int {
		if c := bytes.Compare(a.p, b.p); c != 0 {
			return c
		}
		return int(a.id - b.id)
	})
	v.ids = make([]int32, len(all))
	v.off = make([]int32, len(all)+1)
	v.lcp = make([]int32, len(all))
	for i, t := range all {
		if len(v.buf)+len(t.p) > math.MaxInt32 {
			return nil, fmt.Errorf("grammar: vocabulary text exceeds %d bytes", math.MaxInt32)
		}
		v.ids[i] = t.id
		v.buf = append(v.buf, t.p...)
		v.off[i+1] = int32(len(v.buf))
		v.maxLen = max(v.maxLen, len(t.p))
		if i > 0 {
			a, b := all[i-1].p, t.p
			k := 0
			for k < len(a) && k < len(b) && a[k] == b[k] {
				k++
			}
			v.lcp[i] = int32(k)
		}
	}
	return v, nil
}

// Len is the vocabulary size masks cover.
func (v *Vocab) Len() int { return v.n }

// MaskWords is the length of a mask for v.
func (v *Vocab) MaskWords() int { return (v.n + 63) / 64 }

// ErrNoToken is a state no token of the vocabulary can continue (the
// grammar wants text the vocabulary cannot spell, and does not accept).
var ErrNoToken = errors.New("grammar: no token of the vocabulary can continue the grammar here")

// Mask sets bit id of dst (len v.MaskWords()) for every token allowed next,
// end-of-generation tokens included when the grammar accepts. Masks are
// cached per matcher state, so a state seen before (inside a JSON string,
// say) costs a map lookup. The returned slice is the cached mask when one
// exists: callers must not modify it.
func (m *Matcher) Mask(v *Vocab) ([]uint64, error) {
	m.maybeCompact()
	if m.err != nil {
		return nil, m.err
	}
	if m.maskVoc != v {
		clear(m.masks)
		m.maskVoc = v
	}
	key := maskKey{m.cur, m.part}
	if mk, ok := m.masks[key]; ok {
		m.maskHits++
		return mk, nil
	}
	m.maskRuns++
	dst := make([]uint64, v.MaskWords())
	m.walk(v, dst)
	if m.err != nil {
		return nil, m.err
	}
	if m.accepts[m.cur] {
		for _, id := range v.eog {
			dst[id>>6] |= 1 << (id & 63)
		}
	}
	if len(m.masks) >= maxMasks {
		clear(m.masks)
	}
	m.masks[key] = dst
	return dst, nil
}

// MaskStats reports how many masks were computed and how many came from
// the cache.
func (m *Matcher) MaskStats() (computed, cached int64) { return m.maskRuns, m.maskHits }

// maxDFA bounds the byte-level states kept between masks (each holds a
// 1 KiB or 256 B transition table); past it they are dropped and rebuilt.
const maxDFA = 1 << 15

// dstate is a state of the byte-level automaton a mask walk runs: a
// matcher state plus a UTF-8 sequence in progress. Its transitions are
// filled as walks take them, so a walk costs an array lookup per byte
// once the states it passes through have been seen.
type dstate struct {
	set  int32
	st   utf8State
	full *[256]int32 // st.remain == 0: next dstate + 1 per byte; -1 dead; 0 unknown
	part *[64]int32  // st.remain > 0: per continuation bits (llama.cpp ignores the top bits within a token)
	end  int8        // a token ending here is allowed: 0 unknown, 1 yes, 2 no
}

func (m *Matcher) dfaState(set int32, st utf8State) int32 {
	k := maskKey{set, st}
	if id, ok := m.dfaIdx[k]; ok {
		return id
	}
	id := int32(len(m.dfa))
	m.dfa = append(m.dfa, dstate{set: set, st: st})
	m.dfaIdx[k] = id
	return id
}

// dfaStep is step on byte-level states, memoised.
func (m *Matcher) dfaStep(id int32, b byte) int32 {
	d := &m.dfa[id]
	var slot *int32
	if d.st.remain == 0 {
		if d.full == nil {
			d.full = new([256]int32)
		}
		slot = &d.full[b]
	} else {
		if d.st.fromPrev && b>>6 != 2 {
			return -1
		}
		if d.part == nil {
			d.part = new([64]int32)
		}
		slot = &d.part[b&0x3f]
	}
	if v := *slot; v > 0 {
		return v - 1
	} else if v < 0 {
		return -1
	}
	set, st := m.step(d.set, d.st, b)
	next := int32(-1)
	if set >= 0 {
		next = m.dfaState(set, st) // may move m.dfa; slot points into a table, not the slice
	}
	if next >= 0 {
		*slot = next + 1
	} else if m.err == nil {
		*slot = -1
	}
	return next
}

func (m *Matcher) dfaEnd(id int32) bool {
	d := &m.dfa[id]
	if d.end == 0 {
		d.end = 2
		if m.tokenEnd(d.set, d.st) {
			d.end = 1
		}
	}
	return d.end == 1
}

func (m *Matcher) walk(v *Vocab, dst []uint64) {
	if len(m.dfa) > maxDFA {
		m.dfa = nil
		clear(m.dfaIdx)
	}
	states := make([]int32, v.maxLen+1)
	states[0] = m.dfaState(m.cur, m.part)
	valid := 0 // states[0..valid] hold the states after the previous piece's prefixes
	n := len(v.ids)
	for i := 0; i < n; {
		p := v.buf[v.off[i]:v.off[i+1]]
		k := min(int(v.lcp[i]), valid)
		ok := true
		for ; k < len(p); k++ {
			next := m.dfaStep(states[k], p[k])
			if next < 0 {
				ok = false
				break
			}
			states[k+1] = next
		}
		if m.err != nil {
			return
		}
		if ok {
			valid = len(p)
			if m.dfaEnd(states[len(p)]) {
				id := v.ids[i]
				dst[id>>6] |= 1 << (id & 63)
			}
			i++
			continue
		}
		// Every following piece that shares p[:k+1] is refused too.
		valid = k
		i++
		for i < n && int(v.lcp[i]) > k {
			i++
		}
	}
}

// DropMaskCache forgets the cached masks (benchmarks of the walk itself).
func (m *Matcher) DropMaskCache() { clear(m.masks) }
