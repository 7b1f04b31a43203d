package main

import (
	"context"
	"fmt"
	"os"

	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/wasmhost/forwardjob"
	"github.com/memvanta/memvanta/wasmhost/internal/guestmain"
)

// runForward runs a greedy pass of the model in the preopened file on the
// portable scalar kernels and writes forwardjob.Forward's binary output.
func runForward(args []string) int {
	o, path, err := forwardjob.ParseForwardArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "guest: %v\n", err)
		return guestmain.ExitUsage
	}
	f, err := os.Open(path)
	if err != nil {
		return guestmain.Fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return guestmain.Fail(err)
	}
	if err := forwardjob.Forward(context.Background(), os.Stdout, f, st.Size(), o, kernels.Scalar()); err != nil {
		return guestmain.Fail(err)
	}
	return guestmain.ExitOK
}
