// Package grammar implements llama.cpp's GBNF grammars: a parser, a
// pushdown matcher over UTF-8 code points with llama.cpp's semantics (so a
// grammar accepts and rejects exactly the tokens llama.cpp's grammar
// sampler does), a vocabulary index that turns the matcher's state into an
// allowed-token mask without re-tokenising anything, and a JSON Schema to
// GBNF converter for structured outputs.
//
// Grammars and schemas arrive from untrusted clients, so every stage is
// bounded: the source size, the rule and element counts, the nesting depth,
// the repetition counts (llama.cpp's threshold), and the work one matcher
// step may do. Exceeding a bound is an error, never a hang or an unbounded
// allocation.
package grammar

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits a grammar must stay within. They are far above what real
// grammars need (llama.cpp's JSON grammar has 20 rules; a converted
// OpenAI-sized schema a few hundred) and low enough that a hostile grammar
// costs milliseconds and a few megabytes.
const (
	MaxSourceBytes = 1 << 20 // grammar text
	MaxRules       = 1 << 14 // rules after repetition and group expansion
	MaxElements    = 1 << 20 // elements of all rules together
	MaxDepth       = 128     // nesting of parentheses
	// MaxRepetition is llama.cpp's MAX_REPETITION_THRESHOLD: {m,n} counts,
	// and the rules a repetition of repetitions copies, stay below it.
	MaxRepetition = 2000
)

// ErrSyntax is wrapped by every parse error; the message says where.
var ErrSyntax = errors.New("grammar")

// kind is an element's type, after llama.cpp's llama_gretype.
type kind uint8

const (
	kEnd   kind = iota // end of a rule's last alternative
	kAlt               // end of an alternative that another follows
	kRef               // reference to rule val
	kClass             // character class val (an index into Grammar.classes)
)

type elem struct {
	k   kind
	val int32 // rule id for kRef, class index for kClass
}

// class is a character class: a literal character, [..], [^..] or ".".
// Ranges are kept in source order because llama.cpp's partial-UTF-8 match
// stops at the first range that overlaps (which matters for negated
// classes).
type class struct {
	neg    bool
	any    bool
	ranges [][2]rune
	ascii  [2]uint64 // membership of code points < 128, negation applied
}

func (c *class) build() {
	for r := rune(0); r < 128; r++ {
		if c.matchSlow(r) {
			c.ascii[r>>6] |= 1 << (r & 63)
		}
	}
}

func (c *class) matchSlow(r rune) bool {
	if c.any {
		return true
	}
	found := false
	for _, rg := range c.ranges {
		if rg[0] <= r && r <= rg[1] {
			found = true
			break
		}
	}
	return found != c.neg
}

// match is llama_grammar_match_char.
func (c *class) match(r rune) bool {
	if r >= 0 && r < 128 {
		return c.ascii[r>>6]&(1<<(r&63)) != 0
	}
	return c.matchSlow(r)
}

// matchPartial is llama_grammar_match_partial_char: whether some completion
// of a UTF-8 sequence with value so far and remain bytes still to come could
// match.
func (c *class) matchPartial(value uint32, remain int) bool {
	if remain < 0 || (remain == 1 && value < 2) {
		return false
	}
	low := value << (remain * 6)
	high := low | (1<<(remain*6) - 1)
	if low == 0 {
		switch remain {
		case 2:
			low = 1 << 11
		case 3:
			low = 1 << 16
		}
	}
	if c.any {
		return true
	}
	for _, rg := range c.ranges {
		if uint32(rg[0]) <= high && low <= uint32(rg[1]) {
			return !c.neg
		}
	}
	return c.neg
}

// Grammar is a parsed, checked grammar. It is immutable and safe to share;
// each generation uses its own Matcher.
type Grammar struct {
	names     []string // rule id -> name
	rules     [][]elem // rule id -> alternatives separated by kAlt, ended by kEnd
	classes   []class
	root      int32
	code      []elem  // all rules flattened; positions index this
	ruleStart []int32 // rule id -> index of its first element in code
}

// Rules is the number of rules (including the ones groups and repetitions
// generate).
func (g *Grammar) Rules() int { return len(g.rules) }

