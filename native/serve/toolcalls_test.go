package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/tokenizer"
)

// script makes the model say a given text: after the real step, the logits
// of each wanted position are replaced so greedy sampling picks the next
// token of the script, then end of text. A step that feeds more than one
// token is a new prompt and restarts the script (tests use one slot and
// prompts that differ from the cached one in more than their last token).
type script struct {
	engine.Stepper
	mu  sync.Mutex
	ids []int32
	eos int32
	n   int
	// slowFrom is the script position from which each step sleeps, so
	// the server reading the reply sees a call's end before the engine
	// runs far past it (0: never).
	slowFrom int
}

func (s *script) set(ids []int32, slowFrom int) {
	s.mu.Lock()
	s.ids, s.n, s.slowFrom = ids, 0, slowFrom
	s.mu.Unlock()
}

func (s *script) Step(ctx context.Context, ws []engine.Work) error {
	if err := s.Stepper.Step(ctx, ws); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slowFrom > 0 && s.n > s.slowFrom {
		time.Sleep(50 * time.Millisecond)
	}
	for i := range ws {
		w := &ws[i]
		if w.Logits == nil || w.Err != nil {
			continue
		}
		if len(w.Tokens) > 1 {
			s.n = 0
		}
		next := s.eos
		if s.n < len(s.ids) {
			next = s.ids[s.n]
		}
		s.n++
		for j := range w.Logits {
			w.Logits[j] = -1e9
		}
		w.Logits[next] = 0
	}
	return nil
}

type toolFixture struct {
	*fixture
	sc *script
}

// newToolFixture serves the synthetic model with the template src (a
// built-in name or template text) saying scripted replies.
func newToolFixture(t *testing.T, src string) *toolFixture {
	sc := &script{}
	f := newFixture(t, Config{}, engine.Options{Slots: 1}, func(st engine.Stepper) engine.Stepper { sc.Stepper = st; return sc })
	sc.eos = f.tok.EOS()
	tmpl, err := chat.Builtin(src)
	if err != nil {
		if tmpl, err = chat.Compile("test", src, chat.Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	f.srv.Ready(&Backend{Engine: f.eng, Tokenizer: f.tok, Template: tmpl, NCtx: f.eng.SlotCtx()})
	return &toolFixture{f, sc}
}

// say scripts the next reply as text (checking the synthetic vocabulary
// spells it back exactly) and returns its token count.
func (f *toolFixture) say(t *testing.T, text string) int {
	t.Helper()
	return f.sayThen(t, text, "")
}

// sayThen scripts call followed by junk, slowing the steps after the call
// (see script.slowFrom).
func (f *toolFixture) sayThen(t *testing.T, call, junk string) int {
	t.Helper()
	text := call + junk
	ids := f.tok.Encode(text, false, false)
	spell := func(ids []int32) string {
		d := f.tok.NewDecoder()
		var got strings.Builder
		for _, id := range ids {
			got.WriteString(d.Add(id))
		}
		return got.String() + d.Flush()
	}
	// Drop the tokens of the SPM prefix space (byte tokens of "▁").
	for k := 0; k < 4 && k < len(ids) && spell(ids) != text; k++ {
		if spell(ids[k:]) == text {
			ids = ids[k:]
		}
	}
	if got := spell(ids); got != text {
		t.Fatalf("the test vocabulary spells %q as %q", text, got)
	}
	if len(ids) >= 200 {
		t.Fatalf("%q is %d tokens: requests allow 200", text, len(ids))
	}
	slowFrom := 0
	if junk != "" {
		for k := 1; k <= len(ids); k++ {
			if strings.HasPrefix(spell(ids[:k]), call) {
				slowFrom = k
				break
			}
		}
	}
	f.sc.set(ids, slowFrom)
	return len(ids)
}

const weatherTools = `[{"type":"function","function":{"name":"get_weather","description":"Weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`

func chatBody(user, extra string, stream bool) string {
	b := `{"messages":[{"role":"user","content":` + strconvQuote(user) + `}],"temperature":0,"max_tokens":200`
	if stream {
		b += `,"stream":true`
	}
	return b + extra + "}"
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// sseEvents posts a streaming request and returns its data events before
// [DONE].
func sseEvents(t *testing.T, url, body string) []map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []map[string]any
	sc := bufio.NewScanner(resp.Body)
	done := false
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			break
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		evs = append(evs, m)
	}
	if !done {
		t.Fatalf("stream ended without [DONE]: %v", evs)
	}
	return evs
}

// streamed folds a chat stream into its content, its tool calls (as
// message.tool_calls would hold them) and its finish reason, checking each
// tool-call delta has OpenAI's shape.
func streamed(t *testing.T, evs []map[string]any) (content string, calls []map[string]any, finish any) {
	t.Helper()
	for _, ev := range evs {
		choices, _ := ev["choices"].([]any)
		if len(choices) == 0 {
			continue
		}
		c := choices[0].(map[string]any)
		if fr := c["finish_reason"]; fr != nil {
			finish = fr
		}
		delta := c["delta"].(map[string]any)
		if s, ok := delta["content"].(string); ok {
			content += s
		}
		tcs, ok := delta["tool_calls"].([]any)
		if !ok {
			continue
		}
		if _, has := delta["content"]; has {
			t.Errorf("a tool_calls delta also has content: %v", delta)
		}
		for _, x := range tcs {
			tc := x.(map[string]any)
			idx := int(tc["index"].(float64))
			fn := tc["function"].(map[string]any)
			if idx == len(calls) { // a new call: id, type and name come first
				if tc["id"] == "" || tc["type"] != "function" || fn["name"] == "" || fn["arguments"] != "" {
					t.Errorf("first delta of call %d: %v", idx, tc)
				}
				calls = append(calls, map[string]any{"id": tc["id"], "type": "function",
					"function": map[string]any{"name": fn["name"], "arguments": ""}})
				continue
			}
			if idx != len(calls)-1 || tc["id"] != nil || fn["name"] != nil {
				t.Errorf("later delta of call %d: %v", idx, tc)
				continue
			}
			f := calls[idx]["function"].(map[string]any)
			f["arguments"] = f["arguments"].(string) + fn["arguments"].(string)
		}
	}
	return content, calls, finish
}

func callsOf(t *testing.T, v any) []map[string]any {
	t.Helper()
	xs, _ := v.([]any)
	var out []map[string]any
	for _, x := range xs {
		out = append(out, x.(map[string]any))
	}
	return out
}

func checkCalls(t *testing.T, what string, got []map[string]any, want [][2]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d calls %v, want %d", what, len(got), got, len(want))
	}
	ids := map[any]bool{}
	for i, c := range got {
		fn, _ := c["function"].(map[string]any)
		id, _ := c["id"].(string)
		if c["type"] != "function" || fn["name"] != want[i][0] || fn["arguments"] != want[i][1] || !strings.HasPrefix(id, "call_") || ids[id] {
			t.Errorf("%s: call %d = %v, want %s(%s) with a fresh call_ id", what, i, c, want[i][0], want[i][1])
		}
		ids[id] = true
	}
}

