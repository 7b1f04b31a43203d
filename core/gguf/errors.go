package gguf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Category says which class of defect a parse error is, so callers (and the
// inspect report) can react without matching message text.
type Category int

// The error categories. Truncated: the file ends before a structure it
// declares. Limit: a declared count or size exceeds the caller's Limits.
// Invalid: a value is out of its domain (bad bool byte, unknown value type,
// duplicate key...). Layout: tensor data placement is wrong (misaligned,
// overlapping, outside the file). Unsupported: a well-formed file this
// reader deliberately does not handle (v1, big-endian, unknown tensor type).
const (
	Truncated Category = iota + 1
	Limit
	Invalid
	Layout
	Unsupported
)

var categoryNames = [...]string{"", "truncated", "limit", "invalid", "layout", "unsupported"}

// String returns the lower-case category name used in messages and JSON.
func (c Category) String() string {
	if c > 0 && int(c) < len(categoryNames) {
		return categoryNames[c]
	}
	return fmt.Sprintf("category(%d)", int(c))
}

// Sentinels for errors.Is: errors.Is(err, gguf.ErrTruncated) is true for any
// *Error of category Truncated.
var (
	ErrTruncated   = errors.New("gguf: truncated")
	ErrLimit       = errors.New("gguf: limit exceeded")
	ErrInvalid     = errors.New("gguf: invalid value")
	ErrLayout      = errors.New("gguf: bad tensor data layout")
	ErrUnsupported = errors.New("gguf: unsupported")
)

// Accessor errors: a missing key wraps ErrNotFound, a key of the wrong value
// type (or an integer that does not fit) wraps ErrType.
var (
	ErrNotFound = errors.New("gguf: key not found")
	ErrType     = errors.New("gguf: wrong value type")
)

func (c Category) sentinel() error {
	switch c {
	case Truncated:
		return ErrTruncated
	case Limit:
		return ErrLimit
	case Invalid:
		return ErrInvalid
	case Layout:
		return ErrLayout
	case Unsupported:
		return ErrUnsupported
	}
	return nil
}

// Error is every defect Parse reports about the file's content. Offset is
// the absolute byte offset of the field at fault; Key or Tensor names the
// metadata key or tensor being read when it is known.
type Error struct {
	Category Category
	Offset   int64
	Key      string
	Tensor   string
	Err      error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gguf: %s at offset %d", e.Category, e.Offset)
	if e.Key != "" {
		fmt.Fprintf(&b, " (key %s)", QuoteName(e.Key))
	}
	if e.Tensor != "" {
		fmt.Fprintf(&b, " (tensor %s)", QuoteName(e.Tensor))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrTruncated) etc. match by category.
func (e *Error) Is(target error) bool {
	s := e.Category.sentinel()
	return s != nil && target == s
}

// MaxQuotedName is how many bytes of a name from a file QuoteName keeps.
const MaxQuotedName = 256

// CapName shortens a key, tensor or other name taken from a file to at
// most MaxQuotedName bytes: a longer name keeps its head (cut at a UTF-8
// boundary) and ends in "... (N bytes)" giving its full length. Parse puts
// capped names in *Error's Key and Tensor, so a file with a 2 MiB key makes
// a short error, the same natively and through the sandbox (whose stderr
// is capped), in text and JSON alike.
func CapName(s string) string {
	if len(s) <= MaxQuotedName {
		return s
	}
	suffix := fmt.Sprintf("... (%d bytes)", len(s))
	cut := MaxQuotedName - len(suffix)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}

// QuoteName is CapName, quoted: the form every error message uses for a
// name from a file.
func QuoteName(s string) string { return strconv.Quote(CapName(s)) }
