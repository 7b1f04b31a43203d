package chat

import (
	"embed"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/memvanta/memvanta/core/gguf"
)

// The built-in templates, written from the models' published definitions
// (templates/*.jinja; phi3 is the template of llama.cpp's
// ggml-vocab-phi-3.gguf). They serve models whose file has no template and
// --chat-template NAME.
//
//go:embed templates/*.jinja
var builtinFS embed.FS

// Fallback is the template used when a model file has none: ChatML, the
// format most instruction-tuned models without a template of their own use.
const Fallback = "chatml"

// KeyTemplate is the GGUF metadata key of a model's chat template.
const KeyTemplate = "tokenizer.chat_template"

// Builtins lists the built-in template names.
func Builtins() []string {
	ents, _ := builtinFS.ReadDir("templates")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".jinja"))
	}
	sort.Strings(names)
	return names
}

// Builtin returns the built-in template called name.
func Builtin(name string) (*Template, error) {
	b, err := builtinFS.ReadFile("templates/" + name + ".jinja")
	if err != nil {
		return nil, fmt.Errorf("%w: no built-in template %q (have %s)", ErrTemplate, name, strings.Join(Builtins(), ", "))
	}
	return Compile(name, string(b), Limits{})
}

// FromGGUF returns the file's own template, or the ChatML fallback when it
// has none (fromFile reports which).
func FromGGUF(f *gguf.File, lim Limits) (t *Template, fromFile bool, err error) {
	src, err := f.String(KeyTemplate)
	switch {
	case err == nil:
		t, err := Compile("gguf "+KeyTemplate, src, lim)
		return t, true, err
	case errors.Is(err, gguf.ErrNotFound):
		t, err := Builtin(Fallback)
		return t, false, err
	default:
		return nil, false, fmt.Errorf("%w: %s: %w", ErrTemplate, KeyTemplate, err)
	}
}

// Resolve picks the template for --chat-template spec: empty means the
// file's (or the fallback), a built-in name selects it, anything else is
// read as a template file through readFile.
func Resolve(spec string, f *gguf.File, readFile func(string) ([]byte, error), lim Limits) (*Template, error) {
	if spec == "" {
		t, _, err := FromGGUF(f, lim)
		return t, err
	}
	for _, n := range Builtins() {
		if n == spec {
			return Builtin(spec)
		}
	}
	b, err := readFile(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is neither a built-in template (%s) nor a readable file: %w",
			ErrTemplate, spec, strings.Join(Builtins(), ", "), err)
	}
	return Compile(trimName(spec), string(b), lim)
}
