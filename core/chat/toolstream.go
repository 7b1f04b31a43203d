package chat

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Streaming tool calls as they form, as OpenAI streams them: per call, a
// first delta with its index, id and function name (and no arguments), then
// fragments of the arguments' text, in order, whose concatenation is the
// call's arguments. A call is announced only once its name is complete
// and everything before it parses; argument fragments are sent as the
// model writes them, compacted (whitespace outside strings dropped, as
// json.Compact does, so they add up to exactly what a whole reply's
// message.tool_calls carries), and only while they are a valid JSON
// prefix. Arguments a model writes as a JSON string holding an object are
// sent whole once that string closes.

// ToolCallDelta is one streamed piece of a call.
type ToolCallDelta struct {
	Index     int    // which call of the reply (0, 1, … for parallel calls)
	First     bool   // the call's first delta: Name (and ID, if the model wrote one) set
	ID        string // only in the first delta, only when the model wrote one (Mistral)
	Name      string
	Arguments string // a fragment of the arguments' text
}

// partialCall is what a call's text so far tells.
type partialCall struct {
	name, id string
	nameDone bool
	idDone   bool
	done     bool   // the object is complete
	args     string // compacted arguments prefix
	argsDone bool
}

// Deltas returns the call deltas formed since the last call of Deltas. It
// only looks at text already held (Push), so call it after Push.
func (s *ToolStream) Deltas() []ToolCallDelta {
	if s.held < 0 {
		return nil
	}
	all := s.text.String()
	// Each look parses the held text from the start, so looks are spaced
	// by a 64th of it: the cost stays linear in the reply (64 passes over
	// it at most, per doubling), and fragments of a long argument come
	// every 1/64 of its length rather than every token.
	if len(all)-s.scanned <= (len(all)-s.held)/64 {
		return nil
	}
	s.scanned = len(all)
	return s.diff(partialCalls(s.f, all[s.held:]))
}

// diff turns the calls seen so far into the deltas not sent yet.
func (s *ToolStream) diff(calls []partialCall) []ToolCallDelta {
	var out []ToolCallDelta
	for i, c := range calls {
		// Calls are announced in order, once named; a Mistral call once
		// its id is known too (it comes last, and clients must send it
		// back with the tool's result, so a stand-in would not do).
		// And only once its arguments have begun (or the object closed):
		// a reply that stops after the name is then content as a whole
		// reply would be, not an announced call that never came.
		if i > len(s.sent) || !c.nameDone || s.f == ToolMistral && !c.idDone && !c.done || c.args == "" && !c.done {
			break
		}
		if i == len(s.sent) {
			s.sent = append(s.sent, sentCall{id: c.id})
			out = append(out, ToolCallDelta{Index: i, First: true, ID: c.id, Name: c.name})
		}
		sc := &s.sent[i]
		// A fragment never ends inside a UTF-8 sequence: it is sent as a
		// JSON string, where a broken sequence would become U+FFFD.
		args := c.args
		for len(args) > 0 && !utf8.ValidString(args) {
			args = args[:len(args)-1]
		}
		c.args = args
		if len(c.args) > len(sc.args) && strings.HasPrefix(c.args, sc.args) {
			out = append(out, ToolCallDelta{Index: i, Arguments: c.args[len(sc.args):]})
			sc.args = c.args
		}
	}
	return out
}

// sentCall is what has been streamed of one call.
type sentCall struct {
	id   string
	args string
}

// Streamed says whether any call delta has been returned.
func (s *ToolStream) Streamed() bool { return len(s.sent) > 0 }

// RestDeltas are the deltas that complete the streamed calls into calls,
// the final parse (Finish): calls not announced yet, arguments not sent
// yet, {} for a call that had none. ok is false when what was streamed
// does not agree with calls (a call announced that the final parse
// rejects, arguments that turned out different): the stream then told the
// client something the reply does not hold.
func (s *ToolStream) RestDeltas(calls []ToolCall) (out []ToolCallDelta, ok bool) {
	if len(calls) < len(s.sent) {
		return nil, false
	}
	for i, c := range calls {
		if i == len(s.sent) {
			s.sent = append(s.sent, sentCall{id: c.ID})
			out = append(out, ToolCallDelta{Index: i, First: true, ID: c.ID, Name: c.Name})
		}
		sc := &s.sent[i]
		if !strings.HasPrefix(c.Arguments, sc.args) || sc.id != c.ID {
			return nil, false
		}
		if rest := c.Arguments[len(sc.args):]; rest != "" {
			out = append(out, ToolCallDelta{Index: i, Arguments: rest})
			sc.args = c.Arguments
		}
	}
	return out, true
}

