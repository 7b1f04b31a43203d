package wasmhost

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tinyWasm is the smallest module with code: one exported `_start` that
// returns. Compiling it takes milliseconds, so the cache tests can compile
// again and again; the cache logic does not depend on which module it holds.
var tinyWasm = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
	0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type section: () -> ()
	0x03, 0x02, 0x01, 0x00, // function section: func 0 has type 0
	0x07, 0x0a, 0x01, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00, // export "_start"
	0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b, // code: empty body
}

// past is the mtime the tests stamp on a cache entry: if it is still there
// after reopening, the entry was reused rather than rewritten.
var past = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// cacheEntry returns the one file wazero wrote under dir (besides the
// manifest) and its mtime.
func cacheEntry(t *testing.T, dir string) (string, time.Time) {
	t.Helper()
	files, err := scanCache(dir)
	if err != nil || len(files) != 1 {
		t.Fatalf("cache %s: files %v, err %v; want exactly one entry", dir, files, err)
	}
	p := filepath.Join(dir, filepath.FromSlash(files[0].Path))
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, st.ModTime()
}

func openTiny(t *testing.T, root string) *Host {
	t.Helper()
	h, err := newHost(context.Background(), Config{CacheDir: root}, tinyWasm, "")
	if err != nil {
		t.Fatalf("newHost: %v", err)
	}
	h.Close(context.Background())
	return h
}

func TestDiskCache(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(t *testing.T, dir, entry string) // nil: leave intact
		want    CacheState
	}{
		{"intact entry is reused", nil, CacheHit},
		{"flipped byte is detected by the manifest", func(t *testing.T, dir, entry string) {
			b, _ := os.ReadFile(entry)
			b[len(b)/2] ^= 0xff
			os.WriteFile(entry, b, 0o600)
		}, CacheRebuilt},
		{"truncated entry", func(t *testing.T, dir, entry string) {
			os.Truncate(entry, 3)
		}, CacheRebuilt},
		{"missing manifest", func(t *testing.T, dir, entry string) {
			os.Remove(filepath.Join(dir, manifestName))
		}, CacheRebuilt},
		{"garbage manifest", func(t *testing.T, dir, entry string) {
			os.WriteFile(filepath.Join(dir, manifestName), []byte("{not json"), 0o600)
		}, CacheRebuilt},
		{"extra file", func(t *testing.T, dir, entry string) {
			os.WriteFile(filepath.Join(filepath.Dir(entry), "stray"), []byte("x"), 0o600)
		}, CacheRebuilt},
		{"corruption the manifest vouches for: wazero's compile error triggers the wipe", func(t *testing.T, dir, entry string) {
			// Break wazero's magic number, then re-bless the directory so
			// our own check passes and wazero is the one to object.
			b, _ := os.ReadFile(entry)
			b[0] ^= 0xff
			os.WriteFile(entry, b, 0o600)
			if err := writeManifest(dir, cacheKey(sumOf(tinyWasm), false)); err != nil {
				t.Fatal(err)
			}
		}, CacheRebuilt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if h := openTiny(t, root); h.CacheState() != CacheMiss {
				t.Fatalf("first open: %v, want miss", h.CacheState())
			}
			dir := cacheDirFor(root, cacheKey(sumOf(tinyWasm), false))
			entry, _ := cacheEntry(t, dir)
			if tc.corrupt != nil {
				tc.corrupt(t, dir, entry)
			}
			if err := os.Chtimes(entry, past, past); err != nil {
				t.Fatal(err)
			}
			h := openTiny(t, root)
			if h.CacheState() != tc.want {
				t.Fatalf("second open: %v, want %v", h.CacheState(), tc.want)
			}
			_, mtime := cacheEntry(t, dir)
			if rewritten := !mtime.Equal(past); rewritten != (tc.want != CacheHit) {
				t.Fatalf("entry rewritten = %v, want %v", rewritten, tc.want != CacheHit)
			}
			if !cacheIntact(dir, cacheKey(sumOf(tinyWasm), false)) {
				t.Fatal("cache not intact after reopening")
			}
			if h := openTiny(t, root); h.CacheState() != CacheHit {
				t.Fatalf("third open: %v, want hit", h.CacheState())
			}
		})
	}
}