// Parse parses GBNF source with start rule root ("root" if empty).
func Parse(src, root string) (*Grammar, error) {
	if root == "" {
		root = "root"
	}
	if len(src) > MaxSourceBytes {
		return nil, fmt.Errorf("%w: source is %d bytes, at most %d", ErrSyntax, len(src), MaxSourceBytes)
	}
	if !utf8.ValidString(src) {
		return nil, fmt.Errorf("%w: source is not valid UTF-8", ErrSyntax)
	}
	p := &parser{src: src, ids: map[string]int32{}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	g := &Grammar{names: p.names, rules: p.rules, classes: p.classes}
	for i, r := range g.rules {
		if r == nil {
			return nil, fmt.Errorf("%w: rule %q is used but never defined (first use at %s)", ErrSyntax, g.names[i], p.where(p.firstUse[int32(i)]))
		}
	}
	id, ok := p.ids[root]
	if !ok {
		return nil, fmt.Errorf("%w: no rule named %q (the start rule)", ErrSyntax, root)
	}
	g.root = id
	for i := range g.classes {
		g.classes[i].build()
	}
	if err := g.checkLeftRecursion(); err != nil {
		return nil, err
	}
	g.flatten()
	return g, nil
}

type parser struct {
	src      string
	pos      int
	depth    int
	ids      map[string]int32
	names    []string
	rules    [][]elem
	classes  []class
	firstUse map[int32]int
	nElems   int
}

// where renders a byte offset as line:column (1-based, columns in runes).
func (p *parser) where(off int) string {
	off = min(max(off, 0), len(p.src))
	line := 1 + strings.Count(p.src[:off], "\n")
	start := strings.LastIndexByte(p.src[:off], '\n') + 1
	return fmt.Sprintf("%d:%d", line, 1+utf8.RuneCountInString(p.src[start:off]))
}

func (p *parser) errf(off int, format string, a ...any) error {
	near := p.src[min(off, len(p.src)):]
	if i := strings.IndexAny(near, "\r\n"); i >= 0 {
		near = near[:i]
	}
	if len(near) > 24 {
		near = near[:24] + "..."
	}
	msg := fmt.Sprintf(format, a...)
	if near == "" {
		return fmt.Errorf("%w: %s: %s at end of line", ErrSyntax, p.where(off), msg)
	}
	return fmt.Errorf("%w: %s: %s at %q", ErrSyntax, p.where(off), msg, near)
}

func (p *parser) peek(i int) byte {
	if p.pos+i < len(p.src) {
		return p.src[p.pos+i]
	}
	return 0
}

func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || '0' <= c && c <= '9'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// space skips blanks and comments, and newlines when newlineOK (inside
// parentheses and after ::= or |).
func (p *parser) space(newlineOK bool) {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\r' && p.src[p.pos] != '\n' {
				p.pos++
			}
		case newlineOK && (c == '\r' || c == '\n'):
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) symbol(name string, use int) int32 {
	if id, ok := p.ids[name]; ok {
		return id
	}
	id := int32(len(p.names))
	p.ids[name] = id
	p.names = append(p.names, name)
	p.rules = append(p.rules, nil)
	if p.firstUse == nil {
		p.firstUse = map[int32]int{}
	}
	p.firstUse[id] = use
	return id
}

func (p *parser) generated(base string) (int32, error) {
	if len(p.names) >= MaxRules {
		return 0, p.errf(p.pos, "more than %d rules", MaxRules)
	}
	id := int32(len(p.names))
	name := base + "_" + strconv.Itoa(int(id))
	p.ids[name] = id
	p.names = append(p.names, name)
	p.rules = append(p.rules, nil)
	return id, nil
}

func (p *parser) setRule(id int32, r []elem) error {
	p.nElems += len(r)
	if p.nElems > MaxElements {
		return p.errf(p.pos, "more than %d grammar elements", MaxElements)
	}
	p.rules[id] = r
	return nil
}

func (p *parser) parse() error {
	p.space(true)
	for p.pos < len(p.src) {
		if err := p.rule(); err != nil {
			return err
		}
	}
	if len(p.rules) == 0 {
		return fmt.Errorf("%w: no rules", ErrSyntax)
	}
	return nil
}

func (p *parser) name() (string, error) {
	start := p.pos
	for p.pos < len(p.src) && isWord(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		return "", p.errf(start, "expecting a rule name")
	}
	return p.src[start:p.pos], nil
}

