package job

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/memvanta/memvanta/core/gguf"
)

// The guest reports a failed job on stderr with exit status 1 as one JSON
// object written by EncodeError; DecodeError turns it back into an error on
// the host whose text is exactly the guest's err.Error() and which, for a
// defect of the file, unwraps to a *gguf.Error with the same category,
// offset, key and tensor, so errors.As/Is and inspect.ErrorText/ErrorJSON
// treat it as the native error. Strings travel as bytes (base64 in JSON):
// keys and tensor names come from the file and need not be valid UTF-8,
// which JSON text would silently replace.

// RemoteError is a failure reported by the sandbox guest.
type RemoteError struct {
	Msg string
	GG  *gguf.Error // nil for a failure that is not a defect of the file
}

func (e *RemoteError) Error() string { return e.Msg }

// Unwrap exposes the reconstructed *gguf.Error.
func (e *RemoteError) Unwrap() error {
	if e.GG == nil {
		return nil
	}
	return e.GG
}

// wireError is the stderr document. Category is 0 for a non-file failure.
type wireError struct {
	Schema   string        `json:"schema"`
	Category gguf.Category `json:"category"`
	Offset   int64         `json:"offset"`
	Key      []byte        `json:"key"`
	Tensor   []byte        `json:"tensor"`
	Inner    []byte        `json:"inner"` // *gguf.Error's Err text, if any
	HasInner bool          `json:"has_inner"`
	Message  []byte        `json:"message"` // err.Error()
}

const wireSchema = "memvanta.guest-error/v1"

// EncodeError renders err for DecodeError.
func EncodeError(err error) []byte {
	w := wireError{Schema: wireSchema, Message: []byte(err.Error())}
	var ge *gguf.Error
	if errors.As(err, &ge) {
		w.Category, w.Offset, w.Key, w.Tensor = ge.Category, ge.Offset, []byte(ge.Key), []byte(ge.Tensor)
		if ge.Err != nil {
			w.Inner, w.HasInner = []byte(ge.Err.Error()), true
		}
	}
	b, _ := json.Marshal(w) // bytes, ints and bools only: cannot fail
	return append(b, '\n')
}

// DecodeError parses what EncodeError wrote.
func DecodeError(b []byte) (*RemoteError, error) {
	var w wireError
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("decoding the guest's error report: %w", err)
	}
	if w.Schema != wireSchema {
		return nil, errors.New("decoding the guest's error report: not a guest error document")
	}
	re := &RemoteError{Msg: string(w.Message)}
	if w.Category != 0 {
		if w.Category < gguf.Truncated || w.Category > gguf.Unsupported {
			return nil, fmt.Errorf("decoding the guest's error report: unknown category %d", int(w.Category))
		}
		re.GG = &gguf.Error{Category: w.Category, Offset: w.Offset, Key: string(w.Key), Tensor: string(w.Tensor)}
		if w.HasInner {
			re.GG.Err = errors.New(string(w.Inner))
		}
	}
	return re, nil
}
