package tokenizer

import (
	"errors"
	"fmt"

	"github.com/memvanta/memvanta/core/gguf"
)

// GGUF metadata keys read by FromGGUF.
const (
	keyModel       = "tokenizer.ggml.model"
	keyPre         = "tokenizer.ggml.pre"
	keyTokens      = "tokenizer.ggml.tokens"
	keyScores      = "tokenizer.ggml.scores"
	keyTypes       = "tokenizer.ggml.token_type"
	keyMerges      = "tokenizer.ggml.merges"
	keyBOS         = "tokenizer.ggml.bos_token_id"
	keyEOS         = "tokenizer.ggml.eos_token_id"
	keyEOT         = "tokenizer.ggml.eot_token_id"
	keyEOM         = "tokenizer.ggml.eom_token_id"
	keyUNK         = "tokenizer.ggml.unknown_token_id"
	keyPAD         = "tokenizer.ggml.padding_token_id"
	keyFIMPre      = "tokenizer.ggml.fim_pre_token_id"
	keyFIMSuf      = "tokenizer.ggml.fim_suf_token_id"
	keyFIMMid      = "tokenizer.ggml.fim_mid_token_id"
	keyFIMPad      = "tokenizer.ggml.fim_pad_token_id"
	keyFIMRep      = "tokenizer.ggml.fim_rep_token_id"
	keyFIMSep      = "tokenizer.ggml.fim_sep_token_id"
	keyPrefix      = "tokenizer.ggml.prefix_token_id" // deprecated FIM keys
	keySuffix      = "tokenizer.ggml.suffix_token_id"
	keyMiddle      = "tokenizer.ggml.middle_token_id"
	keyAddBOS      = "tokenizer.ggml.add_bos_token"
	keyAddEOS      = "tokenizer.ggml.add_eos_token"
	keyAddPrefix   = "tokenizer.ggml.add_space_prefix"
	keyGeneralName = "general.name"
	keySEP         = "tokenizer.ggml.seperator_token_id" // llama.cpp's spelling
	keyAddSEP      = "tokenizer.ggml.add_sep_token"
	keyLowercase   = "tokenizer.ggml.normalizer.lowercase"
	keyStripAcc    = "tokenizer.ggml.normalizer.strip_accents"
)

// VocabFromGGUF extracts the tokenizer metadata of a parsed GGUF file.
func VocabFromGGUF(f *gguf.File) (*Vocab, error) {
	v := &Vocab{}
	model, err := f.String(keyModel)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", keyModel, err)
	}
	v.Model = Model(model)
	if v.Pre, err = optString(f, keyPre); err != nil {
		return nil, err
	}
	if v.Name, err = optString(f, keyGeneralName); err != nil {
		return nil, err
	}
	if v.Tokens, err = f.Strings(keyTokens); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", keyTokens, err)
	}
	if v.Scores, err = f.Float32s(keyScores); err != nil {
		v.Scores = nil
		switch {
		case errors.Is(err, gguf.ErrNotFound):
		case errors.Is(err, gguf.ErrType):
			// llama.cpp also accepts integer scores.
			is, ierr := f.Int32s(keyScores)
			if ierr != nil {
				return nil, fmt.Errorf("tokenizer: %s: %w", keyScores, err)
			}
			v.Scores = make([]float32, len(is))
			for i, x := range is {
				v.Scores[i] = float32(x)
			}
		default:
			return nil, fmt.Errorf("tokenizer: %s: %w", keyScores, err)
		}
	}
	types, err := f.Int32s(keyTypes)
	if err != nil && !errors.Is(err, gguf.ErrNotFound) {
		return nil, fmt.Errorf("tokenizer: %s: %w", keyTypes, err)
	}
	if types != nil {
		v.Types = make([]TokenType, len(types))
		for i, x := range types {
			v.Types[i] = TokenType(x)
		}
	}
	if v.Model == ModelBPE {
		if v.Merges, err = f.Strings(keyMerges); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", keyMerges, err)
		}
	}
	for _, p := range []struct {
		key string
		dst **int32
	}{{keyBOS, &v.BOS}, {keyEOS, &v.EOS}, {keyEOT, &v.EOT}, {keyEOM, &v.EOM}, {keyUNK, &v.UNK}, {keyPAD, &v.PAD}, {keySEP, &v.SEP},
		{keyFIMPre, &v.FIMPre}, {keyFIMSuf, &v.FIMSuf}, {keyFIMMid, &v.FIMMid},
		{keyFIMPad, &v.FIMPad}, {keyFIMRep, &v.FIMRep}, {keyFIMSep, &v.FIMSep},
		// llama.cpp reads the deprecated keys after the new ones, so they win.
		{keyPrefix, &v.FIMPre}, {keySuffix, &v.FIMSuf}, {keyMiddle, &v.FIMMid}} {
		id, err := f.Uint32(p.key)
		if errors.Is(err, gguf.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", p.key, err)
		}
		if id > maxVocab {
			continue // out of range: llama.cpp warns and keeps the default
		}
		x := int32(id)
		*p.dst = &x
	}
	for _, p := range []struct {
		key string
		dst **bool
	}{{keyAddBOS, &v.AddBOS}, {keyAddEOS, &v.AddEOS}, {keyAddPrefix, &v.AddSpacePrefix},
		{keyAddSEP, &v.AddSEP}, {keyLowercase, &v.Lowercase}, {keyStripAcc, &v.StripAccents}} {
		b, err := f.Bool(p.key)
		if errors.Is(err, gguf.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", p.key, err)
		}
		*p.dst = &b
	}
	return v, nil
}

func optString(f *gguf.File, key string) (string, error) {
	s, err := f.String(key)
	if errors.Is(err, gguf.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("tokenizer: %s: %w", key, err)
	}
	return s, nil
}

// FromGGUF builds the tokenizer described by a GGUF file's metadata.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	v, err := VocabFromGGUF(f)
	if err != nil {
		return nil, err
	}
	return New(v)
}
