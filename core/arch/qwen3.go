package arch

import "fmt"

// qwen3 (Qwen3 dense): qwen2 without biases, plus an RMSNorm over each
// q and k head (attn_q_norm/attn_k_norm, head_dim weights) before RoPE.
// The head length comes from attention.key_length (128 for every size),
// so q is wider than n_embd on the small models. Qwen3-Reranker files add
// cls.output.weight (the lm_head rows of its answer tokens, one per
// classifier.output_labels entry): rank pooling projects the last token's
// normed state onto it and takes the softmax (llama.cpp's build_pooling).
func init() {
	register(&Spec{
		Name:   "qwen3",
		Graph:  Graph{Rope: RopeNeoX},
		Global: []Tensor{tokEmbd, outNorm, output, clsOut},
		Layer: []Tensor{attnNorm, attnQ, attnK, attnV, qNorm, kNorm, attnOut, ffnNorm, ffnGate, ffnUp, ffnDown,
			biasQ, biasK, biasV, attnQKV, biasQKV},
		Keys: []string{"pooling_type", "classifier.output_labels"},
		Read: func(r Reader, c *Config) error {
			if c.NRot != c.HeadDim { // llama.cpp asserts this
				return fmt.Errorf("model: %s %d must equal the head length %d", r.Key("rope.dimension_count"), c.NRot, c.HeadDim)
			}
			return r.readClsOut(c)
		},
	})
}
