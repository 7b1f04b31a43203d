package tokenizer

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// roundTrips reports whether Decode(Encode(s)) == s is promised for s: valid
// UTF-8 (BPE replaces invalid bytes with U+FFFD as llama.cpp does), every
// byte has a fallback token (falcon's vocabulary, e.g., has none for \v, so
// llama.cpp drops it), no text of a special token (it may be matched as that
// token), and for SPM no literal U+2581 (SentencePiece's space marker is
// indistinguishable from an escaped space).
func roundTrips(tok *Tokenizer, s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch tok.model {
		case ModelBPE:
			if tok.byteID[s[i]] == NoToken {
				return false
			}
		case ModelSPM:
			if _, ok := tok.ids[string([]byte{'<', '0', 'x', hexDigits[s[i]>>4], hexDigits[s[i]&15], '>'})]; !ok {
				return false
			}
		}
	}
	if tok.model == ModelSPM && strings.Contains(s, "\u2581") {
		return false
	}
	for _, id := range tok.special {
		if strings.Contains(s, tok.text[id]) {
			return false
		}
	}
	return true
}

func sharedVocabNames() []string {
	return []string{"llama-spm", "phi-3", "llama-bpe", "gpt-2", "falcon", "mpt", "starcoder", "deepseek-coder"}
}

// TestRoundTripShared checks Decode(Encode(s)) == s on the llama.cpp test
// inputs and texts.json for every shared vocab.
func TestRoundTripShared(t *testing.T) {
	var texts []string
	b, err := os.ReadFile("../../testdata/tokenizer/texts.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &texts); err != nil {
		t.Fatal(err)
	}
	for _, name := range sharedVocabNames() {
		t.Run(name, func(t *testing.T) {
			file := "ggml-vocab-" + name + ".gguf"
			tok := loadShared(t, file)
			inputs, _ := readVectors(t, sharedVocab+"/"+file)
			n := 0
			for _, s := range append(inputs, texts...) {
				if !roundTrips(tok, s) {
					continue
				}
				n++
				for _, add := range []bool{false, true} {
					if got := tok.Decode(tok.Encode(s, add, false)); got != s {
						t.Errorf("Decode(Encode(%q, addSpecial=%v)) = %q", s, add, got)
					}
				}
			}
			if n < 50 {
				t.Errorf("only %d round-trip inputs", n)
			}
		})
	}
}

// FuzzRoundTrip: Encode never fails on arbitrary bytes, every id is in
// range, and where the format guarantees it the text round-trips.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", " ", "Hello world", "  \n\t x", "é€🦙", "\xff\xfe", "'s 'LL 123456", "<s></s>", "a\u00a0b\u3000"} {
		f.Add(s)
	}
	toks := []*Tokenizer{loadShared(f, "ggml-vocab-llama-spm.gguf"), loadShared(f, "ggml-vocab-gpt-2.gguf"), loadShared(f, "ggml-vocab-llama-bpe.gguf")}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1024 {
			return
		}
		for _, tok := range toks {
			for _, special := range []bool{false, true} {
				ids := tok.Encode(s, true, special)
				for _, id := range ids {
					if id < 0 || int(id) >= tok.NVocab() {
						t.Fatalf("id %d out of range for %q", id, s)
					}
				}
				_ = tok.Detokenize(ids, special)
			}
			if roundTrips(tok, s) {
				if got := tok.Decode(tok.Encode(s, false, false)); got != s {
					t.Fatalf("%s: Decode(Encode(%q)) = %q", tok.model, s, got)
				}
			}
		}
	})
}
