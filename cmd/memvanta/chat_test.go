package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvanta/memvanta/internal/testmodel"
)

// synthFile writes the small synthetic test model to a temp file.
func synthFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "synth.gguf")
	if err := os.WriteFile(p, testmodel.Bytes(t), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var turnStats = regexp.MustCompile(`\[prompt (\d+) tok, (\d+) reused, (\d+) computed \| reply (\d+) tok`)

// TestChatKeepsKVBetweenTurns: the second turn computes only the tokens
// the first turn's prompt and reply did not already put in the cache.
func TestChatKeepsKVBetweenTurns(t *testing.T) {
	model := synthFile(t)
	var stdout, stderr bytes.Buffer
	in := strings.NewReader("hello there\nand a second question\n/reset\nthird\n")
	st := chatMain(t.Context(), []string{"-m", model, "-n", "12", "--temp", "0", "--system", "be brief"},
		chatIO{in: in}, &stdout, &stderr)
	if st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	m := turnStats.FindAllStringSubmatch(stderr.String(), -1)
	if len(m) != 3 {
		t.Fatalf("want 3 turn stats lines, stderr:\n%s", stderr.String())
	}
	num := func(i, j int) int { n, _ := strconv.Atoi(m[i][j]); return n }
	p1, r1 := num(0, 1), num(0, 4)
	if num(0, 2) != 0 {
		t.Errorf("first turn reused %d tokens", num(0, 2))
	}
	// Turn 2 reuses turn 1's prompt and all of its reply but the last token
	// (sampled, not yet run through the model).
	if got, want := num(1, 2), p1+r1-1; got != want {
		t.Errorf("second turn reused %d tokens, want %d (prompt %d + reply %d - 1)", got, want, p1, r1)
	}
	if num(1, 3) != num(1, 1)-num(1, 2) || num(1, 3) >= num(1, 1)/2 {
		t.Errorf("second turn computed %d of %d tokens", num(1, 3), num(1, 1))
	}
	if lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n"); len(lines) != 3 {
		t.Errorf("want 3 reply lines, got %q", stdout.String())
	}
	// After /reset the prompt is system + one message again.
	if num(2, 1) >= num(1, 1) {
		t.Errorf("after /reset the prompt has %d tokens (turn 2 had %d)", num(2, 1), num(1, 1))
	}
}

func TestChatJSON(t *testing.T) {
	model := synthFile(t)
	var stdout, stderr bytes.Buffer
	in := strings.NewReader(`[{"role":"system","content":"s"},{"role":"user","content":"hi"}]`)
	if st := chatMain(t.Context(), []string{"-m", model, "-n", "5", "--temp", "0", "--json"}, chatIO{in: in}, &stdout, &stderr); st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	var out struct {
		Message struct{ Role, Content string }
		Finish  string         `json:"finish_reason"`
		Usage   map[string]int `json:"usage"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if out.Message.Role != "assistant" || out.Message.Content == "" || out.Finish != "length" || out.Usage["completion_tokens"] != 5 {
		t.Errorf("%+v", out)
	}
	stdout.Reset()
	if st := chatMain(t.Context(), []string{"-m", model, "--json"}, chatIO{in: strings.NewReader(`{"nope":1}`)}, &stdout, &stderr); st != 1 {
		t.Errorf("bad JSON input: status %d", st)
	}
}

// TestChatCtrlCStopsReply runs the binary: SIGINT during a reply stops that
// reply, the program answers the next line and exits 0 at end of input.
func TestChatCtrlCStopsReply(t *testing.T) {
	bin := memvantaBin(t)
	model := synthFile(t)
	cmd := exec.Command(bin, "chat", "-m", model, "--temp", "0", "-c", "100000")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	r := bufio.NewReader(stdout)
	// Two unbounded replies (the synthetic model never ends a turn), each
	// stopped by Ctrl-C after it has started streaming.
	for _, line := range []string{"tell me everything\n", "and more\n"} {
		io.WriteString(stdin, line)
		buf := make([]byte, 16)
		if _, err := io.ReadFull(r, buf); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadString('\n'); err != nil { // the stopped reply ends its line
			t.Fatal(err)
		}
	}
	stdin.Close() // Ctrl-D
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("chat did not exit; stderr:\n%s", stderr.String())
	}
	if n := strings.Count(stderr.String(), "stop interrupted"); n != 2 {
		t.Errorf("%d interrupted replies, want 2; stderr:\n%s", n, stderr.String())
	}
}

// TestGenerateSpecial: raw prompts keep control-token text as text unless
// --special asks for it to be parsed.
func TestGenerateSpecial(t *testing.T) {
	model := synthFile(t)
	ids := func(extra ...string) []int32 {
		var stdout, stderr bytes.Buffer
		args := append([]string{"-m", model, "-p", "</s>x", "-n", "1", "--temp", "0", "--json"}, extra...)
		if st := runGenerate(t.Context(), args, &stdout, &stderr); st != 0 {
			t.Fatalf("status %d: %s", st, stderr.String())
		}
		var out struct {
			Prompt []int32 `json:"prompt_token_ids"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out.Prompt
	}
	plain, special := ids(), ids("--special")
	if len(special) < 2 || special[1] != 2 { // BOS, then </s> (id 2 in the synthetic vocabulary)
		t.Errorf("--special: %v, want </s> as token 2", special)
	}
	if len(plain) <= len(special) || plain[1] == 2 {
		t.Errorf("without --special: %v (should spell </s> out as text)", plain)
	}
}

