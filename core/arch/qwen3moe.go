package arch

import "fmt"

// qwen3moe (Qwen3-30B-A3B, Qwen3-235B-A22B): qwen3's attention (per-head
// q/k RMSNorm before NeoX RoPE, head length from attention.key_length) and
// a mixture-of-experts feed-forward in every layer: the router
// ffn_gate_inp's softmax over expert_count experts, the expert_used_count
// most probable run (SwiGLU, expert_feed_forward_length wide, default
// feed_forward_length / expert_used_count as llama.cpp), their outputs
// summed weighted by their probabilities renormalised to sum 1 (llama.cpp's
// qwen3moe graph passes norm_w = true and no scale).
func init() {
	register(&Spec{
		Name:   "qwen3moe",
		Graph:  Graph{Rope: RopeNeoX},
		Global: []Tensor{tokEmbd, outNorm, output},
		Layer: []Tensor{attnNorm, attnQ, attnK, attnV, qNorm, kNorm, attnOut, ffnNorm, gateInp, gateExps, upExps, downExps,
			biasQ, biasK, biasV, attnQKV, biasQKV},
		Keys: []string{"expert_count", "expert_used_count", "expert_feed_forward_length"},
		Read: func(r Reader, c *Config) error {
			if c.NRot != c.HeadDim { // llama.cpp asserts this
				return fmt.Errorf("model: %s %d must equal the head length %d", r.Key("rope.dimension_count"), c.NRot, c.HeadDim)
			}
			c.ExpertGating, c.ExpertNorm = GatingSoftmax, true
			return r.readExperts(c, "expert_feed_forward_length")
		},
	})
}
