package chat

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// gpt-oss replies in OpenAI's harmony format: a sequence of messages, each
// a header, <|message|>, a body and an end marker:
//
//	<|channel|>analysis<|message|>thoughts<|end|>
//	<|start|>assistant<|channel|>final<|message|>answer<|return|>
//
// and a tool call is a commentary message addressed to a function, the
// recipient written in the header before or after the channel:
//
//	<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>
//	 to=functions.NAME<|channel|>commentary json<|message|>{…}<|call|>
//
// The analysis channel is the model's reasoning, final (and a commentary
// preamble) its answer. HarmonyStream splits a reply as llama.cpp's
// common_chat_parse_gpt_oss does: analysis to reasoning, final and
// commentary to content, calls to tool calls; markers never reach either.

// Harmony's markers. <|channel|>, <|message|>, <|start|> and <|constrain|>
// are rendered as text by the tokenizer (llama.cpp forces them
// user-defined); <|end|> is a control token the reply must keep
// (HarmonyMarkers); <|return|> and <|call|> end generation.
const (
	harmonyStart     = "<|start|>"
	harmonyChannel   = "<|channel|>"
	harmonyMessage   = "<|message|>"
	harmonyEnd       = "<|end|>"
	harmonyReturn    = "<|return|>"
	harmonyCall      = "<|call|>"
	harmonyConstrain = "<|constrain|>"
)

// maxHarmonyHeader bounds a header held while waiting for <|message|>: a
// longer one is not harmony, and the reply is passed through as content.
const maxHarmonyHeader = 512

// HarmonyMarkers are the tokens a harmony reply must keep as text for the
// parser (llama.cpp's preserved tokens for gpt-oss).
func HarmonyMarkers() []string {
	return []string{harmonyChannel, harmonyConstrain, harmonyMessage, harmonyStart, harmonyEnd}
}

// IsHarmony says whether a template's model writes harmony replies; as in
// llama.cpp, a template that names <|channel|> is gpt-oss's.
func IsHarmony(src string) bool { return strings.Contains(src, harmonyChannel) }

// Harmony says whether the template's model replies in harmony.
func (t *Template) Harmony() bool { return t != nil && IsHarmony(t.src) }

// HarmonyOptions say what a harmony reply is split into.
type HarmonyOptions struct {
	// Reasoning sends the analysis channel to reasoning. Without it
	// (reasoning_format none) an analysis message stays in the content
	// with its header and end marker, as llama.cpp leaves it.
	Reasoning bool
	// Tools parses commentary messages addressed to functions.NAME as
	// tool calls; without it (no tools in the request) their bodies are
	// content.
	Tools bool
}

// HarmonyPiece is what a push adds to the reply.
type HarmonyPiece struct {
	Reasoning, Content string
	Deltas             []ToolCallDelta
}

func (p *HarmonyPiece) add(q HarmonyPiece) {
	p.Reasoning += q.Reasoning
	p.Content += q.Content
	p.Deltas = append(p.Deltas, q.Deltas...)
}

type harmonyState int

const (
	hsHeader harmonyState = iota // reading a header, up to <|message|>
	hsBody                       // inside a message's body
	hsRaw                        // the reply is not harmony: all of it is content
)

type harmonyKind int

const (
	hkContent harmonyKind = iota
	hkReasoning
	hkCall
)

// HarmonyStream splits a harmony reply being generated. Text that may be
// the start of a marker, a header, and the trailing space of a thought are
// held until known, so markers never leak into either side, whatever the
// token boundaries. A reply that does not open with a header is content as
// a whole. Tool calls are streamed as ToolCallDeltas (see ToolStream) once
// their arguments have begun.
type HarmonyStream struct {
	opt  HarmonyOptions
	st   harmonyState
	buf  string // held text
	kind harmonyKind
	// rawEnd: the current message is an analysis kept in the content
	// (reasoning_format none); its end marker is content too.
	rawEnd bool
	// Reasoning: whether the current message has given text (leading
	// space is dropped until then), and how many messages have.
	thinking bool
	thoughts int
	// The current call's name and body, and how far Deltas looked.
	name    string
	body    strings.Builder
	scanned int
	calls   []ToolCall
	sent    []sentCall
	bad     bool // a streamed call turned out invalid
}

