package tokenizer

import (
	"errors"
	"fmt"
	"strings"
)

// fragment is a piece of the input after special-token splitting: either raw
// text (tok == NoToken) or one special token.
type fragment struct {
	text string
	tok  int32
}

// Encode tokenizes text as llama.cpp's llama_tokenize does. addSpecial adds
// BOS/EOS as the metadata says (tokenizer.ggml.add_bos_token/add_eos_token);
// parseSpecial lets control-token text in the input ("<|eot_id|>", "<s>")
// become that token instead of being tokenized as plain text. User-defined
// tokens are always matched first, as in llama.cpp.
//
// Inputs longer than MaxInput bytes yield nil (see EncodeChecked).
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	ids, err := t.EncodeChecked(text, addSpecial, parseSpecial)
	if err != nil {
		return nil
	}
	return ids
}

// MaxInput bounds the text Encode accepts: the merge loops keep int32
// positions and about 50 bytes of state per input byte.
const MaxInput = 1 << 30

// ErrTooLong is returned by EncodeChecked for inputs over MaxInput bytes.
var ErrTooLong = errors.New("tokenizer: input too long")

// EncodeChecked is Encode with an error for inputs it cannot take.
func (t *Tokenizer) EncodeChecked(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	if len(text) > t.maxInput {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLong, len(text), t.maxInput)
	}
	var frags []fragment
	if text != "" {
		frags = t.partition(text, parseSpecial)
	}
	out := make([]int32, 0, len(text)/3+2)
	if addSpecial && (t.AddBOS() || t.model == ModelWPM && t.bos != NoToken) {
		out = append(out, t.bos) // llama.cpp: WordPiece always starts with BOS ([CLS])
	}
	switch t.model {
	case ModelSPM:
		prevSpecial := true // a leading space is added at the start and after special tokens
		var buf []byte
		for _, f := range frags {
			if f.tok != NoToken {
				out = append(out, f.tok)
				prevSpecial = true
				continue
			}
			buf = buf[:0]
			if t.addSpacePrefix && prevSpecial {
				buf = append(buf, "\u2581"...)
			}
			buf = appendEscaped(buf, f.text)
			out = t.encodeSPM(string(buf), out)
			prevSpecial = false
		}
	case ModelBPE:
		for _, f := range frags {
			if f.tok != NoToken {
				out = append(out, f.tok)
				continue
			}
			out = t.encodeBPE(f.text, out)
		}
	case ModelWPM:
		for _, f := range frags {
			if f.tok != NoToken {
				out = append(out, f.tok)
				continue
			}
			out = t.encodeWPM(f.text, out)
		}
		if addSpecial && t.sep != NoToken {
			out = append(out, t.sep) // and always ends with SEP, never EOS
		}
		return out, nil
	}
	if addSpecial && t.AddEOS() {
		out = append(out, t.eos)
	}
	return out, nil
}

// appendEscaped replaces ' ' with U+2581 (SentencePiece's visible space).
func appendEscaped(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, "\u2581"...)
		s = s[i+1:]
	}
}

// partition splits text around special tokens, longest token first, with
// llama.cpp's lstrip/rstrip handling. Without parseSpecial, control and
// unknown tokens are not matched (their text is tokenized normally).
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{text: text, tok: NoToken}}
	for _, id := range t.special {
		a := t.attrs[id]
		if !parseSpecial && a&(attrControl|attrUnknown) != 0 {
			continue
		}
		st := t.text[id]
		var next []fragment
		changed := false
		for _, f := range frags {
			if f.tok != NoToken || !strings.Contains(f.text, st) {
				next = append(next, f)
				continue
			}
			changed = true
			s := f.text
			for {
				i := strings.Index(s, st)
				if i < 0 {
					if s != "" {
						next = append(next, fragment{text: s, tok: NoToken})
					}
					break
				}
				left := s[:i]
				if a&attrLStrip != 0 {
					left = strings.TrimRight(left, cSpace)
				}
				if left != "" {
					next = append(next, fragment{text: left, tok: NoToken})
				}
				next = append(next, fragment{tok: id})
				s = s[i+len(st):]
				if a&attrRStrip != 0 {
					s = strings.TrimLeft(s, cSpace)
				}
			}
		}
		if changed {
			frags = next
		}
	}
	return frags
}

// cSpace is C isspace() in the "C" locale, which llama.cpp uses for strips.
const cSpace = " \t\n\v\f\r"

// ---- SPM ----

type spmSymbol struct {
	start, n   int // byte range in the text
	prev, next int
}

type spmBigram struct {
	left, right int32
	score       float32
	size        int32
}

// before orders the SPM work queue: highest score first, then leftmost.
func (a spmBigram) before(b spmBigram) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.left < b.left
}

// encodeSPM is llama.cpp's SentencePiece merge loop: start from UTF-8
// characters and repeatedly merge the adjacent pair whose concatenation is
// the highest-scoring vocabulary token; leftovers fall back to <0xXX> bytes.
func (t *Tokenizer) encodeSPM(text string, out []int32) []int32 {
	if text == "" {
		return out
	}
	syms := make([]spmSymbol, 0, len(text))
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		idx := len(syms)
		next := idx + 1
		if off+n == len(text) {
			next = -1
		}
		syms = append(syms, spmSymbol{start: off, n: n, prev: idx - 1, next: next})
		off += n
	}
	var h spmHeap
	try := func(l, r int) {
		if l < 0 || r < 0 || syms[l].n+syms[r].n > t.maxLen {
			return
		}
		s := text[syms[l].start : syms[l].start+syms[l].n+syms[r].n]
		id, ok := t.ids[s]
		if !ok {
			return
		}
		h.push(spmBigram{left: int32(l), right: int32(r), score: t.score[id], size: int32(len(s))})
	}
	for i := 1; i < len(syms); i++ {
		try(i-1, i)
	}
	for len(h) > 0 {
		b := h.pop()
		bl := int(b.left)
		l, r := &syms[bl], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != int(b.size) {
			continue // stale: one side already merged
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = bl
		}
		try(l.prev, bl)
		try(bl, l.next)
	}
	for i := 0; i != -1; i = syms[i].next {
		s := text[syms[i].start : syms[i].start+syms[i].n]
		if id, ok := t.ids[s]; ok {
			out = append(out, id)
			continue
		}
		// Every merged symbol is a token, so only single characters get
		// here; llama.cpp's rev_merge re-segmentation never triggers.
		for j := 0; j < len(s); j++ {
			out = t.appendByteToken(out, s[j])
		}
	}
	return out
}

