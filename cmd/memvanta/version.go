package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/memvanta/memvanta/kernels"
)

// runVersion prints the module version and VCS commit the binary was built
// from (debug.ReadBuildInfo), the Go version, and the kernel path this CPU
// selects (or why the MEMVANTA_KERNELS override is unusable).
func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("version", "version", "Print the version, commit, Go version and kernel path.")
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	version, commit, when, modified := "(unknown)", "(unknown)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if modified {
		commit += " (modified)"
	}
	if when != "" {
		commit += " " + when
	}
	kpath := ""
	if k, err := kernels.Selected(); err != nil {
		kpath = "unavailable: " + err.Error()
	} else {
		kpath = k.Name
	}
	fmt.Fprintf(stdout, "memvanta %s\ncommit:  %s\ngo:      %s %s/%s\nkernels: %s\n",
		version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH, kpath)
	return exitOK
}
