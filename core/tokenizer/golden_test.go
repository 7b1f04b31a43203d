package tokenizer

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/memvanta/memvanta/core/gguf"
)

// goldenPath holds llama.cpp's answers for texts.json on the shared vocabs
// and on variants with metadata overridden (see testdata/tokenizer/gen.sh).
const goldenPath = "../../testdata/tokenizer/golden.json.gz"

type goldenCase struct {
	Text         string  `json:"text"`
	Special      bool    `json:"special"`
	Tokens       []int32 `json:"tokens"`
	Detok        string  `json:"detok"`
	DetokSpecial string  `json:"detok_special"`
}

type goldenVocab struct {
	Name      string         `json:"name"`
	Base      string         `json:"base"`
	Overrides map[string]any `json:"overrides"`
	BOS       int32          `json:"bos"`
	EOS       int32          `json:"eos"`
	EOT       int32          `json:"eot"`
	AddBOS    bool           `json:"add_bos"`
	AddEOS    bool           `json:"add_eos"`
	Attrs     [][2]int32     `json:"attrs"`
	EOG       []int32        `json:"eog"`
	Cases     []goldenCase   `json:"cases"`
}

func loadGolden(t *testing.T) []goldenVocab {
	t.Helper()
	fh, err := os.Open(goldenPath)
	if err != nil {
		t.Fatalf("golden data: %v", err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatalf("golden data: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("golden data: %v", err)
	}
	var g struct {
		Vocabs []goldenVocab `json:"vocabs"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("golden data: %v", err)
	}
	if len(g.Vocabs) == 0 {
		t.Fatal("golden data has no vocabs")
	}
	return g.Vocabs
}

// tokenizerWith builds a tokenizer from a shared vocab with the golden
// entry's metadata overrides applied, mirroring genvocab.
func tokenizerWith(t *testing.T, base string, over map[string]any) *Tokenizer {
	t.Helper()
	vv := sharedVocabData(t, base)
	v := *vv // shallow copy: overrides replace fields, never mutate shared slices
	for k, x := range over {
		switch k {
		case keyPre:
			v.Pre = x.(string)
		case keyAddPrefix:
			b := x.(bool)
			v.AddSpacePrefix = &b
		case keyAddEOS:
			b := x.(bool)
			v.AddEOS = &b
		default:
			t.Fatalf("override %q not supported by the test", k)
		}
	}
	tok, err := New(&v)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

var vocabDataCache sync.Map // base file -> *Vocab

func sharedVocabData(t *testing.T, base string) *Vocab { return sharedVocabDataTB(t, base) }

func sharedVocabDataTB(t testing.TB, base string) *Vocab {
	t.Helper()
	if v, ok := vocabDataCache.Load(base); ok {
		return v.(*Vocab)
	}
	path := filepath.Join(sharedVocab, base)
	fh, err := os.Open(path)
	if err != nil {
		t.Skipf("shared vocab absent: %v", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(fh, st.Size(), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	v, err := VocabFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	vocabDataCache.Store(base, v)
	return v
}

// TestGoldenLlamaCpp compares token ids (with and without special-token
// parsing), rendering, BOS/EOS/EOG and token attributes with llama.cpp.
func TestGoldenLlamaCpp(t *testing.T) {
	for _, gv := range loadGolden(t) {
		t.Run(gv.Name, func(t *testing.T) {
			tok := tokenizerWith(t, gv.Base, gv.Overrides)
			if tok.BOS() != gv.BOS || tok.EOS() != gv.EOS || tok.EOT() != gv.EOT {
				t.Errorf("bos/eos/eot = %d/%d/%d, llama.cpp %d/%d/%d", tok.BOS(), tok.EOS(), tok.EOT(), gv.BOS, gv.EOS, gv.EOT)
			}
			if tok.AddBOS() != gv.AddBOS || tok.AddEOS() != gv.AddEOS {
				t.Errorf("add_bos/add_eos = %v/%v, llama.cpp %v/%v", tok.AddBOS(), tok.AddEOS(), gv.AddBOS, gv.AddEOS)
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
			var eog []int32
			for id := range tok.NVocab() {
				if tok.IsEOG(int32(id)) {
					eog = append(eog, int32(id))
				}
			}
			if fmt.Sprint(eog) != fmt.Sprint(gv.EOG) {
				t.Errorf("EOG set %v, llama.cpp %v", eog, gv.EOG)
			}
			pass := 0
			for _, c := range gv.Cases {
				got := tok.Encode(c.Text, false, c.Special)
				ok := equalIDs(got, c.Tokens)
				if !ok {
					t.Errorf("Encode(%q, special=%v):\n got %v\nwant %v", c.Text, c.Special, got, c.Tokens)
				}
				// addSpecial wraps exactly as llama.cpp's tokenize does.
				var wrapped []int32
				if gv.AddBOS {
					wrapped = append(wrapped, gv.BOS)
				}
				wrapped = append(wrapped, c.Tokens...)
				if gv.AddEOS {
					wrapped = append(wrapped, gv.EOS)
				}
				if g := tok.Encode(c.Text, true, c.Special); !equalIDs(g, wrapped) {
					ok = false
					t.Errorf("Encode(%q, addSpecial, special=%v) = %v, want %v", c.Text, c.Special, g, wrapped)
				}
				// node-llama-cpp returns detokenized text as a JS string, so
				// only valid UTF-8 renderings are comparable byte for byte.
				for _, d := range []struct {
					special bool
					want    string
				}{{false, c.Detok}, {true, c.DetokSpecial}} {
					s := tok.Detokenize(c.Tokens, d.special)
					if utf8.ValidString(s) && s != d.want {
						ok = false
						t.Errorf("Detokenize(%v, special=%v) = %q, llama.cpp %q", c.Tokens, d.special, s, d.want)
					}
				}
				if ok {
					pass++
				}
			}
			t.Logf("%s: %d/%d cases match llama.cpp", gv.Name, pass, len(gv.Cases))
		})
	}
}

func head[T any](s []T) []T {
	if len(s) > 20 {
		return s[:20]
	}
	return s
}
