package tokenizer

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// TokenType is the value stored per token in tokenizer.ggml.token_type.
type TokenType int32

// Token types as written by llama.cpp's converters.
const (
	TypeUndefined   TokenType = 0
	TypeNormal      TokenType = 1
	TypeUnknown     TokenType = 2
	TypeControl     TokenType = 3
	TypeUserDefined TokenType = 4
	TypeUnused      TokenType = 5
	TypeByte        TokenType = 6
)

// attr is llama.cpp's per-token attribute bit set. It is derived from the
// token type plus per-model overrides (lstrip/rstrip) and the "control-looking
// token" fix-ups, and drives special-token splitting and rendering.
type attr uint16

const (
	attrUnknown attr = 1 << iota
	attrUnused
	attrNormal
	attrControl
	attrUserDefined
	attrByte
	attrNormalized
	attrLStrip
	attrRStrip
	attrSingleWord
)

// Model is the tokenizer family named by tokenizer.ggml.model.
type Model string

// Supported tokenizer models.
const (
	ModelSPM Model = "llama" // SentencePiece BPE with scores and byte fallback
	ModelBPE Model = "gpt2"  // byte-level BPE with merges and a pre-tokenizer
	ModelWPM Model = "bert"  // WordPiece with a BERT normaliser (encoder models)
)

// NoToken marks an absent special token (llama.cpp's LLAMA_TOKEN_NULL).
const NoToken int32 = -1

// Vocab is the tokenizer part of GGUF metadata in plain form, so tokenizers
// can be built and tested without a GGUF file.
type Vocab struct {
	Model  Model
	Pre    string      // tokenizer.ggml.pre ("" = default)
	Name   string      // general.name (llama.cpp keys some attribute fix-ups on it)
	Tokens []string    // tokenizer.ggml.tokens
	Scores []float32   // tokenizer.ggml.scores (SPM); nil = all zero
	Types  []TokenType // tokenizer.ggml.token_type; nil = all normal
	Merges []string    // tokenizer.ggml.merges (BPE), "left right", rank = index

	// Special token ids; nil means "not in the metadata" (model default applies).
	BOS, EOS, EOT, EOM, UNK, PAD *int32
	// Fill-in-the-middle ids (pad/repo/file-separator also end generation).
	FIMPre, FIMSuf, FIMMid, FIMPad, FIMRep, FIMSep *int32
	// Flags; nil means "not in the metadata" (model/pre-tokenizer default applies).
	AddBOS, AddEOS, AddSpacePrefix *bool

	// WordPiece: the separator appended after a sequence (and between the
	// two texts of a rerank pair), whether to append it, and the BERT
	// normaliser switches; nil means "not in the metadata".
	SEP                     *int32
	AddSEP                  *bool
	Lowercase, StripAccents *bool
}

// Tokenizer converts text to token ids and back. It is immutable after
// construction and safe for concurrent use.
type Tokenizer struct {
	model Model
	pre   preType

	text  []string
	score []float32
	attrs []attr
	ids   map[string]int32
	// maxLen is the longest token text: longer candidates need no lookup.
	maxLen int

	// BPE merges: rank by (left id, right id) when both sides are tokens
	// (always, in real vocabularies), by text otherwise.
	pairRank map[uint64]int32
	strRank  map[[2]string]int32
	byteID   [256]int32 // token of each byte's byte-level character, or NoToken
	bl       *byteLevel
	split    *preTokenizer

	bos, eos, eot, eom, unk int32
	fim                     [6]int32 // pre, suf, mid, pad, rep, sep
	eog                     map[int32]bool

	addBOS, addEOS, addSpacePrefix, ignoreMerges, cleanSpaces bool

	sep                             int32
	addSep, lowercase, stripAccents bool

	special []int32 // CONTROL/USER_DEFINED/UNKNOWN tokens, longest text first

	maxInput int // MaxInput; a field so tests can lower it
}

// ErrUnsupported is wrapped by New/FromGGUF errors for tokenizer models or
// pre-tokenizers this package does not implement.
var ErrUnsupported = errors.New("tokenizer: unsupported")

// maxVocab bounds the token count; the largest real vocabularies are ~260k.
const maxVocab = 1 << 22

