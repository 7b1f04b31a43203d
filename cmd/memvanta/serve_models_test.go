package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/internal/testmodel"
	"github.com/memvanta/memvanta/native/weights"
)

// TestServeSeveralModels runs the binary over a --models-dir of two models
// and a --mem-budget that holds one: each request loads its model, the
// other is unloaded to make room, memvanta ps shows what is held, and
// SIGTERM still exits 0.
func TestServeSeveralModels(t *testing.T) {
	bin := memvantaBin(t)
	dir := t.TempDir()
	b := testmodel.Bytes(t)
	for _, n := range []string{"alpha.gguf", "beta.gguf", "mmproj-x.gguf"} {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rt, err := weights.Open(context.Background(), filepath.Join(dir, "alpha.gguf"), weights.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := model.ConfigFromGGUF(rt.File())
	if err != nil {
		t.Fatal(err)
	}
	one, err := modelBytes(rt.Stats().FileSize, cfg, ggml.F16, ggml.F16, 2, 512)
	rt.Close()
	if err != nil {
		t.Fatal(err)
	}
	budget := strconv.FormatInt(one+one/2, 10)
	cmd := exec.Command(bin, "serve", "--models-dir", dir, "--port", "0", "-np", "2", "-c", "512", "--mem-budget", budget, "--temp", "0")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var url string
	for i := 0; ; i++ {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			break
		}
		if i > 600 {
			t.Fatalf("server not listening:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	url = strings.TrimSuffix(url, ";")
	statuses := func() map[string]string {
		resp, err := http.Get(url + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var l struct {
			Data []struct {
				ID     string `json:"id"`
				Status struct {
					Value string `json:"value"`
				} `json:"status"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, d := range l.Data {
			out[d.ID] = d.Status.Value
		}
		return out
	}
	if got := statuses(); len(got) != 2 || got["alpha"] != "unloaded" || got["beta"] != "unloaded" {
		t.Fatalf("models at start (mmproj excluded): %v", got)
	}
	ps := func() string {
		var out, errb bytes.Buffer
		if st := runPs(context.Background(), []string{"--host", strings.TrimPrefix(url, "http://")}, &out, &errb); st != 0 {
			t.Fatalf("ps: %d %s", st, errb.String())
		}
		return out.String()
	}
	for _, id := range []string{"alpha", "beta", "alpha"} {
		resp, err := http.Post(url+"/v1/completions", "application/json",
			strings.NewReader(`{"model":"`+id+`","prompt":"hi","max_tokens":3}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"model":"`+id+`"`) {
			t.Fatalf("%s: %d %s", id, resp.StatusCode, body)
		}
		other := map[string]string{"alpha": "beta", "beta": "alpha"}[id]
		if got := statuses(); got[id] != "loaded" || got[other] != "unloaded" {
			t.Errorf("after a request for %s: %v", id, got)
		}
		if p := ps(); !strings.Contains(p, "\n"+id+" ") || strings.Contains(p, "\n"+other+" ") || !strings.Contains(p, "memory budget in use") {
			t.Errorf("ps after %s:\n%s", id, p)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
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
	if n := strings.Count(stderr.String(), "unloaded \"alpha\""); n != 2 {
		t.Errorf("alpha unloaded %d times (once for beta, once at exit):\n%s", n, stderr.String())
	}
}
