// Package wasmhost runs an embedded WebAssembly guest under wazero as a
// sandbox for work on untrusted input, chiefly parsing a GGUF file that may
// be hostile. Two guests are embedded: wasmhost/inspectguest (inspect only,
// what the CLI runs on untrusted files) and wasmhost/guest (every job, for
// the cross-target differential tests). The guest gets no environment, no
// network, fake deterministic clocks and randomness (what Go's wasip1
// runtime needs to start), a read-only filesystem holding only the file
// under inspection, and caps on linear memory, wall time and output. Every
// cap breach ends in an error wrapping ErrMemoryLimit, ErrTimeLimit or
// ErrOutputLimit.
package wasmhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// Defaults for Config's zero values.
const (
	DefaultMemoryLimit = 256 << 20
	DefaultTimeout     = 10 * time.Second
	DefaultStdoutLimit = 64 << 20
	DefaultStderrLimit = 1 << 20
)

const pageSize = 65536

// maxPages is the most linear memory a guest gets: one page short of 4 GiB.
const maxPages = 65535

// maxCompileWorkers caps wazero's parallel compilation of a cold guest.
const maxCompileWorkers = 4

// Config sets the sandbox caps and where compiled code is cached. Zero fields
// take the defaults above.
type Config struct {
	// MemoryLimit caps the guest's linear memory in bytes (rounded up to
	// 64 KiB pages, at most 4 GiB).
	MemoryLimit int64
	// Timeout caps the wall time of one guest run.
	Timeout time.Duration
	// StdoutLimit and StderrLimit cap what one run may write.
	StdoutLimit, StderrLimit int64
	// CacheDir is the root of the on-disk compilation cache; "" means
	// DefaultCacheRoot().
	CacheDir string
	// NoDiskCache keeps compiled code in memory only (tests, read-only homes).
	NoDiskCache bool
	// Guest is the embedded guest to run: GuestFull (the zero value) for
	// every job, GuestInspect for inspect and verify only, which is
	// smaller and so starts faster.
	Guest Guest
	// StrictTermination compiles the guest with wazero's
	// WithCloseOnContextDone, which stops even a guest spinning in a loop
	// that makes no host call, at the price of a check on every wasm loop
	// header (5–10× slower for Go-compiled guests, measured). Without it
	// the time cap is enforced at every host call the guest makes (file
	// reads, writes, the Go runtime's clock reads) and, should the guest
	// make none, the run is abandoned at the cap plus a grace period: the
	// caller gets ErrTimeLimit on time either way.
	StrictTermination bool

	// shared, when set, replaces the host's own compilation cache, so tests
	// can build hosts with different caps while compiling the guest once.
	shared wazero.CompilationCache
}

