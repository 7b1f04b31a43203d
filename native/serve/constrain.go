package serve

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/grammar"
)

// Constrained output: the request fields that make the engine generate only
// text of a grammar's language (core/grammar): llama-server's grammar and
// json_schema, OpenAI's response_format, and tool_choice "required" or a
// named function, whose calls are generated from the tools' parameter
// schemas in the chat template's tool-call format.

// constraintFields are the request fields that set a grammar.
type constraintFields struct {
	Grammar        *string         `json:"grammar"`
	JSONSchema     json.RawMessage `json:"json_schema"`
	ResponseFormat json.RawMessage `json:"response_format"`
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// grammarSrc is a request's grammar before parsing: its GBNF, start rule
// and the field that set it.
type grammarSrc struct {
	src, root, field string
}

func (g *grammarSrc) parse(gc *grammarCache) (*grammar.Grammar, *apiError) {
	gr, err := gc.parse(g.src, g.root)
	if err != nil {
		if g.field == "grammar" {
			return nil, invalid("grammar", "%v", err)
		}
		return nil, invalid(g.field, "%s: the schema's grammar: %v", g.field, err)
	}
	return gr, nil
}

// grammarOf builds the request's grammar, nil when it sets none.
func grammarOf(cf *constraintFields, gc *grammarCache) (*grammar.Grammar, *apiError) {
	gs, e := grammarSource(cf)
	if gs == nil || e != nil {
		return nil, e
	}
	return gs.parse(gc)
}

// maxCachedGrammars bounds grammarCache.
const maxCachedGrammars = 16

// grammarCache keeps the grammars of recent requests by their source, so
// requests with the same schema (or tools) get the same *grammar.Grammar,
// and the engine's matcher for it, with the masks it has computed, is
// reused (engine.keepMatcher) instead of starting cold every request.
type grammarCache struct {
	mu   sync.Mutex
	keys [][32]byte // least recently used first
	gs   map[[32]byte]*grammar.Grammar
}

// parse is grammar.Parse through the cache (nil: no cache).
func (c *grammarCache) parse(src, root string) (*grammar.Grammar, error) {
	if c == nil {
		return grammar.Parse(src, root)
	}
	h := sha256.New()
	h.Write([]byte(root))
	h.Write([]byte{0})
	h.Write([]byte(src))
	var k [32]byte
	h.Sum(k[:0])
	c.mu.Lock()
	defer c.mu.Unlock()
	touch := func() {
		c.keys = slices.DeleteFunc(c.keys, func(x [32]byte) bool { return x == k })
		c.keys = append(c.keys, k)
	}
	if g, ok := c.gs[k]; ok {
		touch()
		return g, nil
	}
	g, err := grammar.Parse(src, root)
	if err != nil {
		return nil, err
	}
	if c.gs == nil {
		c.gs = map[[32]byte]*grammar.Grammar{}
	}
	if len(c.keys) >= maxCachedGrammars {
		delete(c.gs, c.keys[0])
		c.keys = c.keys[1:]
	}
	c.gs[k] = g
	touch()
	return g, nil
}

// grammarSource is the request's grammar source, nil when it sets none.
// Several fields that each set one are refused: they could not all hold.
func grammarSource(cf *constraintFields) (*grammarSrc, *apiError) {
	var set []string
	var build func() (*grammarSrc, *apiError)
	if cf.Grammar != nil && *cf.Grammar != "" {
		set = append(set, "grammar")
		build = func() (*grammarSrc, *apiError) { return &grammarSrc{*cf.Grammar, "root", "grammar"}, nil }
	}
	if !isNull(cf.JSONSchema) {
		set = append(set, "json_schema")
		build = func() (*grammarSrc, *apiError) { return schemaSource("json_schema", cf.JSONSchema, false) }
	}
	if !isNull(cf.ResponseFormat) {
		var rf struct {
			Type       string          `json:"type"`
			Schema     json.RawMessage `json:"schema"` // llama-server's {"type": "json_object", "schema": ...}
			JSONSchema *struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict *bool           `json:"strict"`
			} `json:"json_schema"`
		}
		if err := json.Unmarshal(cf.ResponseFormat, &rf); err != nil {
			return nil, invalid("response_format", "response_format must be {\"type\": \"text\" | \"json_object\" | \"json_schema\", ...}: %v", err)
		}
		switch rf.Type {
		case "text":
		case "json_object":
			set = append(set, "response_format")
			build = func() (*grammarSrc, *apiError) {
				if !isNull(rf.Schema) {
					return schemaSource("response_format", rf.Schema, false)
				}
				return &grammarSrc{grammar.JSONObject(), "root", "response_format"}, nil
			}
		case "json_schema":
			if rf.JSONSchema == nil {
				return nil, invalid("response_format", `response_format json_schema needs "json_schema": {"name": ..., "schema": {...}}`)
			}
			set = append(set, "response_format")
			schema := rf.JSONSchema.Schema
			if isNull(schema) {
				schema = json.RawMessage(`{}`) // OpenAI: no schema means any JSON
			}
			strict := rf.JSONSchema.Strict != nil && *rf.JSONSchema.Strict
			build = func() (*grammarSrc, *apiError) { return schemaSource("response_format", schema, strict) }
		default:
			return nil, invalid("response_format", `response_format type %q: must be "text", "json_object" or "json_schema"`, rf.Type)
		}
	}
	switch len(set) {
	case 0:
		return nil, nil
	case 1:
		return build()
	}
	return nil, invalid(set[1], "%s cannot be combined with %s: give one constraint", strings.Join(set[1:], ", "), set[0])
}

