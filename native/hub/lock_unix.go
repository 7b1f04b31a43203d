//go:build unix

package hub

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f without waiting
// (flock(2)); it goes away with the descriptor.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// replaceError returns err: a rename over an existing file replaces it on
// Unix even while another process has it open or mapped.
func replaceError(err error, _, _ string) error { return err }
