package tokenizer

import (
	"fmt"
	"unicode"
)

// preType is llama.cpp's pre-tokenizer kind (llama_vocab_pre_type).
type preType int

const (
	preDefault preType = iota
	preLlama3
	preDeepseekLLM
	preDeepseekCoder
	preFalcon
	preStarcoder // also refact, command-r, smollm, codeshell, exaone, minerva
	preGPT2      // also mpt, phi-2, olmo, jais, jina-*, roberta-bpe
	preQwen2     // also stablelm2, megrez
	preBloom     // also poro-chat, gpt3-finnish
	preViking
	preTekken // Mistral Nemo and later
	preGPT4o  // also llama4, kanana2, talkie, minimax-m2
)

// preInfo is what llama.cpp's vocabulary loader derives from a
// tokenizer.ggml.pre name: the splitter kind and the flags it sets.
type preInfo struct {
	kind         preType
	ignoreMerges bool // whole pre-tokens that are tokens skip merging (llama3)
	addBOS       bool // BOS by default (before add_bos_token in the metadata)
	noBOS        bool // no BOS token at all (chatglm)
	cleanSpaces  bool // clean_up_tokenization_spaces when detokenizing
}

// preNames is llama.cpp v0.4.0's name table restricted to the splitters
// implemented here. Names llama.cpp knows but this package does not
// implement (tekken, chameleon, gpt-4o, deepseek-v3, ...) are reported as
// unsupported rather than silently tokenized differently.
var preNames = func() map[string]preInfo {
	m := map[string]preInfo{}
	add := func(info preInfo, names ...string) {
		for _, n := range names {
			m[n] = info
		}
	}
	add(preInfo{kind: preDefault, cleanSpaces: true}, "", "default")
	add(preInfo{kind: preLlama3, ignoreMerges: true, addBOS: true, cleanSpaces: true},
		"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano")
	add(preInfo{kind: preLlama3, cleanSpaces: true}, "dbrx", "smaug-bpe")
	add(preInfo{kind: preLlama3, noBOS: true, cleanSpaces: true}, "glm4", "chatglm-bpe")
	add(preInfo{kind: preDeepseekLLM}, "deepseek-llm")
	add(preInfo{kind: preDeepseekCoder}, "deepseek-coder")
	add(preInfo{kind: preFalcon, cleanSpaces: true}, "falcon")
	add(preInfo{kind: preStarcoder, cleanSpaces: true}, "starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2")
	add(preInfo{kind: preStarcoder}, "command-r", "smollm")
	add(preInfo{kind: preGPT2, cleanSpaces: true}, "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
		"a.x-4.0", "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais", "exaone4")
	add(preInfo{kind: preGPT2}, "trillion", "granite-docling")
	add(preInfo{kind: preQwen2}, "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open")
	add(preInfo{kind: preQwen2, cleanSpaces: true}, "stablelm2", "megrez")
	add(preInfo{kind: preBloom, cleanSpaces: true}, "bloom", "gpt3-finnish")
	add(preInfo{kind: preBloom}, "poro-chat")
	add(preInfo{kind: preViking}, "viking")
	add(preInfo{kind: preTekken, ignoreMerges: true, addBOS: true}, "tekken")
	add(preInfo{kind: preGPT4o}, "gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2")
	return m
}()

func lookupPre(name string) (preInfo, error) {
	if p, ok := preNames[name]; ok {
		return p, nil
	}
	return preInfo{}, fmt.Errorf("tokenizer: pre-tokenizer %q: %w", name, ErrUnsupported)
}

// splitter refines a segmentation: pieces are lengths (in codepoints) that
// partition cps; it returns the refined lengths. Each llama.cpp regex becomes
// one splitter; a regex only ever sees one piece at a time, so lookahead and
// "$" stop at the piece end, as in llama.cpp.
type splitter func(cps []rune, pieces []int) []int

type preTokenizer struct {
	steps []splitter
}

