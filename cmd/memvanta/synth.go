package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/native/regfile"
)

// runSynth writes a synthetic llama GGUF (see core/synth for the weight
// design). The file appears under its name only when complete: it is
// written to OUT.tmp and renamed.
//
// Ctrl-C removes the partial file and exits 130 with one line saying so.
func runSynth(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("synth", "synth -o OUT.gguf [flags]",
		"Write a synthetic GGUF with seeded random weights (streamed: a 7B-shaped file is never held in memory).")
	c.group("Output")
	var out string
	var quiet bool
	c.stringVar(&out, "o|output", "FILE", "", "output file (required); written as FILE.tmp and renamed when complete")
	c.boolVar(&quiet, "q|quiet", "no progress on stderr")
	c.otherTitle = "Model shape and weights"
	sf := synth.RegisterFlags(c.fs)
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	if out == "" {
		return c.usageErr(stderr, "-o OUT.gguf is required")
	}
	cfg, err := sf.Config()
	if err != nil {
		return c.usageErr(stderr, "%s", strings.TrimPrefix(err.Error(), "synth: "))
	}
	cfg.Quantize = kernels.Quantize
	if *sf.VocabFrom != "" {
		vf, err := synthOpenVocab(*sf.VocabFrom)
		if err != nil {
			fmt.Fprintf(stderr, "memvanta synth: %v\n", err)
			return exitRuntime
		}
		cfg.Vocab = vf
	}
	// A shape the writer refuses is a usage error, found before any file
	// is created.
	if _, _, err := synth.Header(cfg); err != nil {
		return c.usageErr(stderr, "%s", strings.TrimPrefix(err.Error(), "synth: "))
	}
	if err := writeSynth(ctx, out, cfg, quiet, stderr); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			fmt.Fprintf(stderr, "memvanta synth: interrupted; %s was not written (partial output removed)\n", filepath.Clean(out))
			return exitInterrupted
		}
		fmt.Fprintf(stderr, "memvanta synth: %s\n", strings.TrimPrefix(err.Error(), "synth: "))
		return exitRuntime
	}
	return exitOK
}

func synthOpenVocab(path string) (*gguf.File, error) {
	fh, size, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := gguf.Parse(fh, size, gguf.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

func writeSynth(ctx context.Context, out string, cfg synth.Config, quiet bool, stderr io.Writer) (err error) {
	tmp := out + ".tmp"
	fh, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			fh.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(fh, 1<<20)
	var last time.Time
	progress := func(done, total uint64, tensor string) {
		if quiet || total == 0 {
			return
		}
		if now := time.Now(); now.Sub(last) >= 500*time.Millisecond || done == total {
			last = now
			pct := done * 100 / total
			fmt.Fprintf(stderr, "\rsynth: %3d%% %8.1f / %.1f MiB  %-32s", pct, float64(done)/(1<<20), float64(total)/(1<<20), tensor)
		}
	}
	if err := synth.Write(ctx, bw, cfg, progress); err != nil {
		if !quiet && last != (time.Time{}) {
			fmt.Fprintln(stderr) // end the progress line
		}
		return err
	}
	if !quiet {
		fmt.Fprintln(stderr)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := fh.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(stderr, "synth: wrote %s\n", filepath.Clean(out))
	}
	return nil
}
