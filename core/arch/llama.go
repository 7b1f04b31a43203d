package arch

// llama (and Llama 2/3.x, Mistral, TinyLlama, SmolLM ...): pre-norm blocks,
// adjacent-pair RoPE, SwiGLU. Llama 3.x RoPE scaling arrives as the
// rope_freqs tensor (frequency divisors the converter computed from the
// llama3 rope_scaling), which llama.cpp applies without a scaling type.
// A Mistral-style <arch>.attention.sliding_window is not applied, as
// llama.cpp's llama graph does not apply it.
//
// Mixtral is llama with experts: when llama.expert_count is set, every
// layer's feed-forward is a router ffn_gate_inp over expert_count SwiGLU
// experts (ffn_{gate,up,down}_exps, each feed_forward_length wide), of
// which expert_used_count run per token, weighted by the softmax of the
// router logits renormalised over the chosen ones (llama.cpp's llama graph
// calls build_moe_ffn with softmax gating and norm_w).
func init() {
	register(&Spec{
		Name:   "llama",
		Global: []Tensor{tokEmbd, ropeFreqs, outNorm, output},
		Layer: []Tensor{attnNorm, attnQ, attnK, attnV, attnOut, ffnNorm,
			unless(ffnGate, MoE), unless(ffnUp, MoE), unless(ffnDown, MoE),
			optional(gateInp), optional(gateExps), optional(upExps), optional(downExps),
			biasQ, biasK, biasV, biasOut, attnQKV, biasQKV},
		Keys: []string{"expert_count", "expert_used_count"},
		Read: func(r Reader, c *Config) error {
			if err := r.readExperts(c, ""); err != nil {
				return err
			}
			c.ExpertNorm = c.NExpert > 0
			return nil
		},
	})
}
