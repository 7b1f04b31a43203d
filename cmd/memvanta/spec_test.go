package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateSpeculative: on the trained stories260K model, greedy
// generation with a draft model (its Q8_0 file drafting for the F32 one)
// and with n-gram lookup gives plain generation's tokens, and the
// statistics report the drafts; a draft with another vocabulary and bad
// options are refused.
func TestGenerateSpeculative(t *testing.T) {
	dir := "../../../shared/models"
	target := filepath.Join(dir, "stories260K-F32.gguf")
	draft := filepath.Join(dir, "stories260K-Q8_0.gguf")
	if _, err := os.Stat(draft); err != nil {
		t.Skipf("stories260K not available: %v", err)
	}
	prompt := "Once upon a time, there was a little girl named Lily. She loved to play. Once upon a time, there was a little"
	type result struct {
		Tokens []int32 `json:"tokens"`
		Stats  struct {
			Drafted  int64   `json:"draft_tokens"`
			Accepted int64   `json:"draft_accepted"`
			PerPass  float64 `json:"tokens_per_pass"`
		} `json:"stats"`
	}
	run := func(extra ...string) result {
		var out, errb bytes.Buffer
		args := append([]string{"-m", target, "-p", prompt, "-n", "200", "--temp", "0", "--json"}, extra...)
		if st := runGenerate(context.Background(), args, &out, &errb); st != 0 {
			t.Fatalf("%v: status %d: %s", extra, st, errb.String())
		}
		var r result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("--json output: %v\n%s", err, out.String())
		}
		if len(extra) > 0 && !strings.Contains(errb.String(), "accepted") {
			t.Errorf("%v: no draft statistics in %q", extra, errb.String())
		}
		return r
	}
	plain := run()
	for _, extra := range [][]string{{"-md", draft, "--draft-p-min", "0.3"}, {"-md", draft, "--draft-p-min", "0.3", "--spec-exact"},
		{"--spec-type", "ngram-simple", "--spec-ngram-size-n", "3"}} {
		r := run(extra...)
		if !equal(r.Tokens, plain.Tokens) {
			t.Errorf("%v: tokens %v, plain generation %v", extra, r.Tokens, plain.Tokens)
		}
		if r.Stats.Drafted == 0 || r.Stats.Accepted == 0 || r.Stats.PerPass <= 1 {
			t.Errorf("%v: stats %+v: nothing drafted or accepted", extra, r.Stats)
		}
	}
	// A quantized target, whose verification would otherwise take the
	// packed kernels (without --spec-exact this run leaves plain
	// generation's text): --spec-exact keeps plain generation's tokens.
	target = filepath.Join(dir, "stories260K-Q4_0.gguf")
	plain = run()
	if r := run("-md", draft, "--draft-p-min", "0.3", "--spec-exact"); !equal(r.Tokens, plain.Tokens) {
		t.Errorf("Q4_0 --spec-exact: tokens %v, plain generation %v", r.Tokens, plain.Tokens)
	}
	var out, errb bytes.Buffer
	st := runGenerate(context.Background(), []string{"-m", target, "-p", "x", "-n", "4", "-md", synthFile(t)}, &out, &errb)
	if st != exitRuntime || !strings.Contains(errb.String(), "vocabulary differs") {
		t.Errorf("draft with another vocabulary: status %d, %q", st, errb.String())
	}
	for _, bad := range [][]string{{"--spec-type", "lookahead"}, {"--spec-type", "ngram-simple", "--draft-max", "0"},
		{"-md", draft, "--draft-p-min", "1.5"}, {"-md", draft, "--spec-type", "ngram-simple"}} {
		errb.Reset()
		if st := runGenerate(context.Background(), append([]string{"-m", target, "-p", "x"}, bad...), &out, &errb); st != exitUsage {
			t.Errorf("%v: status %d, want %d (%s)", bad, st, exitUsage, errb.String())
		}
	}
}