func newPreTokenizer(p preType) (*preTokenizer, error) {
	var s []splitter
	switch p {
	case preDefault:
		s = []splitter{
			regexSplit(punctRun(false)),
			splitGPT2,
			regexSplit(numberRun),
			regexSplit(asciiDigits3),
		}
	case preLlama3:
		s = []splitter{splitLlama3(3)}
	case preDeepseekLLM:
		s = []splitter{
			regexSplit(crOrLF),
			regexSplit(optSpaceThen(inRanges(deepseekLetters))),
			regexSplit(optSpaceThen(inRanges(deepseekPunct))),
			splitTrailingSpace,
			regexSplit(runOf(inRanges(cjkRanges))),
			regexSplit(numberRun),
		}
	case preDeepseekCoder:
		s = []splitter{
			regexSplit(crOrLF),
			regexSplit(optSpaceThen(isCollapsedLetter)),
			regexSplit(optSpaceThen(isCollapsedPunct)),
			regexSplit(runOf(inRanges(cjkRanges))),
			regexSplit(singleNumber),
		}
	case preFalcon:
		s = []splitter{
			regexSplit(punctRun(true)),
			splitGPT2,
			regexSplit(asciiDigits3),
		}
	case preStarcoder:
		s = []splitter{regexSplit(singleNumber), splitGPT2}
	case preGPT2:
		s = []splitter{splitGPT2}
	case preQwen2:
		s = []splitter{splitLlama3(1)}
	case preBloom:
		s = []splitter{regexSplit(matchBloom)}
	case preViking:
		s = []splitter{regexSplit(matchBloom), regexSplit(singleNumber)}
	case preTekken:
		s = []splitter{regexSplit(matchCaseSplit(false, 1))}
	case preGPT4o:
		s = []splitter{regexSplit(matchCaseSplit(true, 3))}
	default:
		return nil, fmt.Errorf("tokenizer: pre-tokenizer kind %d: %w", p, ErrUnsupported)
	}
	return &preTokenizer{steps: s}, nil
}

// words splits text into pre-tokens (UTF-8, not yet byte-level encoded).
func (p *preTokenizer) words(text string) []string {
	cps := decodeCodepoints(text)
	pieces := []int{len(cps)}
	if len(cps) == 0 {
		return nil
	}
	for _, st := range p.steps {
		pieces = st(cps, pieces)
	}
	out := make([]string, 0, len(pieces))
	var buf []byte
	pos := 0
	for _, n := range pieces {
		buf = buf[:0]
		for _, r := range cps[pos : pos+n] {
			buf = appendCodepoint(buf, r)
		}
		out = append(out, string(buf))
		pos += n
	}
	return out
}

// ---- the two hand-written splitters llama.cpp itself uses ----

// pieceCursor is one pre-split piece cps[ini:end) being cut further, the
// state both splitters keep: reads outside the piece see nothing (as
// llama.cpp's bounded lookups do), and emit appends the length cut since
// the previous emit.
type pieceCursor struct {
	cps            []rune
	ini, end, prev int
	out            []int
}

func (c *pieceCursor) get(p int) (rune, bool) {
	if p >= c.ini && p < c.end {
		return c.cps[p], true
	}
	return 0, false
}

func (c *pieceCursor) flags(p int) cpFlags {
	if p >= c.ini && p < c.end {
		return flagsOf(c.cps[p])
	}
	return cpFlags{}
}

func (c *pieceCursor) emit(e int) int {
	l := e - c.prev
	if l > 0 {
		c.out = append(c.out, l)
	}
	c.prev = e
	return l
}

