package main

import (
	"context"
	"fmt"
	"os"

	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/wasmhost/job"
)

// runForward runs a greedy pass of the model in the preopened file on the
// portable scalar kernels and writes job.Forward's binary output.
func runForward(args []string) int {
	o, path, err := job.ParseForwardArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "guest: %v\n", err)
		return exitUsage
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if err := job.Forward(context.Background(), os.Stdout, f, st.Size(), o, kernels.Scalar()); err != nil {
		return fail(err)
	}
	return exitOK
}