// TestChatJSONTools: --json input's tools reach the template (the prompt
// grows by their rendering). Parsing the reply is core/chat's
// ParseToolCalls, tested there and through the server: the synthetic
// model cannot be made to write a call here.
func TestChatJSONTools(t *testing.T) {
	model := synthFile(t)
	run := func(in string) (int, map[string]any) {
		var stdout, stderr bytes.Buffer
		st := chatMain(t.Context(), []string{"-m", model, "-n", "3", "--temp", "0", "--chat-template", "qwen2.5", "--json"},
			chatIO{in: strings.NewReader(in)}, &stdout, &stderr)
		var out map[string]any
		if st == 0 {
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("%v: %s", err, stdout.String())
			}
		}
		return st, out
	}
	msgs := `"messages":[{"role":"user","content":"weather?"}]`
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	st, plain := run("{" + msgs + "}")
	if st != 0 {
		t.Fatalf("without tools: status %d", st)
	}
	st, with := run("{" + msgs + "," + tools + "}")
	if st != 0 {
		t.Fatalf("with tools: status %d", st)
	}
	prompt := func(m map[string]any) float64 { return m["usage"].(map[string]any)["prompt_tokens"].(float64) }
	if prompt(with) <= prompt(plain) {
		t.Errorf("prompt with tools %v tokens, without %v: tools not rendered", prompt(with), prompt(plain))
	}
	if msg, _ := with["message"].(map[string]any); msg["role"] != "assistant" {
		t.Errorf("reply %v", with)
	}
	if st, _ := run("{" + msgs + `,"tools":{"a":1}}`); st != 1 {
		t.Errorf("tools not an array: status %d", st)
	}
}

// TestChatHarmony: with a harmony template (one naming <|channel|>) and a
// grammar, the reply is a harmony reply whose final message is the
// grammar's text: chat prints only that as the answer, the thoughts (if
// the model wrote any) apart, and no marker in either.
func TestChatHarmony(t *testing.T) {
	model := synthFile(t)
	tmpl := filepath.Join(t.TempDir(), "harmony.jinja")
	src := `{% for m in messages %}<|start|>{{ m.role }}<|message|>{{ m.content }}<|end|>{% endfor %}{% if false %}<|channel|>{% endif %}<|start|>assistant`
	if err := os.WriteFile(tmpl, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, seed := range []string{"1", "2", "3", "4"} {
		var stdout, stderr bytes.Buffer
		st := chatMain(t.Context(), []string{"-m", model, "-n", "60", "--temp", "1", "--seed", seed, "--chat-template", tmpl,
			"--grammar", `root ::= "yes"`, "--json"}, chatIO{in: strings.NewReader(`[{"role":"user","content":"ok?"}]`)}, &stdout, &stderr)
		if st != 0 {
			t.Fatalf("status %d: %s", st, stderr.String())
		}
		var out struct {
			Message struct {
				Content   *string `json:"content"`
				Reasoning string  `json:"reasoning_content"`
			} `json:"message"`
			Finish string `json:"finish_reason"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || out.Message.Content == nil {
			t.Fatalf("%v: %s", err, stdout.String())
		}
		content, reasoning := *out.Message.Content, out.Message.Reasoning
		// The grammar allows "yes" as the final message, after optional
		// thoughts; a reply cut by -n inside the thoughts has no answer,
		// only thoughts (the synthetic model, forced into the header,
		// goes on thinking: its thoughts show the split worked, as the
		// model writes no header of its own).
		if content != "yes" && !(content == "" && out.Finish == "length" && reasoning != "") {
			t.Errorf("seed %s: content %q reasoning %q (finish %s), want the final message \"yes\" or thoughts cut short", seed, content, reasoning, out.Finish)
		}
		if strings.Contains(content+reasoning, "<|") {
			t.Errorf("seed %s: a marker leaked: content %q reasoning %q", seed, content, reasoning)
		}
		// From a pipe, the answer goes to stdout and the thoughts to
		// stderr.
		stdout.Reset()
		stderr.Reset()
		st = chatMain(t.Context(), []string{"-m", model, "-n", "60", "--temp", "1", "--seed", seed, "--chat-template", tmpl,
			"--grammar", `root ::= "yes"`}, chatIO{in: strings.NewReader("ok?\n")}, &stdout, &stderr)
		if st != 0 {
			t.Fatalf("status %d: %s", st, stderr.String())
		}
		if got := strings.TrimSuffix(stdout.String(), "\n"); got != content || !strings.Contains(stderr.String(), reasoning) {
			t.Errorf("seed %s: piped: stdout %q, stderr %q; want the answer %q and the thoughts %q", seed, stdout.String(), stderr.String(), content, reasoning)
		}
	}
}
