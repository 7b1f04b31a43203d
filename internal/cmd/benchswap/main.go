// Command benchswap measures serve with two models in one memory budget
// (native/serve's Router): with a budget that holds one model, requests
// alternating between them swap the models at every request, and the time
// to first token includes the load; with a budget that holds both, the
// same alternation is the steady state. It starts the memvanta binary
// given with -bin twice (one process per budget) and drives it over HTTP,
// one streaming request at a time.
//
//	go run ./internal/cmd/benchswap -bin ./memvanta -a A.gguf -b B.gguf [-requests 8] [-n 32]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/native/serve"
	"github.com/memvanta/memvanta/native/weights"
)

type opts struct {
	bin, a, b          string
	requests, n, slots int
	ctx, threads       int
	prompt             string
}

func main() {
	var o opts
	flag.StringVar(&o.bin, "bin", "./memvanta", "memvanta binary")
	flag.StringVar(&o.a, "a", "", "first model file")
	flag.StringVar(&o.b, "b", "", "second model file")
	flag.IntVar(&o.requests, "requests", 8, "timed requests per phase, alternating a, b")
	flag.IntVar(&o.n, "n", 32, "tokens generated per request")
	flag.IntVar(&o.slots, "np", 1, "serve -np")
	flag.IntVar(&o.ctx, "c", 512, "serve -c (total context per model)")
	flag.IntVar(&o.threads, "t", 2, "serve -t")
	flag.StringVar(&o.prompt, "prompt", "the quick brown fox jumps over the lazy dog while seven small birds sing", "prompt")
	flag.Parse()
	if o.a == "" || o.b == "" {
		fmt.Fprintln(os.Stderr, "benchswap: -a and -b are required")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchswap:", err)
		os.Exit(1)
	}
}

// cost is the model's place in serve's budget, computed as serve computes
// it (file size + KV caches at full context, f16).
func cost(path string, slots, ctx int) (int64, error) {
	rt, err := weights.Open(context.Background(), path, weights.Options{})
	if err != nil {
		return 0, err
	}
	defer rt.Close()
	cfg, err := model.ConfigFromGGUF(rt.File())
	if err != nil {
		return 0, err
	}
	kv, err := serve.KVCapacityBytes(cfg, ggml.F16, ggml.F16, slots, ctx/slots)
	if err != nil {
		return 0, err
	}
	return rt.Stats().FileSize + kv, nil
}

type result struct {
	model      string
	ttft, wall time.Duration
	tokens     int
}

func run(o opts) error {
	ca, err := cost(o.a, o.slots, o.ctx)
	if err != nil {
		return err
	}
	cb, err := cost(o.b, o.slots, o.ctx)
	if err != nil {
		return err
	}
	fmt.Printf("models: a %s (%.1f MiB in the budget), b %s (%.1f MiB)\n", o.a, mib(ca), o.b, mib(cb))
	one := max(ca, cb) + min(ca, cb)/2
	both := ca + cb
	for _, ph := range []struct {
		name   string
		budget int64
		warm   bool
	}{{"budget fits one (every request swaps)", one, false}, {"budget fits both (steady state)", both, true}} {
		rs, err := phase(o, ph.budget, ph.warm)
		if err != nil {
			return fmt.Errorf("%s: %w", ph.name, err)
		}
		report(ph.name, ph.budget, rs)
	}
	return nil
}

var listening = regexp.MustCompile(`listening on (http://[^ ;]+)`)

func phase(o opts, budget int64, warm bool) ([]result, error) {
	cmd := exec.Command(o.bin, "serve", "-m", o.a, "-m", o.b, "--alias", "a", "--alias", "b", "--port", "0",
		"-np", strconv.Itoa(o.slots), "-c", strconv.Itoa(o.ctx), "-t", strconv.Itoa(o.threads),
		"--mem-budget", strconv.FormatInt(budget, 10), "--temp", "0", "--keep-alive", "-1")
	var stderr syncBuf
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var url string
	for i := 0; ; i++ {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			break
		}
		if i > 1200 {
			return nil, fmt.Errorf("server did not start:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if warm {
		for _, m := range []string{"a", "b"} {
			if _, err := request(url, m, o); err != nil {
				return nil, err
			}
		}
	}
	var rs []result
	for i := 0; i < o.requests; i++ {
		m := []string{"a", "b"}[i%2]
		r, err := request(url, m, o)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// request streams one completion and times its first token.
func request(url, model string, o opts) (result, error) {
	body, _ := json.Marshal(map[string]any{"model": model, "prompt": o.prompt, "max_tokens": o.n, "stream": true, "ignore_eos": true, "temperature": 0,
		"stream_options": map[string]any{"include_usage": true}})
	start := time.Now()
	resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return result{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return result{}, fmt.Errorf("%s: %s %s", model, resp.Status, b)
	}
	r := result{model: model}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") || line == "data: [DONE]" {
			continue
		}
		var ev struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal([]byte(line[6:]), &ev) != nil {
			continue
		}
		if len(ev.Choices) > 0 && ev.Choices[0].Text != "" && r.ttft == 0 {
			r.ttft = time.Since(start)
		}
		if ev.Usage != nil {
			r.tokens = ev.Usage.CompletionTokens
		}
	}
	r.wall = time.Since(start)
	return r, sc.Err()
}

func report(name string, budget int64, rs []result) {
	var ttft []float64
	var toks int
	var wall, decode time.Duration
	for _, r := range rs {
		ttft = append(ttft, r.ttft.Seconds())
		toks += r.tokens
		wall += r.wall
		decode += r.wall - r.ttft
	}
	sort.Float64s(ttft)
	fmt.Printf("\n%s: budget %.1f MiB, %d requests alternating a/b, %d tokens each\n", name, mib(budget), len(rs), rs[0].tokens)
	fmt.Printf("  TTFT  median %.3f s  min %.3f s  max %.3f s\n", ttft[len(ttft)/2], ttft[0], ttft[len(ttft)-1])
	fmt.Printf("  throughput (tokens / wall of the sequential requests) %.2f tok/s; decode after the first token %.2f tok/s\n",
		float64(toks)/wall.Seconds(), float64(toks-len(rs))/decode.Seconds())
	for i, r := range rs {
		fmt.Printf("  #%d %s ttft %.3f s wall %.3f s\n", i, r.model, r.ttft.Seconds(), r.wall.Seconds())
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
