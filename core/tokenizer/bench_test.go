package tokenizer

import (
	"strconv"
	"strings"
	"testing"
)

// benchText is ordinary mixed prose/code/unicode, repeated.
func benchText(n int) string {
	unit := "The quick brown fox jumps over the lazy dog, 1234567 times! Ελληνικά 你好世界 🦙\n" +
		"func main() {\n\tfmt.Println(\"hello\")  // comment's here\n}\n\n"
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// pathological inputs: single long pre-token words, long whitespace runs,
// long digit runs; they must stay near-linear (no quadratic merging).
var benchInputs = map[string]func(int) string{
	"mixed":   benchText,
	"letters": func(n int) string { return strings.Repeat("a", n) },
	"spaces":  func(n int) string { return strings.Repeat(" ", n) },
	"digits":  func(n int) string { return strings.Repeat("7", n) },
	"cjk":     func(n int) string { return strings.Repeat("語", n/3) },
}

func BenchmarkEncode(b *testing.B) {
	for _, vocab := range []string{"llama-spm", "llama-bpe", "gpt-2", "deepseek-coder"} {
		tok := loadShared(b, "ggml-vocab-"+vocab+".gguf")
		for _, name := range []string{"mixed", "letters", "spaces", "digits", "cjk"} {
			for _, n := range []int{4 << 10, 64 << 10} {
				text := benchInputs[name](n)
				b.Run(vocab+"/"+name+"/"+sizeName(n), func(b *testing.B) {
					b.SetBytes(int64(len(text)))
					for b.Loop() {
						tok.Encode(text, true, false)
					}
				})
			}
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	tok := loadShared(b, "ggml-vocab-llama-bpe.gguf")
	ids := tok.Encode(benchText(64<<10), false, false)
	b.SetBytes(64 << 10)
	for b.Loop() {
		tok.Decode(ids)
	}
}

func sizeName(n int) string { return strconv.Itoa(n>>10) + "KiB" }

// BenchmarkNew is tokenizer construction for a 128k-token, 280k-merge
// vocabulary (llama3), paid once per model load.
func BenchmarkNew(b *testing.B) {
	loadShared(b, "ggml-vocab-llama-bpe.gguf") // skip if absent
	v := sharedVocabDataTB(b, "ggml-vocab-llama-bpe.gguf")
	for b.Loop() {
		if _, err := New(v); err != nil {
			b.Fatal(err)
		}
	}
}