// NewHarmonyStream starts a stream.
func NewHarmonyStream(opt HarmonyOptions) *HarmonyStream { return &HarmonyStream{opt: opt} }

// Push adds generated text and returns what is known of the reply.
func (h *HarmonyStream) Push(text string) HarmonyPiece {
	h.buf += text
	var p HarmonyPiece
	for {
		switch h.st {
		case hsRaw:
			p.Content += h.buf
			h.buf = ""
			return p
		case hsHeader:
			i := strings.Index(h.buf, harmonyMessage)
			if i < 0 {
				if !headerPossible(h.buf) || len(h.buf) > maxHarmonyHeader {
					h.st = hsRaw
					continue
				}
				return p
			}
			header := h.buf[:i]
			if !headerPossible(header) {
				h.st = hsRaw
				continue
			}
			h.buf = h.buf[i+len(harmonyMessage):]
			h.open(header, &p)
			h.st = hsBody
		case hsBody:
			if i, n := bodyEnd(h.buf); i >= 0 {
				term := h.buf[i : i+n]
				h.emit(h.buf[:i], true, &p)
				h.buf = h.buf[i+n:]
				h.close(term, &p)
				h.st = hsHeader
				continue
			}
			keep := 0
			for _, m := range []string{harmonyEnd, harmonyReturn, harmonyCall, harmonyStart} {
				keep = max(keep, partialSuffix(h.buf, m))
			}
			used := h.emit(h.buf[:len(h.buf)-keep], false, &p)
			h.buf = h.buf[used:]
			return p
		}
	}
}

// Finish ends the stream: the rest of the reply and its tool calls. ok is
// false when a call streamed as it formed is not valid at the end (the
// stream then told the client something the reply does not hold).
func (h *HarmonyStream) Finish() (p HarmonyPiece, calls []ToolCall, ok bool) {
	switch h.st {
	case hsRaw:
		p.Content = h.buf
	case hsHeader:
		// An unfinished header (a reply cut short) is format, not text.
		if t := strings.TrimLeftFunc(h.buf, unicode.IsSpace); t != "" && !strings.HasPrefix(t, "<|") && !strings.Contains(t, "to=") {
			p.Content = h.buf
		}
	case hsBody:
		h.emit(h.buf, true, &p)
		h.close("", &p)
	}
	h.buf = ""
	h.st = hsRaw
	return p, h.calls, !h.bad
}

// ParseHarmony splits a whole harmony reply.
func ParseHarmony(opt HarmonyOptions, text string) (reasoning, content string, calls []ToolCall) {
	h := NewHarmonyStream(opt)
	p := h.Push(text)
	q, calls, _ := h.Finish()
	p.add(q)
	return p.Reasoning, p.Content, calls
}

// headerPossible says whether s can be (the start of) a message header: it
// opens with <|start|> (a message after the first), <|channel|>, or the
// recipient (" to=functions.f", right after the prompt's <|start|>assistant).
func headerPossible(s string) bool {
	t := strings.TrimLeftFunc(s, unicode.IsSpace)
	if t == "" {
		return true
	}
	for _, m := range []string{harmonyStart, harmonyChannel, "to="} {
		if strings.HasPrefix(t, m) || strings.HasPrefix(m, t) {
			return true
		}
	}
	return false
}

// bodyEnd finds where the body in s ends: at <|end|>, <|return|> or
// <|call|> (consumed, n is their length), or at a <|start|> the model wrote
// without ending the message first (not consumed: it opens the next
// header). i is -1 when s holds no end.
func bodyEnd(s string) (i, n int) {
	i = -1
	for _, m := range []string{harmonyEnd, harmonyReturn, harmonyCall, harmonyStart} {
		if j := strings.Index(s, m); j >= 0 && (i < 0 || j < i) {
			i, n = j, len(m)
			if m == harmonyStart {
				n = 0
			}
		}
	}
	return i, n
}

