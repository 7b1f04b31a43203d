package arch

// qwen2 (Qwen2, Qwen2.5): llama's blocks with NeoX RoPE and q/k/v biases
// (required here: every published qwen2 file has them).
func init() {
	register(&Spec{
		Name:   "qwen2",
		Graph:  Graph{Rope: RopeNeoX},
		Global: []Tensor{tokEmbd, outNorm, output, outputBias},
		Layer: []Tensor{attnNorm, attnQ, attnK, attnV, attnOut, ffnNorm, ffnGate, ffnUp, ffnDown,
			required(biasQ), required(biasK), required(biasV), attnQKV, biasQKV},
	})
}
