package main

import (
	"context"
	"fmt"
	"io"
)

// runInspect is a placeholder until its owner lands the real subcommand.
func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "memvanta inspect: not built yet")
	return 1
}
