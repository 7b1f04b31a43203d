package arch

import "fmt"

// qwen2moe (Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B): qwen2's attention (NeoX
// RoPE, q/k/v biases, q as wide as n_embd) and in every layer a mixture of
// experts plus a shared expert: the routed experts' outputs weighted by
// their softmax probabilities as they are (llama.cpp's qwen2moe graph
// passes norm_w = false), plus the shared SwiGLU expert
// (expert_shared_feed_forward_length wide, default feed_forward_length)
// scaled by sigmoid(ffn_gate_inp_shexp · x).
func init() {
	register(&Spec{
		Name:   "qwen2moe",
		Graph:  Graph{Rope: RopeNeoX},
		Global: []Tensor{tokEmbd, outNorm, output},
		Layer: []Tensor{attnNorm, attnQ, attnK, attnV, attnOut, ffnNorm, gateInp, gateExps, upExps, downExps,
			gateInpSh, gateSh, upSh, downSh, required(biasQ), required(biasK), required(biasV), attnQKV, biasQKV},
		Keys: []string{"expert_count", "expert_used_count", "expert_feed_forward_length", "expert_shared_feed_forward_length"},
		Read: func(r Reader, c *Config) (err error) {
			if c.NRot != c.HeadDim {
				return fmt.Errorf("model: %s %d must equal the head length %d", r.Key("rope.dimension_count"), c.NRot, c.HeadDim)
			}
			if c.QDim() != c.NEmbd { // llama.cpp's tensor table has attn_q and attn_output n_embd wide
				return fmt.Errorf("model: %s's query width %d (heads x %s) must be %s %d", c.Arch, c.QDim(),
					r.Key("attention.key_length"), r.Key("embedding_length"), c.NEmbd)
			}
			c.ExpertGating, c.ExpertNorm = GatingSoftmax, false
			if err := r.readExperts(c, "expert_feed_forward_length"); err != nil {
				return err
			}
			c.NFFShexp, err = r.OptInt("expert_shared_feed_forward_length", c.NFF)
			return err
		},
	})
}