func schemaSource(field string, schema json.RawMessage, strict bool) (*grammarSrc, *apiError) {
	src, err := grammar.FromJSONSchema(schema, grammar.SchemaOptions{Strict: strict})
	if err != nil {
		return nil, invalid(field, "%s: %v", field, err)
	}
	return &grammarSrc{src, "root", field}, nil
}

// harmonyFinal makes g the grammar of a harmony (gpt-oss) reply's final
// message body: the header and the thoughts before it are free
// (chat.HarmonyFinalGrammar), so a constraint never applies to them.
func harmonyFinal(g *grammarSrc) *grammarSrc {
	src, root := chat.HarmonyFinalGrammar(g.src, g.root)
	return &grammarSrc{src: src, root: root, field: g.field}
}

// forcedTools is what tool_choice demands: nothing (""), a call of any
// tool ("required"), or a call of the named function.
type forcedTools struct {
	required bool
	name     string
}

// toolGrammar is the grammar of a reply made of tool calls in format f:
// one call of the named function, or one or more calls (parallel) of any
// tool for "required", each call's arguments valid under its function's
// parameters schema (strict as the function's "strict" says).
func toolGrammar(f chat.ToolFormat, toolsRaw json.RawMessage, force forcedTools, gc *grammarCache) (*grammar.Grammar, *apiError) {
	var tools []toolDef
	if err := json.Unmarshal(toolsRaw, &tools); err != nil {
		return nil, invalid("tools", "tools must be an array of {\"type\": \"function\", \"function\": {...}}: %v", err)
	}
	if f == chat.ToolHarmony {
		return harmonyToolGrammar(tools, force, gc)
	}
	argsKey := "arguments"
	if f == chat.ToolLlama3 {
		argsKey = "parameters"
	}
	var calls []string
	strict := true
	for _, t := range tools {
		fn := t.Function
		if t.Type != "function" || fn.Name == "" || (force.name != "" && fn.Name != force.name) {
			continue
		}
		params := fn.Parameters
		if isNull(params) {
			params = json.RawMessage(`{"type":"object"}`)
		}
		name, _ := json.Marshal(fn.Name)
		calls = append(calls, fmt.Sprintf(`{"type":"object","properties":{"name":{"const":%s},%q:%s},"required":["name",%q],"additionalProperties":false}`, name, argsKey, params, argsKey))
		strict = strict && fn.Strict
	}
	if len(calls) == 0 {
		if force.name != "" {
			return nil, invalid("tool_choice", "tool_choice names function %q, which is not in tools", force.name)
		}
		return nil, invalid("tool_choice", `tool_choice "required" needs at least one function in tools`)
	}
	// The strictness of the call objects is fixed above; a parameters
	// schema is strict (no properties beyond its own) only if every
	// function asks for it, as the anyOf shares one conversion.
	src, err := grammar.FromJSONSchema([]byte(`{"anyOf":[`+strings.Join(calls, ",")+`]}`), grammar.SchemaOptions{Strict: strict})
	if err != nil {
		return nil, invalid("tools", "a function's parameters: %v", err)
	}
	many := force.name == ""
	var start string
	switch f {
	case chat.ToolHermes:
		start = `tool-call ::= "<tool_call>" "\n"? root "\n"? "</tool_call>"` + "\n"
		if many {
			start = "tool-calls ::= tool-call (\"\\n\"? tool-call)*\n" + start
		} else {
			start = "tool-calls ::= tool-call\n" + start
		}
	case chat.ToolLlama3:
		// One JSON object is the whole reply (the format has no parallel
		// calls).
		start = "tool-calls ::= root\n"
	case chat.ToolMistral:
		if many {
			start = `tool-calls ::= "[TOOL_CALLS]" "[" space root ("," space root)* "]"` + "\n"
		} else {
			start = `tool-calls ::= "[TOOL_CALLS]" "[" space root "]"` + "\n"
		}
	default:
		return nil, invalid("tool_choice", "tool_choice %s needs a chat template with a tool-call format (Hermes/Qwen, Llama 3, Mistral, gpt-oss harmony); this model's template has none", force)
	}
	g, err := gc.parse(start+src, "tool-calls")
	if err != nil {
		return nil, invalid("tools", "the tools' grammar: %v", err)
	}
	return g, nil
}