// New builds a tokenizer from plain vocabulary data.
func New(v *Vocab) (*Tokenizer, error) {
	n := len(v.Tokens)
	if n == 0 {
		return nil, errors.New("tokenizer: vocabulary has no tokens")
	}
	if n > maxVocab {
		return nil, fmt.Errorf("tokenizer: %d tokens exceeds the limit of %d", n, maxVocab)
	}
	// Like llama.cpp, accept longer score/type arrays and ignore the excess.
	if v.Scores != nil && len(v.Scores) < n {
		return nil, fmt.Errorf("tokenizer: %d scores for %d tokens", len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) < n {
		return nil, fmt.Errorf("tokenizer: %d token types for %d tokens", len(v.Types), n)
	}
	t := &Tokenizer{
		model: v.Model,
		text:  make([]string, n),
		score: make([]float32, n),
		attrs: make([]attr, n),
		ids:   make(map[string]int32, n),
		eot:   NoToken,
		eom:   NoToken,
		sep:   NoToken,
		fim:   [6]int32{NoToken, NoToken, NoToken, NoToken, NoToken, NoToken},

		maxInput: MaxInput,
	}
	switch v.Model {
	case ModelSPM:
		t.bos, t.eos, t.unk = 1, 2, 0
		t.addSpacePrefix, t.addBOS = true, true
	case ModelBPE:
		// llama.cpp's defaults for BPE vocabularies without explicit ids.
		t.bos, t.eos, t.unk = 11, 11, NoToken
		p, err := lookupPre(v.Pre)
		if err != nil {
			return nil, err
		}
		t.pre = p.kind
		t.ignoreMerges, t.addBOS, t.cleanSpaces = p.ignoreMerges, p.addBOS, p.cleanSpaces
		if p.noBOS {
			t.bos = NoToken
		}
		t.split, err = newPreTokenizer(p.kind)
		if err != nil {
			return nil, err
		}
		t.bl = newByteLevel()
		if len(v.Merges) == 0 {
			return nil, errors.New("tokenizer: BPE vocabulary has no tokenizer.ggml.merges")
		}
	case ModelWPM:
		// llama.cpp's defaults: the bert-base-uncased ids.
		t.bos, t.eos, t.unk, t.sep = 101, NoToken, 100, 102
		t.addBOS, t.addSep, t.cleanSpaces = true, true, true
		t.lowercase = v.Lowercase == nil || *v.Lowercase
		t.stripAccents = t.lowercase
		if v.StripAccents != nil {
			t.stripAccents = *v.StripAccents
		}
	default:
		return nil, fmt.Errorf("tokenizer: model %q: %w (want %q, %q or %q)", v.Model, ErrUnsupported, ModelSPM, ModelBPE, ModelWPM)
	}

	for i, s := range v.Tokens {
		if s == "" {
			s = fmt.Sprintf("[EMPTY_%d]", i) // as llama.cpp does, so the id stays addressable
		}
		t.text[i] = s
		t.ids[s] = int32(i) // duplicates: the last one wins, as in llama.cpp's map
		t.maxLen = max(t.maxLen, len(s))
		if v.Scores != nil {
			t.score[i] = v.Scores[i]
		}
		t.attrs[i] = attrNormal
		if v.Types != nil {
			t.attrs[i] = typeAttr(v.Types[i])
		}
	}

	if v.Model == ModelBPE {
		t.loadMerges(v.Merges)
	}

	setID := func(dst *int32, src *int32) {
		if src != nil && *src >= 0 && int(*src) < n {
			*dst = *src
		}
	}
	setID(&t.bos, v.BOS)
	setID(&t.eos, v.EOS)
	setID(&t.eot, v.EOT)
	setID(&t.eom, v.EOM)
	setID(&t.unk, v.UNK)
	setID(&t.sep, v.SEP)
	// Model defaults (WordPiece's are bert-base ids) may not exist in a
	// small vocabulary; an id the vocabulary lacks is no id at all.
	for _, p := range []*int32{&t.bos, &t.eos, &t.unk, &t.sep} {
		if *p >= int32(n) {
			*p = NoToken
		}
	}
	for i, p := range []*int32{v.FIMPre, v.FIMSuf, v.FIMMid, v.FIMPad, v.FIMRep, v.FIMSep} {
		setID(&t.fim[i], p)
	}
	if v.AddBOS != nil {
		t.addBOS = *v.AddBOS
	}
	if v.AddEOS != nil {
		t.addEOS = *v.AddEOS
	}
	if v.AddSpacePrefix != nil {
		t.addSpacePrefix = *v.AddSpacePrefix
	}
	if v.AddSEP != nil {
		t.addSep = *v.AddSEP
	}
	t.detectEOG()
	t.buildSpecialCache()
	t.applyModelFixups(v.Name, v.Pre)
	return t, nil
}

func typeAttr(tt TokenType) attr {
	switch tt {
	case TypeUnknown:
		return attrUnknown
	case TypeUnused:
		return attrUnused
	case TypeNormal:
		return attrNormal
	case TypeControl:
		return attrControl
	case TypeUserDefined:
		return attrUserDefined
	case TypeByte:
		return attrByte
	}
	return 0
}

// loadMerges indexes the merge list; it needs the token map.
func (t *Tokenizer) loadMerges(merges []string) {
	t.pairRank = make(map[uint64]int32, len(merges))
	t.strRank = make(map[[2]string]int32)
	for i, m := range merges {
		// llama.cpp splits at the first space after the first byte, so a merge
		// whose left side starts with a space still parses.
		if len(m) < 2 {
			continue
		}
		p := strings.IndexByte(m[1:], ' ')
		if p < 0 {
			continue
		}
		p++
		a, b := m[:p], m[p+1:]
		ia, oka := t.ids[a]
		ib, okb := t.ids[b]
		// The first rank of a duplicated merge wins.
		if oka && okb {
			k := pairKey(ia, ib)
			if _, dup := t.pairRank[k]; !dup {
				t.pairRank[k] = int32(i)
			}
		} else if _, dup := t.strRank[[2]string{a, b}]; !dup {
			t.strRank[[2]string{a, b}] = int32(i)
		}
	}
	for b := range t.byteID {
		t.byteID[b] = NoToken
		if id, ok := t.ids[t.bl.enc[b]]; ok {
			t.byteID[b] = id
		}
	}
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// Token texts llama.cpp (v0.4.0, llama-vocab.cpp) recognises when the
// metadata does not name the token: the first match becomes the EOT/EOM/FIM
// id, and every match is forced to CONTROL, which changes how such text in a
// prompt is tokenized. Non-ASCII characters are escaped so no tool can
// normalise them.
var (
	eotTexts    = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<\uFF5Cend\u2581of\u2581sentence\uFF5C>", "<end_of_utterance>"}
	eomTexts    = []string{"<|eom_id|>"}
	fimPreTexts = []string{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uFF5Cfim\u2581begin\uFF5C>", "<PRE>", "\u2581<PRE>", "<|code_prefix|>", "<|prefix|>"}
	fimSufTexts = []string{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uFF5Cfim\u2581hole\uFF5C>", "<SUF>", "\u2581<SUF>", "<|code_suffix|>", "<|suffix|>"}
	fimMidTexts = []string{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uFF5Cfim\u2581end\uFF5C>", "<MID>", "\u2581<MID>", "<|code_middle|>", "<|middle|>"}
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}
	fimSepTexts = []string{"<|file_sep|>"}
	eogTexts    = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<\uFF5Cend\u2581of\u2581sentence\uFF5C>", "[e~["}
	// gpt-oss channel markers llama.cpp always renders (forced USER_DEFINED).
	renderTexts = []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}
)

// detectEOG reproduces llama.cpp's text-based special-token detection and
// its end-of-generation set, including the model-specific workarounds.
// llama.cpp walks an unordered_map, so when a vocabulary has several
// candidates for one role the chosen id may differ; candidates are tried in
// list order here. EOG membership and CONTROL forcing do not depend on it.
func (t *Tokenizer) detectEOG() {
	force := func(id int32) { t.attrs[id] |= attrControl }
	find := func(dst *int32, texts []string) {
		if *dst != NoToken {
			return
		}
		for _, s := range texts {
			if id, ok := t.ids[s]; ok {
				*dst = id
				force(id)
				return
			}
		}
	}
	find(&t.eot, eotTexts)
	find(&t.eom, eomTexts)
	for i, texts := range [][]string{fimPreTexts, fimSufTexts, fimMidTexts, fimPadTexts, fimRepTexts, fimSepTexts} {
		find(&t.fim[i], texts)
	}
	// Control tokens whose text says "unused" are marked unused.
	for id, a := range t.attrs {
		if a&attrControl != 0 && strings.Contains(t.text[id], "unused") {
			t.attrs[id] |= attrUnused
		}
	}
	t.eog = make(map[int32]bool)
	for _, id := range t.fim[3:] { // pad, repo, file separator
		if id != NoToken {
			t.eog[id] = true
		}
	}
	for _, s := range eogTexts {
		if id, ok := t.ids[s]; ok {
			t.eog[id] = true
			force(id)
		}
	}
	for _, s := range renderTexts {
		if id, ok := t.ids[s]; ok {
			t.attrs[id] = attrUserDefined
		}
	}
	for _, id := range []int32{t.eos, t.eot, t.eom} {
		if id != NoToken {
			t.eog[id] = true
		}
	}
	// o200k_harmony / solar-open: "<|end|>" ends a message, not generation.
	has := func(s string) (int32, bool) {
		id, ok := t.ids[s]
		return id, ok && t.eog[id]
	}
	_, ret := has("<|return|>")
	_, call := has("<|call|>")
	_, calls := has("<|calls|>")
	_, flush := has("<|flush|>")
	if end, ok := has("<|end|>"); ok && (ret && (call || calls) || (call || calls) && flush) {
		delete(t.eog, end)
		t.attrs[end] = attrUserDefined
	}
	// gemma4 / paddleocr: "</s>" is text there.
	if _, tr := has("<|tool_response>"); tr {
		if s, ok := has("</s>"); ok {
			delete(t.eog, s)
			t.attrs[s] = attrNormal
		}
	}
}

func (t *Tokenizer) buildSpecialCache() {
	for id, a := range t.attrs {
		if a&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.special = append(t.special, int32(id))
		}
	}
	// Longest first so that a special token containing another wins; ties in
	// id order (llama.cpp's std::sort leaves ties unspecified).
	sort.SliceStable(t.special, func(i, j int) bool {
		return len(t.text[t.special[i]]) > len(t.text[t.special[j]])
	})
}

// applyModelFixups reproduces llama.cpp's name-keyed attribute overrides.
func (t *Tokenizer) applyModelFixups(name, pre string) {
	name = strings.ToLower(name)
	set := func(s string, a attr, on bool) {
		id, ok := t.ids[s]
		if !ok {
			return
		}
		if on {
			t.attrs[id] |= a
		} else {
			t.attrs[id] &^= a
		}
	}
	switch {
	case strings.Contains(pre, "jina-v2-de") || strings.Contains(pre, "jina-v2-es") || strings.Contains(pre, "jina-v2-code"):
		set("<mask>", attrLStrip, true)
	case strings.Contains(name, "phi-3") || strings.Contains(name, "phi3"):
		for _, id := range t.special {
			t.attrs[id] |= attrRStrip
		}
		set("</s>", attrRStrip, true)
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			set(s, attrRStrip, false)
		}
	}
}

// NVocab is the number of tokens.
func (t *Tokenizer) NVocab() int { return len(t.text) }

// BOS is the beginning-of-sequence id, or NoToken.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS is the end-of-sequence id, or NoToken.
func (t *Tokenizer) EOS() int32 { return t.eos }

// SEP is the separator id (WordPiece vocabularies), or NoToken.
func (t *Tokenizer) SEP() int32 { return t.sep }

// AddSEP reports whether the vocabulary asks for SEP after a sequence
// (tokenizer.ggml.add_sep_token, on by default for WordPiece). For
// WordPiece, Encode with addSpecial appends it whatever this says, as
// llama.cpp does; rerank pairs consult it between the two texts.
func (t *Tokenizer) AddSEP() bool { return t.addSep && t.sep != NoToken }

// EOT is the end-of-turn id, or NoToken.
func (t *Tokenizer) EOT() int32 { return t.eot }

// AddBOS reports whether Encode(..., addSpecial=true, ...) prepends BOS.
func (t *Tokenizer) AddBOS() bool { return t.addBOS && t.bos != NoToken }

// AddEOS reports whether Encode(..., addSpecial=true, ...) appends EOS.
func (t *Tokenizer) AddEOS() bool { return t.addEOS && t.eos != NoToken }

// IsEOG reports whether generation should stop at id (EOS, EOT, EOM and the
// end-of-turn tokens llama.cpp recognises by text).
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// IsControl reports whether id is a control token (rendered as nothing).
func (t *Tokenizer) IsControl(id int32) bool {
	return id >= 0 && int(id) < len(t.attrs) && t.attrs[id]&attrControl != 0
}

// TokenText is the raw vocabulary string of id ("" if out of range).
func (t *Tokenizer) TokenText(id int32) string {
	if id < 0 || int(id) >= len(t.text) {
		return ""
	}
	return t.text[id]
}

// Model is the tokenizer family.
func (t *Tokenizer) Model() Model { return t.model }
