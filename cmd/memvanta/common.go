package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/kernels"
	mvrt "github.com/memvanta/memvanta/native/runtime"
	"github.com/memvanta/memvanta/wasmhost"
)

// modelFlags are the flags generate and bench share: which model, how it is
// held in memory, and how it runs.
type modelFlags struct {
	path      string
	threads   int
	ctx       int
	batch     int
	kv        string
	mem       string
	memBudget string
	memStream string
	keepCache bool
	verify    bool
}

func (mf *modelFlags) register(fs *flag.FlagSet, defaultCtx int) {
	fs.StringVar(&mf.path, "m", "", "GGUF model `file` (required)")
	fs.IntVar(&mf.threads, "t", min(2, runtime.NumCPU()), "worker `threads`")
	fs.IntVar(&mf.ctx, "c", defaultCtx, "context `size` in tokens (0 = the model's training context)")
	fs.IntVar(&mf.batch, "b", 32, "prompt batch `size` (tokens per matrix multiply)")
	fs.StringVar(&mf.kv, "kv", "f16", "KV cache `type`: f32, f16 or q8_0")
	fs.StringVar(&mf.mem, "mem", "resident", "weight memory `mode`: resident (map the whole file) or budget (stream within --mem-budget)")
	fs.StringVar(&mf.memBudget, "mem-budget", "", "weight cache `size` for --mem budget, e.g. 512MiB (implies --mem budget)")
	fs.StringVar(&mf.memStream, "mem-stream", "", "how --mem budget streams weights: map (default: populate the file mapping ahead, drop it behind) or copy (pread into cache buffers)")
	fs.BoolVar(&mf.keepCache, "keep-page-cache", false, "never re-read parts of the model file that the page cache holds in small (4 KiB) folios into 2 MiB folios (mapped modes do by default: it makes the mapping much cheaper to touch)")
	fs.BoolVar(&mf.verify, "verify", false, "validate the file in the wasm sandbox before mapping it natively (for untrusted files)")
}

func (mf *modelFlags) validate() error {
	if mf.path == "" {
		return errors.New("-m MODEL is required")
	}
	if mf.threads < 1 || mf.threads > 1024 {
		return fmt.Errorf("-t %d: must be in [1, 1024]", mf.threads)
	}
	if mf.ctx < 0 {
		return fmt.Errorf("-c %d: must be >= 0", mf.ctx)
	}
	if mf.batch < 1 || mf.batch > 4096 {
		return fmt.Errorf("-b %d: must be in [1, 4096]", mf.batch)
	}
	if _, err := parseKV(mf.kv); err != nil {
		return err
	}
	if mf.memBudget != "" && mf.mem == "resident" {
		mf.mem = "budget"
	}
	switch mf.mem {
	case "resident":
	case "budget":
		if mf.memBudget == "" {
			return errors.New("--mem budget needs --mem-budget SIZE")
		}
	default:
		return fmt.Errorf("--mem %q: must be resident or budget", mf.mem)
	}
	if mf.memStream != "" && mf.mem != "budget" {
		return errors.New("--mem-stream applies to --mem budget only")
	}
	return nil
}

func parseKV(s string) (ggml.Type, error) {
	switch strings.ToLower(s) {
	case "f32":
		return ggml.F32, nil
	case "f16":
		return ggml.F16, nil
	case "q8_0":
		return ggml.Q8_0, nil
	}
	return 0, fmt.Errorf("--kv %q: must be f32, f16 or q8_0", s)
}

// loaded is an opened model ready to run.
type loaded struct {
	rt  *mvrt.Model
	cfg model.Config
	m   *model.Model
}

func (l *loaded) Close() {
	if l.m != nil {
		l.m.Close()
	}
	if l.rt != nil {
		l.rt.Close()
	}
}

// openModel maps the file through the native runtime (never copying the
// whole model into the heap), reads its configuration and builds the graph.
func openModel(ctx context.Context, mf *modelFlags) (*loaded, error) {
	if _, err := os.Stat(mf.path); err != nil {
		return nil, err
	}
	// Choose the kernel path before touching the file, so a bad
	// MEMVANTA_KERNELS fails loudly instead of silently falling back.
	k, err := kernels.Selected()
	if err != nil {
		return nil, err
	}
	if mf.verify {
		if err := wasmhost.Verify(ctx, mf.path); err != nil {
			return nil, err
		}
	}
	opt := mvrt.Options{Mode: mf.mem, KeepPageCache: mf.keepCache}
	if mf.mem == "budget" {
		b, err := mvrt.ParseSize(mf.memBudget)
		if err != nil {
			return nil, fmt.Errorf("--mem-budget %q: %w", mf.memBudget, err)
		}
		opt.Budget = b
		opt.Stream = mf.memStream
	}
	rt, err := mvrt.Open(ctx, mf.path, opt)
	if err != nil {
		return nil, err
	}
	l := &loaded{rt: rt}
	l.cfg, err = model.ConfigFromGGUF(rt.File())
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("%s: %w", mf.path, err)
	}
	kvt, _ := parseKV(mf.kv)
	l.m, err = model.New(l.cfg, rt.Weights(), model.Options{
		Threads: mf.threads, Batch: mf.batch, Ctx: mf.ctx, KVType: kvt, Kernels: k,
	})
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("%s: %w", mf.path, err)
	}
	return l, nil
}

// parseFlags parses args into fs, turning flag errors into one line. It
// returns done=true with the exit status when the command should stop
// (help requested or a bad flag).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (done bool, status int) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stderr)
		fmt.Fprintf(stderr, "usage: memvanta %s [flags]\n", fs.Name())
		fs.PrintDefaults()
		return true, 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "memvanta %s: %v (see -h)\n", fs.Name(), err)
		return true, 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "memvanta %s: unexpected argument %q (see -h)\n", fs.Name(), fs.Arg(0))
		return true, 2
	}
	return false, 0
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
