package main

import (
	"fmt"
	"io"
	"os"

	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/wasmhost/internal/guestmain"
	"github.com/memvanta/memvanta/wasmhost/kvec"
)

// runKernels reads a kvec batch from stdin, runs it on the portable scalar
// kernels (the only path wasm has) and writes the results to stdout.
func runKernels(args []string) int {
	if len(args) != 0 {
		fmt.Fprintf(os.Stderr, "guest: kernels takes no arguments, got %q\n", args)
		return guestmain.ExitUsage
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "guest: reading kernel vectors: %v\n", err)
		return guestmain.ExitFail
	}
	cs, err := kvec.DecodeCases(in)
	if err != nil {
		fmt.Fprintf(os.Stderr, "guest: %v\n", err)
		return guestmain.ExitFail
	}
	p := kernels.NewPool(1)
	defer p.Close()
	out := kvec.EncodeResults(kvec.RunAll(kernels.Scalar(), p, cs))
	if _, err := os.Stdout.Write(out); err != nil {
		fmt.Fprintf(os.Stderr, "guest: writing results: %v\n", err)
		return guestmain.ExitFail
	}
	return guestmain.ExitOK
}
