package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// Piece is the text of one token as llama.cpp's llama_token_to_piece renders
// it with special=false: control and unknown tokens render as nothing, SPM
// "▁" becomes a space, SPM <0xXX> byte tokens become that byte, and
// byte-level BPE text is mapped back to raw bytes. A piece may be part of a
// UTF-8 sequence; use a Decoder to stream text.
func (t *Tokenizer) Piece(id int32) []byte {
	return t.appendPiece(nil, id, false)
}

// PieceSpecial is Piece but renders control/unknown tokens as their text
// (llama_token_to_piece with special=true).
func (t *Tokenizer) PieceSpecial(id int32) []byte {
	return t.appendPiece(nil, id, true)
}

// AppendPieceSpecial appends PieceSpecial(id) to dst (for a caller that
// renders every generated token, without an allocation per token).
func (t *Tokenizer) AppendPieceSpecial(dst []byte, id int32) []byte {
	return t.appendPiece(dst, id, true)
}

func (t *Tokenizer) appendPiece(dst []byte, id int32, special bool) []byte {
	if id < 0 || int(id) >= len(t.text) {
		return dst
	}
	a := t.attrs[id]
	if a&(attrUnknown|attrControl) != 0 {
		if special {
			return append(dst, t.text[id]...)
		}
		return dst
	}
	s := t.text[id]
	if a&attrUserDefined != 0 {
		return append(dst, s...)
	}
	switch t.model {
	case ModelSPM, ModelWPM:
		if a&attrNormal != 0 {
			return append(dst, strings.ReplaceAll(s, "\u2581", " ")...)
		}
		if a&attrByte != 0 {
			if b, ok := parseByteToken(s); ok {
				return append(dst, b)
			}
		}
	case ModelBPE:
		if a&attrNormal != 0 {
			for i := 0; i < len(s); {
				r, n := decodeOne(s, i)
				if b, ok := t.bl.dec[r]; ok {
					dst = append(dst, b)
				} else {
					// Not in the byte alphabet (llama.cpp emits an
					// "[UNK_BYTE_…]" marker here); keep the text itself.
					dst = append(dst, s[i:i+n]...)
				}
				i += n
			}
		}
	}
	return dst
}

// parseByteToken reads "<0xXX>" like llama.cpp's token_to_byte.
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	hi, ok1 := hexVal(s[3])
	lo, ok2 := hexVal(s[4])
	return hi<<4 | lo, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Decode renders ids to text so that Decode(Encode(s, addSpecial, false)) == s
// for ordinary text: a leading BOS is dropped, control tokens render as
// nothing, and for SPM vocabularies with add_space_prefix the space Encode
// adds at the start and after every special token is removed again. It does
// not apply llama.cpp's clean_up_tokenization_spaces heuristics (they break
// round trips); Detokenize does, for output identical to llama.cpp's.
func (t *Tokenizer) Decode(ids []int32) string {
	if len(ids) > 0 && ids[0] == t.bos && t.bos != NoToken {
		ids = ids[1:]
	}
	var out []byte
	prefix := t.addSpacePrefix && t.model == ModelSPM // BPE Encode never adds the space
	strip := prefix
	for _, id := range ids {
		start := len(out)
		out = t.appendPiece(out, id, false)
		if strip && len(out) > start && out[start] == ' ' {
			out = append(out[:start], out[start+1:]...)
		}
		strip = prefix && id >= 0 && int(id) < len(t.attrs) &&
			t.attrs[id]&(attrControl|attrUserDefined|attrUnknown) != 0
	}
	return string(out)
}

// Decoder turns a stream of generated ids into text without ever splitting
// a UTF-8 sequence: bytes of an incomplete trailing sequence (e.g. the first
// of several SPM byte tokens of one emoji) are held until it completes.
type Decoder struct {
	t       *Tokenizer
	pending []byte
}

// NewDecoder starts a streaming decoder. Unlike Decode it keeps every
// piece's leading space, since generated text continues the prompt.
func (t *Tokenizer) NewDecoder() *Decoder { return &Decoder{t: t} }

// Add appends the piece of id and returns the text that is now complete.
func (d *Decoder) Add(id int32) string {
	d.pending = d.t.appendPiece(d.pending, id, false)
	cut := completePrefix(d.pending)
	s := string(d.pending[:cut])
	d.pending = append(d.pending[:0], d.pending[cut:]...)
	return s
}

// Flush returns whatever is held back (an incomplete sequence at the end of
// generation), as raw bytes.
func (d *Decoder) Flush() string {
	s := string(d.pending)
	d.pending = d.pending[:0]
	return s
}

// completePrefix is the length of b without a trailing incomplete-but-valid
// UTF-8 sequence prefix. Invalid bytes are passed through, never held.
func completePrefix(b []byte) int {
	n := len(b)
	for k := 1; k <= 3 && k <= n; k++ {
		c := b[n-k]
		if c&0xC0 == 0x80 {
			continue // continuation byte: look further back for the lead
		}
		need := 0
		switch {
		case c&0xE0 == 0xC0:
			need = 2
		case c&0xF0 == 0xE0:
			need = 3
		case c&0xF8 == 0xF0:
			need = 4
		}
		if need > k && !utf8.FullRune(b[n-k:]) {
			return n - k
		}
		return n
	}
	return n
}

// Detokenize is llama.cpp's llama_detokenize with remove_special=false and
// unparse_special=special, i.e. what llama.cpp (and node-llama-cpp's
// detokenize) print: the first piece loses one leading space when the
// vocabulary adds a space prefix, and BPE vocabularies with
// clean_up_tokenization_spaces get llama.cpp's space clean-up passes.
func (t *Tokenizer) Detokenize(ids []int32, special bool) string {
	var out []byte
	for i, id := range ids {
		start := len(out)
		out = t.appendPiece(out, id, special)
		if i == 0 && t.addSpacePrefix && len(out) > start && out[start] == ' ' {
			out = append(out[:start], out[start+1:]...)
		}
	}
	if t.cleanSpaces {
		out = cleanSpaces(out)
	}
	return string(out)
}

// cleanSpaces runs llama.cpp's three in-place clean-up passes literally
// (including pass two's overwrite of the skipped space, which later passes
// and iterations observe).
func cleanSpaces(text []byte) []byte {
	// pass 1: " ?", " !", " .", " ," lose the space
	total1 := len(text)
	total := min(total1, 1)
	for i := 1; i < total1; i++ {
		x := text[i]
		if text[i-1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',') {
			total--
		}
		text[total] = x
		total++
	}
	// pass 2: a single apostrophe between spaces loses both spaces
	total2 := total
	total = min(total2, 1)
	for i := 1; i < total2; i++ {
		x := text[i]
		if x == '\'' && i+1 < total2 && text[i-1] == ' ' && text[i+1] == ' ' {
			total--
			i++
			text[i] = 0
		}
		text[total] = x
		total++
	}
	// pass 3: " 's", " 'm", " 're", " 've" lose the space
	total3 := total
	total = min(total3, 1)
	for i := 1; i < total3; i++ {
		x := text[i]
		if text[i-1] == ' ' && x == '\'' && i+1 < total3 {
			x1 := text[i+1]
			switch {
			case x1 == 't' || x1 == 'd':
			case x1 == 's' || x1 == 'm':
				total--
			case i+2 < total3:
				x2 := text[i+2]
				if x1 == 'r' && x2 == 'e' || x1 == 'v' && x2 == 'e' {
					total--
				}
			}
		}
		text[total] = x
		total++
	}
	return text[:total]
}
