package chat

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
)

// ToolFormat is how a model family writes a tool call in its reply. The
// template tells which one a model was trained on, as llama.cpp's
// common/chat.cpp decides it: by looking for the format's markers in the
// template text.
type ToolFormat int

const (
	// ToolNone: replies are always plain text.
	ToolNone ToolFormat = iota
	// ToolHermes is Hermes 2 Pro / Qwen 2.5 / Qwen 3:
	// <tool_call>{"name": "f", "arguments": {...}}</tool_call>, repeated
	// for parallel calls.
	ToolHermes
	// ToolLlama3 is Llama 3.1 / 3.2 / 3.3: the reply is one JSON object
	// {"name": "f", "parameters": {...}} (optionally with
	// "type": "function" first), at the start of the reply or after the
	// <|python_tag|> token.
	ToolLlama3
	// ToolMistral is Mistral (v3 tokenizer, Nemo): [TOOL_CALLS] followed
	// by a JSON array of {"name": "f", "arguments": {...}, "id": "..."}.
	ToolMistral
	// ToolHarmony is gpt-oss's harmony: a commentary message addressed to
	// functions.NAME. Its replies are parsed by HarmonyStream (channels
	// and calls together), not by ToolStream or ParseToolCalls.
	ToolHarmony
)

// jsonSpace is JSON's whitespace, what may precede a Llama 3 call.
const jsonSpace = " \t\n\r"

const (
	hermesOpen    = "<tool_call>"
	hermesClose   = "</tool_call>"
	llamaPyTag    = "<|python_tag|>"
	mistralMarker = "[TOOL_CALLS]"
)

func (f ToolFormat) String() string {
	switch f {
	case ToolHermes:
		return "hermes"
	case ToolLlama3:
		return "llama3"
	case ToolMistral:
		return "mistral"
	case ToolHarmony:
		return "harmony"
	}
	return "none"
}

// DetectToolFormat picks the format from a template's source, checking the
// markers in llama.cpp's order (gpt-oss's <|channel|> first, then Hermes's
// tag, Llama 3's ipython role, Mistral's marker).
func DetectToolFormat(src string) ToolFormat {
	switch {
	case IsHarmony(src):
		return ToolHarmony
	case strings.Contains(src, hermesOpen):
		return ToolHermes
	case strings.Contains(src, "<|start_header_id|>ipython<|end_header_id|>"):
		return ToolLlama3
	case strings.Contains(src, mistralMarker):
		return ToolMistral
	}
	return ToolNone
}

// ToolFormat is the tool-call format the template's model writes.
func (t *Template) ToolFormat() ToolFormat { return DetectToolFormat(t.src) }

// Markers are the special tokens of the format that a reply must keep as
// text for the parser to see them (tokenizers drop control tokens).
func (f ToolFormat) Markers() []string {
	switch f {
	case ToolHermes:
		return []string{hermesOpen, hermesClose}
	case ToolLlama3:
		return []string{llamaPyTag}
	case ToolMistral:
		return []string{mistralMarker}
	case ToolHarmony:
		return HarmonyMarkers()
	}
	return nil
}

// ToolCall is one function call parsed from a reply.
type ToolCall struct {
	ID        string // only when the model wrote one (Mistral); else empty
	Name      string
	Arguments string // a JSON object's text, as OpenAI's function.arguments
}

// ParseToolCalls splits a whole reply into its content and its tool calls.
// Like llama.cpp, it is all or nothing: a reply whose call is malformed
// (unterminated, invalid JSON, no name) has no calls and all of it is
// content. Content is the text before the first call and any text after
// the last.
func ParseToolCalls(f ToolFormat, text string) (content string, calls []ToolCall) {
	start := openAt(f, text)
	if start < 0 {
		return text, nil
	}
	calls, rest, ok := parseCalls(f, text[start:])
	if !ok || len(calls) == 0 {
		return text, nil
	}
	return text[:start] + rest, calls
}

// openAt is where the first call starts in text, or -1.
func openAt(f ToolFormat, text string) int {
	switch f {
	case ToolHermes:
		return strings.Index(text, hermesOpen)
	case ToolMistral:
		return strings.Index(text, mistralMarker)
	case ToolLlama3:
		if i := strings.Index(text, llamaPyTag); i >= 0 {
			return i
		}
		if t := strings.TrimLeft(text, jsonSpace); strings.HasPrefix(t, "{") && llamaStartPossible(t) {
			return 0
		}
	}
	return -1
}

