package wasmhost

import (
	"bytes"
	"context"
	"fmt"

	"github.com/memvanta/memvanta/wasmhost/kvec"
)

// Kernels runs a batch of kernel test vectors inside the sandbox, on the
// portable scalar kernels compiled to wasm, and returns one result per case.
// Differential tests compare these against the native SIMD path.
func (h *Host) Kernels(ctx context.Context, cases []kvec.Case) ([]kvec.Result, error) {
	var out bytes.Buffer
	_, err := h.run(ctx, runSpec{
		args:   []string{"kernels"},
		stdin:  bytes.NewReader(kvec.EncodeCases(cases)),
		stdout: &out,
	})
	if err != nil {
		return nil, fmt.Errorf("sandboxed kernels: %w", err)
	}
	rs, err := kvec.DecodeResults(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("sandboxed kernels: %w", err)
	}
	if len(rs) != len(cases) {
		return nil, fmt.Errorf("sandboxed kernels: %d results for %d cases", len(rs), len(cases))
	}
	return rs, nil
}
