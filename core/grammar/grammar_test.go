package grammar

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// jsonGBNF is llama.cpp's grammars/json.gbnf (its published form).
const jsonGBNF = `
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
`

func mustParse(t *testing.T, src string) *Grammar {
	t.Helper()
	g, err := Parse(src, "")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return g
}

// full reports whether s is a complete sentence of g.
func full(t *testing.T, g *Grammar, s string) bool {
	t.Helper()
	m, err := NewMatcher(g)
	if err != nil {
		t.Fatal(err)
	}
	if s != "" && m.AcceptString(s) != nil {
		return false
	}
	return m.Accepting()
}

// prefix reports whether s can be continued to a sentence (the matcher
// did not refuse it).
func prefix(t *testing.T, g *Grammar, s string) bool {
	t.Helper()
	m, err := NewMatcher(g)
	if err != nil {
		t.Fatal(err)
	}
	return s == "" || m.AcceptString(s) == nil
}

func TestAcceptanceTables(t *testing.T) {
	for _, c := range []struct {
		name, grammar  string
		accept, reject []string // complete sentences / strings that are not
		prefixes       []string // incomplete but viable
	}{
		{"json", jsonGBNF,
			[]string{`{}`, `{"a": 1}`, `{"a":[1,2.5,-3e9,"x\n\u00e9",true,null,{}]}`, "{\"k\": \"日本\"}", `{ "a" : { "b" : [ ] } } `},
			[]string{`{`, `[]`, `{"a" 1}`, `{"a":01}`, `{'a':1}`, "{\"a\":\"\x01\"}", `{"a":tru}`, `{"a":1,}`},
			[]string{`{"a": [1, {"b": "c`, `{"`, `{"a":-`}},
		{"repetition", `root ::= "a"{2,3} "b"+ "c"? [x-z]*`,
			[]string{"aab", "aaabbbc", "aabzyx", "aabbcxx"},
			[]string{"ab", "aaaab", "aa", "aabcc", "aabw"},
			[]string{"aa", "aaa"}},
		{"negated class and any", `root ::= [^a-c\n] . "\u00e9" "\x41" "\U0001F600"`,
			[]string{"dzéA😀", "\tééA😀"},
			[]string{"azéA😀", "\nzéA😀", "dzeA😀"},
			[]string{"d"}},
		{"alternation and groups", "root ::= (\"cat\" | \"dog\") (\" \" | \"-\") ( \"a\" | \"b\" \n  | \"c\" ) # comment\n",
			[]string{"cat a", "dog-b", "cat-c"},
			[]string{"cow a", "cat_a", "cat ", "catab"},
			[]string{"ca", "dog-"}},
		{"empty alternative and recursion", `root ::= "(" root ")" | ""`,
			[]string{"", "()", "((()))"},
			[]string{"(", "())", ")("},
			[]string{"(("}},
		{"exact count", `root ::= [0-9]{3}`,
			[]string{"123"}, []string{"12", "1234", "12a"}, []string{"1"}},
	} {
		g := mustParse(t, c.grammar)
		for _, s := range c.accept {
			if !full(t, g, s) {
				t.Errorf("%s: %q refused", c.name, s)
			}
		}
		for _, s := range c.reject {
			if full(t, g, s) {
				t.Errorf("%s: %q accepted", c.name, s)
			}
		}
		for _, s := range c.prefixes {
			if !prefix(t, g, s) || full(t, g, s) {
				t.Errorf("%s: %q should be a viable, incomplete prefix", c.name, s)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"root ::= foo", `rule "foo" is used but never defined (first use at 1:10)`},
		{"root ::= \"a\"\nroot ::= \"b\"", `2:1: rule "root" is defined twice`},
		{"root ::= \"abc", "1:10: unterminated string literal"},
		{"root ::= [a-", "1:10: unterminated character class"},
		{"root ::= (\"a\"", "1:14: expecting ')' to close the group opened at 1:10"},
		{"root ::= \"\\q\"", `1:11: unknown escape \q`},
		{"root ::= \"\\x4\"", "expecting 2 hex digits"},
		{"root := \"a\"", "1:6: expecting ::="},
		{"root ::= \"a\"{3,2}", "maximum is below the minimum"},
		{"root ::= \"a\"{2001}", "exceeds 2000"},
		{"root ::= *", "expecting an item before"},
		{"other ::= \"a\"", `no rule named "root"`},
		{"root ::= root \"a\"", `rule "root" is left-recursive`},
		{"root ::= e root \"a\" | \"b\"\ne ::= f\nf ::= \"\"", "left-recursive"},
		{"root ::= <[12]>", "token references"},
		{"root ::= \"a\" )", "1:14: expecting newline or end of input"},
		{"", "no rules"},
	} {
		_, err := Parse(c.src, "")
		if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an ErrSyntax containing %q", c.src, err, c.want)
		}
	}
}

