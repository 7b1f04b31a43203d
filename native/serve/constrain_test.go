package serve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/engine"
)

// TestResponseFormatSchema: a synthetic model's reply under a schema is
// JSON valid under it (the schema's language is finite, so the reply
// always completes).
func TestResponseFormatSchema(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 1})
	schema := `{"type":"object","properties":{"color":{"enum":["red","green","blue"]},"n":{"type":"integer","minimum":0,"maximum":99},"ok":{"type":"boolean"}},"required":["color","n","ok"],"additionalProperties":false}`
	for _, temp := range []string{"0", "1.2"} {
		for _, rf := range []string{
			`{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":` + schema + `}}`,
			`{"type":"json_object","schema":` + schema + `}`,
		} {
			code, m := post(t, f.url+"/v1/chat/completions", chatBody("hi", `,"max_tokens":200,"seed":5,"temperature":`+temp+`,"response_format":`+rf, false))
			if code != 200 {
				t.Fatalf("%d %v", code, m)
			}
			ch := m["choices"].([]any)[0].(map[string]any)
			content := ch["message"].(map[string]any)["content"].(string)
			var v struct {
				Color *string `json:"color"`
				N     *int    `json:"n"`
				OK    *bool   `json:"ok"`
			}
			dec := json.NewDecoder(stringsReader(content))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&v); err != nil || v.Color == nil || v.N == nil || v.OK == nil || *v.N < 0 || *v.N > 99 ||
				(*v.Color != "red" && *v.Color != "green" && *v.Color != "blue") {
				t.Errorf("temp %s: reply %q is not valid under the schema (%v)", temp, content, err)
			}
			if ch["finish_reason"] != "stop" {
				t.Errorf("finish_reason %v", ch["finish_reason"])
			}
		}
	}
}

func TestGrammarField(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 1})
	for seed := 0; seed < 4; seed++ {
		code, m := post(t, f.url+"/v1/completions", `{"prompt":"once","max_tokens":50,"temperature":1.5,"seed":`+string(rune('0'+seed))+`,"grammar":"root ::= (\"yes\" | \"no\") \".\""}`)
		if code != 200 {
			t.Fatalf("%d %v", code, m)
		}
		text := m["choices"].([]any)[0].(map[string]any)["text"].(string)
		if text != "yes." && text != "no." {
			t.Errorf("seed %d: %q is outside the grammar", seed, text)
		}
	}
}

// TestToolChoiceEnforced: tool_choice "required" and a named function are
// accepted and the reply is the call (the scripted model says it; the
// grammar lets it through unchanged).
func TestToolChoiceEnforced(t *testing.T) {
	f := newToolFixture(t, "qwen2.5")
	url := f.url + "/v1/chat/completions"
	call := "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}\n</tool_call>"
	for _, choice := range []string{`"required"`, `{"type":"function","function":{"name":"get_weather"}}`} {
		f.say(t, call)
		code, m := post(t, url, chatBody("weather?", `,"tools":`+weatherTools+`,"tool_choice":`+choice, false))
		if code != 200 {
			t.Fatalf("%s: %d %v", choice, code, m)
		}
		ch := m["choices"].([]any)[0].(map[string]any)
		checkCalls(t, choice, callsOf(t, ch["message"].(map[string]any)["tool_calls"]), [][2]string{{"get_weather", `{"city":"Paris"}`}})
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
