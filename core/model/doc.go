// Package model runs the forward pass of a decoder-only transformer whose
// weights it never owns, so that one graph serves every way of holding a
// model: a buffer in the wasm sandbox and the tests, a mapped file, or a
// file streamed through a bounded cache larger than memory.
//
// That is why the package is shaped around the Weights contract
// (weights.go) rather than around tensors. A model is cut into Groups (the
// input group, one per layer, the output group), the unit in which weights
// are acquired, prefetched and evicted. New declares the Plan, the order
// in which one forward pass uses the groups, once; each pass then calls
// Acquire, computes, and calls Release for every group in that order, plus
// Row for the few embedding rows a token needs. A native Weights (see
// native/weights) uses the declared order to read ahead and drop behind;
// the graph only promises not to touch a group's bytes after Release. A
// memory fault while reading them (a mapped file truncated under us) comes
// back as an error wrapping ErrWeightsFault, not a crash (fault.go).
//
// The graph is not written per architecture. blocks.go holds the shared
// blocks (RMSNorm, attention with its options, gated feed-forward,
// post-norms, residual adds) and a layer is always the same sequence of
// them; an architecture only chooses options. core/arch resolves a file
// against its architecture's spec into a Config (graph options, present
// optional tensors) and a tensor table; buildPlan turns that table into
// the layer groups and the per-slot index the blocks read through (each
// tensor keeps its own type, as llama.cpp's quantization mixes vary it by
// layer and slot). Adding an architecture whose blocks exist is therefore
// a file in core/arch; a genuinely new block is a Config option and a
// branch in blocks.go, kept bit-identical for the existing architectures
// by the llama.cpp goldens (testdata/golden, golden_test.go).
//
// A Model owns its KV cache (kvcache.go) and all scratch, so a pass
// allocates nothing once warm; Forward runs one sequence, ForwardBatch
// several sequences with their own caches in one pass (batch.go, seq.go).
package model