// parseCalls parses s, which starts at a call's opening, returning the calls
// and the text after them.
func parseCalls(f ToolFormat, s string) (calls []ToolCall, rest string, ok bool) {
	switch f {
	case ToolHermes:
		var extra strings.Builder
		for {
			body, ok := strings.CutPrefix(s, hermesOpen)
			if !ok {
				break
			}
			end := strings.Index(body, hermesClose)
			if end < 0 {
				return nil, "", false
			}
			c, ok := parseCallObject([]byte(strings.TrimSpace(body[:end])), "arguments")
			if !ok {
				return nil, "", false
			}
			calls = append(calls, c)
			s = body[end+len(hermesClose):]
			// Text between calls is kept as content; whitespace between
			// them is the format's separator.
			if i := strings.Index(s, hermesOpen); i >= 0 {
				if t := s[:i]; strings.TrimSpace(t) != "" {
					extra.WriteString(t)
				}
				s = s[i:]
			}
		}
		extra.WriteString(strings.TrimLeftFunc(s, unicode.IsSpace))
		return calls, extra.String(), true
	case ToolLlama3:
		s, tagged := strings.CutPrefix(s, llamaPyTag)
		if !tagged && !llamaStartPossible(s) {
			return nil, "", false
		}
		v, n, ok := oneJSON(s)
		if !ok {
			return nil, "", false
		}
		c, ok := parseCallObject(v, "parameters")
		if !ok {
			return nil, "", false
		}
		return []ToolCall{c}, strings.TrimLeftFunc(s[n:], unicode.IsSpace), true
	case ToolMistral:
		s = strings.TrimPrefix(s, mistralMarker)
		v, n, ok := oneJSON(s)
		if !ok {
			return nil, "", false
		}
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil || len(items) == 0 {
			return nil, "", false
		}
		for _, it := range items {
			c, ok := parseCallObject(it, "arguments")
			if !ok {
				return nil, "", false
			}
			calls = append(calls, c)
		}
		return calls, strings.TrimLeftFunc(s[n:], unicode.IsSpace), true
	}
	return nil, "", false
}

// oneJSON reads the JSON value at the start of s (after whitespace) and
// returns it and the offset just past it.
func oneJSON(s string) (json.RawMessage, int, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil, 0, false
	}
	return v, int(dec.InputOffset()), true
}

// parseCallObject reads {"name": "f", argsKey: {...}}. Llama 3 writes
// "parameters", the others "arguments"; either is accepted. Arguments
// written as a JSON string (some fine-tunes do) are taken as that string if
// it holds an object; missing arguments are {}.
func parseCallObject(b []byte, argsKey string) (ToolCall, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return ToolCall{}, false
	}
	var c ToolCall
	if err := json.Unmarshal(obj["name"], &c.Name); err != nil || c.Name == "" {
		return ToolCall{}, false
	}
	if t, ok := obj["type"]; ok && string(t) != `"function"` {
		return ToolCall{}, false
	}
	if id, ok := obj["id"]; ok {
		if err := json.Unmarshal(id, &c.ID); err != nil {
			return ToolCall{}, false
		}
	}
	args, ok := obj[argsKey]
	if !ok {
		other := "arguments"
		if argsKey == other {
			other = "parameters"
		}
		args, ok = obj[other]
	}
	if !ok || string(args) == "null" {
		c.Arguments = "{}"
		return c, true
	}
	if len(args) > 0 && args[0] == '"' {
		var s string
		if err := json.Unmarshal(args, &s); err != nil {
			return ToolCall{}, false
		}
		args = []byte(s)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return ToolCall{}, false
	}
	c.Arguments = buf.String()
	return c, true
}

// ToolStream separates a reply being generated into content that can be
// streamed at once and a tool call that is held back until it can be
// parsed whole. Feed it the reply's text in order; Finish parses what it
// held. Its result equals ParseToolCalls on the whole text.
type ToolStream struct {
	f       ToolFormat
	text    strings.Builder // everything pushed
	emitted int             // bytes of text returned as content so far
	held    int             // start of the held call, or -1
	closed  bool            // Complete found the call's end: later text is ignored
	closer  bool            // text pushed since the last Complete has a } or ]
	scanned int             // length of text when Deltas last looked
	sent    []sentCall      // what Deltas has streamed of each call
}

