// Command memvanta is a memory-first CPU inference runtime for quantized GGUF
// language models. Each subcommand lives in its own file.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand: it parses its own flags from args and returns
// the process exit status.
type command struct {
	name  string
	brief string
	run   func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"inspect", "summarise a GGUF file (sandboxed by default)", runInspect},
		{"synth", "write a synthetic Llama GGUF with seeded random weights", runSynth},
		{"generate", "generate text from a prompt", runGenerate},
		{"bench", "measure prompt and generation throughput and peak RSS", runBench},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: memvanta <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.brief)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'memvanta <command> -h' for a command's flags.")
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	// Ctrl-C cancels the context; long-running commands stop cleanly and
	// still print their statistics.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "memvanta: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}
