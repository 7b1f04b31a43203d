package arch

// phi3 (Phi-3, Phi-3.5, Phi-4-mini): fused attn_qkv (or separate q/k/v)
// and a fused ffn_up holding the gate rows then the up rows (SwiGLU over
// the two halves); NeoX RoPE over rope.dimension_count leading elements
// (partial rotary on Phi-4-mini); q scaled by 1/sqrt(head_dim). The
// 128k-context files carry LongRoPE: rope_factors_short/long.weight divide
// the frequencies (long when the context in use exceeds
// rope.scaling.original_context_length) and rope.scaling.attn_factor
// multiplies cos and sin. attention.sliding_window is read by llama.cpp but
// not applied ("Phi SWA is currently disabled"), so it is not applied here.
func init() {
	register(&Spec{
		Name:   "phi3",
		Graph:  Graph{Rope: RopeNeoX, ScaleQ: true},
		Global: []Tensor{tokEmbd, ropeLong, ropeShort, outNorm, output},
		Layer: []Tensor{attnNorm, attnQKV, biasQKV, attnQ, attnK, attnV, biasQ, biasK, biasV, attnOut, ffnNorm,
			{Name: ffnUp.Name, Slot: SlotUp, Dims: []Dim{Embd, FF2}, Kind: Matrix, Feature: FusedUp}, ffnDown},
		Keys: []string{"rope.scaling.attn_factor", "rope.scaling.original_context_length", "attention.sliding_window"},
		Read: func(r Reader, c *Config) error {
			c.AttnScale = invSqrt(c.HeadDim)
			return nil
		},
	})
}