// NewToolStream starts a stream for format f.
func NewToolStream(f ToolFormat) *ToolStream { return &ToolStream{f: f, held: -1} }

// Push adds generated text and returns the text that is content for sure
// (it cannot be the start of a call).
func (s *ToolStream) Push(text string) string {
	if s.closed {
		return ""
	}
	s.text.WriteString(text)
	s.closer = s.closer || strings.ContainsAny(text, "}]")
	all := s.text.String()
	if s.held >= 0 {
		// A reply that began like a Llama 3 call but turned out not to
		// be one is content after all.
		if s.f == ToolLlama3 && !strings.HasPrefix(all[s.held:], llamaPyTag) && !llamaStartPossible(all[s.held:]) {
			s.held = -1
		} else {
			return ""
		}
	}
	// Text already returned holds no opening: search only the rest, so a
	// long reply costs linear time. (A Llama 3 call that opens the reply
	// is only possible while nothing has been returned.)
	tail := all[s.emitted:]
	i := -1
	if s.f == ToolLlama3 && s.emitted > 0 {
		i = strings.Index(tail, llamaPyTag)
	} else {
		i = openAt(s.f, tail)
	}
	if i >= 0 {
		i += s.emitted
		s.held = i
		out := all[s.emitted:i]
		s.emitted = i
		return out
	}
	safe := max(len(all)-s.partialOpen(all), s.emitted)
	out := all[s.emitted:safe]
	s.emitted = safe
	return out
}

// partialOpen is how many bytes at the end of text could be the beginning of
// an opening still to come.
func (s *ToolStream) partialOpen(text string) int {
	var marker string
	switch s.f {
	case ToolHermes:
		marker = hermesOpen
	case ToolMistral:
		marker = mistralMarker
	case ToolLlama3:
		if s.emitted == 0 && strings.TrimLeft(text, jsonSpace) == "" {
			return len(text) // a call may still start the reply
		}
		marker = llamaPyTag
	default:
		return 0
	}
	for k := min(len(marker)-1, len(text)); k > 0; k-- {
		if strings.HasSuffix(text, marker[:k]) {
			return k
		}
	}
	return 0
}

// llamaStartPossible says whether a reply starting with "{" may still be a
// Llama 3 call: it must begin {"name" or {"type" (whitespace aside).
func llamaStartPossible(text string) bool {
	var b []byte
	for i := 0; i < len(text) && len(b) < 7; i++ {
		if c := text[i]; !strings.ContainsRune(jsonSpace, rune(c)) {
			b = append(b, c)
		}
	}
	for _, p := range []string{`{"name"`, `{"type"`} {
		if strings.HasPrefix(p, string(b)) {
			return true
		}
	}
	return false
}

// Holding says whether a call has started (its text is being held).
func (s *ToolStream) Holding() bool { return s.held >= 0 }

// Complete says whether the held text already starts with a whole, valid
// call after which the format allows nothing more (Llama 3's single object,
// Mistral's array), so generation can stop; the stream then ends there and
// ignores text after the call. Hermes replies may hold several calls, so
// they end with the model's end-of-turn token.
func (s *ToolStream) Complete() bool {
	if s.closed {
		return true
	}
	if s.held < 0 || (s.f != ToolLlama3 && s.f != ToolMistral) {
		return false
	}
	if !s.closer {
		return false // nothing can have closed since the last look
	}
	s.closer = false
	all := s.text.String()
	held := all[s.held:]
	calls, rest, ok := parseCalls(s.f, held)
	if !ok || len(calls) == 0 {
		return false
	}
	// rest is a suffix of held: keep the text up to the call's end.
	keep := all[:len(all)-len(rest)]
	s.text.Reset()
	s.text.WriteString(keep)
	s.closed = true
	return true
}

// Finish ends the stream: the content not returned yet and the calls. When
// the held text is not a valid call, it is returned as content and calls is
// nil.
func (s *ToolStream) Finish() (content string, calls []ToolCall) {
	all := s.text.String()
	if s.held < 0 {
		out := all[s.emitted:]
		s.emitted = len(all)
		return out, nil
	}
	calls, rest, ok := parseCalls(s.f, all[s.held:])
	s.emitted = len(all)
	if !ok || len(calls) == 0 {
		return all[s.held:], nil
	}
	return rest, calls
}
