// Package chat turns a conversation into the prompt text a model was
// trained on, by rendering the model's Jinja chat template
// (tokenizer.chat_template in the GGUF file) or a built-in one.
//
// # Engine choice
//
// Templates are rendered by github.com/ardanlabs/jinja v1.8.0 (pure Go, no
// dependencies, builds for wasip1). It was chosen over
// github.com/nikolalohinski/gonja/v2 v2.9.1 by rendering the 126 cases of
// testdata/cases.json (7 templates: ChatML, Qwen2.5 with tools, Llama 3,
// Gemma, Mistral, the Phi-3 template of ../shared/vocab/ggml-vocab-phi-3.gguf
// and testdata/templates/features.jinja, which uses every construct listed
// below; 9 conversations; with and without the generation prompt) and
// comparing with @huggingface/jinja 0.5.11, the JavaScript implementation
// Hugging Face uses (scripts/chat-goldens.mjs writes testdata/golden.json):
//
//   - ardanlabs/jinja matched 108/126. Every case whose message contents are
//     strings matched byte for byte, including namespace(), raise_exception,
//     loop.index/first/last, filtered loops, negative indexing, slicing,
//     trim, str.strip(), tojson (Python's ", " / ": " separators, no HTML
//     escaping, key order kept) and tool_calls passed through. The 18
//     differences are conversations the templates do not type-check: null
//     content concatenated to a string (the JS engine raises, ardanlabs
//     renders ""), and a list of content parts printed as a string (the JS
//     engine prints JavaScript's Array join, ardanlabs prints Python's repr,
//     as Jinja2 would). Render avoids both by normalising content first
//     (see Message).
//   - gonja/v2 matched 98/126: it keeps a newline after "-%}" where Jinja
//     strips it in some positions, cannot index with messages[-1], sorts
//     and compacts tojson output (`{"a":1}`) and escapes & < > in it, so the
//     same tool definitions tokenize differently.
//
// # Safety
//
// A template comes from the model file, which may be untrusted. Compile caps
// the source size and never runs a macro that calls itself (directly or
// through other macros: the engine has no depth limit and a Go stack overflow
// cannot be recovered) as written: such macros are unrolled into 16 levels
// of copies, the last one raising an error, with a per-render budget of
// macro calls (recursion.go), so gpt-oss's harmony template, which renders
// nested JSON-schema types recursively, works and a hostile one stops.
// strftime_now (llama.cpp's helper; harmony prints the date) formats
// Options.Now. Render converts any engine panic into an error,
// replaces range() with one that has a per-render element budget, bounds the
// output size, and gives up after a deadline. The engine has no step
// counter or allocation cap, so a template that loops for long over its own
// literal data still runs in a goroutine that Render abandons at the
// deadline (the result is discarded), and a string multiplied by a huge
// count is allocated before the output cap sees it; this is documented
// rather than hidden. Templates come from the model file or the operator's
// --chat-template, never from a request.
package chat
