package chat

import (
	"encoding/json"
	"testing"
)

func TestReasoningStream(t *testing.T) {
	for _, c := range []struct {
		name       string
		reply      string
		forcedOpen bool
		reasoning  string
		content    string
	}{
		{"no thinking", "Hello there.", false, "", "Hello there."},
		{"thinking then answer", "<think>\nLet me see.\n2+2=4.\n</think>\n\nIt is 4.", false, "Let me see.\n2+2=4.", "It is 4."},
		{"leading space before the tag", "  \n<think>hm</think>ok", false, "hm", "ok"},
		{"forced open", "The user wants a poem.\n</think>\n\nRoses.", true, "The user wants a poem.", "Roses."},
		{"cut short inside", "<think>still thinking  ", false, "still thinking", ""},
		{"a later tag is content", "Answer: use <think> tags.", false, "", "Answer: use <think> tags."},
		{"reply is a partial tag", "<thi", false, "", "<thi"},
		{"empty thoughts (Qwen3 no-think echo)", "<think>\n\n</think>\n\nHi", false, "", "Hi"},
		{"tag-like text inside thoughts", "<think>a </thin b</think>c", false, "a </thin b", "c"},
		{"lt at start is content", "<b>bold</b>", false, "", "<b>bold</b>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Whole, byte by byte and in every two-piece split, the
			// result is the same.
			splits := [][]string{{c.reply}}
			var bytes []string
			for i := 0; i < len(c.reply); i++ {
				bytes = append(bytes, c.reply[i:i+1])
			}
			splits = append(splits, bytes)
			for i := 1; i < len(c.reply); i++ {
				splits = append(splits, []string{c.reply[:i], c.reply[i:]})
			}
			for _, parts := range splits {
				s := NewReasoningStream(c.forcedOpen)
				var r, ct string
				for _, p := range parts {
					a, b := s.Push(p)
					r, ct = r+a, ct+b
				}
				a, b := s.Finish()
				r, ct = r+a, ct+b
				if r != c.reasoning || ct != c.content {
					t.Fatalf("pieces %q: reasoning %q content %q, want %q %q", parts, r, ct, c.reasoning, c.content)
				}
			}
		})
	}
}

func TestReasoningFormat(t *testing.T) {
	think, err := Compile("think", "{% for m in messages %}{{ m.content }}{% endfor %}<think>\n", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Compile("plain", "{% for m in messages %}{{ m.content }}{% endfor %}", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in     string
		tmpl   *Template
		splits bool
		bad    bool
	}{
		{"auto", think, true, false}, {"", think, true, false}, {"auto", plain, false, false},
		{"none", think, false, false}, {"deepseek", plain, true, false}, {"bogus", plain, false, true},
	} {
		f, err := ParseReasoningFormat(c.in)
		if (err != nil) != c.bad {
			t.Fatalf("%q: err %v", c.in, err)
		}
		if !c.bad && f.Splits(c.tmpl) != c.splits {
			t.Errorf("%q on %s: splits %v, want %v", c.in, c.tmpl.Name(), !c.splits, c.splits)
		}
	}
	if !ThinkingForcedOpen("<|im_start|>assistant\n<think>\n") || ThinkingForcedOpen("<think>\n\n</think>\n\n") {
		t.Error("ThinkingForcedOpen")
	}
}

// qwen3Tail is the generation prompt of Qwen3's template, verbatim: it
// reads enable_thinking.
const qwen3Tail = `{%- for m in messages %}{{- '<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n' }}{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %}`

func TestTemplateVars(t *testing.T) {
	tm, err := Compile("qwen3-tail", qwen3Tail, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{Role: "user", Content: "hi"}}
	for _, c := range []struct {
		name string
		vars map[string]json.RawMessage
		want string
	}{
		{"default thinks", nil, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"},
		{"enable_thinking false", map[string]json.RawMessage{"enable_thinking": json.RawMessage(`false`)}, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"},
		{"enable_thinking true", map[string]json.RawMessage{"enable_thinking": json.RawMessage(`true`)}, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"},
		{"messages cannot be overridden", map[string]json.RawMessage{"messages": json.RawMessage(`[]`)}, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := tm.Render(msgs, Options{AddGenerationPrompt: true, Vars: c.vars})
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	if !tm.Reads("enable_thinking") || tm.Reads("reasoning_effort") || tm.Reads("enable") {
		t.Error("Reads")
	}
}
