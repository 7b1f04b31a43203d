package hub

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive lock on f without waiting (LockFileEx with
// LOCKFILE_FAIL_IMMEDIATELY); it goes away when the handle is closed.
// Windows locks are mandatory for the locked bytes, so the lock covers one
// byte far past any file's end (locking past the end is allowed): it keeps
// a second pull out, while the download's own reads and writes, and those
// of anyone inspecting the .part, touch no locked byte.
func lockFile(f *os.File) error {
	ol := windows.Overlapped{Offset: 0xFFFFFFFF, OffsetHigh: 0x7FFFFFFF}
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
}

// replaceError explains a failed rename of the verified download over an
// existing file: unlike Unix, Windows cannot replace a file that another
// process has open or mapped (a running memvanta serving that model). The
// download is complete and kept, so pulling again once the file is free
// finishes without downloading.
func replaceError(err error, dst, part string) error {
	if !errors.Is(err, windows.ERROR_ACCESS_DENIED) && !errors.Is(err, windows.ERROR_SHARING_VIOLATION) &&
		!errors.Is(err, windows.ERROR_USER_MAPPED_FILE) {
		return err
	}
	if _, serr := os.Stat(dst); serr != nil {
		return err
	}
	return fmt.Errorf("cannot replace %s, which another process has open (a running memvanta using this model?); the verified download is kept in %s: stop that process and pull again: %w", dst, part, err)
}
