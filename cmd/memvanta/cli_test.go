package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests drive the built binary, as a user's shell does: exit
// statuses, signals, pipes and stdin are part of what they check. The
// binary is built once per test run into a temp directory.

const sharedModels = "../../../shared/models"

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// memvantaBin builds ./cmd/memvanta once and returns the binary's path.
func memvantaBin(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "memvanta-cli-test-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "memvanta")
		out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// storiesModel returns the trained stories260K F32 model from ../shared,
// skipping when it is absent.
func storiesModel(t *testing.T) string {
	t.Helper()
	p := filepath.Join(sharedModels, "stories260K-F32.gguf")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("trained model not available: %v", err)
	}
	abs, _ := filepath.Abs(p)
	return abs
}

type result struct {
	code           int
	stdout, stderr string
}

// mv runs the binary with args and optional stdin.
func mv(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return mvEnv(t, nil, stdin, args...)
}

// mvEnv is mv with extra environment variables.
func mvEnv(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(memvantaBin(t), args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running memvanta %v: %v", args, err)
	}
	return result{code, out.String(), errb.String()}
}

func (r result) want(t *testing.T, code int, what string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r.code, code, r.stdout, r.stderr)
	}
}

func TestCLIHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		r := mv(t, "", args...)
		r.want(t, 0, fmt.Sprint(args))
		if !strings.Contains(r.stdout, "usage: memvanta <command>") || r.stderr != "" {
			t.Errorf("%v: help must be on stdout only; stdout %q stderr %q", args, r.stdout, r.stderr)
		}
	}
	r := mv(t, "")
	r.want(t, 2, "no arguments")
	if !strings.Contains(r.stderr, "usage: memvanta") {
		t.Errorf("no arguments: usage expected on stderr, got %q", r.stderr)
	}
	for _, cmd := range []string{"generate", "bench", "tokenize", "detokenize", "synth", "version", "pull", "ls", "rm", "inspect"} {
		a, b := mv(t, "", "help", cmd), mv(t, "", cmd, "-h")
		a.want(t, 0, "help "+cmd)
		b.want(t, 0, cmd+" -h")
		if !strings.HasPrefix(a.stdout, "usage: memvanta "+cmd) || a.stdout != b.stdout || a.stderr != "" || b.stderr != "" {
			t.Errorf("help %s and %s -h must print the command's usage on stdout:\n%q\n%q", cmd, cmd, a.stdout, b.stdout)
		}
	}
	mv(t, "", "help", "nosuch").want(t, 2, "help nosuch")
	g := mv(t, "", "generate", "-h").stdout
	for _, want := range []string{"-m, --model FILE", "-p, --prompt PROMPT", "-f, --file FILE", "-n, --predict, --n-predict N",
		"-c, --ctx-size N", "-t, --threads N", "-b, --batch-size N", "-s, --seed SEED", "--ignore-eos", "--stop, -r, --reverse-prompt STR",
		"-l, --logit-bias TOKEN_ID(+|-)BIAS", "(default 0.8)", "(default 0.95)", "(default 0.05)"} {
		if !strings.Contains(g, want) {
			t.Errorf("generate -h lacks %q", want)
		}
	}
	if regexp.MustCompile(`\d\.\d{6,}`).MatchString(g) {
		t.Errorf("generate -h prints a float default with float32 noise:\n%s", g)
	}
	bh := mv(t, "", "bench", "-h").stdout
	if !strings.Contains(bh, "-d, --n-depth") || !strings.Contains(bh, "0 = just what the tests need") {
		t.Errorf("bench -h must describe -d and what -c 0 really does:\n%s", bh)
	}
	// The commit printed is the one the toolchain stamped into the binary
	// (when it stamped one: -buildvcs=false or a work tree Go cannot read
	// leaves none, and version says "(unknown)").
	meta, err := exec.Command("go", "version", "-m", memvantaBin(t)).Output()
	if err != nil {
		t.Fatal(err)
	}
	rev := regexp.MustCompile(`vcs\.revision=([0-9a-f]+)`).FindSubmatch(meta)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := mv(t, "", args...)
		r.want(t, 0, fmt.Sprint(args))
		if rev != nil && !strings.Contains(r.stdout, "commit:  "+string(rev[1])) {
			t.Errorf("%v: binary stamped with %s, version says:\n%s", args, rev[1], r.stdout)
		}
		if rev == nil && !strings.Contains(r.stdout, "commit:  (unknown)") {
			t.Errorf("%v: no VCS stamp in the binary, version says:\n%s", args, r.stdout)
		}
		for _, want := range []string{"memvanta ", "commit: ", "go:      go1.", "kernels: "} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, r.stdout)
			}
		}
	}
}

