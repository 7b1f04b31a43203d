package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ardanlabs/jinja"
)

// maxJSONDepth bounds nesting when JSON becomes template values.
const maxJSONDepth = 64

// jsonValue decodes one JSON document into a template value, keeping object
// keys in their source order (tojson must reproduce tool definitions as the
// client sent them) and integers as integers.
func jsonValue(b []byte) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return jinja.Undefined(), err
	}
	if _, err := dec.Token(); err == nil {
		return jinja.Undefined(), errors.New("chat: trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (jinja.Value, error) {
	if depth > maxJSONDepth {
		return jinja.Undefined(), fmt.Errorf("chat: JSON nested deeper than %d", maxJSONDepth)
	}
	t, err := dec.Token()
	if err != nil {
		return jinja.Undefined(), fmt.Errorf("chat: JSON: %w", err)
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '{':
			d := jinja.NewDict()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return jinja.Undefined(), fmt.Errorf("chat: JSON: %w", err)
				}
				ks, ok := k.(string)
				if !ok {
					return jinja.Undefined(), errors.New("chat: JSON object key is not a string")
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return jinja.Undefined(), err
				}
				d.AsDict().Set(ks, v)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Undefined(), fmt.Errorf("chat: JSON: %w", err)
			}
			return d, nil
		case '[':
			var items []jinja.Value
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return jinja.Undefined(), err
				}
				items = append(items, v)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Undefined(), fmt.Errorf("chat: JSON: %w", err)
			}
			return jinja.NewList(items), nil
		}
		return jinja.Undefined(), fmt.Errorf("chat: JSON: unexpected %v", x)
	case string:
		return jinja.NewString(x), nil
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := x.Int64(); err == nil {
				return jinja.NewInt(i), nil
			}
		}
		f, err := x.Float64()
		if err != nil {
			return jinja.Undefined(), fmt.Errorf("chat: JSON number %s: %w", s, err)
		}
		return jinja.NewFloat(f), nil
	case bool:
		return jinja.NewBool(x), nil
	case nil:
		return jinja.None(), nil
	}
	return jinja.Undefined(), fmt.Errorf("chat: JSON: unexpected token %v", t)
}
