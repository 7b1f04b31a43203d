package model

import (
	"context"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
)

// TestGenerationAllocs: once warmed up, the graph's own code allocates
// nothing per generation step (one token through the fused dispatches and
// attention), so token rate does not depend on the garbage collector. With
// one thread the pool runs work inline; what remains is one closure per
// kernels.MatVec call (attention output and down per layer, and the output
// projection), which belongs to the kernels package.
func TestGenerationAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := defTiny()
	c.typ = ggml.Q8_0
	c.embd, c.ff, c.rot = 128, 128, 32
	m := c.open(t, Options{Threads: 1, Batch: 8, KVType: ggml.F16, Ctx: 256})
	ctx := context.Background()
	if _, err := m.Forward(ctx, testTokens); err != nil {
		t.Fatal(err)
	}
	tok := []int32{3}
	for i := 0; i < 4; i++ { // grow scratch to its steady size
		if _, err := m.Forward(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := m.Forward(ctx, tok); err != nil {
			t.Fatal(err)
		}
	})
	if limit := float64(2*c.layers + 1); allocs > limit {
		t.Fatalf("a generation step allocates %v times, want at most %v (kernels.MatVec's)", allocs, limit)
	}
}