func TestCLIExitCodes(t *testing.T) {
	m := storiesModel(t)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"nosuch"}, 2, `unknown command "nosuch"`},
		{[]string{"generate", "-m", m, "-p", "x", "--nope"}, 2, "not defined"},
		{[]string{"generate", "-m", m}, 2, "-p PROMPT or -f FILE is required"},
		{[]string{"generate", "-p", "x"}, 2, "-m MODEL is required"},
		{[]string{"generate", "-m", m, "-p", "x", "-n", "-2"}, 2, "-n -2"},
		{[]string{"generate", "-m", m, "-p", "x", "--logit-bias", "12x3"}, 2, "--logit-bias"},
		{[]string{"generate", "-m", m, "-p", "x", "--logit-bias", "99999+1"}, 2, "outside the vocabulary"},
		{[]string{"generate", "-m", m, "-p", "x", "--temp", "abc"}, 2, "not a number"},
		{[]string{"generate", "-m", m, "-p", "x", "-s", "-5"}, 2, "--seed"},
		{[]string{"generate", "-m", "/nonexistent/model.gguf", "-p", "x"}, 1, "no such file"},
		{[]string{"generate", "-m", m, "-f", "/nonexistent/prompt.txt"}, 1, "no such file"},
		{[]string{"synth"}, 2, "memvanta synth: -o OUT.gguf is required"},
		{[]string{"synth", "-o", "/nonexistent/x.gguf", "--type", "Q9_9"}, 2, "memvanta synth: unknown type"},
		{[]string{"synth", "--nope"}, 2, "memvanta synth: flag provided but not defined"},
		{[]string{"synth", "-o", "/nonexistent/x.gguf", "--embd", "0"}, 2, "memvanta synth: embd, layers"},
		{[]string{"bench", "-m", m, "-p", "1,x"}, 2, "-p"},
		{[]string{"tokenize", "-m", m}, 2, "-p TEXT or -f FILE is required"},
		{[]string{"detokenize", "-m", m, "1", "x"}, 2, `"x" is not a token id`},
	}
	for _, c := range cases {
		r := mv(t, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d stderr %q; want exit %d and one line containing %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}

// genJSON is generate --json's document.
type genJSON struct {
	PromptTokens []int32 `json:"prompt_token_ids"`
	Tokens       []int32 `json:"tokens"`
	Text         string  `json:"text"`
	Stats        struct {
		Stop string `json:"stop"`
		Seed string `json:"seed"`
	} `json:"stats"`
}

func genJSONRun(t *testing.T, stdin string, args ...string) genJSON {
	t.Helper()
	r := mv(t, stdin, append([]string{"generate", "--json"}, args...)...)
	r.want(t, 0, fmt.Sprint(args))
	var g genJSON
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
		t.Fatalf("%v: --json: %v\n%s", args, err, r.stdout)
	}
	return g
}

