package chat

import (
	"strings"
	"testing"
)

// streamCalls feeds reply in pieces to a ToolStream the way the server
// does (Push, Deltas after each piece, Finish, RestDeltas) and rebuilds the
// calls from the deltas alone.
func streamCalls(t *testing.T, f ToolFormat, pieces []string) (content string, got []ToolCall, early int, ok bool) {
	t.Helper()
	s := NewToolStream(f)
	var deltas []ToolCallDelta
	for _, p := range pieces {
		content += s.Push(p)
		d := s.Deltas()
		early += len(d)
		deltas = append(deltas, d...)
	}
	rest, calls := s.Finish()
	content += rest
	more, ok := s.RestDeltas(calls)
	deltas = append(deltas, more...)
	for _, d := range deltas {
		if d.First {
			if d.Index != len(got) || d.Arguments != "" {
				t.Fatalf("first delta %+v out of order", d)
			}
			got = append(got, ToolCall{ID: d.ID, Name: d.Name})
			continue
		}
		if d.Index >= len(got) || d.Name != "" {
			t.Fatalf("argument delta %+v before its call", d)
		}
		got[d.Index].Arguments += d.Arguments
	}
	return content, got, early, ok
}

func TestToolStreamDeltas(t *testing.T) {
	for _, c := range []struct {
		name  string
		f     ToolFormat
		reply string
		early bool // deltas must come before the reply ends
		ok    bool // false: announced, then broken
	}{
		{"hermes one call", ToolHermes, "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2], \"units\": null}}\n</tool_call>", true, true},
		{"hermes parallel", ToolHermes, "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": \"é \\\"q\\\" \\u00e9\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>", true, true},
		{"hermes arguments first", ToolHermes, "<tool_call>{\"arguments\": {\"k\": true}, \"name\": \"f\"}</tool_call>", true, true},
		{"hermes string arguments", ToolHermes, "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>", true, true},
		{"hermes no arguments", ToolHermes, "<tool_call>{\"name\": \"now\"}</tool_call>", true, true},
		{"mistral", ToolMistral, "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": 1.5e3}, \"id\": \"abc123xyz\"}, {\"name\": \"g\", \"arguments\": {\"b\": [false]}, \"id\": \"def456uvw\"}]", true, true},
		{"llama3", ToolLlama3, "{\"name\": \"search\", \"parameters\": {\"q\": \"go\"}}", true, true},
		{"llama3 python tag", ToolLlama3, "<|python_tag|>{\"type\": \"function\", \"name\": \"search\", \"parameters\": {\"q\": \"x\"}}", true, true},
		{"plain text", ToolHermes, "no calls here", false, true},
		// Announced, then broken: the stream must be told it went wrong.
		// (A whole reply is then content: ParseToolCalls is all or nothing.)
		{"hermes cut short", ToolHermes, "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1", true, false},
		{"hermes bad type", ToolHermes, "<tool_call>{\"name\": \"f\", \"type\": \"x\", \"arguments\": {}}</tool_call>", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantContent, wantCalls := ParseToolCalls(c.f, c.reply)
			var bytes []string
			for i := 0; i < len(c.reply); i++ {
				bytes = append(bytes, c.reply[i:i+1])
			}
			splits := [][]string{bytes, {c.reply}}
			for i := 1; i < len(c.reply); i += 7 {
				splits = append(splits, []string{c.reply[:i], c.reply[i:]})
			}
			for k, parts := range splits {
				content, got, early, ok := streamCalls(t, c.f, parts)
				// ok false is right only where a call was announced
				// before it broke; whole, nothing is announced early.
				if !ok && (c.ok || early == 0) || ok && !c.ok && early > 0 {
					t.Fatalf("pieces %q: ok %v with %d early deltas, want ok %v", parts, ok, early, c.ok)
				}
				if !ok {
					continue
				}
				if content != wantContent || len(got) != len(wantCalls) {
					t.Fatalf("pieces %q: content %q calls %+v, whole reply %q %+v", parts, content, got, wantContent, wantCalls)
				}
				for i := range got {
					if got[i] != wantCalls[i] {
						t.Fatalf("pieces %q: call %d %+v, whole reply %+v", parts, i, got[i], wantCalls[i])
					}
				}
				if k == 0 && c.early && early == 0 {
					t.Errorf("byte by byte: no delta before the end")
				}
			}
		})
	}
}

func TestScanJSON(t *testing.T) {
	for _, c := range []struct {
		in, compact string
		done, ok    bool
	}{
		{`{"a": [1, 2 , {"b" :null}], "c":"x y"}  tail`, `{"a":[1,2,{"b":null}],"c":"x y"}`, true, true},
		{`{"a": "unterminated`, `{"a":"unterminated`, false, true},
		{`{"a" 1}`, `{"a"`, false, false},
		{`[tru`, `[tru`, false, true},
		{`[trux]`, `[tru`, false, false},
		{`{"a":1,}`, `{"a":1,`, false, false},
		{`"s\"q"`, `"s\"q"`, true, true},
		{`{}`, `{}`, true, true},
		{`{,}`, `{`, false, false},
	} {
		n, done, compact, ok := scanJSON(c.in)
		if done != c.done || ok != c.ok || compact != c.compact {
			t.Errorf("%q: n %d done %v ok %v compact %q, want %v %v %q", c.in, n, done, ok, compact, c.done, c.ok, c.compact)
		}
		if done && !strings.HasPrefix(c.in[:n], strings.TrimSpace(c.in[:n])) {
			t.Errorf("%q: n %d", c.in, n)
		}
	}
}
