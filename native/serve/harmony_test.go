package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/grammar"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/internal/testmodel"
	"github.com/memvanta/memvanta/kernels"
)

// harmonyTokens are o200k_harmony's special tokens the format uses.
var harmonyTokens = []string{"<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>", "<|constrain|>"}

// gptossTemplate is gpt-oss-20b's chat template, kept by core/chat's tests.
func gptossTemplate(t *testing.T) *chat.Template {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "core", "chat", "testdata", "templates", "gpt-oss.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	tm, err := chat.Compile("gpt-oss", string(src), chat.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// harmonyModel writes a small synthetic gpt-oss file (experts, sinks,
// sliding window) whose vocabulary is the test vocabulary plus harmony's
// special tokens as control tokens, as o200k_harmony has them; the
// tokenizer then treats them as llama.cpp does (<|return|> and <|call|>
// end generation, the others are rendered).
func harmonyModel(t *testing.T) (*model.Model, *tokenizer.Tokenizer) {
	t.Helper()
	base := testmodel.Bytes(t)
	bf, err := gguf.Parse(bytes.NewReader(base), int64(len(base)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	toks, err := bf.Strings("tokenizer.ggml.tokens")
	if err != nil {
		t.Fatal(err)
	}
	scores, err := bf.Float32s("tokenizer.ggml.scores")
	if err != nil {
		t.Fatal(err)
	}
	types, err := bf.Int32s("tokenizer.ggml.token_type")
	if err != nil {
		t.Fatal(err)
	}
	toks = append(append([]string(nil), toks...), harmonyTokens...)
	for range harmonyTokens {
		scores = append(scores, 0)
		types = append(types, 3) // control
	}
	vocab := &gguf.File{}
	for _, kv := range bf.KV {
		if !strings.HasPrefix(kv.Key, "tokenizer.") {
			continue
		}
		switch kv.Key {
		case "tokenizer.ggml.tokens":
			kv.Value, err = gguf.ValueOf(toks)
		case "tokenizer.ggml.scores":
			kv.Value, err = gguf.ValueOf(scores)
		case "tokenizer.ggml.token_type":
			kv.Value, err = gguf.ValueOf(types)
		}
		if err != nil {
			t.Fatal(err)
		}
		vocab.KV = append(vocab.KV, kv)
	}
	var buf bytes.Buffer
	cfg := synth.Config{Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 64, Ctx: 1024, Type: ggml.F32, Vocab: vocab, Seed: 11,
		RopeBase: 10000, Eps: 1e-5, Quantize: kernels.Quantize,
		Arch: synth.Arch{Name: synth.GPTOSS, Window: 8, Bias: true, Experts: 4, ExpertsUsed: 2, FFExp: 32}}
	if err := synth.Write(context.Background(), &buf, cfg, nil); err != nil {
		t.Fatal(err)
	}
	return testmodel.FromBytes(t, buf.Bytes(), model.Options{Threads: 2, KVType: ggml.F16})
}

type harmonyFixture struct {
	url string
	tok *tokenizer.Tokenizer
	sc  *script
	b   *Backend
	srv *Server
}

func newHarmonyFixture(t *testing.T) *harmonyFixture {
	t.Helper()
	m, tok := harmonyModel(t)
	sc := &script{Stepper: engine.Batched{M: m}, eos: tok.EOS()}
	eng, err := engine.New(sc, tok, engine.Options{Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	s := New(Config{ModelID: modelID})
	b := &Backend{Engine: eng, Tokenizer: tok, Template: gptossTemplate(t), NCtx: eng.SlotCtx()}
	s.Ready(b)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { cancel(); <-done; hs.Close() })
	return &harmonyFixture{url: hs.URL + "/v1/chat/completions", tok: tok, sc: sc, b: b, srv: s}
}

// say scripts a reply written with harmony's markers as their special
// tokens and the text between them in the test vocabulary.
func (f *harmonyFixture) say(t *testing.T, reply string) {
	t.Helper()
	var ids []int32
	for reply != "" {
		next, mk := len(reply), ""
		for _, m := range harmonyTokens {
			if i := strings.Index(reply, m); i >= 0 && i < next {
				next, mk = i, m
			}
		}
		if text := reply[:next]; text != "" {
			// Byte tokens spell any text exactly (SPM pieces would add
			// word-start spaces).
			d := f.tok.NewDecoder()
			var got strings.Builder
			for i := 0; i < len(text); i++ {
				id := int32(3 + int(text[i])) // <0xXX> follows <unk>, <s>, </s>
				ids = append(ids, id)
				got.WriteString(d.Add(id))
			}
			if got.WriteString(d.Flush()); got.String() != text {
				t.Fatalf("the test vocabulary spells %q as %q", text, got.String())
			}
		}
		if mk != "" {
			mid, err := f.tok.EncodeChecked(mk, false, true)
			if err != nil || len(mid) != 1 {
				t.Fatalf("%s is not one token: %v %v", mk, mid, err)
			}
			ids = append(ids, mid[0])
			next += len(mk)
		}
		reply = reply[next:]
	}
	f.sc.set(ids, 0)
}

func TestHarmonyTokens(t *testing.T) {
	_, tok := harmonyModel(t)
	for _, m := range harmonyTokens {
		ids, err := tok.EncodeChecked(m, false, true)
		if err != nil || len(ids) != 1 {
			t.Fatalf("%s: %v %v", m, ids, err)
		}
		eog := m == "<|return|>" || m == "<|call|>"
		if tok.IsEOG(ids[0]) != eog {
			t.Errorf("%s: end of generation %v, want %v (llama.cpp's o200k_harmony rules)", m, !eog, eog)
		}
	}
}

func TestHarmonyChat(t *testing.T) {
	f := newHarmonyFixture(t)
	for _, c := range []struct {
		name, say, extra   string
		reasoning, content any // nil: absent / null
		calls              [][2]string
		finish             string
	}{
		{"analysis and final", "<|channel|>analysis<|message|>The user greets.<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>", "",
			"The user greets.", "Hello!", nil, "stop"},
		{"reasoning_format none", "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>", `,"reasoning_format":"none"`,
			nil, "<|channel|>analysis<|message|>think<|end|>ok", nil, "stop"},
		{"tool call", "<|channel|>analysis<|message|>Weather needed.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>", `,"tools":` + weatherTools,
			"Weather needed.", nil, [][2]string{{"get_weather", `{"city":"Paris"}`}}, "tool_calls"},
		{"tool call in the role", " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\":\"Oslo\"}<|call|>", `,"tools":` + weatherTools,
			nil, nil, [][2]string{{"get_weather", `{"city":"Oslo"}`}}, "tool_calls"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.say(t, c.say)
			code, m := post(t, f.url, chatBody("q "+c.name, c.extra, false))
			if code != 200 {
				t.Fatalf("%d %v", code, m)
			}
			ch := m["choices"].([]any)[0].(map[string]any)
			msg := ch["message"].(map[string]any)
			if msg["reasoning_content"] != c.reasoning || msg["content"] != c.content || ch["finish_reason"] != c.finish {
				t.Errorf("message %v finish %v, want reasoning %v content %v finish %s", msg, ch["finish_reason"], c.reasoning, c.content, c.finish)
			}
			checkCalls(t, "message.tool_calls", callsOf(t, msg["tool_calls"]), c.calls)

			f.say(t, c.say)
			evs := sseEvents(t, f.url, chatBody("streamed q "+c.name, c.extra, true))
			content, calls, finish := streamed(t, evs)
			var reasoning string
			for _, ev := range evs {
				for _, x := range ev["choices"].([]any) {
					if r, ok := x.(map[string]any)["delta"].(map[string]any)["reasoning_content"].(string); ok {
						reasoning += r
					}
				}
			}
			wantR, _ := c.reasoning.(string)
			wantC, _ := c.content.(string)
			if reasoning != wantR || content != wantC || finish != c.finish {
				t.Errorf("stream: reasoning %q content %q finish %v", reasoning, content, finish)
			}
			checkCalls(t, "streamed tool_calls", calls, c.calls)
		})
	}
}

// TestHarmonyConstraints: a constraint holds for the final message's body
// (or the call's arguments), with the header and optional thoughts before.
func TestHarmonyConstraints(t *testing.T) {
	full := func(g *grammar.Grammar, s string) bool {
		m, err := grammar.NewMatcher(g)
		if err != nil {
			t.Fatal(err)
		}
		return m.AcceptString(s) == nil && m.Accepting()
	}
	gs, e := grammarSource(&constraintFields{ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}`)})
	if e != nil {
		t.Fatal(e)
	}
	g, e := harmonyFinal(gs).parse(nil)
	if e != nil {
		t.Fatal(e)
	}
	for s, want := range map[string]bool{
		`<|channel|>final<|message|>{"a":1}`: true,
		`<|channel|>analysis<|message|>Think <b> it through.<|end|><|start|>assistant<|channel|>final<|message|>{"a": 2}`: true,
		`<|channel|>final <|constrain|>json<|message|>{"a":1}`:                                                            true,
		`{"a":1}`:                            false,
		`<|channel|>final<|message|>{"b":1}`: false,
		`<|channel|>final<|message|>{"a":1} and more`:         false,
		`<|channel|>analysis<|message|>x<|end|>{"a":1}`:       false,
		`<|channel|>commentary<|message|>{"a":1}`:             false,
		`<|channel|>analysis<|message|>{"a":1}<|end|><|end|>`: false,
	} {
		if got := full(g, s); got != want {
			t.Errorf("final grammar: %s accepted %v, want %v", s, got, want)
		}
	}
	tools := `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}},` +
		`{"type":"function","function":{"name":"add","parameters":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}}}]`
	var defs []toolDef
	if err := json.Unmarshal([]byte(tools), &defs); err != nil {
		t.Fatal(err)
	}
	g, e = harmonyToolGrammar(defs, forcedTools{required: true}, nil)
	if e != nil {
		t.Fatal(e)
	}
	for s, want := range map[string]bool{
		`<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}`:                            true,
		` to=functions.add<|channel|>commentary json<|message|>{"x":3}`:                                                          true,
		`<|channel|>analysis<|message|>need it<|end|><|start|>assistant to=functions.add<|channel|>commentary<|message|>{"x":3}`: true,
		`<|channel|>commentary to=functions.add <|constrain|>json<|message|>{"city":"Paris"}`:                                    false,
		`<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}`:                                             false,
		`<|channel|>final<|message|>It is sunny.`:                                                                                false,
		`<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris","extra":1}`:                  false,
	} {
		if got := full(g, s); got != want {
			t.Errorf("tool grammar: %s accepted %v, want %v", s, got, want)
		}
	}
	g, e = harmonyToolGrammar(defs, forcedTools{name: "add"}, nil)
	if e != nil {
		t.Fatal(e)
	}
	if full(g, `<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}`) ||
		!full(g, `<|channel|>commentary to=functions.add <|constrain|>json<|message|>{"x":1}`) {
		t.Error("named tool_choice does not restrict the call to that function")
	}
}

