package tokenizer

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestFlagsMatchLlamaCpp checks the category and whitespace of every
// codepoint against llama.cpp's own tables (testdata/tokenizer/gen-unicode.sh).
func TestFlagsMatchLlamaCpp(t *testing.T) {
	f, err := os.Open("../../testdata/tokenizer/unicode-flags.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type run struct {
		start rune
		cat   category
		ws    bool
	}
	llamaCat := map[int]category{0: catNone, 0x01: catUndefined, 0x02: catNumber, 0x04: catLetter, 0x08: catSeparator,
		0x10: catMark, 0x20: catPunct, 0x40: catSymbol, 0x80: catControl}
	var runs []run
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		var start, cat, ws int
		if _, err := fmt.Sscan(line, &start, &cat, &ws); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		c, ok := llamaCat[cat]
		if !ok {
			t.Fatalf("%q: unknown category flag", line)
		}
		runs = append(runs, run{rune(start), c, ws == 1})
	}
	if len(runs) < 1000 || runs[len(runs)-1].start != 0x110000 {
		t.Fatalf("unicode-flags.txt looks truncated (%d runs)", len(runs))
	}
	bad := 0
	for i := 0; i+1 < len(runs); i++ {
		for r := runs[i].start; r < runs[i+1].start; r++ {
			got := flagsOf(r)
			if got.cat != runs[i].cat || got.ws != runs[i].ws {
				if bad++; bad <= 10 {
					t.Errorf("U+%04X: category %d ws %v, llama.cpp %d %v", r, got.cat, got.ws, runs[i].cat, runs[i].ws)
				}
			}
		}
	}
	if bad > 10 {
		t.Errorf("%d codepoints differ in total", bad)
	}
}

func TestDecodeCodepoints(t *testing.T) {
	cases := []struct {
		in   string
		want []rune
	}{
		{"", []rune{}},
		{"aé€🦙", []rune{'a', 'é', '€', '🦙'}},
		{"\xff", []rune{0xFFFD}},
		{"\xc3", []rune{0xFFFD}},
		{"\xe2\x82", []rune{0xFFFD, 0xFFFD}},
		{"\x80a", []rune{0xFFFD, 'a'}},
		// llama.cpp checks bit patterns only: overlong forms and surrogates decode
		{"\xc0\x80", []rune{0}},
		{"\xed\xa0\x80", []rune{0xD800}},
		{"\xf8\x88\x80\x80\x80", []rune{0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}},
	}
	for _, c := range cases {
		got := decodeCodepoints(c.in)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("decodeCodepoints(%q) = %U, want %U", c.in, got, c.want)
		}
	}
}