func (p *parser) rule() error {
	start := p.pos
	name, err := p.name()
	if err != nil {
		return err
	}
	p.space(false)
	if !strings.HasPrefix(p.src[p.pos:], "::=") {
		return p.errf(p.pos, "expecting ::= after rule name %q", name)
	}
	id := p.symbol(name, start)
	if p.rules[id] != nil {
		return p.errf(start, "rule %q is defined twice", name)
	}
	if len(p.names) > MaxRules {
		return p.errf(start, "more than %d rules", MaxRules)
	}
	p.pos += 3
	p.space(true)
	if err := p.alternates(name, id, false); err != nil {
		return err
	}
	switch {
	case p.peek(0) == '\r':
		p.pos++
		if p.peek(0) == '\n' {
			p.pos++
		}
	case p.peek(0) == '\n':
		p.pos++
	case p.pos < len(p.src):
		return p.errf(p.pos, "expecting newline or end of input")
	}
	p.space(true)
	return nil
}

func (p *parser) alternates(name string, id int32, nested bool) error {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > MaxDepth {
		return p.errf(p.pos, "parentheses nested deeper than %d", MaxDepth)
	}
	// A placeholder marks the rule defined while its body is parsed, so a
	// duplicate definition inside (impossible in GBNF) cannot slip by.
	p.rules[id] = []elem{}
	var r []elem
	var err error
	if r, err = p.sequence(name, r, nested); err != nil {
		return err
	}
	for p.peek(0) == '|' {
		r = append(r, elem{k: kAlt})
		p.pos++
		p.space(true)
		if r, err = p.sequence(name, r, nested); err != nil {
			return err
		}
	}
	r = append(r, elem{k: kEnd})
	return p.setRule(id, r)
}

func (p *parser) addClass(c class) (elem, error) {
	if len(p.classes) >= MaxElements {
		return elem{}, p.errf(p.pos, "more than %d character classes", MaxElements)
	}
	p.classes = append(p.classes, c)
	return elem{k: kClass, val: int32(len(p.classes) - 1)}, nil
}

// char reads one character of a literal or class: an escape or a UTF-8
// code point.
func (p *parser) char() (rune, error) {
	if p.pos >= len(p.src) {
		return 0, p.errf(p.pos, "unexpected end of input")
	}
	if p.src[p.pos] != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += n
		return r, nil
	}
	start := p.pos
	if p.pos+1 >= len(p.src) {
		return 0, p.errf(start, "unexpected end of input in an escape")
	}
	c := p.src[p.pos+1]
	p.pos += 2
	hex := 0
	switch c {
	case 'x':
		hex = 2
	case 'u':
		hex = 4
	case 'U':
		hex = 8
	case 't':
		return '\t', nil
	case 'r':
		return '\r', nil
	case 'n':
		return '\n', nil
	case '\\', '"', '[', ']', '-':
		return rune(c), nil
	default:
		return 0, p.errf(start, "unknown escape \\%c", c)
	}
	var v uint32
	for i := 0; i < hex; i++ {
		if p.pos >= len(p.src) {
			return 0, p.errf(start, "expecting %d hex digits", hex)
		}
		d := p.src[p.pos]
		switch {
		case '0' <= d && d <= '9':
			v = v<<4 | uint32(d-'0')
		case 'a' <= d && d <= 'f':
			v = v<<4 | uint32(d-'a'+10)
		case 'A' <= d && d <= 'F':
			v = v<<4 | uint32(d-'A'+10)
		default:
			return 0, p.errf(start, "expecting %d hex digits", hex)
		}
		p.pos++
	}
	if v > utf8.MaxRune {
		return 0, p.errf(start, "code point U+%X is beyond U+10FFFF", v)
	}
	return rune(v), nil
}

func (p *parser) integer() (int, error) {
	start := p.pos
	for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		return 0, p.errf(start, "expecting an integer")
	}
	if p.pos-start > 9 {
		return 0, p.errf(start, "repetition count %s exceeds %d", p.src[start:p.pos], MaxRepetition)
	}
	n, _ := strconv.Atoi(p.src[start:p.pos])
	return n, nil
}

