package tokenizer

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memvanta/memvanta/core/gguf"
)

// sharedWordPiece holds llama.cpp's WordPiece vocabulary and its
// test-tokenizer-0 vectors, kept apart from ../shared/vocab.
const sharedWordPiece = "../../../shared/vocab-wordpiece"

func loadWordPiece(tb testing.TB) *Tokenizer {
	tb.Helper()
	const name = "ggml-vocab-bert-bge.gguf"
	if t, ok := vocabCache.Load("wpm:" + name); ok {
		return t.(*Tokenizer)
	}
	fh, err := os.Open(filepath.Join(sharedWordPiece, name))
	if err != nil {
		tb.Skipf("shared WordPiece vocab absent: %v", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	f, err := gguf.Parse(fh, st.Size(), gguf.DefaultLimits())
	if err != nil {
		tb.Fatalf("parse %s: %v", name, err)
	}
	tok, err := FromGGUF(f)
	if err != nil {
		tb.Fatalf("tokenizer from %s: %v", name, err)
	}
	vocabCache.Store("wpm:"+name, tok)
	return tok
}

// TestWordPieceVectors reproduces llama.cpp's test-tokenizer-0 on the bge
// vocabulary (add_special=false, parse_special=false).
func TestWordPieceVectors(t *testing.T) {
	tok := loadWordPiece(t)
	inputs, want := readVectors(t, filepath.Join(sharedWordPiece, "ggml-vocab-bert-bge.gguf"))
	pass := 0
	for i, in := range inputs {
		got := tok.Encode(in, false, false)
		if equalIDs(got, want[i]) {
			pass++
			continue
		}
		t.Errorf("input %d %q:\n got %v\nwant %v", i, in, got, want[i])
	}
	t.Logf("%d/%d vectors pass", pass, len(inputs))
}

// TestWordPieceSpecial checks the ids llama.cpp adds around a WordPiece
// sequence: [CLS] first and [SEP] last, whatever add_bos says.
func TestWordPieceSpecial(t *testing.T) {
	tok := loadWordPiece(t)
	got := tok.Encode("Hello world", true, false)
	want := []int32{101, 7592, 2088, 102}
	if !equalIDs(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if tok.SEP() != 102 || !tok.AddSEP() {
		t.Fatalf("SEP %d AddSEP %v", tok.SEP(), tok.AddSEP())
	}
	if s := tok.Decode(tok.Encode("hello, world", true, false)); s != " hello , world" {
		t.Fatalf("decode: %q", s)
	}
}

// TestNFDMatchesLlamaCpp compares the decomposition table of every
// codepoint with llama.cpp's (testdata/tokenizer/gen-nfd.sh).
func TestNFDMatchesLlamaCpp(t *testing.T) {
	f, err := os.Open("../../testdata/tokenizer/unicode-nfd.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[rune]rune{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		var a, b, n rune
		if _, err := fmt.Sscan(line, &a, &b, &n); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if a == 0 && b == 0 {
			continue // llama.cpp's sentinel
		}
		for r := a; r <= b; r++ {
			want[r] = n
		}
	}
	if len(want) < 2000 {
		t.Fatalf("unicode-nfd.txt looks truncated (%d codepoints)", len(want))
	}
	bad := 0
	for r := rune(0); r <= 0x10FFFF; r++ {
		w, ok := want[r]
		if !ok {
			w = r
		}
		if got := nfdBase(r); got != w {
			if bad++; bad < 10 {
				t.Errorf("U+%04X: got U+%04X, llama.cpp U+%04X", r, got, w)
			}
		}
	}
}

func FuzzWordPiece(f *testing.F) {
	tok := loadWordPiece(f)
	for _, s := range []string{"Hello, y'all!", "Äpfel naïve", "我想在apple工作", "\x00\xff\xc3", "!!!...", "unaffable", "ﬁ Ǆ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s, true, false)
		if len(ids) < 2 || ids[0] != tok.BOS() || ids[len(ids)-1] != tok.SEP() {
			t.Fatalf("%q: %v lacks [CLS] ... [SEP]", s, ids)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= tok.NVocab() {
				t.Fatalf("%q: id %d out of range", s, id)
			}
		}
		// One word never yields more tokens than it has bytes plus its "▁".
		if len(ids) > 2+2*len(s) {
			t.Fatalf("%q: %d tokens for %d bytes", s, len(ids), len(s))
		}
		_ = tok.Decode(ids)
	})
}

// TestGoldenWordPiece compares ids, attributes and rendering with
// llama.cpp's on texts.json and texts-wordpiece.json (gen-wordpiece.sh).
func TestGoldenWordPiece(t *testing.T) {
	tok := loadWordPiece(t)
	fh, err := os.Open("../../testdata/tokenizer/golden-wordpiece.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Vocabs []goldenVocab `json:"vocabs"`
	}
	if err := json.NewDecoder(zr).Decode(&g); err != nil {
		t.Fatal(err)
	}
	if len(g.Vocabs) != 1 || len(g.Vocabs[0].Cases) < 100 {
		t.Fatalf("golden-wordpiece.json.gz looks truncated")
	}
	gv := g.Vocabs[0]
	if tok.BOS() != gv.BOS || tok.EOS() != gv.EOS || tok.AddBOS() != gv.AddBOS || tok.AddEOS() != gv.AddEOS {
		t.Errorf("bos/eos/add = %d/%d/%v/%v, llama.cpp %d/%d/%v/%v", tok.BOS(), tok.EOS(), tok.AddBOS(), tok.AddEOS(), gv.BOS, gv.EOS, gv.AddBOS, gv.AddEOS)
	}
	var attrs [][2]int32
	for id, a := range tok.attrs {
		if a != attrNormal {
			attrs = append(attrs, [2]int32{int32(id), int32(a)})
		}
	}
	if fmt.Sprint(attrs) != fmt.Sprint(gv.Attrs) {
		t.Errorf("token attributes differ from llama.cpp:\n got %v\nwant %v", head(attrs), head(gv.Attrs))
	}
	pass := 0
	for _, c := range gv.Cases {
		got := tok.Encode(c.Text, false, c.Special)
		ok := equalIDs(got, c.Tokens)
		if !ok {
			t.Errorf("Encode(%q, special=%v):\n got %v\nwant %v", c.Text, c.Special, got, c.Tokens)
		}
		for _, d := range []struct {
			special bool
			want    string
		}{{false, c.Detok}, {true, c.DetokSpecial}} {
			if s := tok.Detokenize(c.Tokens, d.special); utf8.ValidString(s) && s != d.want {
				ok = false
				t.Errorf("Detokenize(%v, special=%v) = %q, llama.cpp %q", c.Tokens, d.special, s, d.want)
			}
		}
		if ok {
			pass++
		}
	}
	t.Logf("%d/%d cases match llama.cpp", pass, len(gv.Cases))
}
