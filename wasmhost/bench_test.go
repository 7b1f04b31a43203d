package wasmhost

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/memvanta/memvanta/wasmhost/job"
)

// BenchmarkInspect measures inspect of the GGUF file named by
// MEMVANTA_BENCH_GGUF (e.g. a multi-GB `memvanta synth` model; skipped if
// unset):
//
//	native      job.Inspect in-process (what --no-sandbox does after start-up)
//	run         one sandboxed run on an already compiled Host
//	warm        what a warm `memvanta inspect` does: New from the disk cache,
//	            one run, Close
//	cold        the same with an empty cache dir each time (compiles)
//
// all on the inspect guest, which `memvanta inspect` runs. In-process figures
// flatter the sandbox: the host heap is already faulted in after the first
// iteration, which a fresh `memvanta inspect` process is not. The figures
// that matter are per process (wall, peak RSS, minor faults):
//
//	XDG_CACHE_HOME=/tmp/c memvanta inspect F >/dev/null   # warm the cache
//	XDG_CACHE_HOME=/tmp/c /usr/bin/time -f '%e s %M KiB %R flt' memvanta inspect F >/dev/null
//	/usr/bin/time -f '%e s %M KiB %R flt' memvanta inspect --no-sandbox F >/dev/null
//	rm -rf /tmp/c; XDG_CACHE_HOME=/tmp/c /usr/bin/time -f '%e s %M KiB %R flt' memvanta inspect F >/dev/null  # cold
//
// Where a page fault is dear (VMs), the warm start is dominated by wazero
// loading the cached machine code into fresh 4 KiB pages (~3300 faults for
// the inspect guest) and by decoding and validating the module.
//
//	MEMVANTA_BENCH_GGUF=/tmp/7b.gguf go test -run '^$' -bench Inspect -benchtime 20x ./wasmhost
func BenchmarkInspect(b *testing.B) {
	path := os.Getenv("MEMVANTA_BENCH_GGUF")
	if path == "" {
		b.Skip("set MEMVANTA_BENCH_GGUF to a GGUF file")
	}
	ctx := context.Background()
	o := job.InspectOptions{Name: "bench.gguf"}
	b.Run("native", func(b *testing.B) {
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			st, _ := f.Stat()
			if err := job.Inspect(io.Discard, f, st.Size(), o); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	cache := b.TempDir()
	h, err := New(ctx, Config{CacheDir: cache, Guest: GuestInspect})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("run", func(b *testing.B) {
		for b.Loop() {
			if err := h.Inspect(ctx, path, o, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	h.Close(ctx)
	b.Run("warm", func(b *testing.B) {
		for b.Loop() {
			h, err := New(ctx, Config{CacheDir: cache, Guest: GuestInspect})
			if err != nil {
				b.Fatal(err)
			}
			if h.CacheState() != CacheHit {
				b.Fatalf("cache state %v", h.CacheState())
			}
			if err := h.Inspect(ctx, path, o, io.Discard); err != nil {
				b.Fatal(err)
			}
			h.Close(ctx)
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			h, err := New(ctx, Config{CacheDir: b.TempDir(), Guest: GuestInspect})
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Inspect(ctx, path, o, io.Discard); err != nil {
				b.Fatal(err)
			}
			h.Close(ctx)
		}
	})
}