func TestToolCallsHermes(t *testing.T) {
	f := newToolFixture(t, "qwen2.5")
	url := f.url + "/v1/chat/completions"
	tools := `,"tools":` + weatherTools
	call := "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}\n</tool_call>"
	paris := [][2]string{{"get_weather", `{"city":"Paris"}`}}
	for _, c := range []struct {
		name, say, extra string
		content          any // nil: JSON null
		calls            [][2]string
		finish           string
	}{
		{"call", call, tools, nil, paris, "tool_calls"},
		{"text then call", "Sure.\n" + call, tools, "Sure.\n", paris, "tool_calls"},
		{"two calls", call + "\n" + strings.Replace(call, "Paris", "Oslo", 1), tools, nil,
			[][2]string{{"get_weather", `{"city":"Paris"}`}, {"get_weather", `{"city":"Oslo"}`}}, "tool_calls"},
		{"unterminated", "<tool_call>{\"name\":\"get_weather\"", tools, "<tool_call>{\"name\":\"get_weather\"", nil, "stop"},
		{"invalid json", "<tool_call>{name:1}</tool_call>", tools, "<tool_call>{name:1}</tool_call>", nil, "stop"},
		{"plain", "It is sunny.", tools, "It is sunny.", nil, "stop"},
		{"no tools", call, "", call, nil, "stop"},
		{"tool_choice none", call, tools + `,"tool_choice":"none"`, call, nil, "stop"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.say(t, c.say)
			code, m := post(t, url, chatBody("weather in "+c.name+"?", c.extra, false))
			if code != 200 {
				t.Fatalf("%d %v", code, m)
			}
			ch := m["choices"].([]any)[0].(map[string]any)
			msg := ch["message"].(map[string]any)
			if got, has := msg["content"]; !has || got != c.content {
				t.Errorf("content %#v, want %#v", got, c.content)
			}
			if _, has := msg["tool_calls"]; has != (c.calls != nil) {
				t.Errorf("tool_calls present %v: %v", has, msg)
			}
			checkCalls(t, "message.tool_calls", callsOf(t, msg["tool_calls"]), c.calls)
			if ch["finish_reason"] != c.finish {
				t.Errorf("finish_reason %v, want %s", ch["finish_reason"], c.finish)
			}

			// The stream says the same, and never streams call text.
			f.say(t, c.say)
			content, calls, finish := streamed(t, sseEvents(t, url, chatBody("streamed weather in "+c.name+"?", c.extra, true)))
			want, _ := c.content.(string)
			if content != want || finish != c.finish {
				t.Errorf("stream: content %q finish %v, want %q %s", content, finish, want, c.finish)
			}
			checkCalls(t, "streamed tool_calls", calls, c.calls)
		})
	}
	// Forms that cannot be honoured are refused, never accepted and
	// ignored ("required" and a named function are enforced by a grammar:
	// TestToolChoiceEnforced).
	for _, extra := range []string{tools + `,"tool_choice":"sometimes"`, `,"tool_choice":"required"`,
		tools + `,"tool_choice":{"type":"function","function":{"name":"get_time"}}`,
		tools + `,"tool_choice":"required","response_format":{"type":"json_object"}`} {
		code, m := post(t, url, chatBody("x", extra, false))
		if code != 400 || paramOf(m) != "tool_choice" {
			t.Errorf("%s: %d %v, want 400 naming tool_choice", extra, code, m)
		}
	}
}

