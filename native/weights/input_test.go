package weights

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/native/internal/testgguf"
)

// TestInputGroupRowOnly: the llama graph declares an "input" group holding
// the embedding table but only reads it by rows. Budget mode must neither
// require a budget that fits it nor stream it every pass.
func TestInputGroupRowOnly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.gguf")
	ts := []testgguf.Tensor{
		{Name: "token_embd.weight", Type: ggml.Q8_0, Dims: []uint64{256, 4096}}, // 1.06 MiB
		{Name: "blk.0.w", Type: ggml.Q4_0, Dims: []uint64{256, 1024}},           // 144 KiB
		{Name: "blk.1.w", Type: ggml.Q4_0, Dims: []uint64{256, 1024}},
		{Name: "output.weight", Type: ggml.Q4_0, Dims: []uint64{256, 1024}},
	}
	infos, _, err := testgguf.Write(p, ts)
	if err != nil {
		t.Fatal(err)
	}
	plan := model.Plan{Groups: []model.Group{
		{Name: "input", Tensors: []string{"token_embd.weight"}},
		{Name: "blk.0", Tensors: []string{"blk.0.w"}},
		{Name: "blk.1", Tensors: []string{"blk.1.w"}},
		{Name: "output", Tensors: []string{"output.weight"}},
	}}
	md, err := Open(context.Background(), p, Options{Mode: Budget, Budget: 300 << 10}) // two layer groups
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()
	w := md.Weights()
	if err := w.Declare(plan); err != nil {
		t.Fatalf("Declare with a budget below the row-only input group: %v", err)
	}
	const passes = 4
	rs := infos[0].Size / 4096
	for range passes {
		if err := w.Row(context.Background(), "token_embd.weight", 17, make([]byte, rs)); err != nil {
			t.Fatal(err)
		}
		for g := 1; g < len(plan.Groups); g++ {
			if _, err := w.Acquire(context.Background(), g); err != nil {
				t.Fatal(err)
			}
			w.Release(g)
		}
	}
	s := md.Stats()
	layer := int64(infos[1].Size)
	// Three streamed groups per pass; the loader may have run ahead into the
	// next pass by up to the look-ahead, never into the input group.
	if s.BytesMoved < passes*3*layer || s.BytesMoved > (passes*3+int64(s.Depth)+1)*layer {
		t.Errorf("moved %d bytes, want about %d (input group streamed?)", s.BytesMoved, passes*3*layer)
	}
	if _, err := w.Acquire(context.Background(), 0); err == nil {
		t.Error("acquiring the input group larger than the budget: no error")
	}
}
