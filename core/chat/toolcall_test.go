package chat

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// The inputs are written from the formats' published definitions (the
// Hermes-2-Pro / Qwen2.5 templates' <tool_call> blocks, Meta's Llama 3.1
// prompt-format page, Mistral's [TOOL_CALLS] array); the expected calls
// follow from those definitions: name as written, arguments as the compact
// JSON text of the written object, content as the text outside the calls.
var toolCases = []struct {
	name    string
	f       ToolFormat
	in      string
	content string
	calls   []ToolCall
}{
	{"hermes one", ToolHermes, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>",
		"", []ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris","unit":"c"}`}}},
	{"hermes text before", ToolHermes, "Let me look.\n<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
		"Let me look.\n", []ToolCall{{Name: "f", Arguments: `{}`}}},
	{"hermes parallel", ToolHermes, "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {\"y\": [1, 2]}}\n</tool_call>",
		"", []ToolCall{{Name: "a", Arguments: `{"x":1}`}, {Name: "b", Arguments: `{"y":[1,2]}`}}},
	{"hermes key order kept", ToolHermes, `<tool_call>{"arguments": {"z": 1, "a": 2}, "name": "f"}</tool_call>`,
		"", []ToolCall{{Name: "f", Arguments: `{"z":1,"a":2}`}}},
	{"hermes string arguments", ToolHermes, `<tool_call>{"name": "f", "arguments": "{\"q\": \"x\"}"}</tool_call>`,
		"", []ToolCall{{Name: "f", Arguments: `{"q":"x"}`}}},
	{"hermes unicode", ToolHermes, `<tool_call>{"name": "f", "arguments": {"q": "café ☕"}}</tool_call>`,
		"", []ToolCall{{Name: "f", Arguments: `{"q":"café ☕"}`}}},
	{"hermes unterminated", ToolHermes, "ok <tool_call>{\"name\": \"f\", \"arguments\": {}}", "ok <tool_call>{\"name\": \"f\", \"arguments\": {}}", nil},
	{"hermes bad json", ToolHermes, "<tool_call>{\"name\": f}</tool_call>", "<tool_call>{\"name\": f}</tool_call>", nil},
	{"hermes no name", ToolHermes, "<tool_call>{\"arguments\": {}}</tool_call>", "<tool_call>{\"arguments\": {}}</tool_call>", nil},
	{"hermes second broken", ToolHermes, "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>{", "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>{", nil},
	{"hermes plain", ToolHermes, "The weather is fine.", "The weather is fine.", nil},
	{"llama3 json", ToolLlama3, `{"name": "get_weather", "parameters": {"city": "Paris"}}`,
		"", []ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
	{"llama3 type function", ToolLlama3, "\n{\"type\": \"function\", \"name\": \"f\", \"parameters\": {\"a\": true}}",
		"", []ToolCall{{Name: "f", Arguments: `{"a":true}`}}},
	{"llama3 python tag", ToolLlama3, `<|python_tag|>{"name": "f", "parameters": {"n": 3}}`,
		"", []ToolCall{{Name: "f", Arguments: `{"n":3}`}}},
	{"llama3 text then tag", ToolLlama3, `Sure. <|python_tag|>{"name": "f", "parameters": {}}`,
		"Sure. ", []ToolCall{{Name: "f", Arguments: `{}`}}},
	{"llama3 json not a call", ToolLlama3, `{"answer": 42}`, `{"answer": 42}`, nil},
	{"llama3 call mid text", ToolLlama3, `Use {"name": "f", "parameters": {}}`, `Use {"name": "f", "parameters": {}}`, nil},
	{"llama3 truncated", ToolLlama3, `{"name": "f", "parameters": {"a": `, `{"name": "f", "parameters": {"a": `, nil},
	{"llama3 wrong type", ToolLlama3, `{"type": "x", "name": "f", "parameters": {}}`, `{"type": "x", "name": "f", "parameters": {}}`, nil},
	{"llama3 parameters not object", ToolLlama3, `{"name": "f", "parameters": [1]}`, `{"name": "f", "parameters": [1]}`, nil},
	{"mistral one", ToolMistral, `[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abcDEF123"}]`,
		"", []ToolCall{{ID: "abcDEF123", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
	{"mistral parallel", ToolMistral, ` [TOOL_CALLS] [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"k": "v"}}]`,
		" ", []ToolCall{{Name: "a", Arguments: `{}`}, {Name: "b", Arguments: `{"k":"v"}`}}},
	{"mistral empty array", ToolMistral, `[TOOL_CALLS][]`, `[TOOL_CALLS][]`, nil},
	{"mistral not array", ToolMistral, `[TOOL_CALLS]{"name": "a"}`, `[TOOL_CALLS]{"name": "a"}`, nil},
	{"mistral unterminated", ToolMistral, `[TOOL_CALLS][{"name": "a", "arguments": {}}`, `[TOOL_CALLS][{"name": "a", "arguments": {}}`, nil},
	{"none", ToolNone, `<tool_call>{"name": "f", "arguments": {}}</tool_call>`, `<tool_call>{"name": "f", "arguments": {}}</tool_call>`, nil},
}

func TestParseToolCalls(t *testing.T) {
	for _, c := range toolCases {
		t.Run(c.name, func(t *testing.T) {
			content, calls := ParseToolCalls(c.f, c.in)
			if content != c.content || !reflect.DeepEqual(calls, c.calls) {
				t.Errorf("ParseToolCalls(%s, %q)\n got %q %+v\nwant %q %+v", c.f, c.in, content, calls, c.content, c.calls)
			}
		})
	}
}

// TestToolStream feeds every case in pieces of every size: the content
// streamed before the call plus Finish must equal ParseToolCalls, and no
// byte of a call may be streamed as content.
func TestToolStream(t *testing.T) {
	for _, c := range toolCases {
		for size := 1; size <= 7; size++ {
			s := NewToolStream(c.f)
			var streamed strings.Builder
			for i := 0; i < len(c.in); i += size {
				streamed.WriteString(s.Push(c.in[i:min(i+size, len(c.in))]))
			}
			early := streamed.String()
			rest, calls := s.Finish()
			if got := early + rest; got != c.content || !reflect.DeepEqual(calls, c.calls) {
				t.Errorf("%s, pieces of %d: got %q+%q %+v, want %q %+v", c.name, size, early, rest, calls, c.content, c.calls)
			}
			if len(c.calls) > 0 && !strings.HasPrefix(c.content, early) {
				t.Errorf("%s, pieces of %d: streamed %q is not a prefix of the content %q", c.name, size, early, c.content)
			}
		}
	}
}

func TestToolStreamComplete(t *testing.T) {
	for _, c := range []struct {
		f     ToolFormat
		parts []string
		want  []bool // Complete after each part
	}{
		{ToolLlama3, []string{`{"name": "f", `, `"parameters": {"a": 1}`, `}`}, []bool{false, false, true}},
		{ToolMistral, []string{`[TOOL_CALLS][{"name": "f", "arguments": {}}`, `]`}, []bool{false, true}},
		{ToolHermes, []string{`<tool_call>{"name": "f", "arguments": {}}`, `</tool_call>`}, []bool{false, false}},
		{ToolLlama3, []string{`{"answer": `, `1}`}, []bool{false, false}},
		{ToolLlama3, []string{`{"name": "f", "parameters": {}`, `}junk`, `more`}, []bool{false, true, true}},
	} {
		s := NewToolStream(c.f)
		for i, p := range c.parts {
			s.Push(p)
			if got := s.Complete(); got != c.want[i] {
				t.Errorf("%s after %q: Complete %v, want %v", c.f, strings.Join(c.parts[:i+1], ""), got, c.want[i])
			}
		}
	}
}

func TestDetectToolFormat(t *testing.T) {
	for _, name := range Builtins() {
		tm, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]ToolFormat{"qwen2.5": ToolHermes}[name]
		if got := tm.ToolFormat(); got != want {
			t.Errorf("built-in %s: %s, want %s", name, got, want)
		}
	}
	for src, want := range map[string]ToolFormat{
		"{{- '<|start_header_id|>ipython<|end_header_id|>\\n\\n' }}{{ '<|python_tag|>' }}": ToolLlama3,
		"{%- if message.tool_calls %}{{ '[TOOL_CALLS][' }}":                                ToolMistral,
		"{{ '<|im_start|>' + message.role }}":                                              ToolNone,
	} {
		if got := DetectToolFormat(src); got != want {
			t.Errorf("DetectToolFormat(%q) = %s, want %s", src, got, want)
		}
	}
}

// FuzzToolCalls: model output is untrusted. Parsing must not panic, the
// streamed split must agree with the whole-text parse, and a reply without
// calls must come back unchanged.
func FuzzToolCalls(f *testing.F) {
	for _, c := range toolCases {
		f.Add(int(c.f), c.in, 3)
	}
	f.Fuzz(func(t *testing.T, fi int, in string, size int) {
		ff := ToolFormat(uint(fi) % 4)
		if size <= 0 || size > 64 {
			size = 1 + (size&63+64)%64
		}
		content, calls := ParseToolCalls(ff, in)
		if calls == nil && content != in {
			t.Fatalf("no calls but content %q != input %q", content, in)
		}
		for _, c := range calls {
			if c.Name == "" || !strings.HasPrefix(c.Arguments, "{") || !utf8.ValidString(c.Arguments) && utf8.ValidString(in) {
				t.Fatalf("bad call %+v from %q", c, in)
			}
		}
		s := NewToolStream(ff)
		var streamed strings.Builder
		complete := false
		var deltas []ToolCallDelta
		for i := 0; i < len(in); i += size {
			streamed.WriteString(s.Push(in[i:min(i+size, len(in))]))
			deltas = append(deltas, s.Deltas()...)
			complete = s.Complete() || complete
		}
		rest, scalls := s.Finish()
		// Deltas streamed as the calls formed, completed by RestDeltas,
		// add up to the calls; or RestDeltas says they do not.
		more, ok := s.RestDeltas(scalls)
		if ok {
			var rebuilt []ToolCall
			for _, d := range append(deltas, more...) {
				if !utf8.ValidString(d.Arguments) && utf8.ValidString(in) {
					t.Fatalf("delta %+v is not UTF-8", d)
				}
				if d.First {
					rebuilt = append(rebuilt, ToolCall{ID: d.ID, Name: d.Name})
				} else {
					rebuilt[d.Index].Arguments += d.Arguments
				}
			}
			if len(rebuilt) != len(scalls) || len(rebuilt) > 0 && !reflect.DeepEqual(rebuilt, scalls) {
				t.Fatalf("deltas rebuild %+v, calls %+v (from %q)", rebuilt, scalls, in)
			}
		} else if len(deltas) == 0 {
			t.Fatalf("RestDeltas refused calls %+v though nothing was streamed (from %q)", scalls, in)
		}
		got := streamed.String() + rest
		// A stream that found the end of a single call ignores what
		// follows it, which the whole-text parse keeps as content.
		if !reflect.DeepEqual(scalls, calls) || got != content && !(complete && strings.HasPrefix(content, got)) {
			t.Fatalf("stream %q+%q %+v (complete %v), whole %q %+v", streamed.String(), rest, scalls, complete, content, calls)
		}
	})
}

// TestStringArgumentsRenderAsObjects: OpenAI clients send a call's
// arguments back as a JSON string; a template that writes them with tojson
// must render them as the object the model wrote, the same as when the
// client sends the object itself. A template that prints them as they come
// keeps the string.
func TestStringArgumentsRenderAsObjects(t *testing.T) {
	conv := func(args string) []Message {
		msgs, err := ParseMessages([]byte(`[{"role":"user","content":"weather?"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":` + args + `}}]},
			{"role":"tool","tool_call_id":"call_1","content":"sunny"}]`))
		if err != nil {
			t.Fatal(err)
		}
		return msgs
	}
	qwen, err := Builtin("qwen2.5")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := qwen.Render(conv(`{"city": "Paris"}`), Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	str, err := qwen.Render(conv(`"{\"city\": \"Paris\"}"`), Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	if str != obj || !strings.Contains(obj, `"arguments": {"city": "Paris"}`) {
		t.Errorf("string arguments render\n%s\nobject arguments render\n%s", str, obj)
	}
	raw, err := Compile("raw", `{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.arguments }}{% endfor %}{% endfor %}`, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := raw.Render(conv(`"{\"city\": \"Paris\"}"`), Options{}); err != nil || out != `{"city": "Paris"}` {
		t.Errorf("template printing the string: %q %v", out, err)
	}
}
