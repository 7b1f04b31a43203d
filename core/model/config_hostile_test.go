package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/gguf"
)

// TestConfigHostileValues: values a corrupted file can carry get an error
// that says what is wrong with them (not "key not found"), shapes with
// trailing dimensions of 1 are accepted for every tensor alike, and a name
// from the file is quoted at bounded length.
func TestConfigHostileValues(t *testing.T) {
	c := defTiny()
	c.meta = map[string]any{"llama.attention.layer_norm_rms_epsilon": float32(-1e-5)}
	_, err := ConfigFromGGUF(parse(t, c.build(t)))
	if err == nil || errors.Is(err, gguf.ErrNotFound) || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative epsilon: %v, want an error saying it is negative", err)
	}

	c = defTiny()
	c.dims = map[string][]int{"token_embd.weight": {c.embd, c.vocab, 1}, "blk.0.attn_q.weight": {c.embd, c.embd, 1}}
	if _, err := ConfigFromGGUF(parse(t, c.build(t))); err != nil {
		t.Errorf("token_embd [embd, vocab, 1]: %v", err)
	}
	c = defTiny()
	c.dims = map[string][]int{"token_embd.weight": {c.embd, c.vocab, 2}}
	if _, err := ConfigFromGGUF(parse(t, c.build(t))); err == nil {
		t.Error("token_embd [embd, vocab, 2] accepted")
	}

	c = defTiny()
	c.meta = map[string]any{"general.architecture": strings.Repeat("a", 1<<20)}
	_, err = ConfigFromGGUF(parse(t, c.build(t)))
	if err == nil || len(err.Error()) > 1024 {
		t.Errorf("1 MiB architecture name: error of %d bytes", len(err.Error()))
	}
}
