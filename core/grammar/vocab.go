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
	ids    []int32  // token ids in piece order (tokens with a usable piece)
	pieces [][]byte // their pieces (cut at NUL as llama.cpp's C strings are)
	lcp    []int32  // common prefix length with the previous piece
	eog    []int32  // end-of-generation tokens: allowed when the grammar accepts
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
	v.pieces = make([][]byte, len(all))
	v.lcp = make([]int32, len(all))
	for i, t := range all {
		v.ids[i], v.pieces[i] = t.id, t.p
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

type walkState struct {
	set int32
	st  utf8State
}

func (m *Matcher) walk(v *Vocab, dst []uint64) {
	states := make([]walkState, v.maxLen+1)
	states[0] = walkState{m.cur, m.part}
	valid := 0 // states[0..valid] hold the states after the previous piece's prefixes
	n := len(v.pieces)
	for i := 0; i < n; {
		p := v.pieces[i]
		k := min(int(v.lcp[i]), valid)
		ok := true
		for ; k < len(p); k++ {
			s := states[k]
			set, st := m.step(s.set, s.st, p[k])
			if set < 0 {
				ok = false
				break
			}
			states[k+1] = walkState{set, st}
		}
		if m.err != nil {
			return
		}
		if ok {
			valid = len(p)
			s := states[len(p)]
			if m.tokenEnd(s.set, s.st) {
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
