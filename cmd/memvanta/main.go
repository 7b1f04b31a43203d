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
// the process exit status (see the exit* constants).
type command struct {
	name  string
	brief string
	run   func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"generate", "generate text from a prompt", runGenerate},
		{"chat", "chat with the model on the terminal (or from stdin/--json)", runChat},
		{"serve", "serve an OpenAI-compatible HTTP API with continuous batching", runServe},
		{"bench-serve", "measure serve under K concurrent streaming clients (aggregate tok/s, TTFT, RSS)", runBenchServe},
		{"bench", "measure prompt and generation throughput and peak RSS (like llama-bench)", runBench},
		{"embed", "print the embedding of a text (like llama-embedding)", runEmbed},
		{"tokenize", "print the token ids of a text (like llama-tokenize)", runTokenize},
		{"detokenize", "print the text of token ids", runDetokenize},
		{"pull", "download a GGUF model from the Hugging Face Hub (hf.co/OWNER/REPO[:QUANT])", runPull},
		{"ls", "list pulled models", runLs},
		{"ps", "list the models a running serve holds in memory (like ollama ps)", runPs},
		{"rm", "delete pulled models", runRm},
		{"inspect", "summarise a GGUF file (sandboxed by default)", runInspect},
		{"synth", "write a synthetic GGUF (llama, qwen3, qwen3moe, mixtral, ...) with seeded random weights", runSynth},
		{"version", "print the version, commit, Go version and kernel path", runVersion},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: memvanta <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.brief)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'memvanta help <command>' or 'memvanta <command> -h' for a command's flags.")
	fmt.Fprintln(w, "Exit status: 0 ok, 1 runtime error, 2 usage error, 130 interrupted, 141 stdout closed.")
}

func main() {
	// A closed stdout (… | head) makes writes fail with EPIPE instead of
	// killing the process, so commands stop quietly with status 141 after
	// flushing what they can.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "-help":
		usage(stdout)
		return exitOK
	case "--version", "-version", "-v":
		args = []string{"version"}
	case "help":
		if len(args) == 1 {
			usage(stdout)
			return exitOK
		}
		// help TOPIC is TOPIC -h: the command prints its own flags.
		args = []string{args[1], "-h"}
	}
	// Ctrl-C cancels the context; long-running commands stop cleanly and
	// still print what they measured or generated (exit status 130).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "memvanta: unknown command %q (see memvanta -h)\n", args[0])
	return exitUsage
}
