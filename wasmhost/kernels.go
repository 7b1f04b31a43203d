package wasmhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/memvanta/memvanta/native/regfile"
	"github.com/memvanta/memvanta/wasmhost/forwardjob"
	"github.com/memvanta/memvanta/wasmhost/job"
	"github.com/memvanta/memvanta/wasmhost/kvec"
)

// Kernels runs a batch of kernel test vectors inside the sandbox, on the
// portable scalar kernels compiled to wasm, and returns one result per case.
// Differential tests compare these against the native SIMD path.
func (h *Host) Kernels(ctx context.Context, cases []kvec.Case) ([]kvec.Result, error) {
	if err := h.needFull("kernels"); err != nil {
		return nil, err
	}
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

// Forward runs a greedy pass of the model in the file at path inside the
// sandbox on the scalar kernels (see job.Forward); the guest holds the whole
// model in its memory, so the memory cap must fit it.
func (h *Host) Forward(ctx context.Context, path string, o forwardjob.ForwardOptions) ([]forwardjob.Step, error) {
	if err := h.needFull("forward"); err != nil {
		return nil, err
	}
	f, size, err := regfile.Open(path) // never blocks on a FIFO
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out bytes.Buffer
	stderr, err := h.run(ctx, runSpec{args: o.Args("/" + guestFileName), file: f, size: size, stdout: &out})
	var ee *exitError
	if errors.As(err, &ee) && ee.code == 1 {
		if re, derr := job.DecodeError(stderr); derr == nil {
			return nil, fmt.Errorf("sandboxed forward: %w", re)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sandboxed forward: %w", err)
	}
	return forwardjob.DecodeForward(out.Bytes())
}

// needFull refuses a job the inspect-only guest does not link, before any
// guest start.
func (h *Host) needFull(job string) error {
	if h.cfg.Guest != GuestFull {
		return fmt.Errorf("sandboxed %s: the %v guest has no %s job; use GuestFull", job, h.cfg.Guest, job)
	}
	return nil
}
