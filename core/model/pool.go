package model

import (
	"context"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/arch"
)

// Embed runs tokens as a fresh sequence (the KV cache is reset first) and
// pools the final hidden states into one vector, as llama.cpp's embedding
// contexts do. Encoders (bert, nomic-bert) pool as p says: none (every
// token's state, n_tokens × n_embd values), mean, CLS (the first token),
// last, rank (the classifier head's outputs on the first token's state,
// n_cls_out values; the state itself without a head). Decoder embedders
// (Qwen3-Embedding) pool their last token only, whose state is the output
// norm's result that the logits are projected from (mean and CLS would
// need every token's normed state across prefill batches); decoder
// rerankers (Qwen3-Reranker: cls.output) rank it, the softmax of its
// projection onto cls.output. The vector is
// not normalised (see Normalize) and is the caller's to keep.
func (m *Model) Embed(ctx context.Context, tokens []int32, p arch.Pooling) ([]float32, error) {
	if m.Cfg.Encoder {
		if err := m.encode(ctx, [][]int32{tokens}); err != nil {
			return nil, err
		}
		return m.encoderPool(ctx, 0, p)
	}
	rank := p == arch.PoolRank && m.Cfg.ClsOutput
	if p != arch.PoolLast && !rank {
		return nil, unsupported("%s pooling for %s (this build pools the last token of decoder models, and ranks with a reranker's cls.output)", p, m.Cfg.Arch)
	}
	m.Reset()
	if _, err := m.Forward(ctx, tokens); err != nil {
		return nil, err
	}
	if !rank {
		return append([]float32(nil), m.Hidden()...), nil
	}
	// Qwen3-Reranker: the last token's normed state through cls.output,
	// then the softmax over the labels (llama.cpp's build_pooling).
	v, err := m.classify(ctx, m.Hidden())
	if err != nil {
		return nil, err
	}
	m.k.Softmax(v)
	return v, nil
}

// errEncoder refuses a decoding pass on an encoder.
func errEncoder(a string) error {
	return unsupported("%s is an encoder: it computes embeddings (Embed), not next-token logits", a)
}

// Hidden is the output-normed hidden state of the last token of the
// latest Forward (what last-token pooling returns), valid until the next
// forward pass.
func (m *Model) Hidden() []float32 { return m.xn[:m.Cfg.NEmbd] }

// Normalize scales v to unit Euclidean length in place, as llama.cpp's
// common_embd_normalize does with its default (embd_normalize = 2), with
// its roundings: float32 squares summed in float64, one float32 factor, and
// a zero vector stays zero.
func Normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x * x)
	}
	if sum == 0 {
		return
	}
	f := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= f
	}
}

// Cosine is the cosine similarity of two vectors of one length (0 when
// either is zero).
func Cosine(a, b []float32) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("model: cosine of vectors of lengths %d and %d", len(a), len(b))
	}
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0, nil
	}
	return ab / math.Sqrt(aa*bb), nil
}
