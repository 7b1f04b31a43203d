package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/memvanta/memvanta/native/hub"
	"github.com/memvanta/memvanta/wasmhost"
)

// hubClient returns a Hub client for dir ("" = the default model
// directory) that runs the sandboxed inspect on every download before
// its first use and reports progress on stderr.
func hubClient(dir string, stderr io.Writer) (*hub.Client, error) {
	if dir == "" {
		d, err := hub.DefaultDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	c := hub.NewClient(dir)
	c.Verify = wasmhost.Verify
	c.Progress = stderr
	return c, nil
}

// resolveModel turns -m into a local file: a path is returned as is; an
// hf.co/OWNER/REPO[:QUANT|/FILE.gguf] reference is pulled on first use
// (chat and serve resolve -m the same way).
func resolveModel(ctx context.Context, model string, stderr io.Writer) (string, error) {
	if !hub.IsRef(model) {
		return model, nil
	}
	r, err := hub.ParseRef(model)
	if err != nil {
		return "", err
	}
	c, err := hubClient("", stderr)
	if err != nil {
		return "", err
	}
	if p, err := c.Local(r); err == nil {
		return p, nil
	}
	fmt.Fprintf(stderr, "memvanta: pulling %s into %s\n", r, c.Dir)
	return c.Pull(ctx, r)
}

func modelsDirFlag(c *cli, dir *string) {
	c.stringVar(dir, "models-dir", "DIR", "", "model directory (default $MEMVANTA_MODELS, else $XDG_CACHE_HOME/memvanta/models, else ~/.cache/memvanta/models)")
}

// runPull downloads a model from the Hugging Face Hub (see native/hub).
func runPull(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("pull", "pull [--models-dir DIR] hf.co/OWNER/REPO[:QUANT|/FILE.gguf]",
		"Download a GGUF model from the Hugging Face Hub into the model directory: resumable (HTTP ranges),\n"+
			"checked against the Hub's sha256, and inspected in the wasm sandbox before first use; a file that\n"+
			"fails is refused. :QUANT picks the file carrying that quantisation in its name (default Q4_K_M, or\n"+
			"the only GGUF file). HF_ENDPOINT overrides https://huggingface.co; HF_TOKEN is sent for gated repos.\n"+
			"Prints the local path on stdout.")
	var dir string
	c.group("Options")
	modelsDirFlag(c, &dir)
	if done, st := c.parse(args, stdout, stderr, true); done {
		return st
	}
	if c.fs.NArg() != 1 {
		return c.usageErr(stderr, "want one model reference, hf.co/OWNER/REPO[:QUANT|/FILE.gguf]")
	}
	r, err := hub.ParseRef(c.fs.Arg(0))
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	hc, err := hubClient(dir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "memvanta pull: %v\n", err)
		return exitRuntime
	}
	p, err := hc.Pull(ctx, r)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "memvanta pull: interrupted; the partial download is kept and the next pull resumes it\n")
			return exitInterrupted
		}
		fmt.Fprintf(stderr, "memvanta pull: %v\n", err)
		return exitRuntime
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintln(w, p)
	return finishOutput(w, c.name, stderr)
}

// runLs lists the pulled models.
func runLs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("ls", "ls [--models-dir DIR] [--json]", "List the models pulled into the model directory.")
	var dir string
	var jsonOut bool
	c.group("Options")
	modelsDirFlag(c, &dir)
	c.boolVar(&jsonOut, "json", "print [{\"ref\", \"path\", \"size_bytes\"}, ...]")
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	hc, err := hubClient(dir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "memvanta ls: %v\n", err)
		return exitRuntime
	}
	es, err := hc.Entries()
	if err != nil {
		fmt.Fprintf(stderr, "memvanta ls: %v\n", err)
		return exitRuntime
	}
	w := bufio.NewWriter(stdout)
	if jsonOut {
		if es == nil {
			es = []hub.Entry{}
		}
		b, _ := json.MarshalIndent(es, "", "  ")
		w.Write(append(b, '\n'))
	} else {
		for _, e := range es {
			fmt.Fprintf(w, "%-60s %10.1f MiB  %s\n", e.Ref, mib(e.Size), e.Path)
		}
	}
	return finishOutput(w, c.name, stderr)
}

// runRm deletes a pulled model.
func runRm(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("rm", "rm [--models-dir DIR] hf.co/OWNER/REPO[:QUANT|/FILE.gguf] ...", "Delete pulled models from the model directory.")
	var dir string
	c.group("Options")
	modelsDirFlag(c, &dir)
	if done, st := c.parse(args, stdout, stderr, true); done {
		return st
	}
	if c.fs.NArg() == 0 {
		return c.usageErr(stderr, "want at least one model reference")
	}
	hc, err := hubClient(dir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "memvanta rm: %v\n", err)
		return exitRuntime
	}
	status := exitOK
	for _, a := range c.fs.Args() {
		r, err := hub.ParseRef(a)
		if err != nil {
			return c.usageErr(stderr, "%v", err)
		}
		p, err := hc.Remove(r)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(stderr, "memvanta rm: %s is not in %s\n", a, hc.Dir)
			status = exitRuntime
		case err != nil:
			fmt.Fprintf(stderr, "memvanta rm: %v\n", err)
			status = exitRuntime
		default:
			fmt.Fprintf(stderr, "removed %s\n", p)
		}
	}
	return status
}
