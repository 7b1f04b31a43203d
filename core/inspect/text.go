package inspect

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memvanta/memvanta/core/gguf"
)

// WriteText writes the human summary. Long strings and arrays are
// abbreviated; Options.Tensors and Options.Metadata (from Build) add the
// full tensor and key listings.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(label, format string, args ...any) {
		fmt.Fprintf(bw, "%-16s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	if r.File != "" {
		p("file", "%s", TerminalSafe(r.File))
	}
	p("format", "GGUF v%d, alignment %d, data section at offset %d", r.Version, r.Alignment, r.DataOffset)
	p("file size", "%s (%d bytes)", humanBytes(uint64(r.FileSize)), r.FileSize)
	arch := TerminalSafe(r.Architecture)
	if arch == "" {
		arch = "(none)"
	} else if !r.KnownArchitecture {
		arch += " (not executable by memvanta)"
	}
	p("architecture", "%s", arch)
	if r.Name != "" {
		p("name", "%s", TerminalSafe(r.Name))
	}
	if r.FileType != nil {
		p("file type", "%d", *r.FileType)
	}
	p("parameters", "%s (%d)", humanCount(r.Parameters), r.Parameters)
	p("tensors", "%d, %s of data", r.TensorCount, humanBytes(r.TensorBytes))
	if len(r.TypeMix) > 0 {
		fmt.Fprintln(bw, "tensor types:")
		for _, tc := range r.TypeMix {
			fmt.Fprintf(bw, "  %-8s %5d tensors %12s\n", tc.Type, tc.Count, humanBytes(tc.Bytes))
		}
	}
	if r.ContextLength != nil {
		p("context length", "%d", *r.ContextLength)
	}
	if len(r.Hyperparameters) > 0 {
		fmt.Fprintf(bw, "hyperparameters: (%s.*)\n", TerminalSafe(r.Architecture))
		for _, h := range r.Hyperparameters {
			fmt.Fprintf(bw, "  %-38s %s\n", TerminalSafe(h.Key), jsonish(h.Value))
		}
	}
	if t := r.Tokenizer; t != nil {
		model := TerminalSafe(t.Model)
		if model == "" {
			model = "(unset)"
		}
		desc := model
		if t.Pre != "" {
			desc += ", pre " + TerminalSafe(t.Pre)
		}
		p("tokenizer", "%s, %d tokens, %d merges, bos %d, eos %d", desc, t.VocabSize, t.Merges, t.BOS, t.EOS)
	} else {
		p("tokenizer", "none")
	}
	if r.ChatTemplate {
		p("chat template", "present")
	} else {
		p("chat template", "absent")
	}
	p("metadata", "%d keys", len(r.kv))
	if r.opts.Metadata {
		for _, kv := range r.kv {
			fmt.Fprintf(bw, "  %-40s %-14s %s\n", TerminalSafe(kv.Key), kv.Value.TypeName(), valueText(kv.Value))
		}
	}
	if r.opts.Tensors {
		fmt.Fprintln(bw, "tensor list:")
		fmt.Fprintf(bw, "  %-40s %-8s %-24s %14s %14s\n", "name", "type", "dims", "offset", "bytes")
		for _, t := range r.Tensors {
			fmt.Fprintf(bw, "  %-40s %-8s %-24s %14d %14d\n", TerminalSafe(t.Name), t.Type, dimsText(t.Dims), t.Offset, t.Bytes)
		}
	}
	return bw.Flush()
}

// TerminalSafe makes a string from the file (or its name) fit for a terminal. A
// plain string - valid UTF-8, printable characters only - is shown as it
// is; any other is shown Go-quoted, so control characters (ESC sequences
// that would recolour, retitle or clear the terminal, C1 controls such as
// 0x9b, carriage returns), invisible format characters (bidi overrides)
// and invalid bytes appear escaped, and the quotes mark it as odd. JSON
// output needs none of this: the encoder escapes them already.
func TerminalSafe(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

func dimsText(d []uint64) string {
	s := make([]string, len(d))
	for i, x := range d {
		s[i] = strconv.FormatUint(x, 10)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// jsonish formats a scalar JSON-ready value for text.
func jsonish(v any) string {
	switch d := v.(type) {
	case string:
		return abbrev(d)
	case float32:
		return strconv.FormatFloat(float64(d), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(d, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

const maxText = 60

func abbrev(s string) string {
	q := strconv.Quote(s)
	if len(q) <= maxText {
		return q
	}
	r := []rune(q)
	if len(r) > maxText {
		r = r[:maxText]
	}
	return fmt.Sprintf("%s… (%d bytes)", string(r), len(s))
}

func valueText(v gguf.Value) string {
	if v.Type != gguf.TypeArray {
		return jsonish(scalarJSON(v))
	}
	n := v.Len()
	var parts []string
	for _, x := range arrayJSON(v, min(n, 4)) {
		if inner, ok := x.([]any); ok {
			parts = append(parts, fmt.Sprintf("[%d]", len(inner)))
			continue
		}
		parts = append(parts, jsonish(x))
	}
	more := ""
	if n > 4 {
		more = ", …"
	}
	return fmt.Sprintf("[%d] %s%s", n, strings.Join(parts, ", "), more)
}

func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit || u == "TiB" {
			return fmt.Sprintf("%.2f %s", f, u)
		}
	}
	return ""
}

func humanCount(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.2fK", float64(n)/1e3)
	}
	return strconv.FormatUint(n, 10)
}
