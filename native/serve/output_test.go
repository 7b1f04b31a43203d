package serve

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/memvanta/memvanta/core/engine"
)

// TestLogProbsOpenAIClient: the official client reads logprobs in chat
// (whole and streamed, the same) and in legacy completions.
func TestLogProbsOpenAIClient(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 2})
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: modelID, Messages: []openai.ChatCompletionMessageParamUnion{
		openai.UserMessage("tell me")}, MaxTokens: openai.Int(8), Temperature: openai.Float(0),
		Logprobs: openai.Bool(true), TopLogprobs: openai.Int(4)}
	resp, err := f.client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	lp := resp.Choices[0].Logprobs.Content
	if len(lp) != 8 {
		t.Fatalf("%d logprobs entries for 8 tokens", len(lp))
	}
	var text strings.Builder
	for i, e := range lp {
		text.WriteString(e.Token)
		if len(e.TopLogprobs) != 4 || e.TopLogprobs[0].Token != e.Token || e.TopLogprobs[0].Logprob != e.Logprob || e.Logprob > 0 {
			t.Errorf("entry %d: %+v", i, e)
		}
		for j := 1; j < len(e.TopLogprobs); j++ {
			if e.TopLogprobs[j].Logprob > e.TopLogprobs[j-1].Logprob {
				t.Errorf("entry %d: alternatives out of order: %+v", i, e.TopLogprobs)
			}
		}
		if string(bytesOf(e.Bytes)) != e.Token {
			t.Errorf("entry %d: bytes %v for %q", i, e.Bytes, e.Token)
		}
	}
	if text.String() != resp.Choices[0].Message.Content {
		t.Errorf("tokens spell %q, content %q", text.String(), resp.Choices[0].Message.Content)
	}
	st := f.client.Chat.Completions.NewStreaming(ctx, params)
	var streamed []openai.ChatCompletionTokenLogprob
	for st.Next() {
		for _, c := range st.Current().Choices {
			streamed = append(streamed, c.Logprobs.Content...)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if len(streamed) != len(lp) {
		t.Fatalf("streamed %d entries, whole %d", len(streamed), len(lp))
	}
	for i := range lp {
		if streamed[i].Token != lp[i].Token || streamed[i].Logprob != lp[i].Logprob {
			t.Errorf("entry %d streamed %+v, whole %+v", i, streamed[i], lp[i])
		}
	}

	cp := greedyCompletion("once upon", 5)
	cp.Logprobs = openai.Int(3)
	cr, err := f.client.Completions.New(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}
	l := cr.Choices[0].Logprobs
	if len(l.Tokens) != 5 || len(l.TokenLogprobs) != 5 || len(l.TopLogprobs) != 5 || len(l.TextOffset) != 5 {
		t.Fatalf("legacy logprobs %+v", l)
	}
	off := 0
	for i, tk := range l.Tokens {
		if l.TextOffset[i] != int64(off) || len(l.TopLogprobs[i]) == 0 || l.TopLogprobs[i][tk] != l.TokenLogprobs[i] {
			t.Errorf("legacy token %d %q: offset %d (want %d), top %v, logprob %v", i, tk, l.TextOffset[i], off, l.TopLogprobs[i], l.TokenLogprobs[i])
		}
		off += len(tk)
	}
	if strings.Join(l.Tokens, "") != cr.Choices[0].Text {
		t.Errorf("tokens %q, text %q", l.Tokens, cr.Choices[0].Text)
	}
}

func bytesOf(xs []int64) []byte {
	b := make([]byte, len(xs))
	for i, x := range xs {
		b[i] = byte(x)
	}
	return b
}

// TestChoices: n choices, whole and streamed with their index, sharing the
// prompt's prefill.
func TestChoices(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 3})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		temp float64
	}{{"greedy", 0}, {"sampled", 1}} {
		t.Run(c.name, func(t *testing.T) {
			params := openai.ChatCompletionNewParams{Model: modelID, Messages: []openai.ChatCompletionMessageParamUnion{
				openai.UserMessage("three of them")}, MaxTokens: openai.Int(6), Temperature: openai.Float(c.temp), N: openai.Int(3), Seed: openai.Int(9)}
			before := f.eng.Stats()
			resp, err := f.client.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Choices) != 3 || resp.Usage.CompletionTokens != 18 {
				t.Fatalf("%d choices, usage %+v", len(resp.Choices), resp.Usage)
			}
			after := f.eng.Stats()
			if computed := after.PromptTokens - before.PromptTokens; computed > resp.Usage.PromptTokens {
				t.Errorf("%d prompt tokens computed for %d-token prompt and 3 choices", computed, resp.Usage.PromptTokens)
			}
			for i, ch := range resp.Choices {
				if ch.Index != int64(i) || ch.Message.Content == "" {
					t.Errorf("choice %d: %+v", i, ch)
				}
				if c.temp == 0 && ch.Message.Content != resp.Choices[0].Message.Content {
					t.Errorf("greedy choice %d %q differs from choice 0 %q", i, ch.Message.Content, resp.Choices[0].Message.Content)
				}
			}
			st := f.client.Chat.Completions.NewStreaming(ctx, params)
			texts := make([]string, 3)
			finished := 0
			for st.Next() {
				for _, ch := range st.Current().Choices {
					texts[ch.Index] += ch.Delta.Content
					if ch.FinishReason != "" {
						finished++
					}
				}
			}
			if err := st.Err(); err != nil {
				t.Fatal(err)
			}
			if finished != 3 {
				t.Errorf("%d finish reasons streamed, want 3", finished)
			}
			// Same seed, same choices: the stream says what the whole reply did.
			for i := range texts {
				if texts[i] != resp.Choices[i].Message.Content {
					t.Errorf("streamed choice %d %q, whole %q", i, texts[i], resp.Choices[i].Message.Content)
				}
			}
		})
	}
	resp, err := http.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "memvanta:kv_positions_forked_total ") || strings.Contains(string(body), "memvanta:kv_positions_forked_total 0\n") {
		t.Errorf("no forked positions in /metrics")
	}
	code, m := post(t, f.url+"/v1/chat/completions", chatBody("x", `,"n":4`, false))
	if code != 400 || paramOf(m) != "n" {
		t.Errorf("n above the slots: %d %v", code, m)
	}
}

