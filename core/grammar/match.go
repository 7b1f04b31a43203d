package grammar

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"
)

// ErrTooComplex is a grammar whose matcher state outgrew the work or size
// bounds of one step (an ambiguous grammar whose live stacks multiply).
var ErrTooComplex = errors.New("grammar: too ambiguous: a step exceeded the matcher's work bound")

// ErrRejected is a token or text the grammar does not allow.
var ErrRejected = errors.New("grammar: input not allowed by the grammar")

// Bounds of the matcher's work. The state is a set of pushdown stacks, as
// in llama.cpp; stacks and sets are interned so a state is one integer and
// the transition on a code point is computed once and then looked up.
const (
	maxStackSet   = 1 << 12 // stacks in one state
	maxExpandWork = 1 << 16 // stack expansions computing one transition
	maxStacks     = 1 << 20 // interned stacks before the tables are rebuilt
	maxSets       = 1 << 15 // interned states before the tables are rebuilt
	maxMasks      = 256     // cached token masks per matcher
)

// utf8State is llama.cpp's llama_partial_utf8 plus whether the remaining
// bytes continue the previous token's sequence (only those are checked to
// be continuation bytes, as llama.cpp's decode_utf8 does).
type utf8State struct {
	value    uint32
	remain   int8
	fromPrev bool
}

// Matcher is one generation's position in a grammar: the set of pushdown
// stacks llama.cpp's llama_grammar keeps, as an interned state. It is not
// safe for concurrent use.
type Matcher struct {
	g *Grammar

	// Interned stacks: id 0 is the empty stack; otherwise sPos is the
	// top's position in g.code and sUp the id of the stack below it.
	sPos, sUp []int32
	sIdx      map[uint64]int32

	// Interned states: sorted, distinct stack ids.
	sets     [][]int32
	setIdx   map[string]int32
	accepts  []bool           // the state holds the empty stack
	ascii    []*[128]int32    // per state: next state + 1 on a code point < 128; 0 unknown, -1 dead
	wide     map[uint64]int32 // (state, code point) -> next state + 1, or -1
	cur      int32
	part     utf8State
	err      error
	work     int
	seen     map[int32]struct{}
	scratch  []int32
	masks    map[maskKey][]uint64
	dfa      []dstate // byte-level states mask walks step through
	dfaIdx   map[maskKey]int32
	maskVoc  *Vocab
	maskHits int64
	maskRuns int64
}

type maskKey struct {
	set int32
	st  utf8State
}

// NewMatcher starts matching g from its root rule.
func NewMatcher(g *Grammar) (*Matcher, error) {
	m := &Matcher{g: g}
	m.reset()
	if err := m.start(); err != nil {
		return nil, err
	}
	return m, nil
}

// start puts the matcher at the root rule's start.
func (m *Matcher) start() error {
	var out []int32
	m.work = 0
	for _, a := range m.g.alternatives(m.g.root) {
		s := int32(0)
		if !endOfSeq(m.g.code[a]) {
			s = m.push(0, a)
		}
		out = m.expand(s, out)
	}
	if m.err != nil {
		return m.err
	}
	m.cur, m.part = m.intern(out), utf8State{}
	return nil
}

// Grammar is the grammar the matcher follows.
func (m *Matcher) Grammar() *Grammar { return m.g }

// Restart moves the matcher back to the start of its grammar for a new
// text, keeping what it has computed: interned states, transitions, the
// byte-level automaton and the cached masks depend only on the grammar, so
// a matcher reused for the next reply under the same grammar (a server's
// recurring schema) finds the states it has seen with their masks. A
// matcher that failed (ErrTooComplex) is not restarted: its error stays.
func (m *Matcher) Restart() error {
	if m.err != nil {
		return m.err
	}
	return m.start()
}

func (m *Matcher) reset() {
	m.sPos, m.sUp = []int32{-1}, []int32{-1}
	m.sIdx = map[uint64]int32{}
	m.sets, m.accepts, m.ascii = nil, nil, nil
	m.setIdx = map[string]int32{}
	m.wide = map[uint64]int32{}
	m.masks = map[maskKey][]uint64{}
	m.dfa, m.dfaIdx = nil, map[maskKey]int32{}
	m.seen = map[int32]struct{}{}
}

