package tokenizer

import "unicode"

// Codepoint categories as llama.cpp's unicode tables group them. The
// pre-tokenizers only ever ask "letter? number? whitespace? punctuation?",
// and they ask it of llama.cpp's grouping (e.g. \p{N} is Nd+Nl+No), so the
// grouping is reproduced here on top of Go's unicode tables.
type category uint8

const (
	catNone      category = iota // position outside the piece (no flags at all)
	catUndefined                 // unassigned codepoint (Cn) or beyond U+10FFFF
	catNumber                    // Nd, Nl, No
	catLetter                    // Lu, Ll, Lt, Lm, Lo
	catSeparator                 // Zs, Zl, Zp
	catMark                      // Mn, Mc, Me
	catPunct                     // Pc, Pd, Ps, Pe, Pi, Pf, Po
	catSymbol                    // Sm, Sc, Sk, So
	catControl                   // Cc, Cf, Co, Cs
)

// cpFlags is the pair (category, whitespace) llama.cpp stores per codepoint.
// Whitespace is a separate property (PropList White_Space), so '\t' is both
// a control character and whitespace.
type cpFlags struct {
	cat category
	ws  bool
}

func (f cpFlags) letter() bool { return f.cat == catLetter }
func (f cpFlags) number() bool { return f.cat == catNumber }

// any reports whether the flags are non-zero, i.e. the position is inside the
// piece. llama.cpp's splitters use this to stop at the piece end.
func (f cpFlags) any() bool { return f.cat != catNone }

var asciiFlags = func() (t [128]cpFlags) {
	for r := rune(0); r < 128; r++ {
		t[r] = slowFlags(r)
	}
	return t
}()

func flagsOf(r rune) cpFlags {
	if r >= 0 && r < 128 {
		return asciiFlags[r]
	}
	return slowFlags(r)
}

func slowFlags(r rune) cpFlags {
	if r < 0 || r > unicode.MaxRune {
		return cpFlags{cat: catUndefined}
	}
	f := cpFlags{ws: unicode.Is(unicode.White_Space, r)}
	switch {
	case unicode.IsLetter(r):
		f.cat = catLetter
	case unicode.IsNumber(r):
		f.cat = catNumber
	case unicode.IsMark(r):
		f.cat = catMark
	case unicode.IsPunct(r):
		f.cat = catPunct
	case unicode.IsSymbol(r):
		f.cat = catSymbol
	case unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
		f.cat = catSeparator
	case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs):
		f.cat = catControl
	case r >= 0x2FFC && r <= 0x2FFF || r == 0x31EF:
		// Assigned in Unicode 15.1, which llama.cpp's tables follow and
		// Go's unicode package (15.0) does not have yet.
		f.cat = catSymbol
	case r >= 0x2EBF0 && r <= 0x2EE5D: // CJK Extension I, Unicode 15.1
		f.cat = catLetter
	default:
		f.cat = catUndefined
	}
	return f
}

// utf8Len is the sequence length implied by a lead byte, exactly as llama.cpp
// computes it (continuation and invalid bytes count as 1). The tokenizers
// split their input into "characters" this way, including for invalid UTF-8.
func utf8Len(b byte) int {
	switch b >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// decodeCodepoints decodes UTF-8 the way llama.cpp does: it checks lead and
// continuation bit patterns only (no overlong/surrogate checks) and turns each
// byte it cannot decode into U+FFFD. BPE pre-tokenization re-encodes these
// codepoints, so invalid input bytes become EF BF BD like in llama.cpp.
func decodeCodepoints(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n := decodeOne(s, i)
		out = append(out, r)
		i += n
	}
	return out
}

func decodeOne(s string, i int) (rune, int) {
	b := s[i]
	cont := func(k int) bool { return i+k < len(s) && s[i+k]&0xC0 == 0x80 }
	switch {
	case b&0x80 == 0:
		return rune(b), 1
	case b&0x40 == 0:
		return unicode.ReplacementChar, 1
	case b&0x20 == 0:
		if !cont(1) {
			return unicode.ReplacementChar, 1
		}
		return rune(b&0x1F)<<6 | rune(s[i+1]&0x3F), 2
	case b&0x10 == 0:
		if !cont(1) || !cont(2) {
			return unicode.ReplacementChar, 1
		}
		return rune(b&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3
	case b&0x08 == 0:
		if !cont(1) || !cont(2) || !cont(3) {
			return unicode.ReplacementChar, 1
		}
		return rune(b&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F), 4
	}
	return unicode.ReplacementChar, 1
}

// appendCodepoint encodes like llama.cpp's unicode_cpt_to_utf8 (which also
// encodes surrogates). Codepoints above U+10FFFF, which llama.cpp rejects with
// an exception, become U+FFFD here.
func appendCodepoint(dst []byte, r rune) []byte {
	switch {
	case r >= 0 && r <= 0x7F:
		return append(dst, byte(r))
	case r >= 0x80 && r <= 0x7FF:
		return append(dst, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
	case r >= 0x800 && r <= 0xFFFF:
		return append(dst, 0xE0|byte(r>>12), 0x80|byte((r>>6)&0x3F), 0x80|byte(r&0x3F))
	case r >= 0x10000 && r <= 0x10FFFF:
		return append(dst, 0xF0|byte(r>>18), 0x80|byte((r>>12)&0x3F), 0x80|byte((r>>6)&0x3F), 0x80|byte(r&0x3F))
	}
	return append(dst, 0xEF, 0xBF, 0xBD)
}

// byteLevel is GPT-2's reversible byte <-> codepoint mapping: printable
// Latin-1 bytes map to themselves, the rest to U+0100 onwards in byte order.
// Byte-level BPE vocabularies store token text in this alphabet.
type byteLevel struct {
	enc [256]string
	dec map[rune]byte
}

func newByteLevel() *byteLevel {
	bl := &byteLevel{dec: make(map[rune]byte, 256)}
	n := 0
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !(b >= 0x21 && b <= 0x7E || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF) {
			r = rune(256 + n)
			n++
		}
		bl.enc[b] = string(r)
		bl.dec[r] = byte(b)
	}
	return bl
}
