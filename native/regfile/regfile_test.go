//go:build unix

package regfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// WithFIFO runs open against a fresh FIFO and fails if it does not return
// within a few seconds (a blocking open(2) would hang forever: the writer
// side is then opened to release it, so the test fails instead of hanging).
// It returns open's error.
func WithFIFO(t *testing.T, open func(path string) error) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- open(path) }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err == nil {
			w.Close()
		}
		<-done
		t.Fatalf("opening a FIFO blocked for 5 s")
		return nil
	}
}

func TestRefusesNonRegular(t *testing.T) {
	err := WithFIFO(t, func(p string) error {
		f, _, err := Open(p)
		if err == nil {
			f.Close()
		}
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "not a regular file (a FIFO)") {
		t.Errorf("FIFO: %v", err)
	}
	for path, what := range map[string]string{"/dev/null": "character device", t.TempDir(): "directory"} {
		if _, _, err := Open(path); err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("%s: %v", path, err)
		}
		if err := Check(path); err == nil {
			t.Errorf("Check(%s) passed", path)
		}
	}
	reg := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(reg, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := reg + ".link"
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{reg, link} {
		f, size, err := Open(p)
		if err != nil || size != 5 {
			t.Fatalf("%s: size %d, %v", p, size, err)
		}
		b := make([]byte, 5)
		if _, err := f.ReadAt(b, 0); err != nil || string(b) != "hello" {
			t.Errorf("%s: read %q, %v", p, b, err)
		}
		f.Close()
	}
}
