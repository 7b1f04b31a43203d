package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Message is one turn of a conversation. Role and Content are what every
// template reads; Fields, when set, is the message's whole JSON object as a
// client sent it (tool_calls, tool_call_id, name, ...), passed to the
// template in its original key order with role and content overridden.
type Message struct {
	Role string
	// Content is the text. A client's list of content parts is joined
	// into it (text parts only, separated by "\n", as llama-server does for
	// templates that take strings).
	Content string
	// NullContent marks a message whose content was JSON null (an
	// assistant turn that only calls tools); templates see none.
	NullContent bool
	Fields      json.RawMessage
}

// ParseMessages decodes an OpenAI-style "messages" array, checking that each
// element is an object with a string role and a content that is a string,
// null (assistant turns with tool_calls) or a list of content parts.
func ParseMessages(b []byte) ([]Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, fmt.Errorf("messages: must be an array of objects: %w", err)
	}
	out := make([]Message, 0, len(raws))
	for i, r := range raws {
		m, err := parseMessage(r)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func parseMessage(r json.RawMessage) (Message, error) {
	var obj struct {
		Role    *string         `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(r, &obj); err != nil {
		return Message{}, fmt.Errorf("must be an object with role and content: %w", err)
	}
	if obj.Role == nil || *obj.Role == "" {
		return Message{}, errors.New("role is missing")
	}
	m := Message{Role: *obj.Role, Fields: r}
	c := bytes.TrimSpace(obj.Content)
	switch {
	case len(c) == 0 || bytes.Equal(c, []byte("null")):
		m.NullContent = true
	case c[0] == '"':
		if err := json.Unmarshal(c, &m.Content); err != nil {
			return Message{}, fmt.Errorf("content: %w", err)
		}
	case c[0] == '[':
		var parts []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(c, &parts); err != nil {
			return Message{}, fmt.Errorf("content: must be a string or a list of content parts: %w", err)
		}
		var texts []string
		for j, p := range parts {
			if p.Type != "text" {
				return Message{}, fmt.Errorf("content[%d]: part type %q is not supported (text only)", j, p.Type)
			}
			if p.Text == nil {
				return Message{}, fmt.Errorf("content[%d]: text part has no text", j)
			}
			texts = append(texts, *p.Text)
		}
		m.Content = strings.Join(texts, "\n")
	default:
		return Message{}, errors.New("content: must be a string, null or a list of content parts")
	}
	return m, nil
}
