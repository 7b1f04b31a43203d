package arch

// gemma2: embeddings × sqrt(n_embd); q scaled by 1/sqrt(head_dim) (by
// 1/sqrt(n_embd/n_head) for the 46-layer 27B, as llama.cpp decides by layer
// count); attention scores soft-capped (attn_logit_softcapping, default 50)
// and a sliding window (default 4096) on every other layer starting with
// layer 0 (sliding_window_pattern, default 2); RMSNorm of the attention and
// FFN outputs before each residual add; GeGLU; final logits soft-capped
// (final_logit_softcapping, default 30); output tied to token_embd (llama.cpp
// ignores an output.weight).
func init() {
	register(&Spec{
		Name:   "gemma2",
		Graph:  Graph{Rope: RopeNeoX, EmbedScale: true, ScaleQ: true, GeGLU: true},
		Global: []Tensor{tokEmbd, outNorm},
		Layer: []Tensor{attnNorm, attnQ, attnK, attnV, attnOut, postAttn, ffnNorm, ffnGate, ffnUp, ffnDown, postFFN,
			biasQ, biasK, biasV, attnQKV, biasQKV},
		Keys: []string{"attn_logit_softcapping", "final_logit_softcapping", "attention.sliding_window",
			"attention.sliding_window_pattern", "rope.freq_base_swa"},
		Read: func(r Reader, c *Config) (err error) {
			if c.SlidingWindow, err = r.OptCount("attention.sliding_window", 4096); err != nil {
				return err
			}
			if c.SWAPattern, err = r.OptCount("attention.sliding_window_pattern", 2); err != nil {
				return err
			}
			c.RopeScaleSWA = c.RopeFreqScale
			if c.RopeBaseSWA, err = r.OptFloat("rope.freq_base_swa", c.RopeBase); err != nil {
				return err
			}
			if c.AttnSoftcap, err = r.softcap("attn_logit_softcapping", 50); err != nil {
				return err
			}
			if c.FinalSoftcap, err = r.softcap("final_logit_softcapping", 30); err != nil {
				return err
			}
			c.AttnScale = gemmaScale(c, 46)
			return nil
		},
	})
}

// gemmaScale is gemma's query scale: 1/sqrt(n_embd/n_head) for the 27B
// (recognised, as llama.cpp does, by its layer count), else 1/sqrt(head_dim).
func gemmaScale(c *Config, layers27B int) float32 {
	if c.NLayer == layers27B {
		return invSqrt(c.NEmbd / c.NHead)
	}
	return invSqrt(c.HeadDim)
}
