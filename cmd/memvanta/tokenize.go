package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/native/regfile"
)

// openTokenizer reads only the GGUF header and metadata (no weights are
// mapped) and builds the model's tokenizer.
func openTokenizer(path string) (*tokenizer.Tokenizer, error) {
	fh, size, err := regfile.Open(path) // refuses FIFOs and devices before open(2)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := gguf.Parse(fh, size, gguf.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tok, nil
}

// runTokenize plays llama-tokenize's role with its output formats: one
// "%6d -> 'piece'" line per token, or with --ids a Python-style list
// "[1, 2, 3]". --json prints {"ids": [...], "pieces": [...]}.
func runTokenize(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("tokenize", "tokenize -m MODEL (-p TEXT | -f FILE | -f -) [--ids] [--no-bos] [--special] [--json]",
		"Print the tokens of a text as the model's tokenizer splits it (llama-tokenize's output formats).\n"+
			"Unlike llama-tokenize, control-token text such as <s> is plain text unless --special is given.")
	var pf promptFlags
	var model string
	var ids, special, jsonOut, count bool
	c.group("Model")
	c.stringVar(&model, "m|model", "FILE", "", "GGUF model (or vocab-only) file (required)")
	pf.register(c)
	c.group("Output")
	c.boolVar(&ids, "ids", "print only the ids, as a list: [1, 2, 3]")
	c.boolVar(&special, "special|parse-special", "parse control-token text (<s>, <|eot_id|>) into those tokens")
	c.boolVar(&count, "show-count", "also print the number of tokens")
	c.boolVar(&jsonOut, "json", "print {\"ids\": [...], \"pieces\": [...]}")
	var fromStdin, logDisable bool
	c.boolVar(&fromStdin, "stdin", "read the text from standard input (llama-tokenize's spelling of -f -)")
	c.boolVar(&logDisable, "log-disable", "accepted for llama-tokenize command lines, no effect")
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	if model == "" {
		return c.usageErr(stderr, "-m MODEL is required")
	}
	if fromStdin {
		if c.isSet("p") || c.isSet("f") {
			return c.usageErr(stderr, "--stdin, -f and -p are mutually exclusive")
		}
		if err := c.fs.Set("f", "-"); err != nil {
			return c.usageErr(stderr, "%v", err)
		}
	}
	text, given, err := pf.text(c)
	if !given {
		return c.usageErr(stderr, "-p TEXT or -f FILE is required")
	}
	if errors.Is(err, errBothPrompts) {
		return c.usageErr(stderr, "%v", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "memvanta tokenize: %v\n", err)
		return exitRuntime
	}
	model, err = resolveModel(ctx, model, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "memvanta tokenize: %v\n", err)
		return exitRuntime
	}
	tok, err := openTokenizer(model)
	if err != nil {
		fmt.Fprintf(stderr, "memvanta tokenize: %v\n", err)
		return exitRuntime
	}
	toks, err := tok.EncodeChecked(text, !pf.noBOS, special)
	if err != nil {
		fmt.Fprintf(stderr, "memvanta tokenize: %v\n", err)
		return exitRuntime
	}
	w := bufio.NewWriter(stdout)
	switch {
	case jsonOut:
		pieces := make([]string, len(toks))
		for i, id := range toks {
			pieces[i] = string(tok.PieceSpecial(id))
		}
		if toks == nil {
			toks = []int32{}
		}
		b, _ := json.MarshalIndent(struct {
			IDs    []int32  `json:"ids"`
			Pieces []string `json:"pieces"`
		}{toks, pieces}, "", "  ")
		w.Write(append(b, '\n'))
	case ids:
		w.WriteString(formatIDs(toks) + "\n")
	default:
		for _, id := range toks {
			p := tok.PieceSpecial(id)
			if utf8.Valid(p) {
				fmt.Fprintf(w, "%6d -> '%s'\n", id, p)
			} else {
				fmt.Fprintf(w, "%6d -> '%s' (utf-8 decode failure)\n", id, p)
			}
		}
	}
	if count && !jsonOut {
		fmt.Fprintf(w, "Total number of tokens: %d\n", len(toks))
	}
	return finishOutput(w, c.name, stderr)
}

// finishOutput flushes buffered stdout: a closed pipe ends quietly (141),
// another write error is a runtime error.
func finishOutput(w *bufio.Writer, name string, stderr io.Writer) int {
	if err := w.Flush(); err != nil {
		if closedPipe(err) {
			return exitPipe
		}
		fmt.Fprintf(stderr, "memvanta %s: writing the output: %v\n", name, err)
		return exitRuntime
	}
	return exitOK
}

func formatIDs(ids []int32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(id)))
	}
	b.WriteByte(']')
	return b.String()
}

// runDetokenize prints the text of token ids given as arguments or, with
// none, read from stdin; both accept tokenize --ids output ("[1, 2, 3]")
// as well as ids separated by spaces or commas.
func runDetokenize(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("detokenize", "detokenize -m MODEL [--special] [ID ...]",
		"Print the text of token ids (arguments, or standard input when there are none),\n"+
			"as llama.cpp's llama_detokenize does. Accepts tokenize --ids output: [1, 2, 3].")
	var model string
	var special bool
	c.group("Options")
	c.stringVar(&model, "m|model", "FILE", "", "GGUF model (or vocab-only) file (required)")
	c.boolVar(&special, "special", "print control tokens (<s>, </s>) as their text instead of nothing")
	if done, st := c.parse(args, stdout, stderr, true); done {
		return st
	}
	if model == "" {
		return c.usageErr(stderr, "-m MODEL is required")
	}
	src := strings.Join(c.fs.Args(), " ")
	if c.fs.NArg() == 0 {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, maxPromptBytes+1))
		if err != nil || len(b) > maxPromptBytes {
			fmt.Fprintf(stderr, "memvanta detokenize: reading ids from standard input: %v\n", err)
			return exitRuntime
		}
		src = string(b)
	}
	model, err := resolveModel(ctx, model, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "memvanta detokenize: %v\n", err)
		return exitRuntime
	}
	tok, err := openTokenizer(model)
	if err != nil {
		fmt.Fprintf(stderr, "memvanta detokenize: %v\n", err)
		return exitRuntime
	}
	var toks []int32
	for _, f := range strings.FieldsFunc(src, func(r rune) bool {
		return r == ',' || r == '[' || r == ']' || r == ' ' || r == '\n' || r == '\t' || r == '\r'
	}) {
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil || v < 0 || int(v) >= tok.NVocab() {
			return c.usageErr(stderr, "%q is not a token id of this vocabulary (0 to %d)", f, tok.NVocab()-1)
		}
		toks = append(toks, int32(v))
	}
	w := bufio.NewWriter(stdout)
	w.WriteString(tok.Detokenize(toks, special) + "\n")
	return finishOutput(w, c.name, stderr)
}