// alternatives lists the code positions where rule id's alternatives start.
func (g *Grammar) alternatives(id int32) []int32 {
	var out []int32
	p := g.ruleStart[id]
	out = append(out, p)
	for {
		for !endOfSeq(g.code[p]) {
			p++
		}
		if g.code[p].k == kEnd {
			return out
		}
		p++
		out = append(out, p)
	}
}

func (m *Matcher) push(up, pos int32) int32 {
	k := uint64(uint32(up))<<32 | uint64(uint32(pos))
	if id, ok := m.sIdx[k]; ok {
		return id
	}
	id := int32(len(m.sPos))
	m.sPos = append(m.sPos, pos)
	m.sUp = append(m.sUp, up)
	m.sIdx[k] = id
	return id
}

// expand is llama_grammar_advance_stack: it rewrites stack s into the
// stacks whose top is a character class (or the empty stack), appending
// them to out.
func (m *Matcher) expand(s int32, out []int32) []int32 {
	clear(m.seen)
	todo := []int32{s}
	for len(todo) > 0 {
		s := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if _, ok := m.seen[s]; ok {
			continue
		}
		m.seen[s] = struct{}{}
		m.work++
		if m.work > maxExpandWork || len(out) > maxStackSet {
			m.err = ErrTooComplex
			return out
		}
		if s == 0 {
			out = append(out, 0)
			continue
		}
		pos := m.sPos[s]
		e := m.g.code[pos]
		if e.k != kRef {
			out = append(out, s)
			continue
		}
		rest := m.sUp[s]
		if !endOfSeq(m.g.code[pos+1]) {
			rest = m.push(rest, pos+1)
		}
		for _, a := range m.g.alternatives(e.val) {
			ns := rest
			if !endOfSeq(m.g.code[a]) {
				ns = m.push(rest, a)
			}
			todo = append(todo, ns)
		}
	}
	return out
}

// intern returns the id of the state holding stacks (sorted and deduplicated
// in place).
func (m *Matcher) intern(stacks []int32) int32 {
	slices.Sort(stacks)
	stacks = slices.Compact(stacks)
	key := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(stacks))), len(stacks)*4)
	if id, ok := m.setIdx[string(key)]; ok {
		return id
	}
	id := int32(len(m.sets))
	own := slices.Clone(stacks)
	m.sets = append(m.sets, own)
	m.setIdx[string(key)] = id
	m.accepts = append(m.accepts, len(own) > 0 && own[0] == 0)
	m.ascii = append(m.ascii, nil)
	return id
}

// next is the state after code point c from state set, -1 if no stack
// matches c.
func (m *Matcher) next(set int32, c uint32) int32 {
	var tab *[128]int32
	if c < 128 {
		tab = m.ascii[set]
		if tab == nil {
			tab = new([128]int32)
			m.ascii[set] = tab
		}
		if v := tab[c]; v < 0 {
			return -1
		} else if v > 0 {
			return v - 1
		}
	} else if v, ok := m.wide[uint64(uint32(set))<<32|uint64(c)]; ok {
		if v < 0 {
			return -1
		}
		return v - 1
	}
	n := m.compute(set, c)
	enc := n + 1
	if n < 0 {
		enc = -1
	}
	if tab != nil {
		tab[c] = enc
	} else {
		m.wide[uint64(uint32(set))<<32|uint64(c)] = enc
	}
	return n
}

func (m *Matcher) compute(set int32, c uint32) int32 {
	out := m.scratch[:0]
	m.work = 0
	for _, s := range m.sets[set] {
		if s == 0 {
			continue
		}
		pos := m.sPos[s]
		if !m.g.classes[m.g.code[pos].val].match(rune(c)) {
			continue
		}
		rest := m.sUp[s]
		if !endOfSeq(m.g.code[pos+1]) {
			rest = m.push(rest, pos+1)
		}
		out = m.expand(rest, out)
		if m.err != nil {
			break
		}
	}
	m.scratch = out[:0]
	if len(out) == 0 || m.err != nil {
		return -1
	}
	return m.intern(out)
}

