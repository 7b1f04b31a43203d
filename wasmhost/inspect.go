package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/memvanta/memvanta/native/regfile"
	"github.com/memvanta/memvanta/wasmhost/job"
)

// Inspect writes the inspect report of the GGUF file at path to stdout,
// parsing it inside the sandbox. The bytes are those job.Inspect writes
// natively. A defect of the file returns a *job.RemoteError whose text
// equals the native parser's error and which unwraps to a *gguf.Error; a
// sandbox cap returns an error wrapping ErrMemoryLimit, ErrTimeLimit or
// ErrOutputLimit.
func (h *Host) Inspect(ctx context.Context, path string, o job.InspectOptions, stdout io.Writer) error {
	f, size, err := regfile.Open(path) // never blocks on a FIFO
	if err != nil {
		return err
	}
	defer f.Close()
	return h.InspectReaderAt(ctx, f, size, o, stdout)
}

// InspectReaderAt is Inspect over size bytes of r, which the guest sees as
// its one read-only file.
func (h *Host) InspectReaderAt(ctx context.Context, r io.ReaderAt, size int64, o job.InspectOptions, stdout io.Writer) error {
	stderr, err := h.run(ctx, runSpec{args: o.Args("/" + guestFileName), file: r, size: size, stdout: stdout})
	var ee *exitError
	if errors.As(err, &ee) && ee.code == 1 {
		re, derr := job.DecodeError(stderr)
		if derr != nil {
			return fmt.Errorf("%w: %v; stderr: %s", ErrGuestCrash, derr, tail(stderr))
		}
		return re
	}
	return err
}

// Verify parses the file at path inside the sandbox and returns nil if it is
// a well-formed GGUF file, else the parse error or the cap it hit.
func (h *Host) Verify(ctx context.Context, path string) error {
	return h.Inspect(ctx, path, job.InspectOptions{VerifyOnly: true}, nil)
}

// Verify validates the GGUF file at path in a sandbox with the default caps
// and the on-disk compilation cache, for `generate`/`bench --verify` before
// any native mmap of an untrusted file. The error names the file.
func Verify(ctx context.Context, path string) error {
	h, err := New(ctx, Config{Guest: GuestInspect})
	if err != nil {
		return fmt.Errorf("starting the sandbox: %w", err)
	}
	defer h.Close(ctx)
	if err := h.Verify(ctx, path); err != nil {
		return fmt.Errorf("verifying %s in the sandbox: %w", path, err)
	}
	return nil
}
