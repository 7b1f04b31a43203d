package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/native/regfile"
	"github.com/memvanta/memvanta/native/weights"
	"github.com/memvanta/memvanta/wasmhost"
)

// modelFlags are the model, context and memory options generate, bench,
// chat and serve share, with llama.cpp's spellings.
type modelFlags struct {
	cmd       string // subcommand name, for messages
	path      string
	threads   int
	ctx       int
	batch     int
	kv        string
	kvK, kvV  string // -ctk/-ctv; "" = --kv
	swaFull   bool
	mem       string
	memBudget string
	memStream string
	keepCache bool
	verify    bool
	compat    llamaCompat

	// threadsArg is -t as given; validate sets threads from it, and
	// threadsAll too when threadList allows a comma list (bench).
	threadsArg string
	threadList bool
	threadsAll []int

	// noTokenizer: the command feeds token ids and needs no tokenizer
	// (bench: a 32k-token vocabulary's tables would add ~2.5 MiB to the
	// peak RSS it reports).
	noTokenizer bool

	// multi: -m may be repeated, into paths (serve: several models); path
	// is then left for the caller to set per model.
	multi bool
	paths []string
}

// register adds the group; ctxHelp says what -c 0 means for this command.
func (mf *modelFlags) register(c *cli, ctxHelp string) {
	mf.cmd = c.name
	c.group("Model and memory")
	if mf.multi {
		c.listVar(&mf.paths, "m|model", "FILE", "GGUF model file, or hf.co/OWNER/REPO[:QUANT|/FILE.gguf] (pulled on first use; see memvanta pull); repeat for several models")
	} else {
		c.stringVar(&mf.path, "m|model", "FILE", "", "GGUF model file, or hf.co/OWNER/REPO[:QUANT|/FILE.gguf] (pulled on first use; see memvanta pull) (required)")
	}
	tHelp := "worker threads"
	if mf.threadList {
		tHelp = "worker threads; a comma list runs every test at each count"
	}
	c.stringVar(&mf.threadsArg, "t|threads", "N", strconv.Itoa(min(2, runtime.NumCPU())), tHelp)
	c.intVar(&mf.ctx, "c|ctx-size", "N", 0, ctxHelp)
	c.intVar(&mf.batch, "b|batch-size", "N", 32, "prompt batch size (tokens per matrix multiply)")
	c.stringVar(&mf.kv, "kv", "TYPE", "f16", "KV cache type of keys and values: "+kvTypeNames)
	c.stringVar(&mf.kvK, "-ctk|cache-type-k", "TYPE", "", "KV cache type of keys (default: --kv)")
	c.stringVar(&mf.kvV, "-ctv|cache-type-v", "TYPE", "", "KV cache type of values (default: --kv)")
	c.boolVar(&mf.swaFull, "swa-full", "sliding-window layers keep the whole context (default: a ring of their window, so their KV memory does not grow with the context)")
	c.stringVar(&mf.mem, "mem", "MODE", "resident", "weight memory mode: resident (map the whole file) or budget (stream within --mem-budget)")
	c.stringVar(&mf.memBudget, "mem-budget", "SIZE", "", "weight cache size for --mem budget, e.g. 512MiB (implies --mem budget)")
	c.stringVar(&mf.memStream, "mem-stream", "HOW", "", "how --mem budget streams weights: map (default: populate the file mapping ahead, drop it behind) or copy (pread into cache buffers)")
	c.boolVar(&mf.keepCache, "keep-page-cache", "never re-read parts of the model file that the page cache holds in small (4 KiB) folios into 2 MiB folios (mapped modes do by default: it makes the mapping much cheaper to touch)")
	c.boolVar(&mf.verify, "verify", "validate the file in the wasm sandbox before mapping it natively (for untrusted files)")
	mf.compat.register(c)
}

// llamaCompat are llama.cpp flags that have no meaning here, accepted so
// that llama-cli / llama-bench command lines run unchanged.
type llamaCompat struct {
	gpuLayers, ubatch     string
	color, mlock, noMmap  bool
	logDisable, noDisplay bool
}

func (lc *llamaCompat) register(c *cli) {
	c.group("Accepted for llama.cpp command lines, no effect")
	c.stringVar(&lc.gpuLayers, "-ngl|gpu-layers|n-gpu-layers", "N", "", "memvanta runs on the CPU")
	c.stringVar(&lc.ubatch, "-ub|ubatch-size", "N", "", "the prompt batch is -b")
	c.boolVar(&lc.color, "color", "output is never coloured")
	c.boolVar(&lc.mlock, "mlock", "see --mem for how weights are held")
	c.boolVar(&lc.noMmap, "no-mmap", "see --mem and --mem-stream copy")
	c.boolVar(&lc.logDisable, "log-disable", "memvanta logs only one statistics line")
	c.boolVar(&lc.noDisplay, "no-display-prompt", "the prompt is never echoed")
}