// splitGPT2 is 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
// with llama.cpp's custom implementation's edge behaviour.
func splitGPT2(cps []rune, pieces []int) []int {
	cur := pieceCursor{cps: cps, out: make([]int, 0, len(pieces)*2)}
	start := 0
	for _, n := range pieces {
		ini, end := start, start+n
		start = end
		cur.ini, cur.end, cur.prev = ini, end, ini
		get, fl, emit := cur.get, cur.flags, cur.emit
		for pos := ini; pos < end; {
			c := cps[pos]
			f := fl(pos)
			if c == '\'' && pos+1 < end {
				c1 := cps[pos+1]
				if c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd' {
					pos += emit(pos + 2)
					continue
				}
				if pos+2 < end {
					c2 := cps[pos+2]
					if c1 == 'r' && c2 == 'e' || c1 == 'v' && c2 == 'e' || c1 == 'l' && c2 == 'l' {
						pos += emit(pos + 3)
						continue
					}
				}
			}
			f2 := f
			if c == ' ' {
				f2 = fl(pos + 1)
			}
			sp := 0
			if c == ' ' {
				sp = 1
			}
			if f2.letter() {
				pos += sp
				for f2.letter() {
					pos++
					f2 = fl(pos)
				}
				emit(pos)
				continue
			}
			if f2.number() {
				pos += sp
				for f2.number() {
					pos++
					f2 = fl(pos)
				}
				emit(pos)
				continue
			}
			if !(f2.ws || f2.letter() || f2.number()) && f2.any() {
				pos += sp
				for !(f2.ws || f2.letter() || f2.number()) && f2.any() {
					pos++
					f2 = fl(pos)
				}
				emit(pos)
				continue
			}
			nws := 0
			for fl(pos + nws).ws {
				nws++
			}
			if _, in := get(pos + nws); nws > 1 && in {
				pos += nws - 1
				emit(pos)
				continue
			}
			if nws > 0 {
				pos += nws
				emit(pos)
				continue
			}
			pos++
			emit(pos)
		}
	}
	return cur.out
}

// splitLlama3 is llama.cpp's custom implementation of
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,maxDigits}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// maxDigits is 3 for llama3 and 1 for qwen2 (which llama.cpp implements the
// same way).
func splitLlama3(maxDigits int) splitter {
	return func(cps []rune, pieces []int) []int { return splitLlama3Pieces(cps, pieces, maxDigits) }
}

func splitLlama3Pieces(cps []rune, pieces []int, maxDigits int) []int {
	cur := pieceCursor{cps: cps, out: make([]int, 0, len(pieces)*2)}
	start := 0
	for _, n := range pieces {
		ini, end := start, start+n
		start = end
		cur.ini, cur.end, cur.prev = ini, end, ini
		get, fl, emit := cur.get, cur.flags, cur.emit
		for pos := ini; pos < end; {
			c := cps[pos]
			f := fl(pos)
			if c == '\'' && pos+1 < end {
				c1 := unicode.ToLower(cps[pos+1])
				if c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd' {
					pos += emit(pos + 2)
					continue
				}
				if pos+2 < end {
					c2 := unicode.ToLower(cps[pos+2])
					if c1 == 'r' && c2 == 'e' || c1 == 'v' && c2 == 'e' || c1 == 'l' && c2 == 'l' {
						pos += emit(pos + 3)
						continue
					}
				}
			}
			if !(c == '\r' || c == '\n' || f.number()) {
				if f.letter() || fl(pos+1).letter() {
					pos++
					for fl(pos).letter() {
						pos++
					}
					emit(pos)
					continue
				}
			}
			if f.number() {
				i0 := pos
				for fl(pos).number() {
					pos++
					if pos-i0 >= maxDigits {
						emit(pos)
						i0 = pos
					}
				}
				emit(pos)
				continue
			}
			f2 := f
			sp := 0
			if c == ' ' {
				f2 = fl(pos + 1)
				sp = 1
			}
			// llama.cpp tests the current position's flags (not f2) for
			// "inside the piece" here; reproduced as is.
			if !(f2.ws || f2.letter() || f2.number()) && f.any() {
				pos += sp
				for !(f2.ws || f2.letter() || f2.number()) && f2.any() {
					pos++
					f2 = fl(pos)
				}
				for {
					c2, in := get(pos)
					if !in || (c2 != '\r' && c2 != '\n') {
						break
					}
					pos++
				}
				emit(pos)
				continue
			}
			nws, lastNL := 0, 0
			for fl(pos + nws).ws {
				if c2 := cps[pos+nws]; c2 == '\r' || c2 == '\n' {
					lastNL = pos + nws + 1
				}
				nws++
			}
			if lastNL > 0 {
				pos = lastNL
				emit(pos)
				continue
			}
			if _, in := get(pos + nws); nws > 1 && in {
				pos += nws - 1
				emit(pos)
				continue
			}
			if nws > 0 {
				pos += nws
				emit(pos)
				continue
			}
			pos++
			emit(pos)
		}
	}
	return cur.out
}

