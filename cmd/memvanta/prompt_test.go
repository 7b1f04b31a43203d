package main

import "testing"

// llama.cpp's string_process_escapes semantics: the six named escapes and
// \xNN are replaced; any other backslash sequence is kept as written.
func TestProcessEscapes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`plain`, "plain"},
		{`a\nb\tc\rd`, "a\nb\tc\rd"},
		{`q\'s\"d\\e`, `q's"d\e`},
		{`\x41\x4a`, "AJ"},
		{`\x4`, `\x4`},
		{`\xzz`, `\xzz`},
		{`\q\`, `\q\`},
		{`end\`, `end\`},
		{`\\n`, `\n`},
	} {
		if got := processEscapes(c.in); got != c.want {
			t.Errorf("processEscapes(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