// llama3Template has Llama 3.1's ipython role (what selects the format) and
// renders tools into the system turn.
const llama3Template = `{{- bos_token }}{%- if tools %}<|start_header_id|>system<|end_header_id|>

{{ tools | tojson }}<|eot_id|>{%- endif %}{%- for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>

{{ m.content }}<|eot_id|>{%- endfor %}{%- if false %}<|start_header_id|>ipython<|end_header_id|>{%- endif %}<|start_header_id|>assistant<|end_header_id|>

`

// TestToolCallsEndGeneration: a Llama 3 call is one object, so generation
// stops when it closes rather than running on (here, into junk the script
// would say next).
func TestToolCallsEndGeneration(t *testing.T) {
	f := newToolFixture(t, llama3Template)
	url := f.url + "/v1/chat/completions"
	call := `{"name":"get_weather","parameters":{"city":"Paris"}}`
	n := f.sayThen(t, call, strings.Repeat("junk", 8))
	code, m := post(t, url, chatBody("weather?", `,"tools":`+weatherTools, false))
	if code != 200 {
		t.Fatalf("%d %v", code, m)
	}
	ch := m["choices"].([]any)[0].(map[string]any)
	msg := ch["message"].(map[string]any)
	checkCalls(t, "llama3", callsOf(t, msg["tool_calls"]), [][2]string{{"get_weather", `{"city":"Paris"}`}})
	if msg["content"] != nil || ch["finish_reason"] != "tool_calls" {
		t.Errorf("message %v finish %v", msg, ch["finish_reason"])
	}
	used := int(m["usage"].(map[string]any)["completion_tokens"].(float64))
	if used >= n {
		t.Errorf("generated %d tokens: did not stop at the end of the call (%d scripted)", used, n)
	}

	f.sayThen(t, call, strings.Repeat("junk", 8))
	content, calls, finish := streamed(t, sseEvents(t, url, chatBody("weather streamed?", `,"tools":`+weatherTools, true)))
	if content != "" || finish != "tool_calls" {
		t.Errorf("stream: content %q finish %v", content, finish)
	}
	checkCalls(t, "llama3 stream", calls, [][2]string{{"get_weather", `{"city":"Paris"}`}})

	// JSON that is not a call is content, streamed as soon as it cannot be.
	f.say(t, `{"answer":42}`)
	content, calls, finish = streamed(t, sseEvents(t, url, chatBody("json please", `,"tools":`+weatherTools, true)))
	if content != `{"answer":42}` || calls != nil || finish != "stop" {
		t.Errorf("json content: %q %v %v", content, calls, finish)
	}
}

