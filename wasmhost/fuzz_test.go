package wasmhost

import (
	"context"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

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
	// The classes a corruption corpus found: long strings, nested arrays,
	// terminal escapes in names (see limits_test.go).
	f.Add(hostileGGUF(nestedStrings(2000)))
	f.Add(hostileGGUF(ggufStr(binary.LittleEndian.AppendUint32(ggufStr(nil, "general.name"), 8), strings.Repeat("N", 70000))))
	f.Add(hostileGGUF(ggufStr(binary.LittleEndian.AppendUint32(ggufStr(nil, "general.architecture"), 8), "\x1b]0;t\x07\u009b2J\u202e")))
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
			if !o.JSON {
				if !utf8.Valid(n.out) {
					t.Fatalf("text output is not valid UTF-8")
				}
				for i, r := range string(n.out) {
					if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
						t.Fatalf("text output has %U at byte %d: %q", r, i, n.out[max(0, i-20):min(len(n.out), i+20)])
					}
				}
			}
		}
	})
}

// fuzzing reports whether the test binary runs with -test.fuzz.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}
