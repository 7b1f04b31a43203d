package arch

import (
	"errors"
	"fmt"

	"github.com/memvanta/memvanta/core/gguf"
)

// bert (BERT, bge, all-MiniLM, mxbai-embed ...; llama.cpp's
// src/models/bert.cpp): an encoder (Graph.Encoder).
//
//   - input: token_embd row + token_types row 0 (every token is type
//     "sentence A", as llama.cpp hard-codes) + position_embd row of the
//     position, then LayerNorm (token_embd_norm weight and bias);
//   - blocks: q/k/v projections (separate or a fused attn_qkv; biases),
//     no RoPE, attention over the whole sequence when attention.causal is
//     false (bert files say so; llama.cpp's default, and so this one's, is
//     causal), scores scaled by 1/sqrt(head length), output projection
//     and bias, residual add, LayerNorm (attn_output_norm);
//     down(gelu(up·x + up bias)) + down bias, residual add, LayerNorm
//     (layer_output_norm);
//   - no output norm or projection: the hidden states are pooled as
//     pooling_type says; rank pooling runs the classifier head (cls:
//     tanh(W·x + b), then cls.output) on the first token's state.
//
// tokenizer.ggml.token_type_count must be > 0, as llama.cpp requires.
func init() {
	register(&Spec{
		Name:  "bert",
		Graph: Graph{Encoder: true, NoRope: true, FFNGeLU: true},
		Global: []Tensor{tokEmbd, typeEmbd, posEmbd, tokNorm, tokNormB,
			clsDense, clsB, clsOut, clsOutB},
		Layer: []Tensor{attnQ, attnK, attnV, biasQ, biasK, biasV, attnQKV, biasQKV, attnOut, biasOut,
			attnOutNorm, attnOutNormB, ffnUp, biasUp, ffnDown, biasDown, layerOutNorm, layerOutNormB},
		Keys: []string{"attention.causal", "attention.layer_norm_epsilon", "pooling_type", "classifier.output_labels"},
		Read: readEncoder,
	})
}

// nomic-bert (nomic-embed-text v1/v1.5): bert's encoder without position
// embeddings nor a classifier: NeoX RoPE over the head (rope.freq_base,
// 1000 in nomic's files), a SwiGLU feed-forward silu(gate·x)·(up·x) without
// biases (llama.cpp ignores ffn biases for this architecture), usually a
// fused attn_qkv.
func init() {
	register(&Spec{
		Name:   "nomic-bert",
		Graph:  Graph{Encoder: true, Rope: RopeNeoX},
		Global: []Tensor{tokEmbd, typeEmbd, tokNorm, tokNormB},
		Layer: []Tensor{attnQ, attnK, attnV, biasQ, biasK, biasV, attnQKV, biasQKV, attnOut, biasOut,
			attnOutNorm, attnOutNormB, ffnUp, ffnGate, ffnDown, layerOutNorm, layerOutNormB},
		Keys: []string{"attention.causal", "attention.layer_norm_epsilon", "pooling_type"},
		Read: readEncoder,
	})
}

// readEncoder reads what both encoders share beyond the common keys:
// attention.causal (default true, as llama.cpp), the token type count and
// the classifier's output count.
func readEncoder(r Reader, c *Config) error {
	c.NonCausal = false
	if r.Has("attention.causal") {
		causal, err := r.f.Bool(r.Key("attention.causal"))
		if err != nil {
			return fmt.Errorf("model: %s: %w", r.Key("attention.causal"), err)
		}
		c.NonCausal = !causal
	}
	n, err := r.f.Uint64("tokenizer.ggml.token_type_count")
	switch {
	case errors.Is(err, gguf.ErrNotFound):
		n = 0
	case err != nil:
		return fmt.Errorf("model: tokenizer.ggml.token_type_count: %w", err)
	}
	if n == 0 || n > 1<<16 {
		return fmt.Errorf("model: tokenizer.ggml.token_type_count = %d: a %s model needs a token type count in [1, 65536]", n, c.Arch)
	}
	c.NTokTypes = int(n)
	return r.readClsOut(c)
}

// readClsOut sets the classifier's output count: the length of
// classifier.output_labels, 1 without it (llama.cpp's n_cls_out).
func (r Reader) readClsOut(c *Config) error {
	c.NClsOut = 1
	if v, ok := r.f.Get(r.Key("classifier.output_labels")); ok {
		if l := v.Len(); l > 0 {
			if l > 1<<16 {
				return fmt.Errorf("model: %s has %d labels: at most 65536", r.Key("classifier.output_labels"), l)
			}
			c.NClsOut = l
		}
	}
	return nil
}