func (c Config) withDefaults() Config {
	if c.MemoryLimit <= 0 {
		c.MemoryLimit = DefaultMemoryLimit
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.StdoutLimit <= 0 {
		c.StdoutLimit = DefaultStdoutLimit
	}
	if c.StderrLimit <= 0 {
		c.StderrLimit = DefaultStderrLimit
	}
	return c
}

// CacheState says how a Host obtained its compiled guest.
type CacheState int

const (
	CacheNone    CacheState = iota // no disk cache configured
	CacheHit                       // the disk cache was intact and used
	CacheMiss                      // no usable entry: compiled and stored
	CacheRebuilt                   // a corrupt or stale entry was wiped, then compiled
)

func (s CacheState) String() string {
	return [...]string{"none", "hit", "miss", "rebuilt"}[s]
}

// Host is a compiled guest ready to run. It is safe for concurrent use: each
// run instantiates a fresh module with its own memory.
type Host struct {
	cfg       Config
	rt        wazero.Runtime
	mod       wazero.CompiledModule
	cache     wazero.CompilationCache
	ownsCache bool
	state     CacheState
	cacheDir  string
	abandoned atomic.Int32 // runs given up on whose guest may still execute
}

// New compiles (or loads from the cache) the embedded guest cfg.Guest.
func New(ctx context.Context, cfg Config) (*Host, error) {
	wasm, sum, err := cfg.Guest.module()
	if err != nil {
		return nil, err
	}
	return newHost(ctx, cfg, wasm, sum)
}

// newHost compiles wasm, whose hex SHA-256 is sum ("" to compute it).
func newHost(ctx context.Context, cfg Config, wasm []byte, sum string) (*Host, error) {
	cfg = cfg.withDefaults()
	pages := (cfg.MemoryLimit + pageSize - 1) / pageSize
	if pages > 65536 {
		return nil, fmt.Errorf("sandbox memory limit %d bytes is over the 4 GiB wasm32 maximum", cfg.MemoryLimit)
	}
	// A linear memory of exactly 4 GiB has a byte length that does not fit
	// wasm32's 32-bit sizes; stop one page short of it, so a 4 GiB cap
	// behaves like any other.
	pages = min(pages, maxPages)
	// Below what the guest declares it needs to start, nothing can run:
	// say so before touching the compilation cache (which must survive a
	// bad flag).
	if need, err := guestMinPages(wasm); err == nil && pages < int64(need) {
		return nil, fmt.Errorf("sandbox memory limit %s is below the %s the guest needs to start: %w",
			formatBytes(cfg.MemoryLimit), formatBytes(int64(need)*pageSize), ErrMemoryLimit)
	}
	h := &Host{cfg: cfg, cache: cfg.shared}
	if h.cache != nil || cfg.NoDiskCache {
		if h.cache == nil {
			h.cache, h.ownsCache = wazero.NewCompilationCache(), true
		}
		if err := h.compile(ctx, wasm, pages); err != nil {
			h.Close(ctx)
			return nil, err
		}
		return h, nil
	}

	root := cfg.CacheDir
	if root == "" {
		var err error
		if root, err = DefaultCacheRoot(); err != nil {
			return nil, err
		}
	}
	// wazero keys its cache entries by module content and CPU, not by
	// compile options, so the two termination modes need separate dirs.
	if sum == "" {
		sum = sumOf(wasm)
	}
	sum = cacheKey(sum, cfg.StrictTermination)
	h.cacheDir = cacheDirFor(root, sum)
	pruneStale(root, currentKeys(filepath.Base(h.cacheDir)), time.Now())
	h.state = CacheHit
	if !cacheIntact(h.cacheDir, sum) {
		h.state = CacheMiss
		if _, err := os.Stat(h.cacheDir); err == nil {
			h.state = CacheRebuilt
		}
		if err := os.RemoveAll(h.cacheDir); err != nil {
			return nil, fmt.Errorf("clearing compilation cache %s: %w", h.cacheDir, err)
		}
	}
	err := h.compileWithDir(ctx, wasm, pages)
	if err != nil && errors.Is(err, ErrMemoryLimit) {
		// The caps, not the cache, are at fault: keep the cache.
		h.Close(ctx)
		return nil, err
	}
	if err != nil {
		// The manifest matched but wazero still refused the entry (or the
		// directory changed under us): wipe and compile afresh, once.
		h.closeRuntime(ctx)
		if rerr := os.RemoveAll(h.cacheDir); rerr != nil {
			return nil, fmt.Errorf("clearing compilation cache %s after %v: %w", h.cacheDir, err, rerr)
		}
		h.state = CacheRebuilt
		if err2 := h.compileWithDir(ctx, wasm, pages); err2 != nil {
			h.Close(ctx)
			return nil, fmt.Errorf("compiling the sandbox guest (cache %s wiped after: %v): %w", h.cacheDir, err, err2)
		}
	}
	if h.state != CacheHit {
		if err := writeManifest(h.cacheDir, sum); err != nil {
			// The compiled module is fine; only the next start pays for it.
			os.RemoveAll(h.cacheDir)
		}
	}
	return h, nil
}

func (h *Host) compileWithDir(ctx context.Context, wasm []byte, pages int64) error {
	c, err := wazero.NewCompilationCacheWithDir(h.cacheDir)
	if err != nil {
		return fmt.Errorf("opening compilation cache %s: %w", h.cacheDir, err)
	}
	h.cache, h.ownsCache = c, true
	return h.compile(ctx, wasm, pages)
}

func (h *Host) compile(ctx context.Context, wasm []byte, pages int64) error {
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(h.cfg.StrictTermination).
		WithMemoryLimitPages(uint32(pages)).
		WithCompilationCache(h.cache)
	h.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	// Only the WASI host functions get the deadline listener; the guest
	// itself is compiled without listeners so its code stays fast.
	lctx := experimental.WithFunctionListenerFactory(ctx, deadlineListener{})
	if _, err := wasi_snapshot_preview1.Instantiate(lctx, h.rt); err != nil {
		return fmt.Errorf("instantiating WASI: %w", err)
	}
	// A cold start compiles a few thousand functions: use a few cores (a
	// warm one, from the cache, compiles nothing). Each worker holds its
	// own compiler state, so the count is capped to bound peak memory
	// (~100 MiB RSS with 2 workers, measured).
	cctx := experimental.WithCompilationWorkers(ctx, min(runtime.GOMAXPROCS(0), maxCompileWorkers))
	mod, err := h.rt.CompileModule(cctx, wasm)
	if err != nil {
		if strings.Contains(err.Error(), "over limit") {
			return fmt.Errorf("the guest's initial memory does not fit %d pages: %v: %w", pages, err, ErrMemoryLimit)
		}
		return fmt.Errorf("compiling the sandbox guest: %w", err)
	}
	h.mod = mod
	return nil
}

func (h *Host) closeRuntime(ctx context.Context) {
	if h.rt != nil {
		h.rt.Close(ctx)
		h.rt, h.mod = nil, nil
	}
	if h.ownsCache && h.cache != nil {
		h.cache.Close(ctx)
		h.cache, h.ownsCache = nil, false
	}
}

// Close releases the compiled code, unless a run was abandoned: its guest may
// still be executing that code, so then everything is left to process exit.
func (h *Host) Close(ctx context.Context) error {
	if h.abandoned.Load() > 0 {
		return nil
	}
	h.closeRuntime(ctx)
	return nil
}

// CacheState reports whether New found the guest in the disk cache.
func (h *Host) CacheState() CacheState { return h.state }

// Config returns the caps in force (defaults filled in).
func (h *Host) Config() Config { c := h.cfg; c.shared = nil; return c }

// cacheKey identifies a compiled guest: the hex SHA-256 of its bytes and the
// termination mode.
func cacheKey(sum string, strict bool) string {
	mode := "fast"
	if strict {
		mode = "strict"
	}
	return sumOf([]byte(sum + "\x00" + mode))
}

// currentKeys are the cache directory names pruning must keep: dir and
// those of every embedded guest in both termination modes.
func currentKeys(dir string) map[string]bool {
	keep := map[string]bool{dir: true}
	for _, g := range guests {
		for _, strict := range []bool{false, true} {
			keep[filepath.Base(cacheDirFor("", cacheKey(g.SHA256(), strict)))] = true
		}
	}
	return keep
}

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// runSpec is one guest invocation.
type runSpec struct {
	args   []string    // after the program name
	file   io.ReaderAt // if non-nil, mounted read-only as /model.gguf
	size   int64
	stdin  io.Reader // nil: empty
	stdout io.Writer // nil: discarded
}

// exitError is a guest that exited with a non-zero status of its own.
type exitError struct {
	code   uint32
	stderr []byte
}

func (e *exitError) Error() string {
	return fmt.Sprintf("sandbox guest exited with status %d: %s", e.code, tail(e.stderr))
}

// tail is the last line-ish part of guest stderr, for error texts.
func tail(b []byte) string {
	const max = 2048
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return s
}

// run executes the guest once and classifies how it ended. It returns the
// guest's stderr (always, for the caller's protocol) and nil for exit status
// 0, an *exitError for a status of the guest's own choosing, or an error
// wrapping one of the cap errors.
func (h *Host) run(ctx context.Context, s runSpec) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	rctx = experimental.WithMemoryAllocator(rctx, memoryAllocator())

	out := s.stdout
	if out == nil {
		out = io.Discard
	}
	var errBuf bytes.Buffer
	stdout := &cappedWriter{w: out, limit: h.cfg.StdoutLimit, name: "stdout"}
	stderr := &cappedWriter{w: &errBuf, limit: h.cfg.StderrLimit, name: "stderr"}
	stdin := s.stdin
	if stdin == nil {
		stdin = bytes.NewReader(nil)
	}
	args := append([]string{"guest", "--memlimit=" + strconv.FormatInt(h.cfg.MemoryLimit, 10)}, s.args...)
	mc := wazero.NewModuleConfig().
		WithName("").
		WithArgs(args...).
		WithStdin(stdin).
		WithStdout(stdout).
		WithStderr(stderr).
		// Explicit rather than relying on the defaults: Go's runtime reads
		// the clocks and random_get at start; these are fake and fixed.
		WithRandSource(zeroReader{})
	var file *guardedReader
	if s.file != nil {
		file = &guardedReader{r: s.file}
		mc = mc.WithFSConfig(wazero.NewFSConfig().WithFSMount(oneFileFS{r: file, size: s.size}, "/"))
	}
	type result struct {
		mod api.Module
		err error
	}
	done := make(chan result, 1)
	go func() {
		mod, err := h.rt.InstantiateModule(rctx, h.mod, mc)
		done <- result{mod, err}
	}()
	// Wait for the guest. Once the run's context is done, a guest making
	// host calls is stopped by the deadline listener at its next one; give
	// it a grace period for that, then abandon it (a loop without host
	// calls, possible only without StrictTermination): cut it off from the
	// caller's writers and return; it ends when its loop does.
	var err error
	ctxDone, giveUp := rctx.Done(), (<-chan time.Time)(nil)
wait:
	for {
		select {
		case r := <-done:
			err = r.err
			if r.mod != nil {
				r.mod.Close(rctx)
			}
			break wait
		case <-ctxDone:
			ctxDone = nil
			t := time.NewTimer(grace(h.cfg.Timeout))
			defer t.Stop()
			giveUp = t.C
		case <-giveUp:
			stdout.close()
			stderr.close()
			if file != nil {
				file.close()
			}
			h.abandoned.Add(1)
			if perr := ctx.Err(); perr != nil {
				return stderr.snapshot(), fmt.Errorf("sandbox run interrupted (guest abandoned): %w", perr)
			}
			return stderr.snapshot(), fmt.Errorf("guest ran longer than %v and was abandoned: %w", h.cfg.Timeout, ErrTimeLimit)
		}
	}
	eb := errBuf.Bytes() // the guest is done: no more writes
	if tripped, _ := stdout.state(); tripped {
		return eb, stdout.capErr()
	}
	if tripped, _ := stderr.state(); tripped {
		return eb, stderr.capErr()
	}
	if err == nil {
		if _, werr := stdout.state(); werr != nil {
			return eb, fmt.Errorf("writing guest output: %w", werr)
		}
		return eb, nil
	}
	var ee *sys.ExitError
	if errors.As(err, &ee) {
		switch ee.ExitCode() {
		case sys.ExitCodeDeadlineExceeded, sys.ExitCodeContextCanceled:
			if perr := ctx.Err(); perr != nil {
				return eb, fmt.Errorf("sandbox run interrupted: %w", perr)
			}
			return eb, fmt.Errorf("guest ran longer than %v: %w", h.cfg.Timeout, ErrTimeLimit)
		case 2:
			if isGoOOM(eb) {
				return eb, fmt.Errorf("guest needed more than %d bytes of memory: %w", h.cfg.MemoryLimit, ErrMemoryLimit)
			}
		}
		if _, werr := stdout.state(); werr != nil {
			return eb, fmt.Errorf("writing guest output: %w", werr)
		}
		return eb, &exitError{code: ee.ExitCode(), stderr: eb}
	}
	if rctx.Err() != nil {
		if perr := ctx.Err(); perr != nil {
			return eb, fmt.Errorf("sandbox run interrupted: %w", perr)
		}
		return eb, fmt.Errorf("guest ran longer than %v: %w", h.cfg.Timeout, ErrTimeLimit)
	}
	// A trap (unreachable, out-of-bounds) or an instantiation failure.
	return eb, fmt.Errorf("%w: %v; stderr: %s", ErrGuestCrash, err, tail(eb))
}