// partialCalls parses the held text of format f (from a call's opening on)
// into the calls it has begun, stopping at the first thing that does not
// parse.
func partialCalls(f ToolFormat, h string) []partialCall {
	var out []partialCall
	switch f {
	case ToolHermes:
		for {
			body, ok := strings.CutPrefix(h, hermesOpen)
			if !ok {
				return out
			}
			c, n, done, ok := parseCallPrefix(body, "arguments")
			if !ok {
				return out
			}
			out = append(out, c)
			if !done {
				return out
			}
			rest := strings.TrimLeft(body[n:], jsonSpace)
			after, closed := strings.CutPrefix(rest, hermesClose)
			if !closed {
				return out
			}
			h = strings.TrimLeft(after, jsonSpace)
		}
	case ToolMistral:
		h = strings.TrimLeft(strings.TrimPrefix(h, mistralMarker), jsonSpace)
		h, ok := strings.CutPrefix(h, "[")
		if !ok {
			return out
		}
		for {
			c, n, done, ok := parseCallPrefix(strings.TrimLeft(h, jsonSpace), "arguments")
			if !ok {
				return out
			}
			out = append(out, c)
			if !done {
				return out
			}
			h = strings.TrimLeft(strings.TrimLeft(h, jsonSpace)[n:], jsonSpace)
			h, ok = strings.CutPrefix(h, ",")
			if !ok {
				return out
			}
		}
	case ToolLlama3:
		h = strings.TrimLeft(strings.TrimPrefix(h, llamaPyTag), jsonSpace)
		if c, _, _, ok := parseCallPrefix(h, "parameters"); ok {
			out = append(out, c)
		}
	}
	return out
}

