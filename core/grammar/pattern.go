package grammar

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON Schema "pattern" → GBNF, for the regular-expression subset
// llama.cpp's json-schema-to-grammar converts: a pattern anchored with ^ and
// $, literals, escapes (\d \w \s and their negations, escaped
// metacharacters), classes, ".", groups ((…) and (?:…)), alternation and
// the quantifiers ? * + {m} {m,} {m,n}. Anything else (backreferences,
// lookaround, flags, word boundaries, Unicode classes, anchors inside) is
// refused, never approximated.
//
// The pattern constrains the string's decoded value, while the grammar
// reads its JSON text, so every character the pattern allows is written as
// JSON writes it: as itself, or for ", \ and the control characters as
// their short escapes (\" \\ \t \n \r \b \f). In classes and ".", other
// control characters and DEL are left out, and no character is written as
// a \u escape: the grammar allows a subset of the JSON spellings (and of
// the strings, for those characters), never a string outside the pattern.

// maxPatternBytes bounds a pattern (it comes from a client).
const maxPatternBytes = 4096

// patternRule converts pattern to the GBNF of its matching strings' JSON
// contents (without the quotes).
func patternRule(pattern string) (string, error) {
	if len(pattern) > maxPatternBytes {
		return "", fmt.Errorf("pattern of %d bytes, at most %d", len(pattern), maxPatternBytes)
	}
	if !utf8.ValidString(pattern) {
		return "", fmt.Errorf("pattern %q is not valid UTF-8", pattern)
	}
	body, ok := strings.CutPrefix(pattern, "^")
	if ok {
		body, ok = strings.CutSuffix(body, "$")
		if ok && strings.HasSuffix(body, `\`) && !strings.HasSuffix(body, `\\`) {
			ok = false // the $ was escaped
		}
	}
	if !ok {
		return "", fmt.Errorf("pattern %q: must start with ^ and end with $ (llama.cpp's subset matches whole strings only)", pattern)
	}
	p := &reParser{src: body, pattern: pattern}
	out, err := p.alt(0)
	if err != nil {
		return "", err
	}
	if p.pos != len(p.src) {
		return "", p.errf("unbalanced )")
	}
	if out == "" {
		return `""`, nil
	}
	return out, nil
}

type reParser struct {
	src, pattern string
	pos          int
}

func (p *reParser) errf(format string, a ...any) error {
	return fmt.Errorf("pattern %q at offset %d: %s", p.pattern, p.pos+1, fmt.Sprintf(format, a...))
}

// maxPatternDepth bounds group nesting (recursion).
const maxPatternDepth = 64

// alt parses alternatives up to a ")" or the end.
func (p *reParser) alt(depth int) (string, error) {
	if depth > maxPatternDepth {
		return "", p.errf("groups nested deeper than %d", maxPatternDepth)
	}
	var alts []string
	for {
		s, err := p.seq(depth)
		if err != nil {
			return "", err
		}
		if s == "" {
			s = `""`
		}
		alts = append(alts, s)
		if p.pos < len(p.src) && p.src[p.pos] == '|' {
			p.pos++
			continue
		}
		break
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return "(" + strings.Join(alts, " | ") + ")", nil
}

// seq parses a sequence of quantified atoms.
func (p *reParser) seq(depth int) (string, error) {
	var items []string
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '|' || c == ')' {
			break
		}
		atom, err := p.atom(depth)
		if err != nil {
			return "", err
		}
		q, err := p.quantifier()
		if err != nil {
			return "", err
		}
		if q != "" {
			atom = "(" + atom + ")" + q
		}
		items = append(items, atom)
	}
	return strings.Join(items, " "), nil
}

func (p *reParser) atom(depth int) (string, error) {
	c := p.src[p.pos]
	switch c {
	case '(':
		p.pos++
		if strings.HasPrefix(p.src[p.pos:], "?:") {
			p.pos += 2
		} else if p.pos < len(p.src) && p.src[p.pos] == '?' {
			return "", p.errf("group syntax (?%s is not supported (lookaround, named groups and flags are outside llama.cpp's subset)", clipRe(p.src[p.pos+1:]))
		}
		inner, err := p.alt(depth + 1)
		if err != nil {
			return "", err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return "", p.errf("missing )")
		}
		p.pos++
		return "(" + inner + ")", nil
	case '[':
		set, err := p.class()
		if err != nil {
			return "", err
		}
		return p.setRule(set)
	case '.':
		p.pos++
		return p.setRule(runeSet{{0, '\n' - 1}, {'\n' + 1, utf8.MaxRune}})
	case '\\':
		set, lit, err := p.escape(false)
		if err != nil {
			return "", err
		}
		if set != nil {
			return p.setRule(set)
		}
		return jsonLiteral(lit), nil
	case '*', '+', '?', '{':
		return "", p.errf("quantifier %c with nothing to repeat", c)
	case '^', '$':
		return "", p.errf("anchor %c inside the pattern is not supported (only ^ at the start and $ at the end)", c)
	case ']', '}':
		// Literal in Go's and JavaScript's syntax.
	}
	r, n := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += n
	return jsonLiteral(r), nil
}

func (p *reParser) setRule(set runeSet) (string, error) {
	r, err := set.gbnf()
	if err != nil {
		return "", p.errf("%v", err)
	}
	return r, nil
}

func clipRe(s string) string {
	if len(s) > 8 {
		return s[:8] + "..."
	}
	return s
}

// quantifier parses an optional ?, *, +, {m}, {m,} or {m,n} (a trailing ?
// for laziness changes no match and is skipped) into GBNF's suffix.
func (p *reParser) quantifier() (string, error) {
	if p.pos >= len(p.src) {
		return "", nil
	}
	var q string
	switch c := p.src[p.pos]; c {
	case '?', '*', '+':
		p.pos++
		q = string(c)
	case '{':
		end := strings.IndexByte(p.src[p.pos:], '}')
		if end < 0 {
			return "", p.errf("unterminated {")
		}
		body := p.src[p.pos+1 : p.pos+end]
		lo, hi, found := strings.Cut(body, ",")
		m, err := strconv.Atoi(lo)
		if err != nil || m < 0 {
			return "", p.errf("repetition {%s}: bad count", body)
		}
		n := m
		if found {
			n = -1
			if hi != "" {
				if n, err = strconv.Atoi(hi); err != nil || n < m {
					return "", p.errf("repetition {%s}: bad bounds", body)
				}
			}
		}
		if m > MaxRepetition || n > MaxRepetition {
			return "", p.errf("repetition {%s}: counts above %d", body, MaxRepetition)
		}
		p.pos += end + 1
		switch {
		case n < 0:
			q = fmt.Sprintf("{%d,}", m)
		case n == m:
			q = fmt.Sprintf("{%d}", m)
		default:
			q = fmt.Sprintf("{%d,%d}", m, n)
		}
	default:
		return "", nil
	}
	if p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '?':
			p.pos++ // lazy: the same strings match
		case '*', '+', '{':
			return "", p.errf("a quantifier cannot follow another")
		}
	}
	return q, nil
}

// escape parses \X at p.pos: a class (\d \w \s and negations) or a literal
// character. inClass allows \b (backspace) and - there.
func (p *reParser) escape(inClass bool) (runeSet, rune, error) {
	if p.pos+1 >= len(p.src) {
		return nil, 0, p.errf("trailing backslash")
	}
	c := p.src[p.pos+1]
	p.pos += 2
	switch c {
	case 'd':
		return runeSet{{'0', '9'}}, 0, nil
	case 'D':
		return runeSet{{'0', '9'}}.negate(), 0, nil
	case 'w':
		return wordSet(), 0, nil
	case 'W':
		return wordSet().negate(), 0, nil
	case 's':
		return spaceSet(), 0, nil
	case 'S':
		return spaceSet().negate(), 0, nil
	case 'n':
		return nil, '\n', nil
	case 't':
		return nil, '\t', nil
	case 'r':
		return nil, '\r', nil
	case 'f':
		return nil, '\f', nil
	case 'v':
		return nil, '\v', nil
	case 'b':
		if inClass {
			return nil, '\b', nil
		}
		return nil, 0, p.errf(`\b (word boundary) is not supported`)
	case 'x':
		if p.pos+2 <= len(p.src) {
			if v, err := strconv.ParseUint(p.src[p.pos:p.pos+2], 16, 8); err == nil {
				p.pos += 2
				return nil, rune(v), nil
			}
		}
		return nil, 0, p.errf(`\x needs two hex digits`)
	case 'u':
		if p.pos+4 <= len(p.src) {
			if v, err := strconv.ParseUint(p.src[p.pos:p.pos+4], 16, 16); err == nil {
				p.pos += 4
				return nil, rune(v), nil
			}
		}
		return nil, 0, p.errf(`\u needs four hex digits`)
	}
	if strings.IndexByte(`\.^$|?*+()[]{}/-"'`, c) >= 0 {
		return nil, rune(c), nil
	}
	return nil, 0, p.errf(`escape \%c is not supported`, c)
}

// class parses [...] at p.pos.
func (p *reParser) class() (runeSet, error) {
	p.pos++ // [
	neg := false
	if p.pos < len(p.src) && p.src[p.pos] == '^' {
		neg = true
		p.pos++
	}
	var set runeSet
	first := true
	for {
		if p.pos >= len(p.src) {
			return nil, p.errf("unterminated [")
		}
		if p.src[p.pos] == ']' && !first {
			p.pos++
			break
		}
		first = false
		lo, sub, err := p.classAtom()
		if err != nil {
			return nil, err
		}
		if sub != nil {
			set = append(set, sub...)
			continue
		}
		hi := lo
		if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			var sub2 runeSet
			if hi, sub2, err = p.classAtom(); err != nil {
				return nil, err
			}
			if sub2 != nil || hi < lo {
				return nil, p.errf("bad class range")
			}
		}
		set = append(set, runeRange{lo, hi})
	}
	set = set.normalize()
	if neg {
		set = set.negate()
	}
	return set, nil
}

