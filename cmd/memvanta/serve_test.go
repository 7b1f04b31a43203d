package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the process's writer goroutine and
// the test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listening = regexp.MustCompile(`listening on (http://[^ ]+)`)

// TestServeDrainsOnSIGTERM runs the binary: a streaming request in flight
// when SIGTERM arrives still completes with [DONE], new connections are
// refused, and the process exits 0.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	bin := memvantaBin(t)
	model := synthFile(t)
	cmd := exec.Command(bin, "serve", "-m", model, "--port", "0", "-np", "2", "--temp", "0")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var url string
	for i := 0; ; i++ {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil && strings.Contains(stderr.String(), "ready") {
			url = m[1]
			break
		}
		if i > 600 {
			t.Fatalf("server not ready:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := http.Post(url+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt":"drain me","max_tokens":200,"stream":true,"temperature":0}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if _, err := r.ReadString('\n'); err != nil { // first event is out: the request is running
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(rest), "data: [DONE]\n\n") || !strings.Contains(string(rest), `"finish_reason":"length"`) {
		t.Errorf("in-flight stream did not complete: ...%q", tail(string(rest), 300))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not exit:\n%s", stderr.String())
	}
	if _, err := http.Get(url + "/health"); err == nil {
		t.Error("server still accepting after exit")
	}
	if !strings.Contains(stderr.String(), "generated 200 tok") {
		t.Errorf("stats line:\n%s", stderr.String())
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