// grace is how long after the deadline a guest gets to reach a host call
// (where the deadline listener stops it) before it is abandoned.
func grace(timeout time.Duration) time.Duration {
	return min(max(timeout/4, 100*time.Millisecond), 2*time.Second)
}

// deadlineListener stops the guest at its next host call once the run's
// context is done, by raising the exit wazero itself uses for a context
// deadline. It is attached to the WASI host functions only.
type deadlineListener struct{}

func (deadlineListener) NewFunctionListener(api.FunctionDefinition) experimental.FunctionListener {
	return deadlineCheck{}
}

type deadlineCheck struct{}

func (deadlineCheck) Before(ctx context.Context, mod api.Module, _ api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	if err := ctx.Err(); err != nil {
		code := sys.ExitCodeDeadlineExceeded
		if errors.Is(err, context.Canceled) {
			code = sys.ExitCodeContextCanceled
		}
		mod.CloseWithExitCode(ctx, code)
		panic(sys.NewExitError(code))
	}
}
func (deadlineCheck) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}
func (deadlineCheck) Abort(context.Context, api.Module, api.FunctionDefinition, error)    {}

// isGoOOM recognises the Go runtime's own fatal errors when memory.grow
// fails at the cap: "fatal error: out of memory" from the heap, and
// "fatal error: runtime: cannot allocate memory" or "fatal error: out of
// memory allocating allArenas" when the runtime's own metadata cannot grow. It only looks at lines the
// runtime prints itself: job errors go to stderr as one JSON object with
// exit status 1, never 2.
func isGoOOM(stderr []byte) bool {
	for _, line := range strings.Split(string(stderr), "\n") {
		if strings.HasPrefix(line, "runtime: out of memory:") {
			return true
		}
		if msg, ok := strings.CutPrefix(line, "fatal error: "); ok {
			msg = strings.TrimPrefix(msg, "runtime: ")
			// "out of memory", "out of memory allocating allArenas" (the
			// runtime's own tables at start-up), "cannot allocate memory".
			if strings.HasPrefix(msg, "out of memory") || msg == "cannot allocate memory" {
				return true
			}
		}
	}
	return false
}

// zeroReader is the guest's random source: all zeros. Nothing the guest does
// needs randomness (Go only seeds map hashing with it), and a fixed source
// keeps every run reproducible.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