// validate checks the values; its errors are usage errors.
func (mf *modelFlags) validate() error {
	if mf.path == "" && !mf.multi {
		return errors.New("-m MODEL is required")
	}
	ts, err := parseIntList("-t", mf.threadsArg, 1)
	if err != nil {
		return err
	}
	if len(ts) > 1 && !mf.threadList {
		return fmt.Errorf("-t %q: one thread count only", mf.threadsArg)
	}
	for _, t := range ts {
		if t > 1024 {
			return fmt.Errorf("-t %d: must be in [1, 1024]", t)
		}
	}
	mf.threads, mf.threadsAll = ts[0], ts
	if mf.ctx < 0 {
		return fmt.Errorf("-c %d: must be >= 0", mf.ctx)
	}
	if mf.batch < 1 || mf.batch > 4096 {
		return fmt.Errorf("-b %d: must be in [1, 4096]", mf.batch)
	}
	if _, _, err := mf.kvTypes(); err != nil {
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

// kvTypeNames lists the KV cache types for help and errors.
const kvTypeNames = "f32, f16, q8_0, q4_0, q4_1, q5_0 or q5_1"

func parseKV(flag, s string) (ggml.Type, error) {
	switch strings.ToLower(s) {
	case "f32":
		return ggml.F32, nil
	case "f16":
		return ggml.F16, nil
	case "q8_0":
		return ggml.Q8_0, nil
	case "q4_0":
		return ggml.Q4_0, nil
	case "q4_1":
		return ggml.Q4_1, nil
	case "q5_0":
		return ggml.Q5_0, nil
	case "q5_1":
		return ggml.Q5_1, nil
	}
	return 0, fmt.Errorf("%s %q: must be %s", flag, s, kvTypeNames)
}

// kvTypes are the key and value cache types: -ctk/-ctv, each defaulting
// to --kv.
func (mf *modelFlags) kvTypes() (k, v ggml.Type, err error) {
	if k, err = parseKV("--kv", mf.kv); err != nil {
		return 0, 0, err
	}
	v = k
	if mf.kvK != "" {
		if k, err = parseKV("--cache-type-k", mf.kvK); err != nil {
			return 0, 0, err
		}
	}
	if mf.kvV != "" {
		if v, err = parseKV("--cache-type-v", mf.kvV); err != nil {
			return 0, 0, err
		}
	}
	return k, v, nil
}

// loaded is an opened model ready to run: the weights runtime (its Stats
// are the weight telemetry bench reports), the configuration, the graph
// and the tokenizer.
type loaded struct {
	rt  *weights.Model
	cfg model.Config
	m   *model.Model
	tok *tokenizer.Tokenizer // nil with modelFlags.noTokenizer
}

func (l *loaded) Close() {
	if l.m != nil {
		l.m.Close()
	}
	if l.rt != nil {
		l.rt.Close()
	}
}

// openModel opens the model every subcommand that runs one opens, the same
// way: on failure it has said why on stderr, in one line, and returns the
// exit status (exitInterrupted when ctx was cancelled, exitRuntime
// otherwise).
func openModel(ctx context.Context, mf *modelFlags, stderr io.Writer) (*loaded, int) {
	l, err := loadModel(ctx, mf, stderr)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "memvanta %s: interrupted while loading the model\n", mf.cmd)
			return nil, exitInterrupted
		}
		fmt.Fprintf(stderr, "memvanta %s: %v\n", mf.cmd, err)
		return nil, exitRuntime
	}
	return l, exitOK
}

// loadModel maps the file through the native runtime (never copying the
// whole model into the heap), reads its configuration, builds the graph
// and, unless mf.noTokenizer, the tokenizer. A context larger than the
// model's training context gets a one-line warning on stderr, as llama.cpp
// gives.
func loadModel(ctx context.Context, mf *modelFlags, stderr io.Writer) (*loaded, error) {
	path, err := resolveModel(ctx, mf.path, stderr)
	if err != nil {
		return nil, err
	}
	mf.path = path
	// Refuse a FIFO or device before anything opens it (open(2) of a FIFO
	// blocks where Ctrl-C cannot reach it).
	if err := regfile.Check(mf.path); err != nil {
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
	opt := weights.Options{Mode: mf.mem, KeepPageCache: mf.keepCache}
	if mf.mem == "budget" {
		b, err := weights.ParseSize(mf.memBudget)
		if err != nil {
			return nil, fmt.Errorf("--mem-budget %q: %w", mf.memBudget, err)
		}
		opt.Budget = b
		opt.Stream = mf.memStream
	}
	rt, err := weights.Open(ctx, mf.path, opt)
	if err != nil {
		return nil, err
	}
	l := &loaded{rt: rt}
	l.cfg, err = model.ConfigFromGGUF(rt.File())
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("%s: %w", mf.path, err)
	}
	if mf.ctx > l.cfg.NCtxTrain && l.cfg.NCtxTrain > 0 {
		fmt.Fprintf(stderr, "memvanta %s: warning: -c %d is larger than the model's training context (%d); quality may degrade past %d tokens\n",
			mf.cmd, mf.ctx, l.cfg.NCtxTrain, l.cfg.NCtxTrain)
	}
	kt, vt, _ := mf.kvTypes() // checked by validate
	l.m, err = model.New(l.cfg, rt.Weights(), model.Options{
		Threads: mf.threads, Batch: mf.batch, Ctx: mf.ctx, KVType: kt, KVTypeV: vt, KVTypeVSet: true, Kernels: k,
		SWAFull: mf.swaFull,
	})
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("%s: %w", mf.path, err)
	}
	if !mf.noTokenizer {
		if l.tok, err = tokenizer.FromGGUF(rt.File()); err != nil {
			l.Close()
			return nil, fmt.Errorf("%s: %w", mf.path, err)
		}
	}
	return l, nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
