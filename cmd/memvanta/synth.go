package main

import (
	"context"
	"fmt"
	"io"
)

// runSynth is a placeholder until its owner lands the real subcommand.
func runSynth(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "memvanta synth: not built yet")
	return 1
}
