package tokenizer

import (
	"sort"
	"strings"
	"unicode"
)

// WordPiece (tokenizer.ggml.model = "bert") as llama.cpp's WPM tokenizer
// runs it: a BERT normaliser (lowercase, strip accents through the first
// codepoint of each character's NFD, drop control characters, split on
// whitespace, and make every punctuation mark, ASCII symbol and CJK
// ideograph a word of its own), then a greedy longest-match over each word
// with a visible space "▁" in front, where the converter stored word starts
// as "▁x" and continuations ("##x" in the Hugging Face vocabulary) bare. A
// word with any position no token starts at becomes the unknown token.

// nfdBase is the first codepoint of r's canonical decomposition.
func nfdBase(r rune) rune {
	i := sort.Search(len(nfdFirst), func(i int) bool { return nfdFirst[i][1] >= r })
	if i < len(nfdFirst) && nfdFirst[i][0] <= r {
		return nfdFirst[i][2]
	}
	return r
}

// isCJKIdeograph is the set BERT's basic tokenizer splits around. It keeps
// the Hugging Face range quirk llama.cpp copies (Extension E starts at
// U+2B820 but the range here starts at U+2B920).
func isCJKIdeograph(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF ||
		r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F ||
		r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF ||
		r >= 0x2F800 && r <= 0x2FA1F
}

// wpmWords is the BERT normaliser: text in, words out.
func (t *Tokenizer) wpmWords(text string, words []string) []string {
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	for i := 0; i < len(text); {
		r, n := decodeOne(text, i)
		i += n
		if t.stripAccents {
			r = nfdBase(r)
		}
		f := flagsOf(r)
		if f.ws {
			flush()
			continue
		}
		if r == 0 || r == unicode.ReplacementChar || f.cat == catControl {
			continue
		}
		if t.stripAccents && f.cat == catMark {
			continue
		}
		c := r
		if t.lowercase {
			c = unicode.ToLower(r)
		}
		if f.cat == catPunct || r < 0x7F && f.cat == catSymbol || isCJKIdeograph(r) {
			flush()
			words = append(words, string(appendCodepoint(nil, c)))
			continue
		}
		cur = appendCodepoint(cur, c)
	}
	flush()
	return words
}

// encodeWPM appends the tokens of one raw-text fragment.
func (t *Tokenizer) encodeWPM(text string, out []int32) []int32 {
	var b strings.Builder
	for _, w := range t.wpmWords(text, nil) {
		b.Reset()
		b.WriteString("\u2581")
		b.WriteString(w)
		word := b.String()
		start := len(out)
		for i := 0; i < len(word); {
			matched := false
			for j := min(len(word), i+t.maxLen); j > i; j-- {
				if id, ok := t.ids[word[i:j]]; ok {
					out = append(out, id)
					i = j
					matched = true
					break
				}
			}
			if !matched {
				out = out[:start]
				break
			}
		}
		if len(out) == start && t.unk != NoToken {
			out = append(out, t.unk)
		}
	}
	return out
}
