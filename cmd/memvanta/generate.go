package main

import (
	"context"
	"fmt"
	"io"
)

// runGenerate is a placeholder until its owner lands the real subcommand.
func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "memvanta generate: not built yet")
	return 1
}