// ---- std::regex emulation ----
//
// llama.cpp runs the other regexes through std::regex (ECMAScript) over a
// "collapsed" text where each non-ASCII codepoint is replaced by a byte
// standing for its category (or by \v if it is whitespace), or through
// std::wregex over codepoints when the regex names no category. A matcher
// here returns the length of the ECMAScript match at pos within [ini,end)
// (0 = no match at pos); regexSplit drives it like std::regex_iterator,
// keeping unmatched gaps as pieces.

type matcher func(cps []rune, ini, end, pos int) int

func regexSplit(m matcher) splitter {
	return func(cps []rune, pieces []int) []int {
		out := make([]int, 0, len(pieces)*2)
		start := 0
		for _, n := range pieces {
			ini, end := start, start+n
			start = end
			last := ini
			for pos := ini; pos < end; {
				l := m(cps, ini, end, pos)
				if l <= 0 {
					pos++
					continue
				}
				if pos > last {
					out = append(out, pos-last)
				}
				out = append(out, l)
				pos += l
				last = pos
			}
			if last < end {
				out = append(out, end-last)
			}
		}
		return out
	}
}

// Character classes as seen through llama.cpp's collapsing.

// isSpaceRE is ECMAScript \s over collapsed/wide text: ASCII whitespace, plus
// every non-ASCII White_Space codepoint (llama.cpp maps those to \v).
func isSpaceRE(r rune) bool {
	if r < 128 {
		return r == ' ' || r >= '\t' && r <= '\r'
	}
	return flagsOf(r).ws
}

func collapsedCat(r rune) category {
	if r >= 128 && flagsOf(r).ws {
		return catSeparator // collapsed to \v: matches no \p class
	}
	return flagsOf(r).cat
}

func isCollapsedLetter(r rune) bool { return collapsedCat(r) == catLetter }
func isCollapsedNumber(r rune) bool { return collapsedCat(r) == catNumber }
func isCollapsedPunct(r rune) bool  { return collapsedCat(r) == catPunct }

// punctRun is [\p{P}\$\+<=>\^~\|]+ (withBacktick adds ` as falcon's regex
// does): runs of punctuation plus the ASCII symbols listed.
func punctRun(withBacktick bool) matcher {
	in := func(r rune) bool {
		if r < 128 {
			switch r {
			case '$', '+', '<', '=', '>', '^', '~', '|':
				return true
			case '`':
				return withBacktick
			}
		}
		return isCollapsedPunct(r)
	}
	return runOf(in)
}

func runOf(in func(rune) bool) matcher {
	return func(cps []rune, ini, end, pos int) int {
		p := pos
		for p < end && in(cps[p]) {
			p++
		}
		return p - pos
	}
}

// numberRun is \p{N}+.
var numberRun = runOf(isCollapsedNumber)

// singleNumber is \p{N}.
func singleNumber(cps []rune, ini, end, pos int) int {
	if isCollapsedNumber(cps[pos]) {
		return 1
	}
	return 0
}

