package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/native/serve"
	"github.com/memvanta/memvanta/native/weights"
)

// runServeModels is serve with several models (llama-server's router
// mode, ollama's model handling): every model is listed at start and loaded
// on its first request, within one memory budget (serve.Router).
func runServeModels(ctx context.Context, c *cli, mf *modelFlags, f *serveFlags, defaults sample.Params, rf chat.ReasoningFormat, budget int64, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memvanta serve: "+format+"\n", a...)
		return exitRuntime
	}
	keepAlive, err := serve.ParseKeepAlive(json.RawMessage(strconv.Quote(f.keepAlive)))
	if err != nil {
		if secs, err2 := strconv.ParseFloat(f.keepAlive, 64); err2 == nil {
			keepAlive, err = serve.ParseKeepAlive(json.RawMessage(strconv.FormatFloat(secs, 'g', -1, 64)))
		}
		if err != nil {
			return c.usageErr(stderr, "--keep-alive %q: want a duration such as 5m, or seconds", f.keepAlive)
		}
	}
	if f.loadWait < 0 {
		return c.usageErr(stderr, "--load-timeout %d: must be >= 0", f.loadWait)
	}
	specs, err := modelSpecs(ctx, mf.paths, f, stderr)
	if err != nil {
		return fail("%v", err)
	}
	if len(specs) == 0 {
		return c.usageErr(stderr, "no GGUF files to serve: give -m MODEL, or --models-dir DIR holding .gguf files")
	}
	slotCtx := mf.ctx
	mf.ctx = 0
	if f.stepTokens == 0 {
		f.stepTokens = mf.batch
	}
	kt, vt, _ := mf.kvTypes() // checked by validate

	// cost is what load will hold, from the header alone: the mapped
	// weights (native/weights' file size) and the slots' KV caches at
	// full context.
	cost := func(ctx context.Context, m serve.ModelSpec) (int64, error) {
		rt, err := weights.Open(ctx, m.Path, weights.Options{})
		if err != nil {
			return 0, err
		}
		defer rt.Close()
		cfg, err := model.ConfigFromGGUF(rt.File())
		if err != nil {
			return 0, fmt.Errorf("%s: %w", m.Path, err)
		}
		return modelBytes(rt.Stats().FileSize, cfg, kt, vt, f.slots, slotCtx)
	}
	load := func(ctx context.Context, m serve.ModelSpec) (*serve.Loaded, error) {
		fmt.Fprintf(stderr, "memvanta serve: loading %q (%s)\n", m.ID, m.Path)
		mm := *mf
		mm.path = m.Path
		l, err := loadModel(ctx, &mm, stderr)
		if err != nil {
			return nil, err
		}
		be, eng, err := newBackend(l, f, slotCtx, nil, stderr)
		if err != nil {
			l.Close()
			return nil, err
		}
		kv, err := serve.KVCapacityBytes(l.cfg, kt, vt, f.slots, be.NCtx)
		if err != nil {
			l.Close()
			return nil, err
		}
		engCtx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = eng.Run(engCtx); close(done) }()
		w := l.rt.Stats().FileSize
		fmt.Fprintf(stderr, "memvanta serve: model %q ready: %d slots x %d tokens, template %s, %.1f MiB weights + %.1f MiB KV at full context\n",
			m.ID, f.slots, be.NCtx, be.Template.Name(), mib(w), mib(kv))
		return &serve.Loaded{Backend: be, WeightBytes: w, KVBytes: kv, Close: func() {
			stop()
			<-done
			l.Close()
			fmt.Fprintf(stderr, "memvanta serve: unloaded %q\n", m.ID)
		}}, nil
	}
	router, err := serve.NewRouter(serve.RouterConfig{Models: specs, Budget: budget, KeepAlive: keepAlive,
		LoadWait: time.Duration(f.loadWait) * time.Second, Cost: cost, Load: load})
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	srv := serve.New(serve.Config{Models: router, APIKey: f.apiKey, MaxBody: int64(f.maxBody),
		Timeout: time.Duration(f.timeout) * time.Second, Defaults: &defaults, ReasoningFormat: rf})
	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		return fail("%v", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.ID
	}
	bs := "no memory budget"
	if budget > 0 {
		bs = fmt.Sprintf("memory budget %.1f MiB", mib(budget))
	}
	fmt.Fprintf(stderr, "memvanta serve: listening on http://%s; %d models, loaded on demand (%s, keep-alive %s): %s\n",
		ln.Addr(), len(specs), bs, f.keepAlive, strings.Join(ids, ", "))

	status := exitOK
	select {
	case err := <-serveErr:
		router.Close()
		return fail("%v", err)
	case <-ctx.Done():
	}
	fmt.Fprintf(stderr, "memvanta serve: shutting down; draining in-flight requests (up to %ds)\n", f.drain)
	dctx, dcancel := context.WithTimeout(context.Background(), time.Duration(f.drain)*time.Second)
	defer dcancel()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(dctx) }()
	if err := router.Drain(dctx); err != nil {
		fmt.Fprintf(stderr, "memvanta serve: %v; stopping the remaining requests\n", err)
		status = exitInterrupted
	}
	if err := <-shut; err != nil {
		hs.Close()
	}
	router.Close()
	fmt.Fprintln(stderr, "memvanta serve: stopped")
	return status
}

