package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/internal/golden"
	"github.com/memvanta/memvanta/kernels"
)

const vocabDir = "../../../shared/vocab"

// goldenQ4 caches the rebuilt golden model across this package's tests:
// synthesising it (32k-token vocabulary) dominates their run time.
var goldenQ4 struct {
	once sync.Once
	g    *golden.File
	b    []byte
	skip string
	err  error
}

// goldenModel writes the Q4_0 golden model to a temp file and returns its
// path and golden record (skipping when ../shared/vocab is absent).
func goldenModel(t *testing.T) (string, *golden.File) {
	t.Helper()
	c := &goldenQ4
	c.once.Do(func() {
		c.g, c.err = golden.Read("../../testdata/golden/synth-Q4_0.json")
		if c.err != nil {
			return
		}
		vb, err := os.ReadFile(filepath.Join(vocabDir, c.g.Synth.Vocab))
		if err != nil {
			c.skip = fmt.Sprintf("vocab not available: %v", err)
			return
		}
		vf, err := gguf.Parse(bytes.NewReader(vb), int64(len(vb)), gguf.DefaultLimits())
		if err != nil {
			c.err = err
			return
		}
		cfg, err := c.g.Synth.Config(vf, kernels.Quantize)
		if err != nil {
			c.err = err
			return
		}
		var buf bytes.Buffer
		if c.err = synth.Write(context.Background(), &buf, cfg, nil); c.err != nil {
			return
		}
		if s := sha256.Sum256(buf.Bytes()); hex.EncodeToString(s[:]) != c.g.ModelSHA256 {
			c.err = errors.New("core/synth no longer rebuilds the golden model; regenerate testdata/golden")
			return
		}
		c.b = buf.Bytes()
	})
	switch {
	case c.err != nil:
		t.Fatal(c.err)
	case c.skip != "":
		t.Skip(c.skip)
	}
	path := filepath.Join(t.TempDir(), "synth-Q4_0.gguf")
	if err := os.WriteFile(path, c.b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, c.g
}

// The whole product path — mmap runtime, tokenizer, graph, greedy sampling,
// streaming detokenizer — must print llama.cpp's text for each prompt.
func TestGenerateMatchesLlamaCpp(t *testing.T) {
	path, g := goldenModel(t)
	for _, mem := range [][]string{{"--mem", "resident"}, {"--mem-budget", "8MiB"}} {
		for _, c := range g.Cases {
			var out, errb bytes.Buffer
			args := append([]string{"-m", path, "-p", c.Prompt, "-n", "32", "--temp", "0", "-t", "2", "--seed", "1"}, mem...)
			if st := runGenerate(context.Background(), args, &out, &errb); st != 0 {
				t.Fatalf("%v: status %d, stderr %s", mem, st, errb.String())
			}
			// llama_detokenize drops the SPM word-start space of the first
			// piece; streaming after the prompt keeps it, as llama-cli does.
			if got := strings.TrimSuffix(out.String(), "\n"); got != c.Text && got != " "+c.Text {
				t.Errorf("%v %q:\n got %q\nwant %q (llama.cpp)", mem, c.Prompt, got, c.Text)
			}
			if s := errb.String(); !strings.Contains(s, "generated 32 tok") || !strings.Contains(s, "peak RSS") || !strings.Contains(s, "kernels ") {
				t.Errorf("stats line missing or incomplete: %q", s)
			}
		}
	}
}

func TestGenerateJSONAndSampling(t *testing.T) {
	path, g := goldenModel(t)
	c := g.Cases[0]
	run := func(extra ...string) []int32 {
		var out, errb bytes.Buffer
		args := append([]string{"-m", path, "-p", c.Prompt, "-n", "12", "--json"}, extra...)
		if st := runGenerate(context.Background(), args, &out, &errb); st != 0 {
			t.Fatalf("status %d: %s", st, errb.String())
		}
		var r struct {
			PromptTokens []int32 `json:"prompt_token_ids"`
			Tokens       []int32 `json:"tokens"`
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("--json output: %v\n%s", err, out.String())
		}
		if len(r.PromptTokens) != len(c.PromptTokens) {
			t.Fatalf("prompt tokens %v, llama.cpp %v", r.PromptTokens, c.PromptTokens)
		}
		return r.Tokens
	}
	greedy := run("--temp", "0")
	for i, tok := range greedy {
		if tok != c.Tokens[i] {
			t.Fatalf("--json greedy token %d = %d, llama.cpp %d", i, tok, c.Tokens[i])
		}
	}
	a := run("--temp", "1.5", "--seed", "7", "--top-k", "0", "--top-p", "1", "--min-p", "0")
	b := run("--temp", "1.5", "--seed", "7", "--top-k", "0", "--top-p", "1", "--min-p", "0")
	if !equal(a, b) {
		t.Errorf("same seed gave %v and %v", a, b)
	}
	if equal(a, greedy) {
		t.Errorf("temperature 1.5 with no filters reproduced the greedy text %v", a)
	}
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBenchJSON(t *testing.T) {
	path, _ := goldenModel(t)
	var out, errb bytes.Buffer
	if st := runBench(context.Background(), []string{"-m", path, "-p", "16", "-n", "4", "-r", "2", "--json"}, &out, &errb); st != 0 {
		t.Fatalf("status %d: %s", st, errb.String())
	}
	var r struct {
		Results []benchResult `json:"results"`
		PeakRSS int64         `json:"peak_rss_bytes"`
		Kernels string        `json:"kernels"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, out.String())
	}
	if len(r.Results) != 2 || r.Results[0].Test != "pp16" || r.Results[1].Test != "tg4" {
		t.Fatalf("results %+v, want pp16 and tg4", r.Results)
	}
	for _, x := range r.Results {
		if len(x.Samples) != 2 || !(x.Mean > 0) {
			t.Errorf("%s: %+v", x.Test, x)
		}
	}
	if r.PeakRSS <= 0 || r.Kernels == "" {
		t.Errorf("peak RSS %d, kernels %q", r.PeakRSS, r.Kernels)
	}
}

// Bad input gets one line on stderr and a non-zero status.
// TestGenerateGrammar: the grammar flags constrain the output and the run
// ends when the grammar is complete.
func TestGenerateGrammar(t *testing.T) {
	path, g := goldenModel(t)
	gf := filepath.Join(t.TempDir(), "yn.gbnf")
	if err := os.WriteFile(gf, []byte("# yes or no\nroot ::= (\"yes\" | \"no\") \"!\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		valid func(string) bool
	}{
		{[]string{"-j", `{"enum":["alpha","beta"]}`}, func(s string) bool {
			s = strings.TrimRight(s, " \n\t")
			return s == `"alpha"` || s == `"beta"`
		}},
		{[]string{"--grammar-file", gf}, func(s string) bool { return s == "yes!" || s == "no!" }},
	} {
		for _, temp := range []string{"0", "1.5"} {
			var out, errb bytes.Buffer
			args := append([]string{"-m", path, "-p", g.Cases[0].Prompt, "-n", "64", "--json", "--temp", temp, "--seed", "3"}, c.args...)
			if st := runGenerate(context.Background(), args, &out, &errb); st != 0 {
				t.Fatalf("%v: status %d: %s", c.args, st, errb.String())
			}
			var r struct {
				Text  string `json:"text"`
				Stats struct {
					Stop string `json:"stop"`
				} `json:"stats"`
			}
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if !c.valid(r.Text) || (r.Stats.Stop != "grammar" && r.Stats.Stop != "eog") {
				t.Errorf("%v temp %s: text %q, stop %q", c.args, temp, r.Text, r.Stats.Stop)
			}
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	path, _ := goldenModel(t)
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.gguf")
	if err := os.WriteFile(junk, []byte("GGUF\x03\x00\x00\x00garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no model", []string{"-p", "hi"}, "-m MODEL is required"},
		{"no prompt", []string{"-m", path}, "-p PROMPT or -f FILE is required"},
		{"missing file", []string{"-m", filepath.Join(dir, "nope.gguf"), "-p", "hi"}, "no such file"},
		{"not gguf", []string{"-m", junk, "-p", "hi"}, "junk.gguf"},
		{"bad kv", []string{"-m", path, "-p", "hi", "--kv", "q4_k"}, "--kv"},
		{"bad ctv", []string{"-m", path, "-p", "hi", "-ctv", "q6_k"}, "--cache-type-v"},
		{"bad flag", []string{"-m", path, "-p", "hi", "--nope"}, "not defined"},
		{"bad temp", []string{"-m", path, "-p", "hi", "--temp", "-1"}, "temperature"},
		{"bad mem", []string{"-m", path, "-p", "hi", "--mem", "swap"}, "--mem"},
		{"prompt too long", []string{"-m", path, "-p", strings.Repeat("hello ", 40), "-c", "16"}, "context holds 16"},
		{"grammar syntax", []string{"-m", path, "-p", "hi", "--grammar", "root ::= (\"a\""}, "--grammar: grammar: 1:14"},
		{"two grammars", []string{"-m", path, "-p", "hi", "--grammar", "root ::= \"a\"", "-j", "{}"}, "exclusive"},
		{"missing grammar file", []string{"-m", path, "-p", "hi", "--grammar-file", filepath.Join(dir, "nope.gbnf")}, "--grammar-file"},
		{"unsupported schema", []string{"-m", path, "-p", "hi", "-j", `{"type":"number","multipleOf":3}`}, `--json-schema: json schema: at #: keyword "multipleOf"`},
		{"unanchored pattern", []string{"-m", path, "-p", "hi", "-j", `{"type":"string","pattern":"a"}`}, `--json-schema: json schema: at #: pattern "a": must start with ^`},
		{"unsupported arch", []string{"-m", filepath.Join(vocabDir, "ggml-vocab-gpt-2.gguf"), "-p", "hi"}, `architecture "gpt2"`},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		st := runGenerate(context.Background(), c.args, &out, &errb)
		msg := errb.String()
		if st == 0 || !strings.Contains(msg, c.want) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
			t.Errorf("%s: status %d, stderr %q; want non-zero status and one line mentioning %q", c.name, st, msg, c.want)
		}
	}
}

// cancelOnWrite cancels the run as soon as the first text arrives, like a
// Ctrl-C in the middle of generation.
type cancelOnWrite struct {
	bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.cancel()
	return w.Buffer.Write(p)
}

// Ctrl-C (a cancelled context) stops generation cleanly: the text so far is
// flushed, the stats line still printed, and the status is 130.
func TestGenerateCancelled(t *testing.T) {
	path, g := goldenModel(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &cancelOnWrite{cancel: cancel}
	var errb bytes.Buffer
	st := runGenerate(ctx, []string{"-m", path, "-p", g.Cases[0].Prompt, "-n", "32", "--temp", "0"}, out, &errb)
	if st != 130 || !strings.Contains(errb.String(), "stop interrupted") {
		t.Fatalf("status %d, stderr %q; want 130 and an 'interrupted' stats line", st, errb.String())
	}
	if n := strings.Count(errb.String(), "generated 1 tok"); n != 1 {
		t.Errorf("want exactly one generated token before the interrupt, stderr %q", errb.String())
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	errb.Reset()
	if st := runGenerate(ctx2, []string{"-m", path, "-p", "hi"}, &bytes.Buffer{}, &errb); st != 130 {
		t.Errorf("cancelled before loading: status %d, stderr %q", st, errb.String())
	}
}
