package gguf_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/internal/cmd/gencorpus/corpus"
)

const corpusDir = "../../testdata/gguf"

// TestMalformedCorpus: every corruption is rejected with its specific
// category, without panicking and with memory bounded by a small multiple of
// the file size.
func TestMalformedCorpus(t *testing.T) {
	cases := corpus.Cases()
	if len(cases) < 50 {
		t.Errorf("corpus has %d cases, want >= 50", len(cases))
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Fatalf("duplicate case name %s", c.Name)
		}
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			f, err := gguf.Parse(bytes.NewReader(c.Data), int64(len(c.Data)), gguf.DefaultLimits())
			runtime.ReadMemStats(&ms1)
			if err == nil {
				t.Fatalf("%s: parsed without error (%d tensors)", c.Why, len(f.Tensors))
			}
			var ge *gguf.Error
			if !errors.As(err, &ge) {
				t.Fatalf("%s: error is %T, not *gguf.Error: %v", c.Why, err, err)
			}
			if ge.Category.String() != c.Category {
				t.Errorf("%s: category %s, want %s: %v", c.Why, ge.Category, c.Category, err)
			}
			// Names in errors are quoted at bounded length, so no file
			// makes a long error line.
			if len(err.Error()) > 1024 {
				t.Errorf("%s: error line of %d bytes", c.Why, len(err.Error()))
			}
			// Window buffer (64 KiB) plus a little: nothing scales with the
			// counts the file claims.
			if alloc := ms1.TotalAlloc - ms0.TotalAlloc; alloc > 256<<10+uint64(len(c.Data))*16 {
				t.Errorf("%s: allocated %d bytes for a %d-byte file", c.Why, alloc, len(c.Data))
			}
		})
	}
}

// TestCorpusCommitted checks testdata/gguf matches the generator, so the
// committed corpus (used by fuzz seeds and other tools) is never stale.
func TestCorpusCommitted(t *testing.T) {
	dir := filepath.Join(corpusDir, "malformed")
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatalf("%v (run: go run ./internal/cmd/gencorpus)", err)
	}
	var got []corpus.Entry
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	cases := corpus.Cases()
	want := corpus.Manifest(cases)
	if len(got) != len(want) {
		t.Fatalf("manifest has %d entries, generator %d: run go run ./internal/cmd/gencorpus", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("manifest[%d] = %+v, generator %+v", i, got[i], want[i])
		}
		data, err := os.ReadFile(filepath.Join(dir, want[i].File))
		if err != nil {
			t.Error(err)
			continue
		}
		if !bytes.Equal(data, cases[i].Data) {
			t.Errorf("%s differs from the generator: run go run ./internal/cmd/gencorpus", want[i].File)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.gguf"))
	if len(files) != len(want) {
		t.Errorf("%d .gguf files in %s, manifest lists %d", len(files), dir, len(want))
	}
}

func TestCorpusBaseIsValid(t *testing.T) {
	v := corpus.Valid()
	f, err := gguf.Parse(bytes.NewReader(v), int64(len(v)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != 2 || len(f.KV) != 7 {
		t.Fatalf("base has %d tensors, %d kv", len(f.Tensors), len(f.KV))
	}
}
