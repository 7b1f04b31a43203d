package arch

import "fmt"

// gpt-oss (gpt-oss-20b, gpt-oss-120b; llama.cpp's LLM_ARCH_OPENAI_MOE):
//
//   - attention with q/k/v biases (optional, as llama.cpp's tensor table
//     has them) and a required output bias; NeoX RoPE over the whole head
//     (rope.dimension_count must be the head length: llama.cpp sizes the
//     projections by it), usually YaRN-scaled (rope.scaling.type yarn,
//     which the sliding layers use too: their freq_scale is the file's);
//     scores scaled by 1/sqrt(head length);
//   - attention sinks: attn_sinks.weight holds one logit per query head
//     that joins each softmax's denominator (and attends to nothing);
//   - a sliding window of attention.sliding_window positions (required,
//     > 0) on the layers llama.cpp's swa pattern picks: with
//     sliding_window_pattern (default 2) P, layer l slides iff
//     l % P < P-1, so with 2 the even layers slide and the odd ones see
//     the whole context; rope.freq_base_swa (default rope.freq_base) for
//     the sliding layers;
//   - the feed-forward input norm is named post_attention_norm.weight;
//   - a mixture of experts in every layer: router ffn_gate_inp plus its
//     bias; top expert_used_count of the raw logits, weighted by the
//     softmax over the chosen logits (llama.cpp's SOFTMAX_WEIGHT gating, no
//     renormalisation, no scale); each expert's gate and up projections
//     plus their biases (row e of the 2-D ffn_{gate,up}_exps.bias), the
//     clamped SwiGLU (Graph.SwiGLUOAI), the down projection plus its bias.
func init() {
	register(&Spec{
		Name:   "gpt-oss",
		Graph:  Graph{Rope: RopeNeoX, SwiGLUOAI: true},
		Global: []Tensor{tokEmbd, outNorm, output},
		Layer: []Tensor{attnNorm, attnQ, attnK, attnV, biasQ, biasK, biasV, attnQKV, biasQKV, attnOut, required(biasOut), attnSinks,
			ossFFNNorm, gateInp, gateInpB, gateExps, upExps, downExps, gateExpsB, upExpsB, downExpsB},
		Keys: []string{"expert_count", "expert_used_count", "expert_feed_forward_length", "attention.sliding_window",
			"attention.sliding_window_pattern", "rope.freq_base_swa"},
		Read: func(r Reader, c *Config) (err error) {
			if c.NRot != c.HeadDim {
				return fmt.Errorf("model: %s %d must equal the head length %d", r.Key("rope.dimension_count"), c.NRot, c.HeadDim)
			}
			if !r.Has("attention.sliding_window") {
				return fmt.Errorf("model: %s is missing (gpt-oss slides a window over alternate layers)", r.Key("attention.sliding_window"))
			}
			if c.SlidingWindow, err = r.OptCount("attention.sliding_window", 0); err != nil {
				return err
			}
			if c.SlidingWindow == 0 {
				return fmt.Errorf("model: %s = 0: a window of no positions would mask every score", r.Key("attention.sliding_window"))
			}
			if c.SWAPattern, err = r.OptCount("attention.sliding_window_pattern", 2); err != nil {
				return err
			}
			c.RopeScaleSWA = c.RopeFreqScale
			if c.RopeBaseSWA, err = r.OptFloat("rope.freq_base_swa", c.RopeBase); err != nil {
				return err
			}
			if !(c.RopeBaseSWA > 0) {
				return fmt.Errorf("model: %s = %v: must be > 0", r.Key("rope.freq_base_swa"), c.RopeBaseSWA)
			}
			c.ExpertGating, c.ExpertNorm = GatingSoftmaxWeight, false
			return r.readExperts(c, "expert_feed_forward_length")
		},
	})
}

// ossFFNNorm is gpt-oss's norm before the experts: llama.cpp names it
// post_attention_norm (it follows the attention's residual add), but it is
// the ordinary pre-FFN RMSNorm.
var ossFFNNorm = Tensor{Name: "post_attention_norm.weight", Slot: SlotFFNNorm, Dims: []Dim{Embd}, Kind: Vector}
