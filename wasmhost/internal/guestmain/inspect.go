package guestmain

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/memvanta/memvanta/wasmhost/job"
)

// Inspect parses the one preopened file (or stdin for "-") and writes the
// report to stdout. On failure stdout stays empty and stderr carries
// job.EncodeError, exit status 1, which the host turns back into an error
// equal to the native one.
func Inspect(args []string) int {
	o, path, err := job.ParseArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "guest: %v\n", err)
		return ExitUsage
	}
	var r io.ReaderAt
	var size int64
	if path == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return Fail(fmt.Errorf("reading stdin: %w", err))
		}
		r, size = bytes.NewReader(b), int64(len(b))
	} else {
		f, err := os.Open(path)
		if err != nil {
			return Fail(err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return Fail(err)
		}
		r, size = f, st.Size()
	}
	if err := job.Inspect(os.Stdout, r, size, o); err != nil {
		return Fail(err)
	}
	return ExitOK
}

// Fail reports a failed job the way the host decodes it: err as
// job.EncodeError's JSON on stderr, exit status ExitFail.
func Fail(err error) int {
	os.Stderr.Write(job.EncodeError(err))
	return ExitFail
}
