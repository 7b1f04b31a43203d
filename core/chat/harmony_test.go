package chat

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// harmonyCase is a reply and what it splits into. The expectations are
// written from the harmony format's definition (OpenAI's harmony guide and
// llama.cpp's common_chat_parse_gpt_oss), not from this parser's output.
type harmonyCase struct {
	name                string
	opt                 HarmonyOptions
	text                string
	reasoning, content  string
	calls               []ToolCall
	streamedCallInvalid bool
}

var splitBoth = HarmonyOptions{Reasoning: true, Tools: true}

var harmonyCases = []harmonyCase{
	{name: "analysis then final", opt: splitBoth,
		text:      "<|channel|>analysis<|message|>The user greets. Reply briefly.<|end|><|start|>assistant<|channel|>final<|message|>Hello! How can I help?",
		reasoning: "The user greets. Reply briefly.", content: "Hello! How can I help?"},
	{name: "final only", opt: splitBoth,
		text: "<|channel|>final<|message|>Just the answer.", content: "Just the answer."},
	{name: "final with return marker", opt: splitBoth,
		text: "<|channel|>final<|message|>Done.<|return|>", content: "Done."},
	{name: "final with constraint", opt: splitBoth,
		text:    "<|channel|>analysis<|message|>JSON wanted.<|end|><|start|>assistant<|channel|>final <|constrain|>json<|message|>{\"a\": 1}",
		content: "{\"a\": 1}", reasoning: "JSON wanted."},
	{name: "thoughts trimmed, answer kept as written", opt: splitBoth,
		text:      "<|channel|>analysis<|message|>\n  think  \n<|end|><|start|>assistant<|channel|>final<|message|> answer \n",
		reasoning: "think", content: " answer \n"},
	{name: "two analysis messages", opt: splitBoth,
		text:      "<|channel|>analysis<|message|>first<|end|><|start|>assistant<|channel|>analysis<|message|>second<|end|><|start|>assistant<|channel|>final<|message|>ok",
		reasoning: "first\nsecond", content: "ok"},
	{name: "reasoning none keeps the analysis in content", opt: HarmonyOptions{Tools: true},
		text:    "<|channel|>analysis<|message|>hmm<|end|><|start|>assistant<|channel|>final<|message|>yes",
		content: "<|channel|>analysis<|message|>hmm<|end|>yes"},
	{name: "thoughts cut short", opt: splitBoth,
		text: "<|channel|>analysis<|message|>still thinking ", reasoning: "still thinking"},
	{name: "cut inside the header", opt: splitBoth,
		text: "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|chan", reasoning: "a"},
	{name: "commentary preamble is content", opt: splitBoth,
		text:    "<|channel|>commentary<|message|>Let me check.<|end|><|start|>assistant<|channel|>final<|message|>Sunny.",
		content: "Let me check.Sunny."},
	{name: "call, recipient after the channel", opt: splitBoth,
		text:      "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
		reasoning: "Need weather.", calls: []ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
	{name: "call, recipient in the role", opt: splitBoth,
		text:  " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\":\"Oslo\"}",
		calls: []ToolCall{{Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
	{name: "call after analysis, recipient in the role", opt: splitBoth,
		text:      "<|channel|>analysis<|message|>x<|end|><|start|>assistant to=functions.f<|channel|>commentary <|constrain|>json<|message|>{}",
		reasoning: "x", calls: []ToolCall{{Name: "f", Arguments: `{}`}}},
	{name: "two calls", opt: splitBoth,
		text:  "<|channel|>commentary to=functions.a <|constrain|>json<|message|>{\"x\":[1, 2]}<|call|><|start|>assistant<|channel|>commentary to=functions.b <|constrain|>json<|message|>{\"y\":\"é\"}<|call|>",
		calls: []ToolCall{{Name: "a", Arguments: `{"x":[1,2]}`}, {Name: "b", Arguments: `{"y":"é"}`}}},
	{name: "call without tools is content", opt: HarmonyOptions{Reasoning: true},
		text:    "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}",
		content: `{"city":"Paris"}`},
	{name: "call body not JSON", opt: splitBoth,
		text:    "<|channel|>commentary to=functions.f <|constrain|>json<|message|>not json",
		content: "not json"},
	{name: "call body invalid after streaming", opt: splitBoth,
		text:    "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": tru}",
		content: "{\"a\": tru}", streamedCallInvalid: true},
	{name: "not harmony", opt: splitBoth,
		text: "Plain text <|channel|> is not a header.", content: "Plain text <|channel|> is not a header."},
	{name: "message without end, next start", opt: splitBoth,
		text:      "<|channel|>analysis<|message|>t<|start|>assistant<|channel|>final<|message|>f",
		reasoning: "t", content: "f"},
	{name: "marker-like text in the answer", opt: splitBoth,
		text: "<|channel|>final<|message|>a <|en b <|", content: "a <|en b <|"},
	{name: "empty", opt: splitBoth, text: ""},
}

// runHarmony feeds text in the given pieces and returns the reply it
// streamed (deltas folded into calls) and the final calls.
func runHarmony(t *testing.T, opt HarmonyOptions, parts []string) (reasoning, content string, streamed, calls []ToolCall, ok bool) {
	t.Helper()
	h := NewHarmonyStream(opt)
	var all HarmonyPiece
	for _, s := range parts {
		all.add(h.Push(s))
	}
	last, calls, ok := h.Finish()
	all.add(last)
	for _, d := range all.Deltas {
		switch {
		case d.First:
			if d.Index != len(streamed) || d.Arguments != "" {
				t.Fatalf("first delta %+v after %d calls", d, len(streamed))
			}
			streamed = append(streamed, ToolCall{Name: d.Name})
		case d.Index == len(streamed)-1:
			streamed[d.Index].Arguments += d.Arguments
		default:
			t.Fatalf("delta %+v for call %d of %d", d, d.Index, len(streamed))
		}
	}
	return all.Reasoning, all.Content, streamed, calls, ok
}

func TestHarmonyStream(t *testing.T) {
	for _, c := range harmonyCases {
		t.Run(c.name, func(t *testing.T) {
			check := func(how string, parts []string) {
				t.Helper()
				r, content, streamed, calls, ok := runHarmony(t, c.opt, parts)
				if r != c.reasoning || content != c.content || !reflect.DeepEqual(calls, c.calls) {
					t.Fatalf("%s: reasoning %q content %q calls %+v\nwant %q %q %+v", how, r, content, calls, c.reasoning, c.content, c.calls)
				}
				for _, m := range []string{"<|channel|>", "<|message|>", "<|end|>", "<|start|>", "<|call|>", "<|return|>", "<|constrain|>"} {
					if strings.Contains(r, m) {
						t.Fatalf("%s: marker %s in reasoning %q", how, m, r)
					}
				}
				if c.streamedCallInvalid {
					// A call is announced once its arguments begin as
					// JSON (how far they get depends on the splits), and
					// must then be reported as not holding at the end.
					if ok != (len(streamed) == 0) {
						t.Fatalf("%s: ok %v after streaming %+v", how, ok, streamed)
					}
					return
				}
				if !ok {
					t.Fatalf("%s: not ok", how)
				}
				if !reflect.DeepEqual(streamed, c.calls) {
					t.Fatalf("%s: streamed calls %+v, want %+v", how, streamed, c.calls)
				}
			}
			check("whole", []string{c.text})
			for k := 0; k <= len(c.text); k++ {
				check("split at "+itoa(k), []string{c.text[:k], c.text[k:]})
			}
			bytes := make([]string, len(c.text))
			for i := 0; i < len(c.text); i++ {
				bytes[i] = c.text[i : i+1]
			}
			check("byte by byte", bytes)
			if r, content, calls := ParseHarmony(c.opt, c.text); r != c.reasoning || content != c.content || !reflect.DeepEqual(calls, c.calls) {
				t.Fatalf("ParseHarmony: %q %q %+v", r, content, calls)
			}
		})
	}
}

// TestHarmonyStreamsEarly: content and thoughts are given as they come,
// held back only while they may be a marker.
func TestHarmonyStreamsEarly(t *testing.T) {
	h := NewHarmonyStream(splitBoth)
	if p := h.Push("<|channel|>analysis<|mess"); p.Reasoning != "" || p.Content != "" {
		t.Fatalf("header leaked: %+v", p)
	}
	if p := h.Push("age|>Think"); p.Reasoning != "Think" {
		t.Fatalf("thought held: %+v", p)
	}
	if p := h.Push("ing <|e"); p.Reasoning != "ing" {
		t.Fatalf("partial end: %+v", p)
	}
	if p := h.Push("nd|><|start|>assistant<|channel|>final<|message|>Hi"); p.Reasoning != "" || p.Content != "Hi" {
		t.Fatalf("final: %+v", p)
	}
	h = NewHarmonyStream(splitBoth)
	if p := h.Push(" to=functions.f<|channel|>commentary json<|message|>{\"city\": \"Par"); len(p.Deltas) != 2 || !p.Deltas[0].First || p.Deltas[0].Name != "f" || p.Deltas[1].Arguments != `{"city":"Par` {
		t.Fatalf("call not streamed: %+v", p)
	}
}

func TestDetectHarmony(t *testing.T) {
	src := harmonyTemplate(t)
	if DetectToolFormat(src) != ToolHarmony || !IsHarmony(src) {
		t.Fatalf("gpt-oss template detected as %v", DetectToolFormat(src))
	}
	tm, err := Compile("gpt-oss", src, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !tm.Harmony() || !ReasoningAuto.Splits(tm) || ReasoningNone.Splits(tm) {
		t.Fatal("gpt-oss template: reasoning not split under auto")
	}
	if !tm.Reads("reasoning_effort") {
		t.Fatal("gpt-oss template does not read reasoning_effort")
	}
}

func itoa(k int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + k%10)
		k /= 10
		if k == 0 {
			return string(b[i:])
		}
	}
}

// harmonyTemplate is gpt-oss-20b's chat template (testdata/templates).
func harmonyTemplate(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "templates", "gpt-oss.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHarmonyHistory: thoughts a client returns with a tool call are
// rendered as the analysis message before the call, as gpt-oss was trained.
func TestHarmonyHistory(t *testing.T) {
	tm, err := Compile("gpt-oss", harmonyTemplate(t), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := ParseMessages([]byte(`[{"role":"user","content":"weather in Paris?"},
		{"role":"assistant","content":null,"reasoning_content":"Need the weather tool.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"sunny"}]`))
	if err != nil {
		t.Fatal(err)
	}
	tools := []byte(`[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`)
	text, err := tm.Render(HarmonyHistory(msgs), Options{AddGenerationPrompt: true, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	want := `<|start|>assistant<|channel|>analysis<|message|>Need the weather tool.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>`
	if !strings.Contains(text, want) {
		t.Errorf("rendered history lacks %q:\n%s", want, text)
	}
	if !strings.Contains(string(msgs[1].Fields), "reasoning_content") || strings.Contains(string(msgs[1].Fields), "thinking") {
		t.Error("HarmonyHistory changed its argument")
	}
}
