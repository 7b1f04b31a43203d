//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNonRegularModelRefused: every command that opens a model refuses a
// FIFO at once instead of blocking in open(2) (where Ctrl-C cannot reach
// it). A blocked open is released after 5 s by opening the writer side, so
// the test fails instead of hanging.
func TestNonRegularModelRefused(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, args := range [][]string{
		{"inspect", "FIFO"},
		{"inspect", "--no-sandbox", "FIFO"},
		{"inspect", "--json", "FIFO"},
		{"generate", "-m", "FIFO", "-p", "x", "-n", "1"},
		{"generate", "--verify", "-m", "FIFO", "-p", "x", "-n", "1"},
		{"generate", "--mem-budget", "64MiB", "-m", "FIFO", "-p", "x", "-n", "1"},
		{"bench", "-m", "FIFO", "-p", "1", "-n", "1", "-r", "1"},
		{"synth", "-o", "OUT", "--vocab-from", "FIFO"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "model.gguf")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			a := make([]string, len(args))
			for i, s := range args {
				a[i] = strings.NewReplacer("FIFO", fifo, "OUT", filepath.Join(dir, "out.gguf")).Replace(s)
			}
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() { done <- run(a, &stdout, &stderr) }()
			var code int
			select {
			case code = <-done:
			case <-time.After(5 * time.Second):
				if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					w.Close()
				}
				<-done
				t.Fatal("blocked opening the FIFO for 5 s")
			}
			if code == 0 || !strings.Contains(stderr.String(), "not a regular file") {
				t.Errorf("exit %d, stderr %q; want a non-zero exit and 'not a regular file'", code, stderr.String())
			}
		})
	}
}
