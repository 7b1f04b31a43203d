package wasmhost

import (
	"io"
	"io/fs"
	"sync"
	"time"
)

// guestFileName is the only name in the guest's filesystem. The host path is
// never shown to the guest: it needs none of it, and error texts then cannot
// differ between the native and the sandboxed run.
const guestFileName = "model.gguf"

// oneFileFS is a read-only fs.FS whose root directory holds exactly one
// regular file. Mounting the file's directory would expose its siblings;
// this exposes nothing else, and every write is refused by wazero's fs.FS
// adapter (fs.FS has no write methods).
type oneFileFS struct {
	r    io.ReaderAt
	size int64
}

func (f oneFileFS) Open(name string) (fs.File, error) {
	switch name {
	case ".":
		return &oneFileDir{fsys: f}, nil
	case guestFileName:
		return &oneFile{SectionReader: io.NewSectionReader(f.r, 0, f.size)}, nil
	}
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// oneFile supports Read, ReadAt and Seek (through SectionReader), which is
// what wazero needs for fd_read, fd_pread and fd_seek. Close does not close
// the host file: the host owns it and closes it after the run.
type oneFile struct {
	*io.SectionReader
}

func (f *oneFile) Stat() (fs.FileInfo, error) {
	return fileInfo{name: guestFileName, size: f.Size()}, nil
}
func (f *oneFile) Close() error { return nil }

type oneFileDir struct {
	fsys oneFileFS
	done bool
}

func (d *oneFileDir) Stat() (fs.FileInfo, error) { return fileInfo{name: ".", dir: true}, nil }
func (d *oneFileDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: ".", Err: fs.ErrInvalid}
}
func (d *oneFileDir) Close() error { return nil }

// ReadDir follows fs.ReadDirFile: with n > 0 it returns io.EOF at the end.
func (d *oneFileDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.done {
		if n > 0 {
			return nil, io.EOF
		}
		return nil, nil
	}
	d.done = true
	return []fs.DirEntry{fs.FileInfoToDirEntry(fileInfo{name: guestFileName, size: d.fsys.size})}, nil
}

type fileInfo struct {
	name string
	size int64
	dir  bool
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

// ModTime is fixed so nothing about the host file but its bytes reaches the
// guest.
func (i fileInfo) ModTime() time.Time { return time.Unix(0, 0) }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }

// guardedReader lets the host revoke an abandoned guest's access to the
// caller's reader (which may be an mmap the caller unmaps once Inspect
// returns): close waits for reads in flight, then every read fails.
type guardedReader struct {
	mu     sync.RWMutex
	r      io.ReaderAt
	closed bool
}

func (g *guardedReader) ReadAt(p []byte, off int64) (int, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return 0, errAbandoned
	}
	return g.r.ReadAt(p, off)
}

func (g *guardedReader) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}
