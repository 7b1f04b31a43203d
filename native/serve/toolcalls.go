package serve

import (
	"bytes"
	"encoding/json"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/tokenizer"
)

// Tool calls in replies: which format to parse (from the chat template),
// and the OpenAI shapes they are returned in.

// toolFormat is the format to parse replies in: the template's, when the
// request has tools and tool_choice does not forbid calls. tool_choice is
// checked for OpenAI's forms; "required" and a named function are returned
// as force, which the caller enforces with a grammar (toolGrammar).
func toolFormat(b *Backend, tools, choice json.RawMessage) (chat.ToolFormat, forcedTools, *apiError) {
	var force forcedTools
	choice = bytes.TrimSpace(choice)
	none := false
	if len(choice) > 0 && string(choice) != "null" {
		var name string
		if err := json.Unmarshal(choice, &name); err == nil {
			switch name {
			case "none":
				none = true
			case "auto":
			case "required":
				force.required = true
			default:
				return chat.ToolNone, force, invalid("tool_choice", `tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name": ...}}, got %q`, name)
			}
		} else {
			var obj struct {
				Type     string `json:"type"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			if err := json.Unmarshal(choice, &obj); err != nil || obj.Type != "function" || obj.Function.Name == "" {
				return chat.ToolNone, force, invalid("tool_choice", `tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name": ...}}`)
			}
			force.name = obj.Function.Name
		}
	}
	var list []json.RawMessage
	if none || json.Unmarshal(tools, &list) != nil || len(list) == 0 {
		if force.required || force.name != "" {
			return chat.ToolNone, force, invalid("tool_choice", "tool_choice %s needs tools", force)
		}
		return chat.ToolNone, force, nil
	}
	return b.Template.ToolFormat(), force, nil
}

// MarkerTokens are the ids of the markers that are single control tokens in
// this vocabulary, which replies must keep as text for the tool-call parser
// (text markers such as Qwen's <tool_call> need nothing).
func MarkerTokens(tok *tokenizer.Tokenizer, markers []string) []int32 {
	var keep []int32
	for _, m := range markers {
		ids, err := tok.EncodeChecked(m, false, true)
		if err == nil && len(ids) == 1 && tok.IsControl(ids[0]) {
			keep = append(keep, ids[0])
		}
	}
	return keep
}

type toolCallFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// toolCallJSON is an entry of message.tool_calls, and (with Index set) of a
// streamed delta.tool_calls.
type toolCallJSON struct {
	Index    *int             `json:"index,omitempty"`
	ID       string           `json:"id,omitempty"`
	Type     string           `json:"type,omitempty"`
	Function toolCallFunction `json:"function"`
}

func callID(c chat.ToolCall) string {
	if c.ID != "" {
		return c.ID
	}
	return newID("call_")
}

// toolCallsJSON is message.tool_calls for a whole reply.
func toolCallsJSON(calls []chat.ToolCall) []toolCallJSON {
	out := make([]toolCallJSON, len(calls))
	for i, c := range calls {
		out[i] = toolCallJSON{ID: callID(c), Type: "function", Function: toolCallFunction{Name: c.Name, Arguments: c.Arguments}}
	}
	return out
}