func (p *parser) sequence(name string, r []elem, nested bool) ([]elem, error) {
	lastStart := len(r)
	prevRules := 1 // rules the last symbol stands for (llama.cpp's n_prev_rules)
	repeat := func(at, lo, hi int) error {
		if lastStart == len(r) {
			return p.errf(at, "expecting an item before */+/?/{")
		}
		return p.repeat(name, &r, lastStart, &prevRules, lo, hi, at)
	}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		at := p.pos
		switch {
		case c == '"':
			p.pos++
			lastStart, prevRules = len(r), 1
			for p.peek(0) != '"' {
				if p.pos >= len(p.src) {
					return nil, p.errf(at, "unterminated string literal")
				}
				ch, err := p.char()
				if err != nil {
					return nil, err
				}
				e, err := p.addClass(class{ranges: [][2]rune{{ch, ch}}})
				if err != nil {
					return nil, err
				}
				r = append(r, e)
			}
			p.pos++
			p.space(nested)
		case c == '[':
			p.pos++
			cl := class{}
			if p.peek(0) == '^' {
				cl.neg = true
				p.pos++
			}
			lastStart, prevRules = len(r), 1
			for p.peek(0) != ']' {
				if p.pos >= len(p.src) {
					return nil, p.errf(at, "unterminated character class")
				}
				lo, err := p.char()
				if err != nil {
					return nil, err
				}
				hi := lo
				if p.peek(0) == '-' && p.peek(1) != ']' {
					p.pos++
					if p.pos >= len(p.src) {
						return nil, p.errf(at, "unterminated character class")
					}
					if hi, err = p.char(); err != nil {
						return nil, err
					}
				}
				cl.ranges = append(cl.ranges, [2]rune{lo, hi})
			}
			p.pos++
			e, err := p.addClass(cl)
			if err != nil {
				return nil, err
			}
			r = append(r, e)
			p.space(nested)
		case isWord(c):
			ref, err := p.name()
			if err != nil {
				return nil, err
			}
			id := p.symbol(ref, at)
			if len(p.names) > MaxRules {
				return nil, p.errf(at, "more than %d rules", MaxRules)
			}
			p.space(nested)
			lastStart, prevRules = len(r), 1
			r = append(r, elem{k: kRef, val: id})
		case c == '(':
			p.pos++
			p.space(true)
			before := len(p.names)
			sub, err := p.generated(name)
			if err != nil {
				return nil, err
			}
			if err := p.alternates(name, sub, true); err != nil {
				return nil, err
			}
			prevRules = max(1, len(p.names)-before)
			lastStart = len(r)
			r = append(r, elem{k: kRef, val: sub})
			if p.peek(0) != ')' {
				return nil, p.errf(p.pos, "expecting ')' to close the group opened at %s", p.where(at))
			}
			p.pos++
			p.space(nested)
		case c == '.':
			p.pos++
			lastStart, prevRules = len(r), 1
			e, err := p.addClass(class{any: true})
			if err != nil {
				return nil, err
			}
			r = append(r, e)
			p.space(nested)
		case c == '*' || c == '+' || c == '?':
			p.pos++
			p.space(nested)
			lo, hi := 0, -1
			if c == '+' {
				lo = 1
			} else if c == '?' {
				hi = 1
			}
			if err := repeat(at, lo, hi); err != nil {
				return nil, err
			}
		case c == '{':
			p.pos++
			p.space(nested)
			lo, err := p.integer()
			if err != nil {
				return nil, err
			}
			p.space(nested)
			hi := -1
			switch p.peek(0) {
			case '}':
				hi = lo
				p.pos++
			case ',':
				p.pos++
				p.space(nested)
				if isDigit(p.peek(0)) {
					if hi, err = p.integer(); err != nil {
						return nil, err
					}
					p.space(nested)
				}
				if p.peek(0) != '}' {
					return nil, p.errf(p.pos, "expecting '}'")
				}
				p.pos++
			default:
				return nil, p.errf(p.pos, "expecting ',' or '}'")
			}
			p.space(nested)
			if lo > MaxRepetition {
				return nil, p.errf(at, "repetition count %d exceeds %d", lo, MaxRepetition)
			}
			if hi > MaxRepetition {
				hi = -1 // as llama.cpp: a huge maximum means no maximum
			}
			if hi >= 0 && hi < lo {
				return nil, p.errf(at, "repetition {%d,%d}: the maximum is below the minimum", lo, hi)
			}
			if err := repeat(at, lo, hi); err != nil {
				return nil, err
			}
		case c == '<' || c == '!':
			return nil, p.errf(at, "token references (<...>, !<...>) are not supported")
		default:
			return r, nil
		}
		if len(r) > MaxElements {
			return nil, p.errf(at, "a rule with more than %d elements", MaxElements)
		}
	}
	return r, nil
}

