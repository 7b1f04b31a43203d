package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCLIEmbed checks memvanta embed's plumbing on a small synthetic
// qwen3 embedder (the vectors themselves are checked against llama.cpp in
// core/model's TestEmbedGoldens): one unit vector per line and text, the
// same numbers in --json, --embd-normalize -1 leaving the length alone,
// and a file without pooling_type refused unless --pooling is given.
func TestCLIEmbed(t *testing.T) {
	dir := t.TempDir()
	withPool := filepath.Join(dir, "pool.gguf")
	noPool := filepath.Join(dir, "nopool.gguf")
	shape := []string{"--type", "F32", "--embd", "64", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--ff", "128",
		"--ctx", "128", "--vocab", "300", "--arch", "qwen3", "-q"}
	mv(t, "", append([]string{"synth", "-o", withPool, "--pooling", "last"}, shape...)...).want(t, 0, "synth --pooling last")
	mv(t, "", append([]string{"synth", "-o", noPool}, shape...)...).want(t, 0, "synth")

	r := mv(t, "", "embed", "-m", withPool, "-p", "hello world\nsecond text")
	r.want(t, 0, "embed")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines for 2 texts:\n%s", len(lines), r.stdout)
	}
	vecs := make([][]float64, 2)
	for i, l := range lines {
		var sum float64
		for _, f := range strings.Fields(l) {
			x, err := strconv.ParseFloat(f, 32)
			if err != nil {
				t.Fatal(err)
			}
			vecs[i] = append(vecs[i], x)
			sum += x * x
		}
		if len(vecs[i]) != 64 || math.Abs(sum-1) > 1e-5 {
			t.Fatalf("line %d: %d values, squared length %g", i, len(vecs[i]), sum)
		}
	}
	if strings.Join(strings.Fields(lines[0]), " ") == strings.Join(strings.Fields(lines[1]), " ") {
		t.Fatal("two texts, one vector")
	}

	r = mv(t, "", "embed", "-m", withPool, "-p", "hello world", "--json")
	r.want(t, 0, "embed --json")
	var j struct {
		Object string `json:"object"`
		Data   []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if j.Object != "list" || len(j.Data) != 1 || j.Usage.PromptTokens == 0 {
		t.Fatalf("json: %+v", j)
	}
	for k, x := range j.Data[0].Embedding {
		if float32(x) != float32(vecs[0][k]) {
			t.Fatalf("json value %d: %g, text output %g", k, x, vecs[0][k])
		}
	}

	r = mv(t, "", "embed", "-m", withPool, "-p", "hello world", "--embd-normalize", "-1")
	r.want(t, 0, "embed --embd-normalize -1")
	var sum float64
	for _, f := range strings.Fields(r.stdout) {
		x, _ := strconv.ParseFloat(f, 32)
		sum += x * x
	}
	if math.Abs(sum-1) < 1e-3 {
		t.Fatalf("unnormalised vector has unit length (%g)", sum)
	}

	r = mv(t, "", "embed", "-m", noPool, "-p", "x")
	r.want(t, exitRuntime, "embed without pooling_type")
	if !strings.Contains(r.stderr, "pooling") {
		t.Fatalf("stderr does not say why: %s", r.stderr)
	}
	mv(t, "", "embed", "-m", noPool, "-p", "x", "--pooling", "last").want(t, 0, "embed --pooling last")
	mv(t, "", "embed", "-m", noPool, "-p", "x", "--pooling", "bogus").want(t, exitUsage, "embed --pooling bogus")
	mv(t, "", "embed", "-m", noPool, "-p", "x", "--embd-normalize", "3").want(t, exitUsage, "embed --embd-normalize 3")
}

// TestCLIEmbedEncoder: memvanta embed on a bert reranker (synthetic, with
// the bge WordPiece vocabulary): pooling none prints a vector per token,
// cls one per text, rank (--reranking) one raw score per QUERY<TAB>DOC
// text with --embd-normalize -1, and a query and document scored apart
// from another pair.
func TestCLIEmbedEncoder(t *testing.T) {
	vocab := "../../../shared/vocab-wordpiece/ggml-vocab-bert-bge.gguf"
	if _, err := os.Stat(vocab); err != nil {
		t.Skipf("no bge vocabulary: %v", err)
	}
	path := filepath.Join(t.TempDir(), "bert.gguf")
	mv(t, "", "synth", "-o", path, "--type", "F32", "--embd", "64", "--layers", "2", "--heads", "4", "--kv-heads", "4", "--ff", "128",
		"--ctx", "64", "--eps", "1e-12", "--arch", "bert", "--bias", "--classifier", "--pooling", "rank", "--vocab-from", vocab, "-q").want(t, 0, "synth bert")
	lines := func(r result) []string { return strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") }
	r := mv(t, "", "embed", "-m", path, "-p", "hello world", "--pooling", "none")
	r.want(t, 0, "embed --pooling none")
	if n := len(lines(r)); n != 4 { // [CLS] hello world [SEP]
		t.Errorf("pooling none: %d lines for 4 tokens:\n%s", n, r.stdout)
	}
	r = mv(t, "", "embed", "-m", path, "-p", "hello world\nother", "--pooling", "cls")
	r.want(t, 0, "embed --pooling cls")
	if l := lines(r); len(l) != 2 || len(strings.Fields(l[0])) != 64 {
		t.Errorf("pooling cls: %d lines:\n%s", len(l), r.stdout)
	}
	r = mv(t, "", "embed", "-m", path, "-p", `what is a panda?\thi\nwhat is a panda?\tParis is the capital of France.`, "--reranking", "--embd-normalize", "-1")
	r.want(t, 0, "embed --reranking")
	l := lines(r)
	if len(l) != 2 || len(strings.Fields(l[0])) != 1 || l[0] == l[1] {
		t.Errorf("reranking: want two different single scores:\n%s", r.stdout)
	}
	mv(t, "", "embed", "-m", path, "-p", "x", "--reranking", "--pooling", "mean").want(t, 2, "--reranking with --pooling mean")
}