const hexDigits = "0123456789ABCDEF"

func (t *Tokenizer) appendByteToken(out []int32, b byte) []int32 {
	if id, ok := t.ids[string([]byte{'<', '0', 'x', hexDigits[b>>4], hexDigits[b&15], '>'})]; ok {
		return append(out, id)
	}
	if id, ok := t.ids[string([]byte{b})]; ok {
		return append(out, id)
	}
	// llama.cpp throws here (vocabulary without byte tokens); unk is the
	// least surprising substitute.
	if t.unk != NoToken {
		return append(out, t.unk)
	}
	return out
}

// ---- BPE ----

type bpeSymbol struct {
	start, n   int // byte range in the byte-level encoded word
	prev, next int
	id         int32 // token whose text is the symbol, or NoToken
}

type bpeBigram struct {
	left, right int32
	rank        int32
	size        int32
}

// before orders the BPE work queue: lowest merge rank first, then leftmost.
func (a bpeBigram) before(b bpeBigram) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.left < b.left
}

// encodeBPE pre-tokenizes, byte-level encodes each word, and applies merges
// in rank order (llama.cpp's llm_tokenizer_bpe_session). Symbols carry their
// token id so that merge ranks are found by id pair rather than by hashing
// strings.
func (t *Tokenizer) encodeBPE(text string, out []int32) []int32 {
	var h bpeHeap
	var syms []bpeSymbol
	var enc []byte
	for _, w := range t.split.words(text) {
		enc = enc[:0]
		for i := 0; i < len(w); i++ {
			enc = append(enc, t.bl.enc[w[i]]...)
		}
		if len(enc) == 0 {
			continue
		}
		word := string(enc)
		if t.ignoreMerges {
			if id, ok := t.ids[word]; ok {
				out = append(out, id)
				continue
			}
		}
		// One symbol per input byte: each byte is one byte-level character.
		syms = syms[:0]
		off := 0
		for i := 0; i < len(w); i++ {
			n := len(t.bl.enc[w[i]])
			next := i + 1
			if i == len(w)-1 {
				next = -1
			}
			syms = append(syms, bpeSymbol{start: off, n: n, prev: i - 1, next: next, id: t.byteID[w[i]]})
			off += n
		}
		h = h[:0]
		try := func(l, r int) {
			if l < 0 || r < 0 {
				return
			}
			sl, sr := &syms[l], &syms[r]
			var rank int32
			var ok bool
			if sl.id != NoToken && sr.id != NoToken {
				rank, ok = t.pairRank[pairKey(sl.id, sr.id)]
			} else if len(t.strRank) > 0 {
				rank, ok = t.strRank[[2]string{word[sl.start : sl.start+sl.n], word[sr.start : sr.start+sr.n]}]
			}
			if ok {
				h.push(bpeBigram{left: int32(l), right: int32(r), rank: rank, size: int32(sl.n + sr.n)})
			}
		}
		for i := 1; i < len(syms); i++ {
			try(i-1, i)
		}
		for len(h) > 0 {
			b := h.pop()
			bl := int(b.left)
			l, r := &syms[bl], &syms[b.right]
			if l.n == 0 || r.n == 0 || l.n+r.n != int(b.size) {
				continue // stale: one side already merged
			}
			l.n += r.n
			r.n = 0
			l.next = r.next
			if r.next >= 0 {
				syms[r.next].prev = bl
			}
			l.id = NoToken
			if l.n <= t.maxLen {
				if id, ok := t.ids[word[l.start:l.start+l.n]]; ok {
					l.id = id
				}
			}
			try(l.prev, bl)
			try(bl, l.next)
		}
		for i := 0; i != -1; i = syms[i].next {
			if id := syms[i].id; id != NoToken {
				out = append(out, id)
				continue
			}
			s := word[syms[i].start : syms[i].start+syms[i].n]
			for j := 0; j < len(s); j++ {
				if id, ok := t.ids[s[j:j+1]]; ok {
					out = append(out, id)
				}
			}
		}
	}
	return out
}

// spmHeap and bpeHeap are binary heaps ordered by before. They are written
// out per type so the comparison inlines (the merge loops are heap-bound).
type spmHeap []spmBigram

func (h *spmHeap) push(x spmBigram) {
	*h = append(*h, x)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q[i].before(q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *spmHeap) pop() spmBigram {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		m := 2*i + 1
		if m >= last {
			break
		}
		if r := m + 1; r < last && q[r].before(q[m]) {
			m = r
		}
		if !q[m].before(q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

type bpeHeap []bpeBigram

func (h *bpeHeap) push(x bpeBigram) {
	*h = append(*h, x)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q[i].before(q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *bpeHeap) pop() bpeBigram {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		m := 2*i + 1
		if m >= last {
			break
		}
		if r := m + 1; r < last && q[r].before(q[m]) {
			m = r
		}
		if !q[m].before(q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}