// llama.cpp's long spellings, -f FILE and -f - give exactly what the short
// flags and -p give.
func TestCLILlamaCppFlags(t *testing.T) {
	m := storiesModel(t)
	short := mv(t, "", "generate", "-m", m, "-p", "Once upon a time", "-n", "24", "-c", "256", "-t", "1", "-b", "4", "--temp", "0.7", "-s", "42")
	short.want(t, 0, "short flags")
	long := mv(t, "", "generate", "--model", m, "--prompt", "Once upon a time", "--n-predict", "24", "--ctx-size", "256",
		"--threads", "1", "--batch-size", "4", "--temp", "0.7", "--seed", "42", "-ngl", "99", "-no-cnv")
	long.want(t, 0, "long flags")
	if short.stdout != long.stdout || short.stdout == "" {
		t.Errorf("long flags changed the output:\n%q\n%q", short.stdout, long.stdout)
	}
	predict := mv(t, "", "generate", "-m", m, "-p", "Once upon a time", "--predict", "24", "-c", "256", "-t", "1", "-b", "4", "--temp", "0.7", "-s", "42")
	if predict.stdout != short.stdout {
		t.Errorf("--predict differs from -n: %q", predict.stdout)
	}
	pf := filepath.Join(t.TempDir(), "prompt.txt")
	if err := os.WriteFile(pf, []byte("Once upon a time\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := mv(t, "", "generate", "-m", m, "-f", pf, "-n", "24", "-c", "256", "-t", "1", "-b", "4", "--temp", "0.7", "-s", "42")
	stdin := mv(t, "Once upon a time\n", "generate", "-m", m, "--file", "-", "-n", "24", "-c", "256", "-t", "1", "-b", "4", "--temp", "0.7", "-s", "42")
	if file.stdout != short.stdout || stdin.stdout != short.stdout {
		t.Errorf("-f FILE / -f - differ from -p:\n-p %q\n-f %q\n-  %q", short.stdout, file.stdout, stdin.stdout)
	}
	if !strings.Contains(short.stderr, "seed 42") {
		t.Errorf("stats line lacks the seed: %q", short.stderr)
	}
	// A typical llama-cli line, with flags that mean nothing here.
	cliLine := mv(t, "", "generate", "-m", m, "-p", "Once upon a time", "-n", "24", "-c", "256", "-t", "1", "-b", "4", "--temp", "0.7", "-s", "42",
		"-ngl", "99", "-ub", "512", "--color", "--mlock", "--no-mmap", "--log-disable", "--no-display-prompt", "-no-cnv", "-e")
	if cliLine.stdout != short.stdout {
		t.Errorf("llama-cli line: %q (stderr %q), want %q", cliLine.stdout, cliLine.stderr, short.stdout)
	}
	// llama-bench's -o json is --json; llama-tokenize's --stdin is -f -.
	bj := mv(t, "", "bench", "-m", m, "-p", "8", "-n", "2", "-r", "1", "-o", "json", "-ngl", "99")
	bj.want(t, 0, "bench -o json")
	if !json.Valid([]byte(bj.stdout)) {
		t.Errorf("bench -o json: %q", bj.stdout)
	}
	mv(t, "", "bench", "-m", m, "-o", "csv").want(t, 2, "bench -o csv")
	// --cpuprofile writes a profile go tool pprof reads (gzip-compressed
	// protobuf); an unwritable path is a runtime error, not a crash.
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	mv(t, "", "bench", "-m", m, "-p", "8", "-n", "2", "-r", "1", "--cpuprofile", prof).want(t, 0, "bench --cpuprofile")
	if b, err := os.ReadFile(prof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("bench --cpuprofile: %d bytes, %v; want a gzip-compressed profile", len(b), err)
	}
	mv(t, "", "bench", "-m", m, "-p", "8", "-n", "2", "-r", "1", "--cpuprofile", filepath.Join(prof, "x")).want(t, 1, "bench --cpuprofile in a file")
	tp := mv(t, "", "tokenize", "-m", m, "-p", "Once upon a time", "--ids")
	ts := mv(t, "Once upon a time", "tokenize", "-m", m, "--stdin", "--ids", "--log-disable")
	if ts.stdout != tp.stdout || tp.stdout == "" {
		t.Errorf("tokenize --stdin %q, -p %q", ts.stdout, tp.stdout)
	}
	// -p and -f together is a usage error.
	mv(t, "", "generate", "-m", m, "-p", "x", "-f", pf).want(t, 2, "-p with -f")
}

// The trained model from BOS alone (-p "") reproduces llama.cpp's and
// llama2.c's greedy story, quoted in ../shared/models/PROVENANCE.md.
func TestCLIEmptyPromptIsBOS(t *testing.T) {
	m := storiesModel(t)
	prov, err := os.ReadFile(filepath.Join(sharedModels, "PROVENANCE.md"))
	if err != nil {
		t.Skip(err)
	}
	sec := string(prov)
	i := strings.Index(sec, "## llama.cpp's greedy output")
	if i < 0 {
		t.Skip("PROVENANCE.md no longer quotes the greedy story")
	}
	sec = sec[i:]
	a := strings.Index(sec, "```\n")
	b := strings.Index(sec[a+4:], "```")
	story := strings.TrimSpace(sec[a+4 : a+4+b])
	g := genJSONRun(t, "", "-m", m, "-p", "", "-n", "256", "--temp", "0", "-t", "1")
	if len(g.PromptTokens) != 1 || g.PromptTokens[0] != 1 {
		t.Fatalf("empty prompt encoded as %v, want BOS alone [1]", g.PromptTokens)
	}
	if got := strings.TrimSpace(g.Text); got != story {
		t.Errorf("greedy story from BOS:\n got %q\nwant %q (PROVENANCE.md)", got, story)
	}
	r := mv(t, "", "generate", "-m", m, "-p", "", "--no-bos", "-n", "4")
	r.want(t, 2, "empty prompt with --no-bos")
}

func TestCLIStopBiasPredict(t *testing.T) {
	m := storiesModel(t)
	base := genJSONRun(t, "", "-m", m, "-p", "Once upon a time", "-n", "64", "--temp", "0")
	if base.Stats.Stop != "length" || len(base.Tokens) != 64 {
		t.Fatalf("base run: stop %q, %d tokens", base.Stats.Stop, len(base.Tokens))
	}
	// --stop: the text ends just before the first occurrence (of any of
	// the stop strings), which is not printed; streaming prints the same.
	stopped := genJSONRun(t, "", "-m", m, "-p", "Once upon a time", "-n", "64", "--temp", "0", "--stop", "Lily", "--stop", "zzz")
	i := strings.Index(base.Text, "Lily")
	if i < 0 {
		t.Fatalf("base text %q lacks the stop string", base.Text)
	}
	if stopped.Text != base.Text[:i] || stopped.Stats.Stop != "stop" {
		t.Errorf("--stop Lily: text %q stop %q, want %q", stopped.Text, stopped.Stats.Stop, base.Text[:i])
	}
	streamed := mv(t, "", "generate", "-m", m, "-p", "Once upon a time", "-n", "64", "--temp", "0", "-r", "Lily")
	if streamed.stdout != base.Text[:i]+"\n" {
		t.Errorf("streamed -r Lily: %q, want %q", streamed.stdout, base.Text[:i]+"\n")
	}
	// --logit-bias: +inf-like bias forces a token under greedy decoding,
	// -inf bans the token greedy decoding picked first.
	forced := genJSONRun(t, "", "-m", m, "-p", "Once upon a time", "-n", "5", "--temp", "0", "--logit-bias", "300+1000")
	for _, id := range forced.Tokens {
		if id != 300 {
			t.Fatalf("--logit-bias 300+1000 gave %v", forced.Tokens)
		}
	}
	banned := genJSONRun(t, "", "-m", m, "-p", "Once upon a time", "-n", "5", "--temp", "0", "-l", fmt.Sprintf("%d-inf", base.Tokens[0]))
	if banned.Tokens[0] == base.Tokens[0] {
		t.Errorf("-l %d-inf still picked it: %v", base.Tokens[0], banned.Tokens)
	}
	// -n -1 runs to the end of text or the context; with --ignore-eos the
	// end of text is banned, so the context (-c 96) stops it: 96 positions
	// evaluated, plus the last token sampled from them (it needs no slot).
	untilEnd := genJSONRun(t, "", "-m", m, "-p", "", "-n", "-1", "--temp", "0")
	if untilEnd.Stats.Stop != "eog" && untilEnd.Stats.Stop != "context" {
		t.Errorf("-n -1 stopped by %q", untilEnd.Stats.Stop)
	}
	full := genJSONRun(t, "", "-m", m, "-p", "", "-n", "-1", "--temp", "0", "-c", "96", "--ignore-eos")
	if full.Stats.Stop != "context" || len(full.Tokens)+len(full.PromptTokens) != 97 {
		t.Errorf("-n -1 --ignore-eos -c 96: stop %q after %d+%d tokens", full.Stats.Stop, len(full.PromptTokens), len(full.Tokens))
	}
	for _, id := range full.Tokens {
		if id == 2 {
			t.Errorf("--ignore-eos generated EOS: %v", full.Tokens)
		}
	}
}

// -c defaults to the training context (512 for stories260K): 600 prompt
// tokens do not fit; -c above it warns in one line.
func TestCLIContextDefault(t *testing.T) {
	m := storiesModel(t)
	long := strings.Repeat("the cat ", 300)
	r := mv(t, "", "generate", "-m", m, "-p", long, "-n", "1")
	r.want(t, 1, "prompt over the training context")
	if !strings.Contains(r.stderr, "context holds 512") {
		t.Errorf("default -c should be the training context 512: %q", r.stderr)
	}
	r = mv(t, "", "generate", "-m", m, "-p", long, "-n", "1", "-c", "1024")
	r.want(t, 0, "-c 1024")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "warning: -c 1024 is larger than the model's training context (512)") {
		t.Errorf("want one warning line then the stats line, got %q", r.stderr)
	}
}

// snakeKeys reports every object key that is not snake_case.
func snakeKeys(v any, path string, bad *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !regexp.MustCompile(`^[a-z][a-z0-9_]*$`).MatchString(k) {
				*bad = append(*bad, path+"."+k)
			}
			snakeKeys(e, path+"."+k, bad)
		}
	case []any:
		for i, e := range x {
			snakeKeys(e, fmt.Sprintf("%s[%d]", path, i), bad)
		}
	}
}

