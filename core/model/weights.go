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