// partialOK is llama.cpp's check of a token that ends inside a UTF-8
// sequence: some stack's class could match a completion of it.
func (m *Matcher) partialOK(set int32, st utf8State) bool {
	for _, s := range m.sets[set] {
		if s != 0 && m.g.classes[m.g.code[m.sPos[s]].val].matchPartial(st.value, int(st.remain)) {
			return true
		}
	}
	return false
}

var utf8Len = [16]int8{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 3, 4}

// step consumes one byte as llama.cpp's decode_utf8 does: bytes that
// continue the previous token's partial sequence must be continuation
// bytes; within a token they are taken as they come. It returns the new
// state, or set -1 when no stack survives (or the bytes are not UTF-8).
func (m *Matcher) step(set int32, st utf8State, b byte) (int32, utf8State) {
	if st.remain > 0 {
		if st.fromPrev && b>>6 != 2 {
			return -1, st
		}
		st.value = st.value<<6 | uint32(b&0x3f)
		st.remain--
		if st.remain > 0 {
			return set, st
		}
		st.fromPrev = false
	} else {
		n := utf8Len[b>>4] - 1
		if n < 0 {
			return -1, st
		}
		st.value = uint32(b) & (1<<(7-n) - 1)
		st.remain = n
		if n > 0 {
			return set, st
		}
	}
	if st.value == 0 {
		// llama.cpp ends a token's code points at a decoded 0; such a
		// token (an overlong NUL) is refused here instead.
		return -1, st
	}
	return m.next(set, st.value), st
}

// tokenEnd reports whether a token that brought the matcher to (set, st)
// is allowed.
func (m *Matcher) tokenEnd(set int32, st utf8State) bool {
	return set >= 0 && (st.remain == 0 || m.partialOK(set, st))
}

// Accepting reports whether the text so far is a complete sentence of the
// grammar (an end-of-generation token is allowed).
func (m *Matcher) Accepting() bool { return m.err == nil && m.accepts[m.cur] }

// Exhausted reports whether nothing but the end can follow: the only stack
// left is the empty one.
func (m *Matcher) Exhausted() bool {
	s := m.sets[m.cur]
	return m.err == nil && len(s) == 1 && s[0] == 0
}

// Err is the error that stopped the matcher (ErrTooComplex), if any.
func (m *Matcher) Err() error { return m.err }

// Allows reports whether a token with text piece may come next, without
// advancing.
func (m *Matcher) Allows(piece []byte) bool {
	m.maybeCompact()
	if m.err != nil || len(piece) == 0 || piece[0] == 0 {
		return false
	}
	set, st := m.cur, m.part
	for _, b := range cstr(piece) {
		if set, st = m.step(set, st, b); set < 0 {
			return false
		}
	}
	return m.tokenEnd(set, st)
}

// Accept advances the matcher by a token's text; a token the grammar does
// not allow leaves the matcher unchanged and returns ErrRejected.
func (m *Matcher) Accept(piece []byte) error {
	if !m.Allows(piece) {
		if m.err != nil {
			return m.err
		}
		return fmt.Errorf("%w: %q", ErrRejected, piece)
	}
	set, st := m.cur, m.part
	for _, b := range cstr(piece) {
		set, st = m.step(set, st, b)
	}
	m.cur, m.part = set, st
	return nil
}

// AcceptString advances by whole text (tests, and prefilled output).
func (m *Matcher) AcceptString(s string) error { return m.Accept([]byte(s)) }

// cstr cuts a piece at its first NUL byte, as llama.cpp's C-string decoding
// does.
func cstr(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// maybeCompact rebuilds the interning tables around the current state when
// they have grown past their bounds, so a long generation's memory stays
// bounded.
func (m *Matcher) maybeCompact() {
	if len(m.sPos) <= maxStacks && len(m.sets) <= maxSets {
		return
	}
	type path []int32
	var keep []path
	for _, s := range m.sets[m.cur] {
		var p path
		for ; s != 0; s = m.sUp[s] {
			p = append(p, m.sPos[s])
		}
		keep = append(keep, p)
	}
	m.reset()
	out := make([]int32, 0, len(keep))
	for _, p := range keep {
		s := int32(0)
		for i := len(p) - 1; i >= 0; i-- {
			s = m.push(s, p[i])
		}
		out = append(out, s)
	}
	m.cur = m.intern(out)
}