// open starts the message whose header (the text before <|message|>) is
// header: what its channel and recipient make of its body.
func (h *HarmonyStream) open(header string, p *HarmonyPiece) {
	hd := strings.TrimLeftFunc(header, unicode.IsSpace)
	if rest, ok := strings.CutPrefix(hd, harmonyStart); ok {
		// The role (assistant) runs to the recipient or the channel.
		j := strings.IndexAny(rest, "< ")
		if j < 0 {
			j = len(rest)
		}
		hd = rest[j:]
	}
	word := func(s string, stop func(rune) bool) string {
		if j := strings.IndexFunc(s, stop); j >= 0 {
			return s[:j]
		}
		return s
	}
	var recipient, channel string
	if k := strings.Index(hd, "to="); k >= 0 {
		recipient = word(hd[k+3:], func(r rune) bool { return r == '<' || unicode.IsSpace(r) })
	}
	if k := strings.Index(hd, harmonyChannel); k >= 0 {
		channel = word(hd[k+len(harmonyChannel):], func(r rune) bool {
			return !(r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r))
		})
	}
	h.kind, h.rawEnd = hkContent, false
	name, isFn := strings.CutPrefix(recipient, "functions.")
	switch {
	case isFn && name != "" && h.opt.Tools && (channel == "commentary" || channel == "analysis" || channel == ""):
		h.kind, h.name = hkCall, name
		h.body.Reset()
		h.scanned = 0
	case channel == "analysis" && recipient == "" && h.opt.Reasoning:
		h.kind, h.thinking = hkReasoning, false
	case channel == "analysis" && recipient == "":
		// reasoning_format none: the thoughts stay in the content as
		// the model wrote them (llama.cpp's form: header and end
		// marker, without the <|start|>assistant between messages).
		p.Content += header + harmonyMessage
		h.rawEnd = true
	}
}

// emit gives the body text s to the current message and returns how much
// of s it used: thoughts hold back their trailing space unless final (the
// end of the message), since it is dropped if the message ends there.
func (h *HarmonyStream) emit(s string, final bool, p *HarmonyPiece) int {
	switch h.kind {
	case hkContent:
		p.Content += s
	case hkReasoning:
		t := s
		if !h.thinking {
			t = strings.TrimLeftFunc(t, unicode.IsSpace)
		}
		lead := len(s) - len(t)
		t = strings.TrimRightFunc(t, unicode.IsSpace)
		if t == "" {
			if final {
				return len(s)
			}
			return lead
		}
		if !h.thinking && h.thoughts > 0 {
			p.Reasoning += "\n" // between the thoughts of two messages
		}
		if !h.thinking {
			h.thinking = true
			h.thoughts++
		}
		p.Reasoning += t
		if final {
			return len(s)
		}
		return lead + len(t)
	case hkCall:
		h.body.WriteString(s)
		p.Deltas = append(p.Deltas, h.callDeltas(false)...)
	}
	return len(s)
}

// close ends the current message at the marker term ("" at the end of
// the reply).
func (h *HarmonyStream) close(term string, p *HarmonyPiece) {
	switch h.kind {
	case hkContent:
		if h.rawEnd && term != harmonyStart {
			p.Content += term
		}
	case hkReasoning:
		h.thinking = false
	case hkCall:
		h.endCall(p)
	}
	h.kind, h.rawEnd = hkContent, false
}

// callDeltas streams the current call: its first delta once its arguments
// have begun as a JSON object, then their compacted text as it grows
// (while it is a valid JSON prefix). Each look parses the body from its
// start, so looks are spaced by a 64th of it, as ToolStream's are.
func (h *HarmonyStream) callDeltas(final bool) []ToolCallDelta {
	b := h.body.String()
	if !final && len(b)-h.scanned <= len(b)/64 {
		return nil
	}
	h.scanned = len(b)
	t := strings.TrimLeft(b, jsonSpace)
	if t == "" || t[0] != '{' {
		return nil
	}
	_, _, args, ok := scanJSON(t)
	if !ok {
		return nil
	}
	for len(args) > 0 && !utf8.ValidString(args) {
		args = args[:len(args)-1]
	}
	var out []ToolCallDelta
	i := len(h.calls)
	if i == len(h.sent) {
		h.sent = append(h.sent, sentCall{})
		out = append(out, ToolCallDelta{Index: i, First: true, Name: h.name})
	}
	sc := &h.sent[i]
	if len(args) > len(sc.args) && strings.HasPrefix(args, sc.args) {
		out = append(out, ToolCallDelta{Index: i, Arguments: args[len(sc.args):]})
		sc.args = args
	}
	return out
}

