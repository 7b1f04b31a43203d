package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// promptFlags say where the prompt comes from: -p TEXT, -f FILE or -f -
// (standard input). llama.cpp drops one trailing newline of a prompt file;
// so does memvanta. An empty prompt means "BOS only", as in llama.cpp.
//
// Escapes (\n, \t, \\, \xNN, …) in the prompt are processed by default,
// as llama.cpp does; --no-escape turns that off.
type promptFlags struct {
	prompt   string
	file     string
	noBOS    bool
	escape   bool // -e: the default, accepted for llama.cpp command lines
	noEscape bool
	stdin    io.Reader
}

// errBothPrompts is the usage error for -p with -f.
var errBothPrompts = errors.New("give the prompt with -p or -f, not both")

// maxPromptBytes bounds a prompt read from a file or a pipe.
const maxPromptBytes = 64 << 20

func (pf *promptFlags) register(c *cli) {
	pf.stdin = os.Stdin
	c.group("Prompt")
	c.stringVar(&pf.prompt, "p|prompt", "PROMPT", "", "prompt text (\"\" = start from BOS alone)")
	c.stringVar(&pf.file, "f|file", "FILE", "", "read the prompt from FILE (- = standard input); one trailing newline is dropped")
	c.boolVar(&pf.noBOS, "no-bos", "do not add the BOS token the model's metadata asks for")
	c.boolVar(&pf.escape, "e|escape", "process escapes (\\n, \\r, \\t, \\', \\\", \\\\, \\xNN) in the prompt and stop strings, as llama.cpp (the default)")
	c.boolVar(&pf.noEscape, "no-escape", "take the prompt and stop strings literally")
}

// unescape applies the escape setting to s.
func (pf *promptFlags) unescape(s string) string {
	if pf.noEscape {
		return s
	}
	return processEscapes(s)
}

// processEscapes turns \n, \r, \t, \', \", \\ and \xNN (two hex digits)
// into the characters they name, as llama.cpp's prompt handling does; any
// other backslash is kept as written.
func processEscapes(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			out = append(out, s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case '\'', '"', '\\':
			out = append(out, c)
		case 'x':
			if i+2 < len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					out = append(out, byte(v))
					i += 2
					break
				}
			}
			out = append(out, '\\', c)
		default:
			out = append(out, '\\', c)
		}
	}
	return string(out)
}

// text returns the prompt. given is false when neither -p nor -f was on
// the command line (a usage error for generate: it needs a prompt, even an
// empty one, so a forgotten -p does not silently generate from BOS).
func (pf *promptFlags) text(c *cli) (text string, given bool, err error) {
	hasP, hasF := c.isSet("p"), c.isSet("f")
	switch {
	case hasP && hasF:
		return "", true, errBothPrompts
	case hasP:
		return pf.unescape(pf.prompt), true, nil
	case !hasF:
		return "", false, nil
	}
	var r io.Reader
	name := pf.file
	if pf.file == "-" {
		r, name = pf.stdin, "standard input"
	} else {
		fh, err := os.Open(pf.file)
		if err != nil {
			return "", true, err
		}
		defer fh.Close()
		r = fh
	}
	b, err := io.ReadAll(io.LimitReader(r, maxPromptBytes+1))
	if err != nil {
		return "", true, fmt.Errorf("reading the prompt from %s: %w", name, err)
	}
	if len(b) > maxPromptBytes {
		return "", true, fmt.Errorf("prompt from %s is larger than %d MiB", name, maxPromptBytes>>20)
	}
	return pf.unescape(strings.TrimSuffix(string(b), "\n")), true, nil
}

// predictFlags say how much to generate and where to stop; chat and serve
// use them as defaults.
type predictFlags struct {
	n     int
	stops []string
}

func (pr *predictFlags) register(c *cli, defaultN int) {
	c.group("Generation")
	c.intVar(&pr.n, "n|predict|n-predict", "N", defaultN, "tokens to generate (-1 = until end of text or the context is full)")
	c.listVar(&pr.stops, "stop|r|reverse-prompt", "STR", "stop when the text contains STR; STR itself is not printed (repeatable)")
}

func (pr *predictFlags) validate() error {
	if pr.n < -1 {
		return fmt.Errorf("-n %d: must be -1 (no limit) or >= 0", pr.n)
	}
	for _, s := range pr.stops {
		if s == "" {
			return errors.New("--stop: the stop string must not be empty")
		}
	}
	return nil
}