func TestCLIJSONSnakeCase(t *testing.T) {
	m := storiesModel(t)
	for _, args := range [][]string{
		{"generate", "-m", m, "-p", "hi", "-n", "3", "--json", "-s", "18446744073709551615"},
		{"bench", "-m", m, "-p", "8", "-n", "4", "-r", "1", "--json"},
		{"bench", "-m", m, "-p", "8", "-n", "4", "-r", "1", "--json", "--mem-budget", "1MiB"},
		{"tokenize", "-m", m, "-p", "hi", "--json"},
	} {
		r := mv(t, "", args...)
		r.want(t, 0, fmt.Sprint(args))
		var v any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, r.stdout)
		}
		var bad []string
		snakeKeys(v, "", &bad)
		if len(bad) > 0 {
			t.Errorf("%v: keys not snake_case: %v", args[:1], bad)
		}
		if args[0] == "generate" && !strings.Contains(r.stdout, `"seed": "18446744073709551615"`) {
			t.Errorf("the seed must be a JSON string (exact in float64 readers):\n%s", r.stdout)
		}
	}
}

// Tokenize prints llama.cpp's ids for its own tokenizer test vectors
// (../shared/vocab: test-tokenizer-0 inputs and outputs, no BOS, no
// special parsing) in llama-tokenize's --ids format, and detokenize
// reads that format back.
func TestCLITokenize(t *testing.T) {
	for _, name := range []string{"ggml-vocab-llama-spm.gguf", "ggml-vocab-llama-bpe.gguf"} {
		vocab := filepath.Join(vocabDir, name)
		inp, err1 := os.ReadFile(vocab + ".inp")
		out, err2 := os.ReadFile(vocab + ".out")
		if err1 != nil || err2 != nil {
			t.Skip("tokenizer vectors not available")
		}
		inputs := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
		wants := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		n := 0
		for i, in := range inputs {
			if i >= len(wants) || in == "" || strings.ContainsRune(in, 0) {
				continue
			}
			want := "[" + strings.Join(strings.Fields(wants[i]), ", ") + "]\n"
			r := mv(t, "", "tokenize", "-m", vocab, "-p", in, "--ids", "--no-bos", "--no-escape")
			r.want(t, 0, "tokenize "+name)
			if r.stdout != want {
				t.Errorf("%s %q: %q, llama.cpp %q", name, in, r.stdout, want)
			}
			n++
		}
		if n < 20 {
			t.Errorf("%s: only %d vectors checked", name, n)
		}
	}
	m := storiesModel(t)
	r := mv(t, "", "tokenize", "-m", m, "-p", "Once upon a time", "--show-count")
	r.want(t, 0, "tokenize")
	if !regexp.MustCompile(`(?m)^     1 -> '<s>'$`).MatchString(r.stdout) || !strings.HasSuffix(r.stdout, "Total number of tokens: 5\n") {
		t.Errorf("llama-tokenize's line format expected:\n%s", r.stdout)
	}
	ids := mv(t, "", "tokenize", "-m", m, "-p", "Once upon a time", "--ids")
	back := mv(t, ids.stdout, "detokenize", "-m", m)
	back.want(t, 0, "detokenize")
	if back.stdout != "Once upon a time\n" && back.stdout != " Once upon a time\n" {
		t.Errorf("detokenize(tokenize(x)) = %q", back.stdout)
	}
	// Escapes are processed by default (as llama.cpp); --no-escape keeps them.
	esc := mv(t, "", "tokenize", "-m", m, "-p", `a\nb\x41`, "--ids")
	lit := mv(t, "", "tokenize", "-m", m, "-p", "a\nbA", "--ids")
	raw := mv(t, "", "tokenize", "-m", m, "-p", `a\nb\x41`, "--ids", "--no-escape")
	if esc.stdout != lit.stdout || raw.stdout == lit.stdout {
		t.Errorf("escapes: %q (escaped) %q (literal newline) %q (--no-escape)", esc.stdout, lit.stdout, raw.stdout)
	}
	sp := mv(t, "", "tokenize", "-m", m, "-p", "<s>a", "--ids", "--no-bos", "--special")
	if !strings.HasPrefix(sp.stdout, "[1, ") {
		t.Errorf("--special should parse <s> as token 1: %q", sp.stdout)
	}
}

