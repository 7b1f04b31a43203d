// Package archfixtures is the one table of test architectures: core/synth's
// options for every architecture core/arch registers, each with the options
// that architecture has turned on so that a graph ignoring one of them
// changes the logits (a sliding window of 8, an attention soft-cap of 1,
// llama3 factors over the short context, LongRoPE's long factors and
// attention factor, a head length decoupled from n_embd ...).
//
// Three kinds of test range over the same rows, each on its own model
// shape: core/arch's (Load reads back what core/synth wrote), core/model's
// (graph properties that must hold on every architecture: batch
// invariance, allocation-free generation, ForwardBatch) and the llama.cpp
// golden recorder (internal/cmd/refgolden, testdata/golden/arch-*.json,
// replayed by core/model's TestArchGoldens). So an architecture is added as
// its file in core/arch and a row here; core/arch's tests fail while a
// registered architecture has no row.
package archfixtures

import (
	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/synth"
)

// Fixture is one test architecture.
type Fixture struct {
	// Label names the fixture in test output and its goldens
	// (arch-LABEL-TYPE.json, quant-arch-LABEL-Q4_K_M.json).
	Label string
	// Arch is core/synth's architecture and options. Name "" is llama (the
	// recorded goldens spell it so; see Name).
	Arch synth.Arch
	// KVHeads and RopeBase belong to the golden shape (refgolden's
	// ArchShape: 256 wide, 8 heads); the other tests keep their own.
	KVHeads  int
	RopeBase float32
	// Golden: llama.cpp's greedy runs on this fixture are recorded in
	// testdata/golden. qwen2's are recorded instead on an unstructured
	// random model (random-qwen2.json, internal/golden.Random), so its row
	// here serves the arch and model tests only.
	Golden bool
}

// Encoder reports whether the fixture is an encoder (bert, nomic-bert),
// which the decoding tests (logits, generation) do not apply to.
func (f Fixture) Encoder() bool {
	s, ok := arch.Lookup(f.Name())
	return ok && s.Graph.Encoder
}

// Name is the fixture's general.architecture.
func (f Fixture) Name() string {
	if f.Arch.Name == "" || f.Arch.Name == synth.Mixtral {
		return "llama"
	}
	return f.Arch.Name
}

// All returns the fixtures, a fresh slice each call. The golden recorder
// seeds each golden model by its fixture's index (100+10·index for
// arch-*.json, 200+index for quant-arch-*.json), so new rows go at the end:
// a row inserted earlier changes the models behind the recorded goldens
// (which core/model's TestArchGoldens reports by their sha256).
func All() []Fixture {
	return []Fixture{
		{"qwen3", synth.Arch{Name: "qwen3", HeadDim: 64}, 2, 1e6, true},
		{"gemma2", synth.Arch{Name: "gemma2", HeadDim: 64, Window: 8, AttnSoftcap: 1}, 4, 10000, true},
		{"gemma3", synth.Arch{Name: "gemma3", HeadDim: 64, Window: 8, WindowPattern: 3, RopeBaseSWA: 10000, RopeScale: 8}, 4, 1e6, true},
		{"phi3", synth.Arch{Name: "phi3", Rot: 24, OrigCtx: 128}, 4, 10000, true},
		{"phi3-short", synth.Arch{Name: "phi3", OrigCtx: 512}, 8, 10000, true},
		{"llama3", synth.Arch{RopeFreqs: true}, 4, 500000, true},
		{"llama-fused", synth.Arch{FusedQKV: true, Bias: true}, 4, 10000, true},
		{"qwen2", synth.Arch{Name: "qwen2"}, 2, 1e6, false},
		// Mixtures of experts: experts narrow enough that each layer of a
		// batch uses most of them, rows of 256 so llama.cpp's Q4_K_M
		// quantizes every expert tensor to a K-quant.
		{"qwen3moe", synth.Arch{Name: "qwen3moe", HeadDim: 64, Experts: 16, ExpertsUsed: 4, FFExp: 256}, 2, 1e6, true},
		{"mixtral", synth.Arch{Name: synth.Mixtral, Experts: 8, ExpertsUsed: 2, FFExp: 256}, 2, 1e6, true},
		{"qwen2moe", synth.Arch{Name: "qwen2moe", Experts: 8, ExpertsUsed: 2, FFExp: 256}, 8, 1e6, true},
		// gpt-oss: its attention (sinks, q/k/v and output biases, a
		// window of 8 on the even layers, YaRN over an original context of
		// 128) and its experts (biases large enough that the clamped
		// SwiGLU clips, softmax over the chosen logits), 4 of 16 as
		// gpt-oss-20b's 4 of 32 (with 2 of 8 each routing near-tie swaps
		// half a token's expert output, which Q8_0's rounding then decides;
		// and the 0.38 router model, whose popularity keeps routing
		// decisive: see core/synth/moe.go);
		// rows of 256 so MXFP4_MOE and Q4_K_M quantize every expert tensor.
		{"gpt-oss", synth.Arch{Name: synth.GPTOSS, HeadDim: 64, Window: 8, Bias: true, RopeScale: 4, YaRN: true, OrigCtx: 128,
			Experts: 16, ExpertsUsed: 4, FFExp: 256, RouterReuse: 0.38}, 2, 150000, true},
		// Encoders: every bias and the classifier head (bert), a fused
		// attn_qkv with RoPE (nomic-bert). They compute no logits, so the
		// greedy goldens and the decoding tests pass them by (Encoder);
		// their goldens are llama.cpp's pooled embeddings
		// (scripts/embed-golden.sh, testdata/golden/embed-*.json).
		{"bert", synth.Arch{Name: "bert", Bias: true, Classifier: true, Pooling: "cls"}, 4, 10000, false},
		{"nomic-bert", synth.Arch{Name: "nomic-bert", FusedQKV: true, Pooling: "mean"}, 4, 1000, false},
	}
}
