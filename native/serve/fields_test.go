package serve

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/memvanta/memvanta/core/engine"
)

// paramOf is the "param" of an OpenAI error body, "" if there is none.
func paramOf(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	p, _ := e["param"].(string)
	return p
}

// jsonFields lists the JSON names of a request type's fields, as the
// official client sends them.
func jsonFields(t *testing.T, v any) []string {
	t.Helper()
	var out []string
	rt := reflect.TypeOf(v)
	for i := 0; i < rt.NumField(); i++ {
		tag := rt.Field(i).Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	if len(out) < 10 {
		t.Fatalf("%T: only %d JSON fields found (%v); the reflection walk is broken", v, len(out), out)
	}
	return out
}

// TestEveryOpenAIFieldHasAFate walks the official client's request types:
// every field a client can send is in the endpoint's table, so none is
// dropped by omission. A field added to the client's types fails this
// test until someone decides its fate.
func TestEveryOpenAIFieldHasAFate(t *testing.T) {
	for _, c := range []struct {
		name  string
		typ   any
		rules map[string]fieldRule
	}{
		{"chat", openai.ChatCompletionNewParams{}, chatRules},
		{"completions", openai.CompletionNewParams{}, completionRules},
	} {
		for _, f := range jsonFields(t, c.typ) {
			if _, ok := c.rules[f]; !ok {
				t.Errorf("%s: field %q sent by openai-go has no fate in the table", c.name, f)
			}
		}
	}
}

// TestFieldFates sends each kind of field to the real server: honoured and
// no-effect fields get a 200, refused values and unknown fields a 400
// naming the field, and null is the same as absent.
func TestFieldFates(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 1})
	chatURL, complURL := f.url+"/v1/chat/completions", f.url+"/v1/completions"
	compl := func(extra string) string {
		return `{"prompt":"once","max_tokens":2,"temperature":0` + extra + `}`
	}
	for _, c := range []struct {
		name, url, body string
		param           string // "" = want 200
	}{
		{"plain chat", chatURL, chatBody("hi", `,"max_tokens":2`, false), ""},
		{"no-effect user/store/metadata", chatURL, chatBody("hi", `,"user":"u1","store":false,"metadata":{"a":"b"},"service_tier":"auto"`, false), ""},
		{"response_format text", chatURL, chatBody("hi", `,"response_format":{"type":"text"}`, false), ""},
		{"response_format json_object", chatURL, chatBody("hi", `,"response_format":{"type":"json_object"}`, false), ""},
		{"response_format json_schema", chatURL, chatBody("hi", `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}}`, false), ""},
		{"response_format unknown type", chatURL, chatBody("hi", `,"response_format":{"type":"yaml"}`, false), "response_format"},
		{"response_format bad schema", chatURL, chatBody("hi", `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"string","pattern":"a+"}}}`, false), "response_format"},
		{"response_format null", chatURL, chatBody("hi", `,"response_format":null`, false), ""},
		{"logprobs false", chatURL, chatBody("hi", `,"logprobs":false`, false), ""},
		{"logprobs true", chatURL, chatBody("hi", `,"logprobs":true,"top_logprobs":3`, false), ""},
		{"top_logprobs above 20", chatURL, chatBody("hi", `,"logprobs":true,"top_logprobs":21`, false), "top_logprobs"},
		{"top_logprobs without logprobs", chatURL, chatBody("hi", `,"top_logprobs":2`, false), "top_logprobs"},
		{"reasoning_format none", chatURL, chatBody("hi", `,"reasoning_format":"none"`, false), ""},
		{"reasoning_format bogus", chatURL, chatBody("hi", `,"reasoning_format":"bogus"`, false), "reasoning_format"},
		// The fallback template reads none of these: refused, not ignored.
		{"enable_thinking unread", chatURL, chatBody("hi", `,"enable_thinking":false`, false), "enable_thinking"},
		{"chat_template_kwargs unread", chatURL, chatBody("hi", `,"chat_template_kwargs":{"enable_thinking":false}`, false), "chat_template_kwargs"},
		{"n 0", chatURL, chatBody("hi", `,"n":0`, false), "n"},
		{"grammar", chatURL, chatBody("hi", `,"grammar":"root ::= \"a\""`, false), ""},
		{"grammar syntax error", chatURL, chatBody("hi", `,"grammar":"root ::= (\"a\""`, false), "grammar"},
		{"grammar and json_schema", chatURL, chatBody("hi", `,"grammar":"root ::= \"a\"","json_schema":{}`, false), "json_schema"},
		{"completion grammar", complURL, compl(`,"grammar":"root ::= \"a\""`), ""},
		{"completion json_schema", complURL, compl(`,"json_schema":{"type":"integer"}`), ""},
		{"reasoning_effort", chatURL, chatBody("hi", `,"reasoning_effort":"low"`, false), "reasoning_effort"},
		{"unknown field", chatURL, chatBody("hi", `,"mirostat":2`, false), "mirostat"},
		{"n 2", chatURL, chatBody("hi", `,"n":2`, false), "n"},
		{"completion echo false", complURL, compl(`,"echo":false`), ""},
		{"completion echo true", complURL, compl(`,"echo":true`), "echo"},
		{"completion logprobs 2", complURL, compl(`,"logprobs":2`), ""},
		{"completion logprobs 21", complURL, compl(`,"logprobs":21`), "logprobs"},
		{"completion suffix", complURL, compl(`,"suffix":"end"`), "suffix"},
		{"completion unknown", complURL, compl(`,"n_predict":4`), "n_predict"},
		{"tokenize unknown", f.url + "/tokenize", `{"content":"x","bogus":1}`, "bogus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, m := post(t, c.url, c.body)
			if c.param == "" {
				if code != 200 {
					t.Fatalf("status %d %v, want 200", code, m)
				}
				return
			}
			if code != 400 || paramOf(m) != c.param {
				t.Fatalf("status %d param %q (%v), want 400 naming %q", code, paramOf(m), m, c.param)
			}
			e := m["error"].(map[string]any)
			if msg, _ := e["message"].(string); !strings.Contains(msg, c.param) {
				t.Errorf("message %q does not name %q", msg, c.param)
			}
		})
	}
}