// `generate | head` ends quietly: no message, status 141, and the reader
// got what was written before it closed.
func TestCLISigpipe(t *testing.T) {
	m := storiesModel(t)
	cmd := exec.Command(memvantaBin(t), "generate", "-m", m, "-p", "", "-n", "-1", "--ignore-eos", "-c", "4096", "--temp", "0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(stdout, buf); err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	quiet := strings.TrimSpace(regexp.MustCompile(`(?m)^.*warning: -c 4096.*$`).ReplaceAllString(errb.String(), ""))
	if !errors.As(err, &ee) || ee.ExitCode() != 141 || quiet != "" {
		t.Errorf("closed stdout: %v, stderr %q; want exit 141 and nothing on stderr", err, errb.String())
	}
}

// interruptAfter starts the binary, waits for a stderr line matching
// marker, sends SIGINT and returns the result.
func interruptAfter(t *testing.T, marker string, args ...string) result {
	t.Helper()
	return interruptAfterEnv(t, nil, marker, args...)
}

func interruptAfterEnv(t *testing.T, env []string, marker string, args ...string) result {
	t.Helper()
	cmd := exec.Command(memvantaBin(t), args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	var errMu sync.Mutex
	done := make(chan struct{})
	seen := make(chan struct{})
	go func() {
		defer close(done)
		// Match on the raw stream: a progress line rewritten with \r may
		// stay unterminated while the command waits.
		once := sync.Once{}
		buf := make([]byte, 4096)
		for {
			n, err := pr.Read(buf)
			errMu.Lock()
			errb.Write(buf[:n])
			hit := strings.Contains(errb.String(), marker)
			errMu.Unlock()
			if hit {
				once.Do(func() { close(seen) })
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-seen:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("%v: %q never appeared on stderr", args, marker)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	pw.Close()
	<-done
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	return result{code, out.String(), errb.String()}
}

func TestCLIInterrupt(t *testing.T) {
	m := storiesModel(t)
	t.Run("bench keeps its repetitions", func(t *testing.T) {
		r := interruptAfter(t, "bench rep 2/", "bench", "-m", m, "-p", "64", "-n", "32", "-r", "100000", "-t", "1")
		if r.code != 130 {
			t.Fatalf("exit %d, want 130; stderr %s", r.code, r.stderr)
		}
		if !regexp.MustCompile(`\|\s+pp64 \|`).MatchString(r.stdout) || !regexp.MustCompile(`\|\s+tg32 \|`).MatchString(r.stdout) || !strings.Contains(r.stderr, "interrupted") {
			t.Errorf("the measured repetitions must be printed:\nstdout %s\nstderr %s", r.stdout, r.stderr)
		}
	})
	t.Run("synth leaves no partial file", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "big.gguf")
		r := interruptAfter(t, "synth:", "synth", "-o", out, "--type", "F32", "--embd", "2048", "--layers", "22", "--ff", "5632", "--vocab", "32000")
		if r.code != 130 {
			t.Fatalf("exit %d, want 130; stderr %q", r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "context canceled") || !strings.Contains(r.stderr, "interrupted") {
			t.Errorf("stderr %q: want an 'interrupted' line and no 'context canceled'", r.stderr)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("files left behind: %v", ents)
		}
	})
	t.Run("generate prints its stats", func(t *testing.T) {
		r := interruptAfter(t, "", "generate", "-m", m, "-p", "", "-n", "-1", "--ignore-eos", "-c", "100000", "--temp", "0")
		if r.code != 130 || !strings.Contains(r.stderr, "stop interrupted") {
			t.Errorf("exit %d, stderr %q; want 130 and the stats line", r.code, r.stderr)
		}
	})
}

// hubServer imitates the Hugging Face endpoints memvanta pull uses (tree
// listing with LFS sha256, resolve with Range and X-Linked-* headers).
// cut > 0 drops the next content answer after that many bytes.
type hubServer struct {
	mu      sync.Mutex
	repos   map[string]map[string][]byte // "owner/repo" -> file -> content
	corrupt map[string]bool              // files served with one byte flipped (listing and headers keep the true sum)
	cut     int
	stall   bool // after cut bytes, hold the connection open until the client leaves
	ranges  []string
}

func (h *hubServer) seenRanges() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ranges...)
}

func (h *hubServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := r.URL.Path
	if rest, ok := strings.CutPrefix(p, "/api/models/"); ok {
		repo, ok := strings.CutSuffix(rest, "/tree/main")
		files, found := h.repos[repo]
		if !ok || !found {
			http.Error(w, `{"error":"Repository not found"}`, http.StatusNotFound)
			return
		}
		var out []map[string]any
		for name, b := range files {
			sum := sha256.Sum256(b)
			out = append(out, map[string]any{"type": "file", "oid": "0000000000000000000000000000000000000000", "size": 135, "path": name,
				"lfs": map[string]any{"oid": hex.EncodeToString(sum[:]), "size": len(b), "pointerSize": 135}})
		}
		json.NewEncoder(w).Encode(out)
		return
	}
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 5)
	if len(parts) != 5 || parts[2] != "resolve" || parts[3] != "main" {
		http.NotFound(w, r)
		return
	}
	b, ok := h.repos[parts[0]+"/"+parts[1]][parts[4]]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.ranges = append(h.ranges, r.Header.Get("Range"))
	sum := sha256.Sum256(b)
	w.Header().Set("X-Linked-Etag", `"`+hex.EncodeToString(sum[:])+`"`)
	w.Header().Set("X-Linked-Size", fmt.Sprint(len(b)))
	if h.corrupt[parts[4]] {
		b = append([]byte(nil), b...)
		b[len(b)/2] ^= 0x40
	}
	if h.cut > 0 {
		cut := h.cut
		h.cut = 0
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.WriteHeader(http.StatusOK)
		w.Write(b[:cut])
		w.(http.Flusher).Flush()
		if h.stall {
			h.stall = false
			h.mu.Unlock()
			<-r.Context().Done()
			h.mu.Lock()
			return
		}
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
}

// pull, -m hf.co/... (first use pulls), ls, rm, resume and refusal of a
// file the sandboxed inspect rejects — against a local imitation of the
// Hub (HF_ENDPOINT), never the network.
func TestCLIPull(t *testing.T) {
	m := storiesModel(t)
	f32, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	q8, err := os.ReadFile(filepath.Join(sharedModels, "stories260K-Q8_0.gguf"))
	if err != nil {
		t.Skip(err)
	}
	hostile, err := os.ReadFile("../../testdata/gguf/malformed/alignment-zero.gguf")
	if err != nil {
		t.Fatal(err)
	}
	h := &hubServer{repos: map[string]map[string][]byte{
		"acme/stories260K-GGUF": {"stories260K-F32.gguf": f32, "stories260K-Q8_0.gguf": q8},
		"acme/evil-GGUF":        {"evil-Q4_K_M.gguf": hostile, "corrupt-Q8_0.gguf": q8},
	}, corrupt: map[string]bool{"corrupt-Q8_0.gguf": true}}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cache := t.TempDir()
	env := []string{"HF_ENDPOINT=" + srv.URL, "XDG_CACHE_HOME=" + cache, "MEMVANTA_MODELS=", "HF_TOKEN="}
	dir := filepath.Join(cache, "memvanta", "models")

	// An interrupted download resumes with a Range request.
	h.mu.Lock()
	h.cut = len(f32) / 3
	h.mu.Unlock()
	r := mvEnv(t, env, "", "pull", "hf.co/acme/stories260K-GGUF:F32")
	r.want(t, 1, "dropped connection")
	if !strings.Contains(r.stderr, "pull again to resume") {
		t.Errorf("dropped connection: %q", r.stderr)
	}
	r = mvEnv(t, env, "", "pull", "hf.co/acme/stories260K-GGUF:F32")
	r.want(t, 0, "resumed pull")
	want := filepath.Join(dir, "acme", "stories260K-GGUF", "stories260K-F32.gguf")
	if strings.TrimSpace(r.stdout) != want || !strings.Contains(r.stderr, "pull: acme/stories260K-GGUF/stories260K-F32.gguf") {
		t.Errorf("pull: stdout %q (want %s), stderr %q", r.stdout, want, r.stderr)
	}
	if got, _ := os.ReadFile(want); !bytes.Equal(got, f32) {
		t.Error("pulled file differs from the served one")
	}
	if got, wantR := h.seenRanges(), fmt.Sprintf("bytes=%d-", len(f32)/3); len(got) != 2 || got[1] != wantR {
		t.Errorf("Range headers %q, want the second to be %q", got, wantR)
	}

	// Ctrl-C during a download keeps the partial file (exit 130), and the
	// next pull resumes it.
	h.mu.Lock()
	h.cut, h.stall, h.ranges = len(q8)/2, true, nil
	h.mu.Unlock()
	ir := interruptAfterEnv(t, env, "pull: acme/stories260K-GGUF/stories260K-Q8_0.gguf", "pull", "hf.co/acme/stories260K-GGUF:Q8_0")
	if ir.code != 130 || !strings.Contains(ir.stderr, "partial download is kept") {
		t.Errorf("interrupted pull: exit %d, stderr %q", ir.code, ir.stderr)
	}
	// What arrived before the interrupt (at most what was sent) is kept.
	qpart := filepath.Join(dir, "acme", "stories260K-GGUF", "stories260K-Q8_0.gguf.part")
	st, err := os.Stat(qpart)
	if err != nil || st.Size() == 0 || st.Size() > int64(len(q8)/2) {
		t.Fatalf("partial file after Ctrl-C: %v, %v", st, err)
	}
	mvEnv(t, env, "", "pull", "hf.co/acme/stories260K-GGUF:Q8_0").want(t, 0, "pull after Ctrl-C")
	if got, wantR := h.seenRanges(), fmt.Sprintf("bytes=%d-", st.Size()); len(got) != 2 || got[1] != wantR {
		t.Errorf("after Ctrl-C: Range headers %q, want the second to be %q", got, wantR)
	}
	mvEnv(t, env, "", "rm", "hf.co/acme/stories260K-GGUF:Q8_0").want(t, 0, "rm Q8_0")

	// -m hf.co/... runs the pulled file like the local one; an unpulled
	// reference is pulled on first use.
	args := []string{"-p", "Once upon a time", "-n", "16", "--temp", "0"}
	local := mvEnv(t, env, "", append([]string{"generate", "-m", m}, args...)...)
	viaHub := mvEnv(t, env, "", append([]string{"generate", "-m", "hf.co/acme/stories260K-GGUF:F32"}, args...)...)
	viaHub.want(t, 0, "generate -m hf.co")
	if viaHub.stdout != local.stdout || strings.Contains(viaHub.stderr, "pulling") {
		t.Errorf("generate -m hf.co/...:F32 (already pulled) %q, local file %q; stderr %q", viaHub.stdout, local.stdout, viaHub.stderr)
	}
	first := mvEnv(t, env, "", append([]string{"generate", "-m", "hf.co/acme/stories260K-GGUF/stories260K-Q8_0.gguf"}, args...)...)
	first.want(t, 0, "first use pulls")
	if !strings.Contains(first.stderr, "pulling hf.co/acme/stories260K-GGUF/stories260K-Q8_0.gguf") || first.stdout == "" {
		t.Errorf("first use of -m hf.co/... must pull: stderr %q", first.stderr)
	}
	tk := mvEnv(t, env, "", "tokenize", "-m", "hf.co/acme/stories260K-GGUF:F32", "-p", "hi", "--ids")
	tk.want(t, 0, "tokenize -m hf.co")

	// A file the sandboxed inspect rejects is refused and never listed.
	r = mvEnv(t, env, "", "pull", "hf.co/acme/evil-GGUF")
	r.want(t, 1, "hostile file")
	if !strings.Contains(r.stderr, "refusing") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 {
		t.Errorf("hostile file: stderr %q", r.stderr)
	}
	r = mvEnv(t, env, "", "generate", "-m", "hf.co/acme/evil-GGUF", "-p", "x")
	r.want(t, 1, "generate on a hostile pull")
	// Bytes that do not hash to the Hub's sha256 are refused and deleted.
	r = mvEnv(t, env, "", "pull", "hf.co/acme/evil-GGUF:Q8_0")
	r.want(t, 1, "corrupted download")
	if !strings.Contains(r.stderr, "checksum mismatch") {
		t.Errorf("corrupted download: stderr %q", r.stderr)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "acme", "evil-GGUF")); len(ents) != 0 {
		t.Errorf("refused files left in the model directory: %v", ents)
	}

	ls := mvEnv(t, env, "", "ls", "--json")
	ls.want(t, 0, "ls")
	var es []struct {
		Ref  string `json:"ref"`
		Size int64  `json:"size_bytes"`
	}
	if err := json.Unmarshal([]byte(ls.stdout), &es); err != nil || len(es) != 2 {
		t.Fatalf("ls --json: %v %s", err, ls.stdout)
	}
	if es[0].Ref != "hf.co/acme/stories260K-GGUF/stories260K-F32.gguf" || es[0].Size != int64(len(f32)) ||
		es[1].Ref != "hf.co/acme/stories260K-GGUF/stories260K-Q8_0.gguf" {
		t.Errorf("ls: %+v", es)
	}
	mvEnv(t, env, "", "rm", "hf.co/acme/stories260K-GGUF:F32").want(t, 0, "rm")
	mvEnv(t, env, "", "rm", "hf.co/acme/stories260K-GGUF:F32").want(t, 1, "rm twice")
	if ls := mvEnv(t, env, "", "ls"); strings.Contains(ls.stdout, "F32") || !strings.Contains(ls.stdout, "Q8_0") {
		t.Errorf("ls after rm: %q", ls.stdout)
	}
	mvEnv(t, env, "", "pull", "hf.co/acme/nope").want(t, 1, "unknown repository")
	mvEnv(t, env, "", "pull", "hf.co/acme").want(t, 2, "bad reference")
}
