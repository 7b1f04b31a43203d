package inspect

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
)

// TestTextEscapesControlCharacters: every string the text report takes
// from the file (or its name) reaches the terminal with control characters
// escaped: no ESC sequences, no C1 controls (0x9b is CSI), no bidi
// overrides, no invalid UTF-8. Plain names stay as they are.
func TestTextEscapesControlCharacters(t *testing.T) {
	const arch = "ll\x1b[31mama"
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf)
	for _, kv := range []struct {
		k string
		v any
	}{
		{"general.architecture", arch},
		{"general.name", "evil\x1b[2J\rname\u009b1m"},
		{arch + ".context_length", uint32(256)},
		{"tokenizer.ggml.model", "gpt2\x1b]0;title\x07"},
		{"tokenizer.ggml.pre", "\u202eevil\xff"},
		{"tokenizer.ggml.tokens", []string{"a", "b"}},
		{"key\x1b[8m.hidden", "v\x1b[0m"},
		{"plain.key", "plain value"},
	} {
		if err := w.AddKV(kv.k, val(t, kv.v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.AddTensor(gguf.TensorInfo{Name: "t\x1b[2K\x7f", Type: ggml.F32, Dims: []uint64{4}}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 16))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Build(f, Options{Name: "f\x1b[1m.gguf", Tensors: true, Metadata: true}).WriteText(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for i, r := range text {
		if r == utf8.RuneError && !strings.HasPrefix(text[i:], "\uFFFD") {
			t.Fatalf("invalid UTF-8 at byte %d: %q", i, text[max(0, i-20):min(len(text), i+20)])
		}
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			t.Fatalf("control character %U at byte %d: %q", r, i, text[max(0, i-20):min(len(text), i+20)])
		}
	}
	for _, want := range []string{`"f\x1b[1m.gguf"`, `"evil\x1b[2J\rname\u009b1m"`, `"t\x1b[2K\x7f"`, "plain.key", `"plain value"`} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %s:\n%s", want, text)
		}
	}
}
