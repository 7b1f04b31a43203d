package arch

// gemma3 (text): gemma2's blocks without the attention soft-cap, plus
// per-head q/k RMSNorm before RoPE. When attention.sliding_window is set,
// five of every six layers slide (sliding_window_pattern, default 6) and
// use their own RoPE base (rope.freq_base_swa, default 10000) with no
// scaling, while the global layers use rope.freq_base and the file's
// linear rope scaling. final_logit_softcapping applies only if present.
func init() {
	register(&Spec{
		Name:   "gemma3",
		Graph:  Graph{Rope: RopeNeoX, EmbedScale: true, ScaleQ: true, GeGLU: true},
		Global: []Tensor{tokEmbd, outNorm, output},
		Layer: []Tensor{attnNorm, attnQ, attnK, attnV, qNorm, kNorm, attnOut, postAttn, ffnNorm, ffnGate, ffnUp,
			ffnDown, postFFN, biasQ, biasK, biasV, attnQKV, biasQKV},
		Keys: []string{"final_logit_softcapping", "attention.sliding_window", "attention.sliding_window_pattern",
			"rope.freq_base_swa"},
		Read: func(r Reader, c *Config) (err error) {
			if c.SlidingWindow, err = r.OptCount("attention.sliding_window", 0); err != nil {
				return err
			}
			if c.SlidingWindow > 0 {
				if c.SWAPattern, err = r.OptCount("attention.sliding_window_pattern", 6); err != nil {
					return err
				}
				if c.RopeBaseSWA, err = r.OptFloat("rope.freq_base_swa", 10000); err != nil {
					return err
				}
				c.RopeScaleSWA = 1
			}
			if c.FinalSoftcap, err = r.softcap("final_logit_softcapping", 0); err != nil {
				return err
			}
			c.AttnScale = gemmaScale(c, 62)
			return nil
		},
	})
}
