// Package store gives bounded views of a mapped GGUF file's tensors: a
// tensor, or a range of its rows, as a zero-copy slice of the mapping or as
// a copy into a caller's buffer. Nothing here ever copies the whole model;
// every access is bounded by one tensor's extent, checked against the file.
package store

import (
	"fmt"
	"io"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/native/mmap"
)

// Tensor is a tensor's absolute location in the file and its row geometry.
type Tensor struct {
	Info    gguf.TensorInfo
	Off     int64 // absolute file offset
	Rows    int64 // product of Dims[1:]
	RowSize int64 // bytes per row (Dims[0] elements)
}

// Store indexes a file's tensors over its mapping.
type Store struct {
	m       *mmap.Map
	tensors map[string]*Tensor
}

// New indexes tensors (offsets relative to dataOffset, as in a GGUF tensor
// table) over m, rejecting any tensor whose extent or row geometry does not
// fit the file, so later accesses need no re-checks.
func New(m *mmap.Map, dataOffset int64, tensors []gguf.TensorInfo) (*Store, error) {
	s := &Store{m: m, tensors: make(map[string]*Tensor, len(tensors))}
	size := m.Size()
	for _, ti := range tensors {
		if len(ti.Dims) == 0 {
			return nil, fmt.Errorf("store: tensor %q has no dims", ti.Name)
		}
		rs, err := ggml.RowSize(ti.Type, ti.Dims[0])
		if err != nil {
			return nil, fmt.Errorf("store: tensor %q: %w", ti.Name, err)
		}
		rows := uint64(1)
		for _, d := range ti.Dims[1:] {
			rows *= d
		}
		if rs == 0 || rows == 0 || ti.Size/rs != rows || ti.Size%rs != 0 {
			return nil, fmt.Errorf("store: tensor %q: size %d is not %d rows of %d bytes", ti.Name, ti.Size, rows, rs)
		}
		if dataOffset < 0 || ti.Offset > uint64(size) || uint64(dataOffset) > uint64(size)-ti.Offset ||
			ti.Size > uint64(size)-uint64(dataOffset)-ti.Offset {
			return nil, fmt.Errorf("store: tensor %q: data [%d,+%d) past end of %d-byte file", ti.Name, uint64(dataOffset)+ti.Offset, ti.Size, size)
		}
		if _, dup := s.tensors[ti.Name]; dup {
			return nil, fmt.Errorf("store: duplicate tensor %q", ti.Name)
		}
		s.tensors[ti.Name] = &Tensor{Info: ti, Off: dataOffset + int64(ti.Offset), Rows: int64(rows), RowSize: int64(rs)}
	}
	return s, nil
}

// Map is the underlying mapping.
func (s *Store) Map() *mmap.Map { return s.m }

// Tensor looks a tensor up by name.
func (s *Store) Tensor(name string) (*Tensor, bool) {
	t, ok := s.tensors[name]
	return t, ok
}

func (s *Store) rows(name string, r0, r1 int64) (*Tensor, int64, int64, error) {
	t, ok := s.tensors[name]
	if !ok {
		return nil, 0, 0, fmt.Errorf("store: no tensor %q", name)
	}
	if r0 < 0 || r1 < r0 || r1 > t.Rows {
		return nil, 0, 0, fmt.Errorf("store: tensor %q: rows [%d,%d) outside [0,%d)", name, r0, r1, t.Rows)
	}
	return t, t.Off + r0*t.RowSize, (r1 - r0) * t.RowSize, nil
}

// Bytes is the whole tensor as a zero-copy slice of the mapping.
func (s *Store) Bytes(name string) ([]byte, error) {
	t, ok := s.tensors[name]
	if !ok {
		return nil, fmt.Errorf("store: no tensor %q", name)
	}
	return s.m.Slice(t.Off, int64(t.Info.Size))
}

// Rows is rows [r0, r1) of a tensor as a zero-copy slice of the mapping.
func (s *Store) Rows(name string, r0, r1 int64) ([]byte, error) {
	_, off, n, err := s.rows(name, r0, r1)
	if err != nil {
		return nil, err
	}
	return s.m.Slice(off, n)
}

// CopyRows copies rows [r0, r1) into dst out of the mapping, fault-protected:
// the pages it touches become part of this process's RSS (they are mapped).
func (s *Store) CopyRows(name string, r0, r1 int64, dst []byte) error {
	_, off, n, err := s.rows(name, r0, r1)
	if err != nil {
		return err
	}
	if int64(len(dst)) != n {
		return fmt.Errorf("store: tensor %q rows [%d,%d): dst is %d bytes, want %d", name, r0, r1, len(dst), n)
	}
	if _, err := s.m.ReadAt(dst, off); err != nil {
		return fmt.Errorf("store: tensor %q: %w", name, err)
	}
	return nil
}

// ReadRows copies rows [r0, r1) into dst with pread, bypassing the mapping:
// the data passes through the page cache but never enters this process's
// page tables, so it adds nothing to RSS beyond dst. A truncated file gives
// a short read, reported as an error.
func (s *Store) ReadRows(name string, r0, r1 int64, dst []byte) error {
	_, off, n, err := s.rows(name, r0, r1)
	if err != nil {
		return err
	}
	if int64(len(dst)) != n {
		return fmt.Errorf("store: tensor %q rows [%d,%d): dst is %d bytes, want %d", name, r0, r1, len(dst), n)
	}
	return s.ReadAt(dst, off, name)
}

// ReadAt preads len(dst) bytes at absolute offset off; what names the data
// for the error.
func (s *Store) ReadAt(dst []byte, off int64, what string) error {
	got, err := s.m.File().ReadAt(dst, off)
	if err == io.EOF && got == len(dst) {
		err = nil
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("store: %s: %s: read %d bytes at %d (got %d; file truncated?): %w", s.m.Path(), what, len(dst), off, got, err)
	}
	return nil
}

// Advise applies a hint to the whole extent of each named tensor.
func (s *Store) Advise(names []string, a mmap.Advice) error {
	for _, n := range names {
		t, ok := s.tensors[n]
		if !ok {
			return fmt.Errorf("store: no tensor %q", n)
		}
		if err := s.m.Advise(t.Off, int64(t.Info.Size), a); err != nil {
			return fmt.Errorf("store: tensor %q: %w", n, err)
		}
	}
	return nil
}