const thinkTemplate = `{%- for m in messages %}{{- '<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n' }}{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}{%- endif %}`

// TestReasoning: thoughts go to reasoning_content, whole and streamed, as
// reasoning_format says; enable_thinking reaches the template.
func TestReasoning(t *testing.T) {
	f := newToolFixture(t, thinkTemplate)
	url := f.url + "/v1/chat/completions"
	reply := "<think>\nfirst a plan\n</think>\n\nthe answer"
	for _, c := range []struct {
		name, extra, reasoning, content string
	}{
		{"auto", "", "first a plan", "the answer"},
		{"deepseek", `,"reasoning_format":"deepseek"`, "first a plan", "the answer"},
		{"none", `,"reasoning_format":"none"`, "", reply},
		{"enable_thinking false", `,"chat_template_kwargs":{"enable_thinking":false}`, "first a plan", "the answer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.say(t, reply)
			code, m := post(t, url, chatBody("think", c.extra, false))
			if code != 200 {
				t.Fatalf("%d %v", code, m)
			}
			msg := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
			r, _ := msg["reasoning_content"].(string)
			if r != c.reasoning || msg["content"] != c.content {
				t.Errorf("reasoning %q content %q, want %q %q", r, msg["content"], c.reasoning, c.content)
			}
			f.say(t, reply)
			var rs, cs string
			for _, ev := range sseEvents(t, url, chatBody("think streamed", c.extra, true)) {
				for _, ch := range ev["choices"].([]any) {
					d := ch.(map[string]any)["delta"].(map[string]any)
					s1, _ := d["reasoning_content"].(string)
					s2, _ := d["content"].(string)
					rs, cs = rs+s1, cs+s2
				}
			}
			if rs != c.reasoning || cs != c.content {
				t.Errorf("streamed reasoning %q content %q, want %q %q", rs, cs, c.reasoning, c.content)
			}
		})
	}
	// enable_thinking is rendered: the prompt holds the empty thoughts.
	code, m := post(t, f.url+"/apply-template", `{"messages":[{"role":"user","content":"x"}]}`)
	if code != 200 || strings.Contains(m["prompt"].(string), "<think>") {
		t.Errorf("apply-template: %d %v", code, m)
	}
}

// TestToolCallsStreamAsTheyForm: a call's name arrives before its
// arguments are complete, its arguments in several fragments; a call
// announced and then broken ends the stream with an error, not a
// finish_reason a client would take as a complete call.
func TestToolCallsStreamAsTheyForm(t *testing.T) {
	f := newToolFixture(t, "qwen2.5")
	url := f.url + "/v1/chat/completions"
	tools := `,"tools":` + weatherTools
	f.say(t, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris in the spring\"}}\n</tool_call>")
	evs := sseEvents(t, url, chatBody("stream it", tools, true))
	fragments, named := 0, -1
	for i, ev := range evs {
		for _, ch := range ev["choices"].([]any) {
			d := ch.(map[string]any)["delta"].(map[string]any)
			tcs, _ := d["tool_calls"].([]any)
			for _, x := range tcs {
				fn := x.(map[string]any)["function"].(map[string]any)
				if n, _ := fn["name"].(string); n != "" {
					named = i
				} else if a, _ := fn["arguments"].(string); a != "" {
					fragments++
				}
			}
		}
	}
	_, calls, finish := streamed(t, evs)
	checkCalls(t, "streamed", calls, [][2]string{{"get_weather", `{"city":"Paris in the spring"}`}})
	if named < 0 || fragments < 3 || finish != "tool_calls" {
		t.Errorf("name in event %d, %d argument fragments, finish %v: not streamed as it formed", named, fragments, finish)
	}

	f.say(t, "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"} oops")
	resp, err := http.Post(url, "application/json", strings.NewReader(chatBody("broken", tools, true)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(string(body)), "\n\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, `data: {"error":`) || strings.Contains(string(body), `"finish_reason":"tool_calls"`) {
		t.Errorf("a broken streamed call ended with %s, want an error event", last)
	}
}