// repeat rewrites the symbol r[last:] as llama.cpp does:
//
//	S{m,n} -> S (m times) S'(n-m), S'(x) ::= S S'(x-1) |, S'(1) ::= S |
//	S{m,}  -> S (m times) S',      S'    ::= S S' |
func (p *parser) repeat(name string, r *[]elem, last int, prevRules *int, lo, hi, at int) error {
	total := 1
	if hi > 0 {
		total = hi
	} else if lo > 0 {
		total = lo
	}
	if *prevRules*total >= MaxRepetition {
		return p.errf(at, "repeating %d rules %d times exceeds %d: reduce the repetitions or the rule's complexity", *prevRules, total, MaxRepetition)
	}
	prev := append([]elem(nil), (*r)[last:]...)
	if (len(prev)*max(lo, 1))+len(*r) > MaxElements {
		return p.errf(at, "a rule with more than %d elements", MaxElements)
	}
	if lo == 0 {
		*r = (*r)[:last]
	} else {
		for i := 1; i < lo; i++ {
			*r = append(*r, prev...)
		}
	}
	nOpt := 1
	if hi >= 0 {
		nOpt = hi - lo
	}
	var lastRec int32
	for i := 0; i < nOpt; i++ {
		id, err := p.generated(name)
		if err != nil {
			return err
		}
		rec := append([]elem(nil), prev...)
		if hi < 0 {
			rec = append(rec, elem{k: kRef, val: id})
		} else if i > 0 {
			rec = append(rec, elem{k: kRef, val: lastRec})
		}
		rec = append(rec, elem{k: kAlt}, elem{k: kEnd})
		if err := p.setRule(id, rec); err != nil {
			return err
		}
		lastRec = id
	}
	if nOpt > 0 {
		*r = append(*r, elem{k: kRef, val: lastRec})
	}
	*prevRules *= total
	return nil
}

func endOfSeq(e elem) bool { return e.k == kEnd || e.k == kAlt }

// checkLeftRecursion refuses a grammar where a rule can reach itself
// without consuming a character, as llama.cpp does: the matcher's
// expansion of such a rule would never end. Unlike llama.cpp's check,
// nullability is computed to a fixed point, so a rule that is empty only
// through other rules counts as empty.
func (g *Grammar) checkLeftRecursion() error {
	n := len(g.rules)
	nullable := make([]bool, n)
	for changed := true; changed; {
		changed = false
		for i, r := range g.rules {
			if nullable[i] {
				continue
			}
			ok := true // the current alternative is nullable so far
			for _, e := range r {
				if endOfSeq(e) {
					if ok {
						nullable[i], changed = true, true
						break
					}
					ok = true
					continue
				}
				if e.k != kRef || !nullable[e.val] {
					ok = false
				}
			}
		}
	}
	// Edges i -> j: rule j can start rule i.
	state := make([]uint8, n) // 0 unvisited, 1 in progress, 2 done
	var visit func(i int32) int32
	visit = func(i int32) int32 {
		state[i] = 1
		lead := true
		for _, e := range g.rules[i] {
			if endOfSeq(e) {
				lead = true
				continue
			}
			if !lead {
				continue
			}
			if e.k != kRef {
				lead = false
				continue
			}
			switch state[e.val] {
			case 1:
				return e.val
			case 0:
				if c := visit(e.val); c >= 0 {
					return c
				}
			}
			lead = nullable[e.val]
		}
		state[i] = 2
		return -1
	}
	// An explicit stack would avoid deep Go recursion, but the depth is
	// bounded by MaxRules and Go stacks grow, so recursion is safe here.
	for i := range g.rules {
		if state[i] == 0 {
			if c := visit(int32(i)); c >= 0 {
				return fmt.Errorf("%w: rule %q is %w (it can reach itself without consuming a character), which is not supported", ErrSyntax, g.names[c], errLeftRecursion)
			}
		}
	}
	return nil
}

func (g *Grammar) flatten() {
	g.ruleStart = make([]int32, len(g.rules))
	n := 0
	for _, r := range g.rules {
		n += len(r)
	}
	g.code = make([]elem, 0, n)
	for i, r := range g.rules {
		g.ruleStart[i] = int32(len(g.code))
		g.code = append(g.code, r...)
	}
}

// errLeftRecursion marks the left-recursion refusal inside ErrSyntax.
var errLeftRecursion = errors.New("left-recursive")

func isLeftRecursion(err error) bool { return errors.Is(err, errLeftRecursion) }
