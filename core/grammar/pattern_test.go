package grammar

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// jsonContent is s as encoding/json writes it inside a string (no HTML
// escaping), without the quotes.
func jsonContent(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// TestPatternDifferential: for each pattern, the schema's grammar accepts
// a JSON string exactly when Go's regexp matches its value whole. The
// candidates are every string up to length 4 over a small alphabet (with
// ", \ and the two control characters JSON writes with short escapes) plus
// random longer ones.
func TestPatternDifferential(t *testing.T) {
	patterns := []string{
		`^abc$`, `^a|b$`, `^(a|b)*c$`, `^a+b?$`, `^[abc]{2,3}$`, `^[^ab]*$`, `^.$`, `^.*$`, `^a.c$`,
		`^\d+$`, `^\w*-\w*$`, `^\s?x$`, `^\D\W$`, `^[a-c0-9_]+$`, `^(?:ab|ba){1,2}$`, `^a{2}$`, `^a{2,}$`,
		`^x(y(z|a)?)*$`, `^$`, `^[\-a]$`, `^\.\*\\$`, `^"[^"]*"$`, `^[\t\n]+$`, `^é+ü?$`, `^[à-ÿ]b$`,
		`^(a|)b$`, `^[]a]$`, `^[^\s"\\]+$`, `^\$\^$`, `^ab*?c$`, `^(\d{3}-)?\d{4}$`, `^[a-]+$`,
	}
	alphabet := []string{"a", "b", "c", "x", "y", "z", "0", "7", "_", "-", ".", "*", " ", "\"", "\\", "\t", "\n", "é", "ü", "$", "^", "]"}
	var cands []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		cands = append(cands, prefix)
		if n == 0 {
			return
		}
		for _, a := range alphabet {
			gen(prefix+a, n-1)
		}
	}
	gen("", 3)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var b strings.Builder
		for range 4 + rng.IntN(6) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		cands = append(cands, b.String())
	}
	for _, pat := range patterns {
		re := regexp.MustCompile(pat)
		g := schemaGrammar(t, `{"type":"string","pattern":`+jsonQuote(pat)+`}`, SchemaOptions{})
		// Some strings each pattern matches, so the comparison is not all
		// refusals: the random candidates seldom match long patterns.
		matched := 0
		for _, s := range cands {
			want := re.MatchString(s) && re.FindString(s) == s
			if want {
				matched++
			}
			doc := `"` + jsonContent(t, s) + `"`
			if got := full(t, g, doc); got != want {
				t.Errorf("pattern %s, string %q (%s): grammar %v, regexp %v", pat, s, doc, got, want)
			}
		}
		if matched == 0 && pat != `^abc$` && pat != `^(\d{3}-)?\d{4}$` && pat != `^x(y(z|a)?)*$` {
			t.Errorf("pattern %s matched none of the candidates: the test says nothing", pat)
		}
	}
}

func jsonQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestPatternRefused: syntax outside the subset is refused, naming the
// pattern.
func TestPatternRefused(t *testing.T) {
	for _, pat := range []string{`abc`, `^abc`, `abc$`, `^a\$`, `^(a)\1$`, `^(?=a)a$`, `^(?i)a$`, `^(?P<x>a)$`, `^a\bb$`,
		`^\p{L}$`, `^a^b$`, `^a$b$`, `^*a$`, `^a**$`, `^(a$`, `^a)$`, `^[a$`, `^a{3,2}$`, `^a{99999}$`, `^[[:alpha:]]$`, `^[\x00-\x07]$`} {
		_, err := FromJSONSchema([]byte(`{"type":"string","pattern":`+jsonQuote(pat)+`}`), SchemaOptions{})
		if err == nil {
			t.Errorf("pattern %s accepted", pat)
			continue
		}
		if !strings.Contains(err.Error(), "pattern") {
			t.Errorf("pattern %s: error %q does not name the pattern", pat, err)
		}
	}
}