// toolDef is an entry of the request's tools.
type toolDef struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
		Strict     bool            `json:"strict"`
	} `json:"function"`
}

// harmonyToolGrammar is the grammar of a harmony reply that is one call
// (harmony ends generation at a call's <|call|>): thoughts, then a
// commentary preamble, both optional, then the call with the recipient in
// the role or after the channel, its arguments valid under the named
// function's parameters.
func harmonyToolGrammar(tools []toolDef, force forcedTools, gc *grammarCache) (*grammar.Grammar, *apiError) {
	var names []string
	var schemas [][]byte
	strict := true
	for _, t := range tools {
		fn := t.Function
		if t.Type != "function" || fn.Name == "" || (force.name != "" && fn.Name != force.name) {
			continue
		}
		params := fn.Parameters
		if isNull(params) {
			params = json.RawMessage(`{"type":"object"}`)
		}
		names = append(names, fn.Name)
		schemas = append(schemas, params)
		strict = strict && fn.Strict
	}
	if len(names) == 0 {
		if force.name != "" {
			return nil, invalid("tool_choice", "tool_choice names function %q, which is not in tools", force.name)
		}
		return nil, invalid("tool_choice", `tool_choice "required" needs at least one function in tools`)
	}
	src, roots, err := grammar.FromJSONSchemas(schemas, "harmony-args-", grammar.SchemaOptions{Strict: strict})
	if err != nil {
		return nil, invalid("tools", "a function's parameters: %v", err)
	}
	var inRole, inChannel []string
	for i, n := range names {
		lit := grammar.Literal(n)
		inRole = append(inRole, lit+` harmony-channel harmony-json "<|message|>" `+roots[i])
		inChannel = append(inChannel, lit+` harmony-json "<|message|>" `+roots[i])
	}
	start := chat.HarmonyRules + `harmony-commentary ::= "<|channel|>commentary<|message|>" harmony-not-end* "<|end|>"
harmony-channel ::= "<|channel|>" ("commentary" | "analysis")
harmony-json ::= (" " "<|constrain|>"? "json")?
harmony-call ::= (harmony-analysis "<|start|>assistant")? (harmony-commentary "<|start|>assistant")? (harmony-in-role | harmony-in-channel)
harmony-in-role ::= " to=functions." (` + strings.Join(inRole, " | ") + `)
harmony-in-channel ::= harmony-channel " to=functions." (` + strings.Join(inChannel, " | ") + `)
`
	g, err := gc.parse(start+src, "harmony-call")
	if err != nil {
		return nil, invalid("tools", "the tools' grammar: %v", err)
	}
	return g, nil
}

func (f forcedTools) String() string {
	if f.name != "" {
		return fmt.Sprintf("naming %q", f.name)
	}
	return `"required"`
}
