// Package tokenizer implements llama.cpp's SentencePiece-style ("llama") and
// byte-level BPE ("gpt2") tokenizers from GGUF metadata. The goal is token
// ids identical to llama.cpp's (release v0.4.0, as bundled by the reference
// harness), quirks included, because a model fed different ids than
// llama.cpp feeds it produces different text.
//
// What is reproduced:
//   - SPM: merges by score over UTF-8 characters, <0xXX> byte fallback, the
//     "▁" space escape and add_space_prefix (also after every special token).
//   - BPE: the pre-tokenizer named by tokenizer.ggml.pre (default, llama3 and
//     its aliases, qwen2, deepseek-llm, deepseek-coder, falcon, starcoder
//     family incl. refact/command-r/smollm, gpt2 family incl. mpt/phi-2,
//     bloom, viking, chatglm, dbrx, tekken, gpt-4o/llama4), byte-level encoding, merges by rank,
//     llama3's ignore_merges.
//   - Special tokens: user-defined tokens always split the input first,
//     control tokens only with parseSpecial; llama.cpp's text-based detection
//     of EOT/EOM/FIM/EOG tokens (which also forces them to CONTROL), phi-3's
//     rstrip and jina's lstrip.
//   - BOS/EOS as tokenizer.ggml.add_bos_token / add_eos_token (and the
//     per-model defaults) say.
//   - Rendering: Piece/PieceSpecial are llama_token_to_piece, Detokenize is
//     llama_detokenize (with clean_up_tokenization_spaces); Decode is the
//     round-trip inverse of Encode, and Decoder streams without splitting
//     UTF-8 sequences.
//
// The pre-tokenizers are hand-written splitters: llama.cpp's own custom
// splitters for gpt2/llama3/qwen2, and emulations of the std::regex (ECMAScript)
// matches over llama.cpp's "collapsed" category text for the rest. Codepoint
// categories follow llama.cpp's tables (Go's unicode package plus the
// Unicode 15.1 additions it lacks; checked codepoint by codepoint).
//
// Checked against llama.cpp: every .inp/.out vector in ../shared/vocab, and
// golden ids/renderings/EOG sets/attributes produced by llama.cpp for the
// shared vocabularies and variants with other pre-tokenizers
// (testdata/tokenizer/gen.sh regenerates them).
//
// Known differences: pre-tokenizers llama.cpp has but this package lacks
// (chameleon, deepseek-v3, qwen35, gemma4, kimi-k2, ...) are
// rejected with ErrUnsupported; when a vocabulary has several candidate
// texts for the EOT or FIM role, llama.cpp picks one in unordered_map order
// and this package the first in its list; a BPE piece with characters
// outside the byte alphabet renders as that text, not as llama.cpp's
// "[UNK_BYTE_…]" marker; an SPM vocabulary without byte tokens gets the
// unknown token where llama.cpp throws.
package tokenizer
