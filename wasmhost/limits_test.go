package wasmhost

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/wasmhost/job"
)

// hostileGGUF assembles a GGUF v3 header by hand: no tensors, the given
// encoded key/value pairs.
func hostileGGUF(kvs ...[]byte) []byte {
	b := append([]byte("GGUF"), 3, 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(kvs)))
	for _, kv := range kvs {
		b = append(b, kv...)
	}
	return b
}

func ggufStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// nestedStrings is one key holding n one-element string arrays.
func nestedStrings(n int) []byte {
	b := ggufStr(nil, "x")
	b = binary.LittleEndian.AppendUint32(b, uint32(gguf.TypeArray))
	b = binary.LittleEndian.AppendUint32(b, uint32(gguf.TypeArray))
	b = binary.LittleEndian.AppendUint64(b, uint64(n))
	for range n {
		b = binary.LittleEndian.AppendUint32(b, uint32(gguf.TypeString))
		b = binary.LittleEndian.AppendUint64(b, 1)
		b = ggufStr(b, "s")
	}
	return b
}

// TestSandboxOOMIsMemoryLimit: however the guest runs out of memory at the
// cap - the heap ("fatal error: out of memory") or the Go runtime's own
// metadata ("fatal error: runtime: cannot allocate memory", which a cap of
// a few MiB gives) - the host reports ErrMemoryLimit, never a crash.
func TestSandboxOOMIsMemoryLimit(t *testing.T) {
	data := hostileGGUF(nestedStrings(20000))
	ctx := context.Background()
	for mib := int64(4); mib <= 12; mib++ {
		h := testHost(t, Config{MemoryLimit: mib << 20, Guest: GuestInspect})
		err := h.InspectReaderAt(ctx, bytesReader(data), int64(len(data)), job.InspectOptions{JSON: true}, nil)
		if err != nil && !errors.Is(err, ErrMemoryLimit) {
			t.Errorf("%d MiB cap: %v, want success or ErrMemoryLimit", mib, err)
		}
	}
	for _, line := range []string{"fatal error: runtime: cannot allocate memory", "fatal error: out of memory", "fatal error: out of memory allocating allArenas", "runtime: out of memory: cannot allocate 1048576-byte block (4285366272 in use)"} {
		if !isGoOOM([]byte("\n" + line + "\n\ngoroutine 1 [running]:\n")) {
			t.Errorf("not recognised as out of memory: %q", line)
		}
	}
	if isGoOOM([]byte("panic: runtime error: index out of range\n")) {
		t.Error("a panic recognised as out of memory")
	}
}

// TestNestedArraysFitTheSandbox: 100,000 nested one-string arrays (2.1 MB)
// once needed over 6 GB of guest memory (a 64 KiB string arena per nested
// array); parsing must now fit a small cap.
func TestNestedArraysFitTheSandbox(t *testing.T) {
	data := hostileGGUF(nestedStrings(100_000))
	h := testHost(t, Config{MemoryLimit: 48 << 20, Guest: GuestInspect})
	var out strings.Builder
	if err := h.InspectReaderAt(context.Background(), bytesReader(data), int64(len(data)), job.InspectOptions{JSON: true}, &out); err != nil {
		t.Fatalf("inspect of %d bytes under a 48 MiB cap: %v", len(data), err)
	}
}

// TestMemLimitEnds: a cap below what the guest needs to start is refused
// with ErrMemoryLimit and a message saying the minimum, without wiping the
// compilation cache (the next start is still warm); the largest cap, 4 GiB,
// runs.
func TestMemLimitEnds(t *testing.T) {
	if raceEnabled {
		t.Skip("compiles the guest to disk: slow under -race")
	}
	dir := t.TempDir()
	ctx := context.Background()
	start := func(limit int64) (*Host, error) {
		return New(ctx, Config{CacheDir: dir, MemoryLimit: limit, Guest: GuestInspect})
	}
	h, err := start(0)
	if err != nil {
		t.Fatal(err)
	}
	h.Close(ctx)
	for _, limit := range []int64{1, 64 << 10, 1 << 20} {
		_, err := start(limit)
		if !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), "needs to start") {
			t.Errorf("cap %d: %v, want ErrMemoryLimit naming the minimum", limit, err)
		}
	}
	h, err = start(4 << 30)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if h.CacheState() != CacheHit {
		t.Errorf("after tiny caps the cache is %v, want hit", h.CacheState())
	}
	b, err := os.ReadFile(filepath.Join("..", "testdata", "gguf", "valid", "base.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.InspectReaderAt(ctx, bytesReader(b), int64(len(b)), job.InspectOptions{}, nil); err != nil {
		t.Errorf("4 GiB cap: %v", err)
	}
}

// TestLongNameErrorMatchesNative: a 2 MiB key makes the same short error
// in the sandbox as natively (it once overflowed the sandbox's 1 MiB stderr
// cap while the native error was an 8 MB line).
func TestLongNameErrorMatchesNative(t *testing.T) {
	key := ggufStr(nil, strings.Repeat("K", 2<<20))
	key = binary.LittleEndian.AppendUint32(key, 99) // bad value type
	data := hostileGGUF(key)
	h := testHost(t, Config{Guest: GuestInspect})
	for _, o := range []job.InspectOptions{{}, {JSON: true}} {
		native := nativeInspect(data, o)
		wasm := sandboxInspect(context.Background(), h, data, o)
		if native.err == nil || len(native.err.Error()) > 1024 {
			t.Fatalf("native error: %.300v (%d bytes)", native.err, len(errString(native.err)))
		}
		if why := sameOutcome(native, wasm, o.JSON); why != "" {
			t.Errorf("%+v: %.600s", o, why)
		}
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
