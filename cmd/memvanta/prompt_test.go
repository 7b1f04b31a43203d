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

// A stop string is never printed, even split across pushes; text that
// only looked like its start is released.
func TestStopper(t *testing.T) {
	for _, c := range []struct {
		stops  []string
		pushes []string
		want   string
		hit    bool
	}{
		{nil, []string{"ab", "cd"}, "abcd", false},
		{[]string{"STOP"}, []string{"hello ST", "OP world"}, "hello ", true},
		{[]string{"STOP"}, []string{"hello ST", "ART"}, "hello START", false},
		{[]string{"xyz", "b"}, []string{"aaxy", "zb"}, "aa", true},
		{[]string{"\n\n"}, []string{"line\n", "\nnext"}, "line", true},
	} {
		s := &stopper{stops: c.stops}
		got, hit := "", false
		for _, p := range c.pushes {
			out, h := s.push(p)
			got += out
			if h {
				hit = true
				break
			}
		}
		if !hit {
			got += s.flush()
		}
		if got != c.want || hit != c.hit {
			t.Errorf("stops %q pushes %q: %q hit %v, want %q hit %v", c.stops, c.pushes, got, hit, c.want, c.hit)
		}
	}
}