// TestToolCallsOpenAIClient reads the replies with the official client, its
// stream accumulator included.
func TestToolCallsOpenAIClient(t *testing.T) {
	f := newToolFixture(t, "qwen2.5")
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: modelID, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather in Paris?")},
		Temperature: openai.Float(0), Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}})}}
	call := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	call = strings.ReplaceAll(call, " ", "") // the test vocabulary has no plain space
	f.say(t, call)
	resp, err := f.client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if resp.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "get_weather" ||
		msg.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` || msg.ToolCalls[0].ID == "" || msg.ToolCalls[0].Type != "function" {
		t.Errorf("response %+v", resp.Choices[0])
	}

	f.say(t, "Ok."+call)
	params.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage("streamed weather in Paris?")}
	st := f.client.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	for st.Next() {
		acc.AddChunk(st.Current())
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 {
		t.Fatalf("accumulated %+v", acc.ChatCompletion)
	}
	am := acc.Choices[0].Message
	if acc.Choices[0].FinishReason != "tool_calls" || am.Content != "Ok." || len(am.ToolCalls) != 1 ||
		am.ToolCalls[0].Function.Name != "get_weather" || am.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` || am.ToolCalls[0].ID == "" {
		t.Errorf("accumulated %+v", acc.Choices[0])
	}
}

// TestKeepTokens: a marker that is one control token of the vocabulary is
// kept, a plain-text marker needs nothing. The shared Llama 3.0 vocabulary
// has no <|python_tag|> (3.1 added it), so one of its reserved control
// tokens stands in for it.
func TestKeepTokens(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "vocab", "ggml-vocab-llama-bpe.gguf")
	fh, err := os.Open(path)
	if err != nil {
		t.Skipf("%s not available: %v", path, err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	gf, err := gguf.Parse(fh, st.Size(), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(gf)
	if err != nil {
		t.Fatal(err)
	}
	keep := MarkerTokens(tok, []string{"<|reserved_special_token_5|>", "<tool_call>", "</tool_call>"})
	if len(keep) != 1 || tok.TokenText(keep[0]) != "<|reserved_special_token_5|>" || !tok.IsControl(keep[0]) {
		t.Errorf("kept %v", keep)
	}
}

// TestToolCallsMistral: the model's own call id is kept, and generation
// stops when the array closes.
func TestToolCallsMistral(t *testing.T) {
	f := newToolFixture(t, `{{ bos_token }}{% for m in messages %}[INST] {{ m.content }} [/INST]{% endfor %}{% if false %}[TOOL_CALLS]{% endif %}`)
	url := f.url + "/v1/chat/completions"
	reply := `[TOOL_CALLS][{"name":"get_weather","arguments":{"city":"Paris"},"id":"abcDEF123"},{"name":"get_time","arguments":{}}]`
	for _, stream := range []bool{false, true} {
		n := f.sayThen(t, reply, strings.Repeat("junk", 8))
		body := chatBody("mistral weather, stream "+strconv.FormatBool(stream), `,"tools":`+weatherTools, stream)
		var calls []map[string]any
		var finish any
		if stream {
			var content string
			content, calls, finish = streamed(t, sseEvents(t, url, body))
			if content != "" {
				t.Errorf("stream content %q", content)
			}
		} else {
			code, m := post(t, url, body)
			if code != 200 {
				t.Fatalf("%d %v", code, m)
			}
			ch := m["choices"].([]any)[0].(map[string]any)
			msg := ch["message"].(map[string]any)
			calls, finish = callsOf(t, msg["tool_calls"]), ch["finish_reason"]
			if msg["content"] != nil {
				t.Errorf("content %v", msg["content"])
			}
			if used := int(m["usage"].(map[string]any)["completion_tokens"].(float64)); used >= n {
				t.Errorf("generated %d tokens of %d: did not stop at the end of the array", used, n)
			}
		}
		if finish != "tool_calls" || len(calls) != 2 || calls[0]["id"] != "abcDEF123" {
			t.Fatalf("stream %v: finish %v calls %v", stream, finish, calls)
		}
		checkCalls(t, "second call", calls[1:], [][2]string{{"get_time", `{}`}})
		if fn := calls[0]["function"].(map[string]any); fn["name"] != "get_weather" || fn["arguments"] != `{"city":"Paris"}` {
			t.Errorf("first call %v", calls[0])
		}
	}
}
