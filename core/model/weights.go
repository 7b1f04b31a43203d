package model

import (
	"context"

	"github.com/memvanta/memvanta/core/gguf"
)

// Group is a set of tensors the forward pass uses together: the input group
// (token embedding), one transformer layer, or the output group (final norm
// and output projection). Groups are the unit of acquisition, prefetch and
// eviction.
type Group struct {
	Name    string   // "input", "blk.0", ..., "output"
	Tensors []string // tensor names, in the order Acquire returns their bytes
	// Experts names the layer's 3-D expert tensors, in the order
	// ffn_gate_exps, ffn_up_exps, ffn_down_exps (gate absent for
	// architectures without one). They are NOT in Tensors when the Weights
	// implements ExpertWeights: the graph then reads them one expert at a
	// time, so a budgeted store can cache experts individually. When the
	// Weights does not implement ExpertWeights they are appended to Tensors
	// as ordinary tensors and the graph slices experts out of them itself.
	Experts []string
	// NExpert is the number of experts in each Experts tensor (ne[2]).
	NExpert int
}

// Plan is the declared access order of one forward pass: Groups are used in
// index order, and the whole sequence repeats for every token (or batch).
type Plan struct {
	Groups []Group
}

// Weights is the only way the graph reaches weight bytes. The graph declares
// its plan once, then for each group in order calls Acquire, computes, and
// calls Release. Between Acquire and Release the returned slices stay valid
// and unchanged; after Release the graph must not touch them. A native
// implementation may map, stream, prefetch and evict behind this interface;
// the in-memory one (wasm, tests) just slices a buffer.
type Weights interface {
	// Info describes a tensor without touching its data.
	Info(name string) (gguf.TensorInfo, bool)
	// Declare fixes the access plan; it is called once before the first Acquire.
	Declare(p Plan) error
	// Acquire blocks until every tensor of Groups[g] is readable and returns
	// their bytes in the group's tensor order.
	Acquire(ctx context.Context, g int) ([][]byte, error)
	// Release ends the graph's use of Groups[g] until its next Acquire.
	Release(g int)
	// Row copies row r of the named tensor into dst (len = row size) without
	// acquiring the whole tensor: the embedding lookup reads a few rows of a
	// large table per token.
	Row(ctx context.Context, name string, r int, dst []byte) error
}

// ExpertWeights is implemented by Weights that serve experts one at a time.
// An expert e of a 3-D tensor with dims [ne0, ne1, NExpert] is the
// contiguous byte range [e*S, (e+1)*S), S = ne1 * rowSize(type, ne0): one
// ordinary ne1 x ne0 matrix of the tensor's type.
//
// Order of calls the graph makes per MoE layer g, per forward batch:
// Acquire(ctx, g) (the dense tensors, the router among them); attention,
// then the router's top-k per token; WillNeedExperts(g, ids) with the
// distinct experts the batch selected, in first-use order; for each of
// them in that order AcquireExpert, multiply, ReleaseExpert (expert i+1
// may be acquired before expert i is released); Release(g).
type ExpertWeights interface {
	Weights
	// WillNeedExperts says the graph will soon acquire experts ids of group
	// g (the router has chosen them): a store may start reading them all at
	// once. It never blocks and may be ignored. ids is the graph's buffer,
	// valid only during the call (copy it to keep it).
	WillNeedExperts(g int, ids []int)
	// AcquireExpert blocks until expert e of every tensor in
	// Groups[g].Experts is readable and returns each tensor's expert slice,
	// in Experts order. The slices stay valid and unchanged until
	// ReleaseExpert(g, e). Group g itself may or may not be held. The same
	// (g, e) may be acquired again before release (counted pins).
	AcquireExpert(ctx context.Context, g, e int) ([][]byte, error)
	// ReleaseExpert ends one AcquireExpert's hold on expert e of group g.
	ReleaseExpert(g, e int)
}