// endCall parses the finished call's body: a JSON object is the call's
// arguments; anything else is not a call, and its text is content (an
// error if part of it was streamed as a call).
func (h *HarmonyStream) endCall(p *HarmonyPiece) {
	body := h.body.String()
	h.body.Reset()
	i := len(h.calls)
	var buf bytes.Buffer
	t := strings.TrimSpace(body)
	if !strings.HasPrefix(t, "{") || json.Compact(&buf, []byte(t)) != nil {
		if i < len(h.sent) {
			h.bad = true
			h.sent = h.sent[:i]
		}
		p.Content += body
		return
	}
	args := buf.String()
	if i == len(h.sent) {
		h.sent = append(h.sent, sentCall{})
		p.Deltas = append(p.Deltas, ToolCallDelta{Index: i, First: true, Name: h.name})
	}
	sc := &h.sent[i]
	if !strings.HasPrefix(args, sc.args) {
		h.bad = true
	} else if rest := args[len(sc.args):]; rest != "" {
		p.Deltas = append(p.Deltas, ToolCallDelta{Index: i, Arguments: rest})
		sc.args = args
	}
	h.calls = append(h.calls, ToolCall{Name: h.name, Arguments: args})
}

// HarmonyRules are GBNF rules for harmony replies (llama.cpp's for
// gpt-oss): harmony-analysis is one analysis message, end marker included,
// whose text is anything without <|end|> (harmony-not-end); harmony-ctype
// is the optional content type of a header (" <|constrain|>json").
const HarmonyRules = `harmony-not-end ::= [^<] | "<" [^|] | "<|" [^e] | "<|e" [^n] | "<|en" [^d] | "<|end" [^|] | "<|end|" [^>]
harmony-analysis ::= "<|channel|>analysis<|message|>" harmony-not-end* "<|end|>"
harmony-ctype ::= (" " "<|constrain|>"? [a-zA-Z0-9_-]+)?
`

// HarmonyFinalGrammar wraps a grammar (GBNF src, start rule root) so that
// it constrains the body of a harmony reply's final message: the reply may
// think first, and opens the final message with its header, which the
// wrapped grammar must not see. The result starts at rule harmony-reply;
// a src that defines a rule named harmony-… clashes (a parse error).
func HarmonyFinalGrammar(src, root string) (string, string) {
	return HarmonyRules + `harmony-reply ::= (harmony-analysis "<|start|>assistant")? "<|channel|>final" harmony-ctype "<|message|>" ` + root + "\n" + src, "harmony-reply"
}

// HarmonyHistory prepares a conversation for gpt-oss's template, as
// llama.cpp does: an assistant turn that called tools gets its
// reasoning_content (how a client returns the thoughts it was given) as
// "thinking", the field the template renders as the analysis message
// before the call. Other messages are unchanged.
func HarmonyHistory(msgs []Message) []Message {
	out := msgs
	for i, m := range msgs {
		if m.Role != "assistant" || len(m.Fields) == 0 {
			continue
		}
		var f struct {
			ToolCalls        json.RawMessage `json:"tool_calls"`
			ReasoningContent *string         `json:"reasoning_content"`
			Thinking         json.RawMessage `json:"thinking"`
		}
		if json.Unmarshal(m.Fields, &f) != nil || f.ReasoningContent == nil || f.Thinking != nil {
			continue
		}
		if t := bytes.TrimSpace(f.ToolCalls); len(t) == 0 || t[0] != '[' {
			continue
		}
		obj := bytes.TrimSpace(m.Fields)
		if len(obj) < 2 || obj[len(obj)-1] != '}' {
			continue
		}
		th, _ := json.Marshal(*f.ReasoningContent)
		var b bytes.Buffer
		b.Write(obj[:len(obj)-1])
		b.WriteString(`,"thinking":`) // the object has tool_calls, so is not empty
		b.Write(th)
		b.WriteByte('}')
		if &out[0] == &msgs[0] {
			out = append([]Message(nil), msgs...)
		}
		out[i].Fields = b.Bytes()
	}
	return out
}
