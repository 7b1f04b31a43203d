// Package regfile opens files that must be regular files (models,
// vocabularies) without ever blocking in open(2).
//
// Opening a FIFO for reading blocks until a writer appears, in the kernel,
// where neither SIGINT nor SIGTERM handled by the Go runtime can interrupt
// it: `memvanta generate -m fifo` hung and ignored Ctrl-C. Open refuses
// anything but a regular file before opening it, and opens with O_NONBLOCK
// so that a path swapped for a FIFO between the check and the open still
// returns at once (then fails the second check, on the opened descriptor).
package regfile

import (
	"fmt"
	"io/fs"
	"os"
)

// Open opens path read-only if it is a regular file (symbolic links are
// followed) and returns it with its size. Anything else (FIFO, socket,
// device, directory) is refused without blocking, with an error naming the
// path and what it is.
func Open(path string) (*os.File, int64, error) {
	if err := checkPath(path); err != nil {
		return nil, 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if err := check(path, st); err != nil {
		return nil, 0, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, 0, err
	}
	st2, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if err := check(path, st2); err != nil {
		f.Close()
		return nil, 0, err
	}
	if !os.SameFile(st, st2) {
		f.Close()
		return nil, 0, fmt.Errorf("%s: the file was replaced while being opened", path)
	}
	// Reads of a regular file never return EAGAIN, but clear the flag so
	// the descriptor behaves like any other (it may be mapped or handed on).
	if err := setBlocking(f); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st2.Size(), nil
}

// Check returns an error unless path names a regular file. It never opens
// the file.
func Check(path string) error {
	if err := checkPath(path); err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return check(path, st)
}

func check(path string, st fs.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s: not a regular file (%s); a model must be a regular file", path, kind(st.Mode()))
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "mode " + m.String()
}
