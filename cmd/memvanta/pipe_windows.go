package main

import (
	"errors"

	"golang.org/x/sys/windows"
)

// closedPipeOS reports the Windows errors of a write to a pipe whose reader
// went away (… | more stopped early): WriteFile fails with ERROR_NO_DATA
// ("the pipe is being closed") or ERROR_BROKEN_PIPE, or
// ERROR_PIPE_NOT_CONNECTED for a disconnected named pipe (and under Wine,
// for an anonymous one), never EPIPE, and no signal is raised.
func closedPipeOS(err error) bool {
	return errors.Is(err, windows.ERROR_NO_DATA) || errors.Is(err, windows.ERROR_BROKEN_PIPE) ||
		errors.Is(err, windows.ERROR_PIPE_NOT_CONNECTED)
}
