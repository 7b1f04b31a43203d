package hub

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A pull whose file already exists under its final name and is held open
// (a running memvanta serving it): Unix replaces it by rename; Windows
// cannot, so the pull fails saying why, keeps the verified download, and
// the next pull, once the file is closed, finishes without downloading.
func TestPullOverAnOpenFile(t *testing.T) {
	b := model(t)
	h := &fakeHub{files: map[string][]byte{"tiny.Q4_K_M.gguf": b}}
	c, _ := newTestClient(t, h)
	r, _ := ParseRef("hf.co/acme/tiny-GGUF")
	dst := c.LocalPath(r, "tiny.Q4_K_M.gguf")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	open, err := os.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	// No tag was recorded for dst, so the pull resolves and downloads.
	_, err = c.Pull(context.Background(), r)
	if runtime.GOOS != "windows" {
		if err != nil {
			t.Fatalf("pull over an open file: %v", err)
		}
		if got, _ := os.ReadFile(dst); !bytes.Equal(got, b) {
			t.Fatalf("%s not replaced: %d bytes", dst, len(got))
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "another process has open") || !strings.Contains(err.Error(), dst+".part") {
		t.Fatalf("pull over an open file: %v, want a refusal naming the kept .part", err)
	}
	if got, _ := os.ReadFile(dst + ".part"); !bytes.Equal(got, b) {
		t.Fatalf("verified download not kept: %d bytes in .part", len(got))
	}
	open.Close()
	h.mu.Lock()
	fetches := len(h.ranges)
	h.mu.Unlock()
	p, err := c.Pull(context.Background(), r)
	if err != nil || p != dst {
		t.Fatalf("pull after the file was closed: %q, %v", p, err)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, b) {
		t.Fatalf("%s not replaced: %d bytes", dst, len(got))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ranges) != fetches {
		t.Errorf("the second pull downloaded again (%d content requests, want %d)", len(h.ranges), fetches)
	}
}