// asciiDigits3 is [0-9][0-9][0-9].
func asciiDigits3(cps []rune, ini, end, pos int) int {
	if pos+3 > end {
		return 0
	}
	for _, r := range cps[pos : pos+3] {
		if r < '0' || r > '9' {
			return 0
		}
	}
	return 3
}

// crOrLF is [\r\n].
func crOrLF(cps []rune, ini, end, pos int) int {
	if c := cps[pos]; c == '\r' || c == '\n' {
		return 1
	}
	return 0
}

// optSpaceThen is \s?X+ for a class X that excludes whitespace.
func optSpaceThen(in func(rune) bool) matcher {
	return func(cps []rune, ini, end, pos int) int {
		p := pos
		if isSpaceRE(cps[p]) {
			if p+1 < end && in(cps[p+1]) {
				p++
			} else {
				return 0
			}
		}
		q := p
		for q < end && in(cps[q]) {
			q++
		}
		if q == p {
			return 0
		}
		return q - pos
	}
}

// splitTrailingSpace is \s+$ driven like a regex: the only match in a piece
// is its trailing whitespace run (computed directly to stay linear).
func splitTrailingSpace(cps []rune, pieces []int) []int {
	out := make([]int, 0, len(pieces)+4)
	start := 0
	for _, n := range pieces {
		ini, end := start, start+n
		start = end
		p := end
		for p > ini && isSpaceRE(cps[p-1]) {
			p--
		}
		if p > ini {
			out = append(out, p-ini)
		}
		if p < end {
			out = append(out, end-p)
		}
	}
	return out
}

// matchCaseSplit is the tekken (contractions=false, maxDigits=1) and gpt-4o
// (contractions=true, maxDigits=3) regex as llama.cpp writes it for
// std::regex:
//
//	[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+C?|
//	[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*C?|
//	\p{N}{1,maxDigits}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// where C is the optional contraction. A letter "not a-z" (U) is an ASCII
// capital or any non-ASCII letter, a letter "not A-Z" (W) is an ASCII small
// letter or any non-ASCII letter; non-ASCII letters can serve as either,
// which is what the backtracking below resolves.
func matchCaseSplit(contractions bool, maxDigits int) matcher {
	isL, isN := isCollapsedLetter, isCollapsedNumber
	isU := func(r rune) bool { return isL(r) && !(r >= 'a' && r <= 'z') }
	isW := func(r rune) bool { return isL(r) && !(r >= 'A' && r <= 'Z') }
	return func(cps []rune, ini, end, pos int) int {
		run := func(p int, in func(rune) bool) int {
			q := p
			for q < end && in(cps[q]) {
				q++
			}
			return q - p
		}
		tail := func(e int) int {
			if contractions {
				e += contractionLen(cps, end, e)
			}
			return e - pos
		}
		c := cps[pos]
		q := pos
		if c != '\r' && c != '\n' && !isL(c) && !isN(c) {
			q = pos + 1 // the optional leading character; without it no letter run can start here
		}
		if q < end && isL(cps[q]) {
			u := run(q, isU)
			// U* greedy, backing off until W+ can match
			for k := u; k >= 0; k-- {
				if w := run(q+k, isW); w > 0 {
					return tail(q + k + w)
				}
			}
			// U+ W* (W* is empty here, or the loop above would have matched)
			return tail(q + u)
		}
		if isN(c) {
			n := 0
			for pos+n < end && n < maxDigits && isN(cps[pos+n]) {
				n++
			}
			return n
		}
		other := func(r rune) bool { return !isSpaceRE(r) && !isL(r) && !isN(r) }
		p := pos
		if c == ' ' && p+1 < end && other(cps[p+1]) {
			p++
		}
		if n := run(p, other); n > 0 {
			e := p + n
			for e < end && (cps[e] == '\r' || cps[e] == '\n' || cps[e] == '/') {
				e++
			}
			return e - pos
		}
		return matchSpaces(cps, end, pos)
	}
}

