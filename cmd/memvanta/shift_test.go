package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestGenerateContextShift: with --context-shift generate runs past -c
// (a 32-token context, 80 tokens generated), counts its shifts in the
// statistics line and --json, and stops at the context without it, as
// before; a bad --keep is a usage error.
func TestGenerateContextShift(t *testing.T) {
	model := synthFile(t)
	gen := func(extra ...string) (int, string, string) {
		var out, errb bytes.Buffer
		args := append([]string{"-m", model, "-p", "once upon a time", "-c", "32", "-n", "80", "--temp", "0", "--ignore-eos"}, extra...)
		st := runGenerate(context.Background(), args, &out, &errb)
		return st, out.String(), errb.String()
	}
	cases := []struct {
		name   string
		args   []string
		stop   string
		shifts bool
	}{
		{"shift", []string{"--context-shift"}, "length", true},
		{"shift keep prompt", []string{"--context-shift", "--keep", "-1"}, "length", true},
		{"no shift", nil, "context", false},
		{"shift off again", []string{"--context-shift", "--no-context-shift"}, "context", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, out, errb := gen(append(c.args, "--json")...)
			if st != 0 {
				t.Fatalf("status %d: %s", st, errb)
			}
			var r struct {
				Tokens []int32 `json:"tokens"`
				Stats  struct {
					Stop   string `json:"stop"`
					Shifts int    `json:"context_shifts"`
				} `json:"stats"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("--json: %v\n%s", err, out)
			}
			if r.Stats.Stop != c.stop {
				t.Fatalf("stop %q, want %q", r.Stats.Stop, c.stop)
			}
			line := regexp.MustCompile(`context shifts (\d+)`).FindStringSubmatch(errb)
			if c.shifts {
				if len(r.Tokens) != 80 || r.Stats.Shifts < 2 {
					t.Fatalf("%d tokens, %d shifts: want 80 past a 32-token context", len(r.Tokens), r.Stats.Shifts)
				}
				if line == nil || line[1] != strconv.Itoa(r.Stats.Shifts) {
					t.Fatalf("statistics line without the shifts: %s", errb)
				}
			} else if len(r.Tokens) >= 32 || r.Stats.Shifts != 0 || line != nil {
				t.Fatalf("without shift: %d tokens, %d shifts, stderr %s", len(r.Tokens), r.Stats.Shifts, errb)
			}
		})
	}
	if st, _, errb := gen("--context-shift", "--keep", "-2"); st == 0 || !strings.Contains(errb, "--keep -2") {
		t.Fatalf("--keep -2: status %d, %s", st, errb)
	}
}

// TestChatContextShift: with --context-shift a chat whose replies fill
// the context goes on, dropping its oldest turns when the next one would
// not fit; without it, the context ends the reply.
func TestChatContextShift(t *testing.T) {
	model := synthFile(t)
	in := "tell me a long story\nand another one\nand a third\n"
	var stdout, stderr bytes.Buffer
	st := chatMain(t.Context(), []string{"-m", model, "-c", "160", "-n", "120", "--temp", "0", "--ignore-eos", "--system", "be long", "--context-shift", "--keep", "-1"},
		chatIO{in: strings.NewReader(in)}, &stdout, &stderr)
	if st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	m := turnStats.FindAllStringSubmatch(stderr.String(), -1)
	if len(m) != 3 {
		t.Fatalf("want 3 turns, stderr:\n%s", stderr.String())
	}
	for i, x := range m {
		p, _ := strconv.Atoi(x[1])
		if x[4] != "120" || p >= 160 {
			t.Fatalf("turn %d: prompt of %d tokens, reply of %s, want a prompt that fits 160 and a reply of 120:\n%s", i, p, x[4], stderr.String())
		}
	}
	if p1, _ := strconv.Atoi(m[0][1]); p1+120 < 160 {
		t.Fatalf("the first turn (%d + 120 tokens) fits the context: the test drops no turn", p1)
	}
	stdout.Reset()
	stderr.Reset()
	st = chatMain(t.Context(), []string{"-m", model, "-c", "160", "-n", "120", "--temp", "0", "--ignore-eos", "--system", "be long"},
		chatIO{in: strings.NewReader(in)}, &stdout, &stderr)
	if st == 0 && !strings.Contains(stderr.String(), "the context is full") {
		t.Fatalf("without --context-shift: status %d, stderr:\n%s", st, stderr.String())
	}
}
