package main

import "testing"

// mkfifo skips: Windows has no FIFOs in the file system (named pipes live
// under \\.\pipe\, which native/regfile refuses by name).
func mkfifo(t *testing.T, _ string) {
	t.Helper()
	t.Skip("no FIFOs on Windows")
}