// contractionLen matches (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]) at p.
func contractionLen(cps []rune, end, p int) int {
	if p+1 >= end || cps[p] != '\'' {
		return 0
	}
	lower := func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 32
		}
		return r
	}
	switch lower(cps[p+1]) {
	case 's', 't', 'm', 'd':
		return 2
	}
	if p+2 < end {
		c1, c2 := lower(cps[p+1]), lower(cps[p+2])
		if c1 == 'r' && c2 == 'e' || c1 == 'v' && c2 == 'e' || c1 == 'l' && c2 == 'l' {
			return 3
		}
	}
	return 0
}

// matchSpaces is \s*[\r\n]+|\s+(?!\S)|\s+ with ECMAScript backtracking.
func matchSpaces(cps []rune, end, pos int) int {
	run := 0
	for pos+run < end && isSpaceRE(cps[pos+run]) {
		run++
	}
	if run == 0 {
		return 0
	}
	// \s*[\r\n]+: greedy \s* backs off to the last CR/LF of the run, which
	// [\r\n]+ then takes (what follows it is not CR/LF by construction).
	for k := run - 1; k >= 0; k-- {
		if c := cps[pos+k]; c == '\r' || c == '\n' {
			return k + 1
		}
	}
	if pos+run == end || run == 1 {
		return run // \s+(?!\S) at the piece end, or \s+
	}
	return run - 1 // \s+(?!\S): leave one space for the next word
}

// matchBloom is ` ?[^(\s|.,!?…。，、।۔،)]+` (std::wregex over codepoints).
func matchBloom(cps []rune, ini, end, pos int) int {
	in := func(r rune) bool {
		if isSpaceRE(r) {
			return false
		}
		switch r {
		case '(', '|', '.', ',', '!', '?', '…', '。', '，', '、', '।', '۔', '،', ')':
			return false
		}
		return true
	}
	p := pos
	if cps[p] == ' ' && p+1 < end && in(cps[p+1]) {
		p++
	}
	q := p
	for q < end && in(cps[q]) {
		q++
	}
	if q == p {
		return 0
	}
	return q - pos
}

// runeRange is an inclusive codepoint range of a regex character class.
type runeRange struct{ lo, hi rune }

// parseClass turns the body of a regex character class ("a-zA-Z…") into
// ranges. Only the literal-and-range syntax the llama.cpp classes use.
func parseClass(s string) []runeRange {
	rs := []rune(s)
	var out []runeRange
	for i := 0; i < len(rs); i++ {
		lo := rs[i]
		if i+2 < len(rs) && rs[i+1] == '-' {
			out = append(out, runeRange{lo, rs[i+2]})
			i += 2
			continue
		}
		out = append(out, runeRange{lo, lo})
	}
	return out
}

// inRanges matches a codepoint in the class; non-ASCII whitespace never
// matches because llama.cpp replaces it with \v before matching.
func inRanges(rr []runeRange) func(rune) bool {
	return func(r rune) bool {
		if r >= 128 && flagsOf(r).ws {
			return false
		}
		for _, x := range rr {
			if r >= x.lo && r <= x.hi {
				return true
			}
		}
		return false
	}
}

// Character classes of llama.cpp's deepseek pre-tokenizers (data from
// llama-vocab.cpp's regex strings), escaped so that no editor or tool can
// normalise the compatibility characters (KELVIN SIGN, OHM SIGN, Greek
// oxia letters) into different codepoints.
var (
	deepseekLetters = parseClass("A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-\u02AF\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139\u213C-\u213F\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3\uA640-\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\U00010400-\U0001044F\U000104B0-\U000104D3\U000104D8-\U000104FB\U00010C80-\U00010CB2\U00010CC0-\U00010CF2\U000118A0-\U000118DF\U0001E900-\U0001E943")
	deepseekPunct   = parseClass("!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002")
	cjkRanges       = parseClass("\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF")
)
