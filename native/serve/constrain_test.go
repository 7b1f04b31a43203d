package serve

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

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
			dec := json.NewDecoder(strings.NewReader(content))
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

// TestOpenAIClientStructuredOutputs: the official client's structured
// outputs (a strict json_schema, the reply unmarshalled into a struct, as
// its parse helpers do) and tool_choice "required".
func TestOpenAIClientStructuredOutputs(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 1})
	ctx := context.Background()
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"color": map[string]any{"type": "string", "enum": []string{"red", "green"}},
		"n":     map[string]any{"type": "integer", "minimum": 1, "maximum": 12},
	}, "required": []string{"color", "n"}, "additionalProperties": false}
	resp, err := f.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: modelID,
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage("pick")},
		Temperature: openai.Float(0.9), Seed: openai.Int(2), MaxCompletionTokens: openai.Int(100),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "pick", Strict: openai.Bool(true), Schema: schema}}}})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Color string `json:"color"`
		N     int    `json:"n"`
	}
	dec := json.NewDecoder(strings.NewReader(resp.Choices[0].Message.Content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || (v.Color != "red" && v.Color != "green") || v.N < 1 || v.N > 12 {
		t.Errorf("reply %q (%v) is not valid under the schema", resp.Choices[0].Message.Content, err)
	}

	tf := newToolFixture(t, "qwen2.5")
	call := "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\"}}\n</tool_call>"
	tf.say(t, call)
	tr, err := tf.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: modelID,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather?")}, Temperature: openai.Float(0),
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}})},
		ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}})
	if err != nil {
		t.Fatal(err)
	}
	msg := tr.Choices[0].Message
	if tr.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "get_weather" || msg.ToolCalls[0].Function.Arguments != `{"city":"Oslo"}` {
		t.Errorf("tool_choice required: %+v", tr.Choices[0])
	}
}

// TestGrammarCache: the same source gives the same grammar (so the
// engine reuses its matcher), a different one another, and the cache
// stays within its bound.
func TestGrammarCache(t *testing.T) {
	var gc grammarCache
	a, err := gc.parse(`root ::= "a"`, "root")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := gc.parse(`root ::= "a"`, "root"); b != a {
		t.Error("the same source parsed twice")
	}
	if b, _ := gc.parse(`root ::= "b"`, "root"); b == a {
		t.Error("another source gave the cached grammar")
	}
	if _, err := gc.parse(`root ::= (`, "root"); err == nil {
		t.Error("a bad grammar parsed")
	}
	for i := range 3 * maxCachedGrammars {
		if _, err := gc.parse(`root ::= "x"{`+strconv.Itoa(i+1)+`}`, "root"); err != nil {
			t.Fatal(err)
		}
	}
	if len(gc.gs) != maxCachedGrammars || len(gc.keys) != maxCachedGrammars {
		t.Errorf("%d grammars, %d keys cached, bound %d", len(gc.gs), len(gc.keys), maxCachedGrammars)
	}
}