// TestHarmonyEnforced runs constrained requests end to end: the reply the
// model is scripted to give follows the grammar, and the server parses it.
func TestHarmonyEnforced(t *testing.T) {
	f := newHarmonyFixture(t)
	f.say(t, "<|channel|>analysis<|message|>JSON.<|end|><|start|>assistant<|channel|>final<|message|>{\"a\":7}<|return|>")
	code, m := post(t, f.url, chatBody("json", `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}`, false))
	if code != 200 {
		t.Fatalf("%d %v", code, m)
	}
	msg := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != `{"a":7}` || msg["reasoning_content"] != "JSON." {
		t.Errorf("message %v", msg)
	}
	f.say(t, "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Rome\"}<|call|>")
	code, m = post(t, f.url, chatBody("weather", `,"tools":`+weatherTools+`,"tool_choice":"required"`, false))
	if code != 200 {
		t.Fatalf("%d %v", code, m)
	}
	ch := m["choices"].([]any)[0].(map[string]any)
	checkCalls(t, "required", callsOf(t, ch["message"].(map[string]any)["tool_calls"]), [][2]string{{"get_weather", `{"city":"Rome"}`}})
}

// TestHarmonyReasoningEffort: gpt-oss's template reads reasoning_effort
// into its system message.
func TestHarmonyReasoningEffort(t *testing.T) {
	f := newHarmonyFixture(t)
	req := chatRequest{ReasoningEffort: json.RawMessage(`"high"`)}
	vars, e := templateVars(f.b.Template, &req)
	if e != nil {
		t.Fatal(e)
	}
	text, e := f.srv.render(f.b, json.RawMessage(`[{"role":"user","content":"hi"}]`), nil, vars)
	if e != nil {
		t.Fatal(e)
	}
	if !strings.Contains(text, "Reasoning: high") || !strings.HasSuffix(text, "<|start|>assistant") {
		t.Errorf("prompt %q", text)
	}
	f.say(t, "<|channel|>final<|message|>ok<|return|>")
	if code, m := post(t, f.url, chatBody("effort", `,"reasoning_effort":"low"`, false)); code != 200 {
		t.Errorf("%d %v", code, m)
	}
}
