package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/inspect"
	"github.com/memvanta/memvanta/native/regfile"
	"github.com/memvanta/memvanta/native/weights"
	"github.com/memvanta/memvanta/wasmhost"
	"github.com/memvanta/memvanta/wasmhost/job"
)

// runInspect summarises a GGUF file. By default the file is parsed inside
// the wasm sandbox (wasmhost), since inspect is what one runs on a file of
// unknown origin; --no-sandbox runs the same code natively. Both paths call
// job.Inspect, so their output is byte-identical. On a malformed file stdout
// stays empty, the precise error goes to stderr (as JSON with --json) and
// the exit status is 1.
func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("inspect",
		"inspect [--json] [--full] [--tensors] [--no-sandbox] [--mem-limit SIZE] [--timeout D] FILE\n"+
			"       memvanta inspect [--json] [--full] [--no-sandbox] [--mem-limit SIZE] [--timeout D] [-j N] FILE... | DIR",
		"Summarises a GGUF file from its header and tensor table, parsed inside the wasm sandbox\n"+
			"(memory and time capped) unless --no-sandbox. Several files or a directory (searched\n"+
			"recursively) are a batch: each file is inspected in a fresh sandbox instance, -j at a\n"+
			"time, with one line per file (JSON lines with --json) and a summary.")
	var o job.InspectOptions
	var noSandbox bool
	var memLimit string
	var timeout time.Duration
	var jobs int
	c.group("Output")
	c.boolVar(&o.JSON, "json", "print the documented JSON schema (memvanta.inspect/v1)")
	c.boolVar(&o.Full, "full", "JSON: print arrays in full instead of length and head")
	c.boolVar(&o.Tensors, "tensors", "text: list every tensor")
	c.group("Sandbox")
	c.boolVar(&noSandbox, "no-sandbox", "parse natively instead of in the wasm sandbox (trusted files only)")
	c.stringVar(&memLimit, "mem-limit", "SIZE", "256MiB", "sandbox memory cap, e.g. 512MiB")
	c.durationVar(&timeout, "timeout", "D", wasmhost.DefaultTimeout, "sandbox wall-time cap (per file)")
	c.intVar(&jobs, "j|jobs", "N", runtime.GOMAXPROCS(0), "batch: files inspected in parallel")
	var files []string
	for {
		if done, status := c.parse(args, stdout, stderr, true); done {
			return status
		}
		if c.fs.NArg() == 0 {
			break
		}
		// Flags may follow the file name.
		files = append(files, c.fs.Arg(0))
		args = c.fs.Args()[1:]
	}
	if len(files) == 0 {
		return c.usageErr(stderr, "want a FILE (or several, or a DIR)")
	}
	mem, err := weights.ParseSize(memLimit)
	if err != nil || mem <= 0 || mem > 4<<30 {
		return c.usageErr(stderr, "--mem-limit %q: want a size in (0, 4GiB] (wasm32 memory), such as 256MiB", memLimit)
	}
	if timeout <= 0 {
		return c.usageErr(stderr, "--timeout %v: must be positive", timeout)
	}
	if jobs < 1 || jobs > 256 {
		return c.usageErr(stderr, "-j %d: must be in [1, 256]", jobs)
	}
	if len(files) > 1 || isDir(files[0]) {
		if o.Tensors {
			return c.usageErr(stderr, "--tensors applies to one FILE, not a batch")
		}
		b := batch{json: o.JSON, full: o.Full, native: noSandbox, mem: mem, timeout: timeout, jobs: jobs}
		return b.run(ctx, files, stdout, stderr)
	}
	path := files[0]
	o.Name = filepath.Base(path)

	if noSandbox {
		err = inspectNative(path, o, stdout)
	} else {
		err = inspectSandboxed(ctx, path, o, mem, timeout, stdout)
	}
	if err == nil {
		return exitOK
	}
	reportInspectError(stderr, path, o.JSON, err)
	return exitRuntime
}

// openRegular opens path for reading and returns its size; anything but a
// regular file is refused before it is opened (a FIFO would block open(2)
// where Ctrl-C cannot reach it, and has no stable size to parse).
func openRegular(path string) (*os.File, int64, error) { return regfile.Open(path) }

func inspectNative(path string, o job.InspectOptions, stdout io.Writer) error {
	f, size, err := openRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return job.Inspect(stdout, f, size, o)
}

// hugeHeap covers what a sandboxed inspect allocates on the host heap
// (~10 MiB, most of it wazero decoding and validating the guest) with room.
const hugeHeap = 24 << 20

// inspectSandboxed opens the file before starting the sandbox, so a wrong
// path costs no guest start-up.
func inspectSandboxed(ctx context.Context, path string, o job.InspectOptions, mem int64, timeout time.Duration, stdout io.Writer) error {
	f, size, err := openRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// This process does little but start the sandbox once: let the heap
	// that wazero's decoder fills come in huge pages (see HugePageHeap).
	wasmhost.HugePageHeap(hugeHeap)
	h, err := startSandbox(ctx, mem, timeout)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	return h.InspectReaderAt(ctx, f, size, o, stdout)
}

// startSandbox compiles (or loads from the disk cache) the inspect guest
// with the given caps.
func startSandbox(ctx context.Context, mem int64, timeout time.Duration) (*wasmhost.Host, error) {
	cfg := wasmhost.Config{MemoryLimit: mem, Timeout: timeout, Guest: wasmhost.GuestInspect}
	h, err := wasmhost.New(ctx, cfg)
	if err != nil && !errors.Is(err, wasmhost.ErrMemoryLimit) {
		// An unusable cache directory (read-only home, full disk) must not
		// stop inspect: compile in memory instead.
		cfg.NoDiskCache = true
		h, err = wasmhost.New(ctx, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("starting the sandbox: %w", err)
	}
	return h, nil
}

// reportInspectError prints a parse failure exactly as the native parser
// phrased it (the sandbox reconstructs it), and names the cap and its flag
// when the sandbox stopped the guest.
func reportInspectError(stderr io.Writer, path string, asJSON bool, err error) {
	var ge *gguf.Error
	if errors.As(err, &ge) {
		if asJSON {
			stderr.Write(inspect.ErrorJSON(err))
			return
		}
		fmt.Fprintf(stderr, "memvanta inspect: %s: %s", path, inspect.ErrorText(err))
		return
	}
	hint := capHint(err)
	if asJSON {
		stderr.Write(inspect.ErrorJSON(fmt.Errorf("%s: %w%s", path, err, hint)))
		return
	}
	fmt.Fprintf(stderr, "memvanta inspect: %s: %v%s\n", path, err, hint)
}

// capHint names the flag that raises the sandbox cap err hit, if any.
func capHint(err error) string {
	switch {
	case errors.Is(err, wasmhost.ErrMemoryLimit):
		return " (raise it with --mem-limit)"
	case errors.Is(err, wasmhost.ErrTimeLimit):
		return " (raise it with --timeout)"
	case errors.Is(err, wasmhost.ErrOutputLimit):
		return " (the report is too large for the sandbox)"
	}
	return ""
}
