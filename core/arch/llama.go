package arch

// llama (and Llama 2/3.x, Mistral, TinyLlama, SmolLM ...): pre-norm blocks,
// adjacent-pair RoPE, SwiGLU. Llama 3.x RoPE scaling arrives as the
// rope_freqs tensor (frequency divisors the converter computed from the
// llama3 rope_scaling), which llama.cpp applies without a scaling type.
// A Mistral-style <arch>.attention.sliding_window is not applied, as
// llama.cpp's llama graph does not apply it.
func init() {
	register(&Spec{
		Name:   "llama",
		Global: []Tensor{tokEmbd, ropeFreqs, outNorm, output},
		Layer: []Tensor{attnNorm, attnQ, attnK, attnV, attnOut, ffnNorm, ffnGate, ffnUp, ffnDown,
			biasQ, biasK, biasV, biasOut, attnQKV, biasQKV},
	})
}
