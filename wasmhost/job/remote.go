package job

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/inspect"
)

// The guest reports a failed inspect as inspect.ErrorJSON on stderr with exit
// status 1; DecodeError turns that back into an error on the host whose text
// is exactly the guest's err.Error() and which, for a defect of the file,
// unwraps to a *gguf.Error with the same category, offset, key and tensor, so
// errors.As/Is and inspect.ErrorText/ErrorJSON treat it as the native error.

// RemoteError is an inspect failure reported by the sandbox guest.
type RemoteError struct {
	Msg string
	GG  *gguf.Error // nil for category "io"
}

func (e *RemoteError) Error() string { return e.Msg }

// Unwrap exposes the reconstructed *gguf.Error.
func (e *RemoteError) Unwrap() error {
	if e.GG == nil {
		return nil
	}
	return e.GG
}

var categories = map[string]gguf.Category{
	gguf.Truncated.String(): gguf.Truncated, gguf.Limit.String(): gguf.Limit, gguf.Invalid.String(): gguf.Invalid,
	gguf.Layout.String(): gguf.Layout, gguf.Unsupported.String(): gguf.Unsupported,
}

// DecodeError parses inspect.ErrorJSON output.
func DecodeError(b []byte) (*RemoteError, error) {
	var doc struct {
		Schema string `json:"schema"`
		Error  *struct {
			Category string `json:"category"`
			Offset   *int64 `json:"offset"`
			Key      string `json:"key"`
			Tensor   string `json:"tensor"`
			Message  string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("decoding the guest's error report: %w", err)
	}
	if doc.Schema != inspect.Schema || doc.Error == nil {
		return nil, errors.New("decoding the guest's error report: not an inspect error document")
	}
	e := doc.Error
	re := &RemoteError{Msg: e.Message}
	if c, ok := categories[e.Category]; ok {
		ge := &gguf.Error{Category: c, Key: e.Key, Tensor: e.Tensor}
		if e.Offset != nil {
			ge.Offset = *e.Offset
		}
		// *gguf.Error formats as "<header>: <inner>"; keep the inner text so
		// the reconstructed error prints the same as the original.
		head := ge.Error()
		if len(e.Message) > len(head)+2 && e.Message[:len(head)+2] == head+": " {
			ge.Err = errors.New(e.Message[len(head)+2:])
		} else if e.Message != head {
			ge.Err = errors.New(e.Message)
		}
		re.GG = ge
	} else if e.Category != "io" {
		return nil, fmt.Errorf("decoding the guest's error report: unknown category %q", e.Category)
	}
	return re, nil
}
