package arch

import (
	"errors"
	"fmt"

	"github.com/memvanta/memvanta/core/gguf"
)

// Pooling is how an embedding model turns its per-token hidden states into
// one vector per sequence: llama.cpp's llama_pooling_type, stored in a
// file as {arch}.pooling_type with the same numbers.
type Pooling int

const (
	PoolNone Pooling = iota // a vector per token
	PoolMean                // the mean over the sequence's tokens
	PoolCLS                 // the first token's state
	PoolLast                // the last token's state (decoder embedders: Qwen3-Embedding)
	PoolRank                // a classifier head's scores (rerankers)
)

var poolingNames = [...]string{"none", "mean", "cls", "last", "rank"}

func (p Pooling) String() string {
	if p >= 0 && int(p) < len(poolingNames) {
		return poolingNames[p]
	}
	return fmt.Sprintf("pooling(%d)", int(p))
}

// ParsePooling reads a pooling name as llama.cpp's --pooling flag spells it.
func ParsePooling(s string) (Pooling, error) {
	for i, n := range poolingNames {
		if n == s {
			return Pooling(i), nil
		}
	}
	return 0, fmt.Errorf("pooling %q: want one of none, mean, cls, last, rank", s)
}

// PoolingOf is the file's {arch}.pooling_type; ok is false when the key is
// absent (llama.cpp then pools nothing: a vector per token).
func PoolingOf(f *gguf.File) (p Pooling, ok bool, err error) {
	a, err := f.String("general.architecture")
	if err != nil {
		return 0, false, fmt.Errorf("model: general.architecture: %w", err)
	}
	key := a + ".pooling_type"
	v, err := f.Uint32(key)
	if errors.Is(err, gguf.ErrNotFound) {
		return PoolNone, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("model: %s: %w", key, err)
	}
	if int(v) >= len(poolingNames) {
		return 0, false, fmt.Errorf("model: %s = %d: %w", key, v, unsupported("pooling type %d", v))
	}
	return Pooling(v), true, nil
}
