package gguf

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedVocab lists the vocab-only GGUFs shipped beside the repo, skipping
// the test when they are absent.
func sharedVocab(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob("../../../shared/vocab/*.gguf")
	if len(files) == 0 {
		t.Skip("../shared/vocab not present")
	}
	return files
}

func parseFile(t testing.TB, path string) *File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(fh, st.Size(), DefaultLimits())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

func TestParseSharedVocab(t *testing.T) {
	for _, path := range sharedVocab(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f := parseFile(t, path)
			arch, err := f.String("general.architecture")
			if err != nil {
				t.Fatal(err)
			}
			toks, err := f.Strings("tokenizer.ggml.tokens")
			if err != nil {
				t.Fatal(err)
			}
			if len(toks) == 0 {
				t.Fatal("no tokens")
			}
			if f.Version != 2 && f.Version != 3 {
				t.Errorf("version %d", f.Version)
			}
			t.Logf("v%d arch=%s kv=%d tensors=%d tokens=%d read=%d/%d", f.Version, arch, len(f.KV), len(f.Tensors), len(toks), f.BytesRead, f.Size)
		})
	}
}