// A different guest binary gets its own directory; an old guest's directory
// is pruned once stale, a fresh one (another memvanta running now) is kept.
func TestCacheKeyedByGuest(t *testing.T) {
	root := t.TempDir()
	openTiny(t, root)
	other := append(append([]byte(nil), tinyWasm[:len(tinyWasm)-6]...),
		0x0a, 0x05, 0x01, 0x03, 0x00, 0x01, 0x0b) // code: nop
	h, err := newHost(context.Background(), Config{CacheDir: root}, other, "")
	if err != nil {
		t.Fatal(err)
	}
	h.Close(context.Background())
	if h.CacheState() != CacheMiss {
		t.Fatalf("other guest: %v, want miss", h.CacheState())
	}
	tinyDir := cacheDirFor(root, cacheKey(sumOf(tinyWasm), false))
	if _, err := os.Stat(tinyDir); err != nil {
		t.Fatalf("fresh directory of the first guest was pruned: %v", err)
	}
	old := time.Now().Add(-2 * staleAge)
	os.Chtimes(tinyDir, old, old)
	h, err = newHost(context.Background(), Config{CacheDir: root}, other, "")
	if err != nil {
		t.Fatal(err)
	}
	h.Close(context.Background())
	if h.CacheState() != CacheHit {
		t.Fatalf("other guest reopened: %v, want hit", h.CacheState())
	}
	if _, err := os.Stat(tinyDir); !os.IsNotExist(err) {
		t.Fatalf("stale directory of the first guest kept: %v", err)
	}
}

// The directories of the guests this binary embeds, in either termination
// mode, are never pruned as stale: each is written once and then only read,
// so its age says nothing about whether it is in use.
func TestPruneKeepsEmbeddedGuests(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-2 * staleAge)
	var dirs []string
	for _, g := range guests {
		for _, strict := range []bool{false, true} {
			d := cacheDirFor(root, cacheKey(g.SHA256(), strict))
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(d, old, old)
			dirs = append(dirs, d)
		}
	}
	gone := cacheDirFor(root, cacheKey(sumOf([]byte("an old guest")), false))
	os.MkdirAll(gone, 0o700)
	os.Chtimes(gone, old, old)
	openTiny(t, root)
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("embedded guest's directory pruned: %v", err)
		}
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("stale directory of an old guest kept: %v", err)
	}
}

func TestGuestSumIsCurrent(t *testing.T) {
	for _, g := range guests {
		if got := sumOfEmbedded(g); got != g.SHA256() {
			t.Errorf("%v guest: the generated sum is %s, the embedded guest hashes to %s: run go generate ./wasmhost/...", g, g.SHA256(), got)
		}
	}
	if GuestSHA256() != GuestFull.SHA256() {
		t.Error("GuestSHA256 is not the full guest's")
	}
}

// A byte flipped in the middle of a real (multi-MiB) cache entry is outside
// the manifest's spans; wazero's own checksum must catch it, and the host
// must wipe and recompile rather than fail or run corrupt code.
func TestDiskCacheMidEntryCorruption(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("compiles the guest twice")
	}
	root := t.TempDir()
	ctx := context.Background()
	h, err := New(ctx, Config{CacheDir: root, Guest: GuestInspect})
	if err != nil {
		t.Fatal(err)
	}
	h.Close(ctx)
	dir := cacheDirFor(root, cacheKey(GuestInspect.SHA256(), false))
	entry, _ := cacheEntry(t, dir)
	b, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 4*checkedSpan {
		t.Fatalf("entry is only %d bytes; the test needs one larger than the manifest's spans", len(b))
	}
	b[len(b)/2] ^= 0x5a
	if err := os.WriteFile(entry, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if !cacheIntact(dir, cacheKey(GuestInspect.SHA256(), false)) {
		t.Fatal("the manifest should not cover the middle of the entry")
	}
	h, err = New(ctx, Config{CacheDir: root, Guest: GuestInspect})
	if err != nil {
		t.Fatalf("reopen after corruption: %v", err)
	}
	defer h.Close(ctx)
	if h.CacheState() != CacheRebuilt {
		t.Fatalf("state %v, want rebuilt", h.CacheState())
	}
	if _, err := h.run(ctx, runSpec{args: []string{"_flood", "3"}}); err != nil {
		t.Fatalf("rebuilt guest does not run: %v", err)
	}
}