func TestLimits(t *testing.T) {
	// Nested repetitions multiply: refused before anything is expanded.
	if _, err := Parse(`root ::= "`+strings.Repeat("a", 1000)+`"{1999}`, ""); err == nil || !strings.Contains(err.Error(), "elements") {
		t.Errorf("a repetition of 2M elements: %v", err)
	}
	if _, err := Parse(`root ::= (("a"{1,40}){1,40}){1,40}`, ""); err == nil || !strings.Contains(err.Error(), "exceeds 2000") {
		t.Errorf("nested optional repetitions: %v", err)
	}
	if _, err := Parse("root ::= "+strings.Repeat("(", MaxDepth+1)+`"a"`+strings.Repeat(")", MaxDepth+1), ""); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep nesting: %v", err)
	}
	if _, err := Parse(strings.Repeat(" ", MaxSourceBytes+1), ""); err == nil {
		t.Error("oversized source accepted")
	}
	// An ambiguous grammar whose stacks multiply hits the work bound with
	// an error instead of exhausting memory.
	var b strings.Builder
	b.WriteString("root ::= x*\nx ::= ")
	for i := 0; i < 64; i++ {
		b.WriteString(`"a"? `)
	}
	b.WriteString(`"b"` + "\n")
	g := mustParse(t, b.String())
	m, err := NewMatcher(g)
	if err != nil {
		if !errors.Is(err, ErrTooComplex) {
			t.Fatal(err)
		}
		return
	}
	for i := 0; i < 200 && m.Err() == nil; i++ {
		_ = m.AcceptString("a")
	}
	_ = m
}

func TestPartialUTF8(t *testing.T) {
	g := mustParse(t, `root ::= "é" [a-z]`)
	m, _ := NewMatcher(g)
	e := []byte("é")
	if !m.Allows(e[:1]) {
		t.Fatal("first byte of é refused")
	}
	if err := m.Accept(e[:1]); err != nil {
		t.Fatal(err)
	}
	if m.Allows([]byte("a")) {
		t.Error("ASCII accepted where a continuation byte is due")
	}
	if err := m.Accept(append(e[1:], 'q')); err != nil {
		t.Fatal(err)
	}
	if !m.Accepting() {
		t.Error("not accepting after é q")
	}
	// A partial sequence that can only complete to characters the class
	// refuses is refused (é is U+00E9; \xE6 starts U+6000..U+6FFF).
	m2, _ := NewMatcher(g)
	if m2.Allows([]byte{0xE6}) {
		t.Error("partial sequence that cannot become é allowed")
	}
	if m2.Allows([]byte{0x80}) {
		t.Error("stray continuation byte allowed")
	}
}

// TestMaskMatchesAllows checks the vocabulary walk against the direct
// test of each token, over random vocabularies and matcher positions.
func TestMaskMatchesAllows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"{", "}", "\"", "a", "b", ":", ",", " ", "1", "0", "-", ".", "e", "true", "null", "é", "\xc3", "\xa9", "\n", "[", "]", "\\", "u"}
	g := mustParse(t, jsonGBNF)
	for trial := 0; trial < 20; trial++ {
		n := 300
		pieces := make([][]byte, n)
		for i := range pieces {
			var s []byte
			for k := 1 + rng.IntN(4); k > 0; k-- {
				s = append(s, alphabet[rng.IntN(len(alphabet))]...)
			}
			pieces[i] = s
		}
		pieces[0] = nil // an empty piece is never allowed
		v, err := NewVocab(n, func(id int32) []byte { return pieces[id] }, func(id int32) bool { return id == 1 })
		if err != nil {
			t.Fatal(err)
		}
		m, _ := NewMatcher(g)
		for step := 0; step < 30; step++ {
			mask, err := m.Mask(v)
			if err != nil {
				t.Fatal(err)
			}
			var allowed []int32
			for id := int32(0); int(id) < n; id++ {
				want := m.Allows(pieces[id])
				if id == 1 {
					want = m.Accepting()
				}
				got := mask[id>>6]&(1<<(id&63)) != 0
				if got != want {
					t.Fatalf("trial %d step %d: token %d %q: mask %v, Allows %v", trial, step, id, pieces[id], got, want)
				}
				if got && id != 1 {
					allowed = append(allowed, id)
				}
			}
			if len(allowed) == 0 {
				break
			}
			if err := m.Accept(pieces[allowed[rng.IntN(len(allowed))]]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestRestart: a matcher restarted for each new text gives the masks and
// verdicts a fresh matcher gives, and reuses the masks it computed before.
func TestRestart(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"{", "}", "\"", "a", "b", ":", ",", " ", "1", "0", "-", ".", "e", "true", "null", "é", "[", "]", "\\", "u"}
	g := mustParse(t, jsonGBNF)
	n := 300
	pieces := make([][]byte, n)
	for i := range pieces {
		var s []byte
		for k := 1 + rng.IntN(3); k > 0; k-- {
			s = append(s, alphabet[rng.IntN(len(alphabet))]...)
		}
		pieces[i] = s
	}
	pieces[0] = nil
	v, err := NewVocab(n, func(id int32) []byte { return pieces[id] }, func(id int32) bool { return id == 1 })
	if err != nil {
		t.Fatal(err)
	}
	reused, _ := NewMatcher(g)
	for text := 0; text < 8; text++ {
		if text > 0 {
			if err := reused.Restart(); err != nil {
				t.Fatal(err)
			}
		}
		fresh, _ := NewMatcher(g)
		for step := 0; step < 25; step++ {
			a, err1 := reused.Mask(v)
			b, err2 := fresh.Mask(v)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if !slices.Equal(a, b) || reused.Accepting() != fresh.Accepting() {
				t.Fatalf("text %d step %d: restarted matcher's mask differs from a fresh one's", text, step)
			}
			var allowed []int32
			for id := int32(2); int(id) < n; id++ {
				if b[id>>6]&(1<<(id&63)) != 0 {
					allowed = append(allowed, id)
				}
			}
			if len(allowed) == 0 {
				break
			}
			p := pieces[allowed[rng.IntN(len(allowed))]]
			if err := reused.Accept(p); err != nil {
				t.Fatal(err)
			}
			if err := fresh.Accept(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, cached := reused.MaskStats(); cached == 0 {
		t.Error("the restarted matcher reused no mask")
	}
}
