package main

import (
	"context"
	"fmt"
	"io"
)

// runBench is a placeholder until its owner lands the real subcommand.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "memvanta bench: not built yet")
	return 1
}
