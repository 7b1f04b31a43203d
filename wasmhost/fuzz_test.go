package wasmhost

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvanta/memvanta/wasmhost/job"
)

// FuzzInspectNativeVsSandbox feeds the same bytes to the native parser and
// to the sandboxed one and fails on any disagreement: report bytes, error
// text, category, offset, key or tensor. One compiled guest serves every
// execution of a fuzz worker; each execution only instantiates it.
//
//	go test -run '^$' -fuzz FuzzInspectNativeVsSandbox -fuzztime 60s ./wasmhost
func FuzzInspectNativeVsSandbox(f *testing.F) {
	seeds, _ := filepath.Glob("../testdata/gguf/valid/*.gguf")
	mal, _ := filepath.Glob("../testdata/gguf/malformed/*.gguf")
	for _, p := range append(seeds, mal...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("GGUF"))
	if raceEnabled && !fuzzing() {
		// The seeds are the corpus TestInspectNativeVsSandbox already
		// compares; under -race replaying them again only costs time.
		f.Skip("seed replay covered by TestInspectNativeVsSandbox")
	}
	ctx := context.Background()
	var h *Host
	if fuzzing() {
		// Fuzz workers are separate, coverage-instrumented processes in
		// which compiling the guest takes tens of seconds: share compiled
		// code between them through the on-disk cache, as the CLI does.
		root, err := DefaultCacheRoot()
		if err != nil {
			f.Fatal(err)
		}
		if h, err = New(ctx, Config{MemoryLimit: 64 << 20, CacheDir: filepath.Join(root, "fuzz"), Guest: GuestInspect}); err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { h.Close(ctx) })
	} else {
		h = testHost(f, Config{MemoryLimit: 64 << 20, Guest: GuestInspect})
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, o := range []job.InspectOptions{{JSON: true}, {}} {
			n := nativeInspect(b, o)
			w := sandboxInspect(ctx, h, b, o)
			if msg := sameOutcome(n, w, o.JSON); msg != "" {
				t.Fatalf("%d-byte input, %+v: %s", len(b), o, msg)
			}
			if n.err != nil {
				return // the text mode fails the same way
			}
		}
	})
}

// fuzzing reports whether the test binary runs with -test.fuzz.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}
