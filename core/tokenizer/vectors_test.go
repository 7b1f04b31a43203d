package tokenizer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/memvanta/memvanta/core/gguf"
)

// sharedVocab is llama.cpp's tokenizer test data, outside the repository.
const sharedVocab = "../../../shared/vocab"

var vocabCache sync.Map // file name -> *Tokenizer; tests only read tokenizers

// loadShared opens a vocab-only GGUF from ../shared/vocab, skipping the test
// when the shared data is absent.
func loadShared(tb testing.TB, name string) *Tokenizer {
	tb.Helper()
	if t, ok := vocabCache.Load(name); ok {
		return t.(*Tokenizer)
	}
	path := filepath.Join(sharedVocab, name)
	fh, err := os.Open(path)
	if err != nil {
		tb.Skipf("shared vocab absent: %v", err)
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
	vocabCache.Store(name, tok)
	return tok
}

const vocabSep = "\n__ggml_vocab_test__\n"

// readVectors parses X.gguf.inp / X.gguf.out (see ../shared/vocab/README.md).
func readVectors(t *testing.T, base string) ([]string, [][]int32) {
	t.Helper()
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	outb, err := os.ReadFile(base + ".out")
	if err != nil {
		t.Fatal(err)
	}
	s := string(inp)
	if !strings.HasSuffix(s, vocabSep) {
		t.Fatalf("%s.inp does not end with the separator", base)
	}
	inputs := strings.Split(strings.TrimSuffix(s, vocabSep), vocabSep)
	lines := strings.Split(strings.TrimSuffix(string(outb), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("%s: %d inputs but %d output lines", base, len(inputs), len(lines))
	}
	want := make([][]int32, len(lines))
	for i, l := range lines {
		for _, f := range strings.Fields(l) {
			v, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", base, i+1, err)
			}
			want[i] = append(want[i], int32(v))
		}
	}
	return inputs, want
}

// TestLlamaCppVectors reproduces llama.cpp's test-tokenizer-0 for every
// vocab in ../shared/vocab: add_special=false, parse_special=false.
func TestLlamaCppVectors(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedVocab, "*.gguf.inp"))
	if len(files) == 0 {
		t.Skip("no llama.cpp tokenizer vectors in " + sharedVocab)
	}
	for _, inpPath := range files {
		base := strings.TrimSuffix(inpPath, ".inp")
		name := filepath.Base(base)
		t.Run(strings.TrimSuffix(strings.TrimPrefix(name, "ggml-vocab-"), ".gguf"), func(t *testing.T) {
			tok := loadShared(t, name)
			inputs, want := readVectors(t, base)
			pass := 0
			for i, in := range inputs {
				got := tok.Encode(in, false, false)
				if equalIDs(got, want[i]) {
					pass++
					continue
				}
				t.Errorf("input %d %q:\n got %v\nwant %v", i, in, got, want[i])
			}
			t.Logf("%s: %d/%d vectors pass", name, pass, len(inputs))
		})
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