// modelBytes is a model's place in the memory budget: its weights (the
// mapped file) and the KV caches of its slots at full context (slotCtx 0:
// the model's training context, as newBackend takes it).
func modelBytes(fileSize int64, cfg model.Config, kt, vt ggml.Type, slots, slotCtx int) (int64, error) {
	if slotCtx == 0 {
		slotCtx = cfg.NCtxTrain
	}
	perSlot := slotCtx / slots
	if perSlot < 2 {
		return 0, slotsError{slotCtx, slots, perSlot}
	}
	k, err := serve.KVCapacityBytes(cfg, kt, vt, slots, perSlot)
	if err != nil {
		return 0, err
	}
	return fileSize + k, nil
}

// modelSpecs lists the models to serve: every -m (resolved as -m is,
// named by its --alias or file name), every GGUF file under --models-dir,
// or, with neither, the pulled models (memvanta pull's directory).
func modelSpecs(ctx context.Context, paths []string, f *serveFlags, stderr io.Writer) ([]serve.ModelSpec, error) {
	var specs []serve.ModelSpec
	for i, p := range paths {
		path, err := resolveModel(ctx, p, stderr)
		if err != nil {
			return nil, err
		}
		id := strings.TrimSuffix(filepath.Base(path), ".gguf")
		if i < len(f.aliases) && f.aliases[i] != "" {
			id = f.aliases[i]
		}
		specs = append(specs, serve.ModelSpec{ID: id, Path: path})
	}
	dir := f.modelsDir
	if dir == "" && len(paths) == 0 {
		hc, err := hubClient("", stderr)
		if err != nil {
			return nil, err
		}
		dir = hc.Dir
		fmt.Fprintf(stderr, "memvanta serve: no -m: serving the pulled models in %s\n", dir)
	}
	if dir != "" {
		found, err := ggufFiles(dir)
		if err != nil {
			return nil, err
		}
		for _, p := range found {
			specs = append(specs, serve.ModelSpec{ID: strings.TrimSuffix(filepath.Base(p), ".gguf"), Path: p})
		}
	}
	return specs, nil
}

// ggufFiles is every regular *.gguf file under dir (sorted; a mmproj
// projector, which is no language model, excluded).
func ggufFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fmt.Errorf("--models-dir %s: %w", dir, err)
			}
			return err
		}
		name := strings.ToLower(d.Name())
		if !d.Type().IsRegular() || !strings.HasSuffix(name, ".gguf") || strings.HasPrefix(name, "mmproj") {
			return nil
		}
		out = append(out, p)
		return nil
	})
	sort.Strings(out)
	return out, err
}