// parseCallPrefix reads the start of a call object {"name": …, argsKey:
// {…}} (s begins at "{", whitespace allowed), as far as it goes. n is the
// offset after the object when done; ok is false once s cannot be the
// start of a valid call.
func parseCallPrefix(s, argsKey string) (c partialCall, n int, done, ok bool) {
	i := skipSpace(s, 0)
	if i == len(s) {
		return c, 0, false, true
	}
	if s[i] != '{' {
		return c, 0, false, false
	}
	i++
	first := true
	for {
		i = skipSpace(s, i)
		if i == len(s) {
			return c, 0, false, true
		}
		if s[i] == '}' && first {
			c.done = true
			return c, i + 1, true, c.nameDone
		}
		if !first {
			if s[i] == '}' {
				c.done = true
				return c, i + 1, true, c.nameDone
			}
			if s[i] != ',' {
				return c, 0, false, false
			}
			if i = skipSpace(s, i+1); i == len(s) {
				return c, 0, false, true
			}
		}
		first = false
		if s[i] != '"' {
			return c, 0, false, false
		}
		kn, kdone, _, kok := scanJSON(s[i:])
		if !kok {
			return c, 0, false, false
		}
		if !kdone {
			return c, 0, false, true
		}
		var key string
		if json.Unmarshal([]byte(s[i:i+kn]), &key) != nil {
			return c, 0, false, false
		}
		i = skipSpace(s, i+kn)
		if i == len(s) {
			return c, 0, false, true
		}
		if s[i] != ':' {
			return c, 0, false, false
		}
		if i = skipSpace(s, i+1); i == len(s) {
			return c, 0, false, true
		}
		vn, vdone, compact, vok := scanJSON(s[i:])
		if !vok {
			return c, 0, false, false
		}
		isArgs := key == argsKey || key == "arguments" || key == "parameters"
		switch {
		case key == "name" || key == "id" || key == "type":
			if !vdone {
				return c, 0, false, true
			}
			var v string
			if json.Unmarshal([]byte(s[i:i+vn]), &v) != nil {
				return c, 0, false, false
			}
			switch key {
			case "name":
				if v == "" {
					return c, 0, false, false
				}
				c.name, c.nameDone = v, true
			case "id":
				c.id, c.idDone = v, true
			case "type":
				if v != "function" {
					return c, 0, false, false
				}
			}
		case isArgs && c.args == "" && !c.argsDone:
			switch s[i] {
			case '{':
				c.args, c.argsDone = compact, vdone
			case '"':
				if vdone {
					var str string
					var buf bytes.Buffer
					if json.Unmarshal([]byte(s[i:i+vn]), &str) != nil || json.Compact(&buf, []byte(str)) != nil || !strings.HasPrefix(buf.String(), "{") {
						return c, 0, false, false
					}
					c.args, c.argsDone = buf.String(), true
				}
			case 'n': // null: no arguments, {} at the end
			default:
				return c, 0, false, false
			}
		}
		if !vdone {
			return c, 0, false, true
		}
		i += vn
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && strings.IndexByte(jsonSpace, s[i]) >= 0 {
		i++
	}
	return i
}

// scanJSON reads the JSON value s starts with (no leading space) as far as
// s goes: n bytes consumed, whether the value is complete, its compacted
// text so far, and ok false at the first byte no valid JSON could have.
// Numbers are complete only when something follows them.
func scanJSON(s string) (n int, done bool, compact string, ok bool) {
	const (
		expValue = iota
		expValueOrEnd
		expKeyOrEnd
		expKey
		expColon
		inString
		inNumber
		inLiteral
		afterValue
	)
	var stack []byte
	var out strings.Builder
	st, esc, isKey := expValue, false, false
	lit, li := "", 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch st {
		case inString:
			out.WriteByte(b)
			switch {
			case esc:
				esc = false
			case b == '\\':
				esc = true
			case b == '"':
				if isKey {
					st = expColon
				} else {
					st = afterValue
				}
			case b < 0x20:
				return i, false, out.String(), false
			}
			if st == afterValue && len(stack) == 0 {
				return i + 1, true, out.String(), true
			}
			continue
		case inLiteral:
			if b != lit[li] {
				return i, false, out.String(), false
			}
			out.WriteByte(b)
			if li++; li == len(lit) {
				st = afterValue
				if len(stack) == 0 {
					return i + 1, true, out.String(), true
				}
			}
			continue
		case inNumber:
			if strings.IndexByte("0123456789+-.eE", b) >= 0 {
				out.WriteByte(b)
				continue
			}
			st = afterValue
			if len(stack) == 0 {
				return i, true, out.String(), true
			}
		}
		if strings.IndexByte(jsonSpace, b) >= 0 {
			continue
		}
		switch st {
		case expValue, expValueOrEnd:
			switch {
			case b == ']' && st == expValueOrEnd:
				stack = stack[:len(stack)-1]
				st = afterValue
			case b == '{':
				stack = append(stack, '{')
				st = expKeyOrEnd
			case b == '[':
				stack = append(stack, '[')
				st = expValueOrEnd
			case b == '"':
				st, isKey = inString, false
			case b == '-' || b >= '0' && b <= '9':
				st = inNumber
			case b == 't' || b == 'f' || b == 'n':
				lit = map[byte]string{'t': "true", 'f': "false", 'n': "null"}[b]
				st, li = inLiteral, 1
			default:
				return i, false, out.String(), false
			}
		case expKeyOrEnd, expKey:
			switch {
			case b == '}' && st == expKeyOrEnd:
				stack = stack[:len(stack)-1]
				st = afterValue
			case b == '"':
				st, isKey = inString, true
			default:
				return i, false, out.String(), false
			}
		case expColon:
			if b != ':' {
				return i, false, out.String(), false
			}
			st = expValue
		case afterValue:
			top := stack[len(stack)-1]
			switch {
			case b == ',' && top == '{':
				st = expKey
			case b == ',' && top == '[':
				st = expValue
			case b == '}' && top == '{', b == ']' && top == '[':
				stack = stack[:len(stack)-1]
			default:
				return i, false, out.String(), false
			}
		}
		out.WriteByte(b)
		if st == afterValue && len(stack) == 0 {
			return i + 1, true, out.String(), true
		}
	}
	return len(s), false, out.String(), true
}