func (p *reParser) classAtom() (rune, runeSet, error) {
	if p.src[p.pos] == '\\' {
		set, r, err := p.escape(true)
		return r, set, err
	}
	if strings.HasPrefix(p.src[p.pos:], "[:") {
		return 0, nil, p.errf("POSIX classes [:...:] are not supported")
	}
	r, n := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += n
	return r, nil, nil
}

type runeRange struct{ lo, hi rune }

// runeSet is a set of characters as sorted, disjoint ranges (after
// normalize).
type runeSet []runeRange

func wordSet() runeSet { return runeSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}} }

func spaceSet() runeSet {
	return runeSet{{'\t', '\r'}, {' ', ' '}} // \t \n \v \f \r and space, as Go's \s (and \v)
}

func (s runeSet) normalize() runeSet {
	out := append(runeSet(nil), s...)
	sort.Slice(out, func(i, j int) bool { return out[i].lo < out[j].lo })
	merged := out[:0]
	for _, r := range out {
		if n := len(merged); n > 0 && r.lo <= merged[n-1].hi+1 {
			merged[n-1].hi = max(merged[n-1].hi, r.hi)
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

func (s runeSet) negate() runeSet {
	s = s.normalize()
	var out runeSet
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, runeRange{next, utf8.MaxRune})
	}
	return out
}

func (s runeSet) has(c rune) bool {
	for _, r := range s {
		if r.lo <= c && c <= r.hi {
			return true
		}
	}
	return false
}

// jsonUnsafe are the characters a JSON string cannot hold as themselves
// (and DEL, which llama.cpp's string rule also leaves out).
var jsonUnsafe = runeSet{{0, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}}

// gbnf writes the set: its JSON-safe characters as one class, and ",
// \ and the control characters with short escapes as their escapes.
func (s runeSet) gbnf() (string, error) {
	safe := s.normalize()
	// safe = s minus jsonUnsafe
	var cut runeSet
	for _, r := range safe {
		lo := r.lo
		for _, u := range jsonUnsafe {
			if u.hi < lo || u.lo > r.hi {
				continue
			}
			if u.lo > lo {
				cut = append(cut, runeRange{lo, u.lo - 1})
			}
			lo = u.hi + 1
		}
		if lo <= r.hi {
			cut = append(cut, runeRange{lo, r.hi})
		}
	}
	var alts []string
	if len(cut) > 0 {
		var b strings.Builder
		b.WriteByte('[')
		for _, r := range cut {
			b.WriteString(classRune(r.lo))
			if r.hi > r.lo {
				b.WriteByte('-')
				b.WriteString(classRune(r.hi))
			}
		}
		b.WriteByte(']')
		alts = append(alts, b.String())
	}
	for _, c := range []rune{'"', '\\', '\b', '\f', '\n', '\r', '\t'} {
		if s.has(c) {
			alts = append(alts, jsonLiteral(c))
		}
	}
	switch len(alts) {
	case 0:
		return "", fmt.Errorf("a character set that JSON can only write as \\u escapes (control characters) is not supported")
	case 1:
		return alts[0], nil
	}
	return "(" + strings.Join(alts, " | ") + ")", nil
}

// classRune writes r inside a GBNF class.
func classRune(r rune) string {
	if r < utf8.RuneSelf && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
		return string(r)
	}
	if r <= 0xFFFF {
		return fmt.Sprintf(`\u%04X`, r)
	}
	return fmt.Sprintf(`\U%08X`, r)
}

// jsonLiteral is GBNF for the JSON text of the character c inside a
// string: itself, or its short escape.
func jsonLiteral(c rune) string {
	switch c {
	case '"':
		return literal(`\"`)
	case '\\':
		return literal(`\\`)
	case '\b':
		return literal(`\b`)
	case '\f':
		return literal(`\f`)
	case '\n':
		return literal(`\n`)
	case '\r':
		return literal(`\r`)
	case '\t':
		return literal(`\t`)
	}
	if c < 0x20 || c == 0x7F {
		return literal(fmt.Sprintf(`\u%04x`, c))
	}
	return literal(string(c))
}
