package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/sample"
)

// TestNKeep: on a server started with context shift, a completion's
// n_keep reaches the engine: the reply past the 64-position slot is the
// engine's own greedy output for that NKeep (and the keeps tested give
// different outputs, so a dropped field would show), shifts are counted in
// /metrics, and a server without context shift refuses a non-zero n_keep
// rather than answer as if it had kept anything.
func TestNKeep(t *testing.T) {
	const prompt, gen = "the context shift keeps this prompt", 100
	f := newFixture(t, Config{}, engine.Options{Slots: 1, CtxPerSlot: 64, ContextShift: true})
	ids, err := encodePrompt(f.tok, prompt, false)
	if err != nil {
		t.Fatal(err)
	}
	direct := map[int]string{}
	for _, keep := range []int{0, 6} {
		code, b := postJSON(t, f.url+"/v1/completions", `{"prompt": "`+prompt+`", "max_tokens": 100, "temperature": 0, "ignore_eos": true, "n_keep": `+strconv.Itoa(keep)+`}`)
		if code != 200 {
			t.Fatalf("n_keep %d: status %d: %s", keep, code, b)
		}
		var resp struct {
			Choices []struct {
				Text string `json:"text"`
			}
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		if err := json.Unmarshal(b, &resp); err != nil || len(resp.Choices) != 1 || resp.Usage.CompletionTokens != gen {
			t.Fatalf("n_keep %d: %v %s", keep, err, b)
		}
		h, err := f.eng.Submit(context.Background(), engine.Request{Prompt: ids, MaxTokens: gen, IgnoreEOS: true, NKeep: keep,
			Sample: sample.Params{Temp: 0, TopP: 1, RepeatPenalty: 1, RepeatLastN: 64}})
		if err != nil {
			t.Fatal(err)
		}
		want, ev, err := h.Collect(context.Background())
		if err != nil || ev.Usage.Shifts < 2 {
			t.Fatalf("engine, NKeep %d: %v, %d shifts (want >= 2 past a 64-position slot)", keep, err, ev.Usage.Shifts)
		}
		if resp.Choices[0].Text != want {
			t.Errorf("n_keep %d: served %q, the engine with NKeep %d %q", keep, resp.Choices[0].Text, keep, want)
		}
		direct[keep] = want
	}
	if direct[0] == direct[6] {
		t.Fatalf("keeps 0 and 6 generate the same text: the test cannot tell whether n_keep arrives")
	}
	resp, err := http.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := "memvanta:context_shifts_total " + strconv.FormatInt(f.eng.Stats().Shifts, 10) + "\n"
	if f.eng.Stats().Shifts < 8 || !strings.Contains(string(body), want) {
		t.Errorf("metrics lack %q (engine counted %d shifts)", want, f.eng.Stats().Shifts)
	}

	off := newFixture(t, Config{}, engine.Options{Slots: 1, CtxPerSlot: 64})
	for body, status := range map[string]int{
		`{"prompt": "x", "max_tokens": 2, "n_keep": 4}`:  400,
		`{"prompt": "x", "max_tokens": 2, "n_keep": -1}`: 400,
		`{"prompt": "x", "max_tokens": 2, "n_keep": 0}`:  200,
	} {
		if code, b := postJSON(t, off.url+"/v1/completions", body); code != status || status == 400 && !strings.Contains(string(b), "--context-shift") {
			t.Errorf("no context shift, %s: status %d %s, want %d", body, code, b, status)
		}
	}
	if code, b := postJSON(t, f.url+"/v1/completions", `{"prompt": "x", "max_tokens": 2, "n_keep": -2}`); code != 400 || !strings.Contains(string(b), "n_keep") {
		t.Errorf("n_keep -2: status %d %s", code, b)
	}
}
