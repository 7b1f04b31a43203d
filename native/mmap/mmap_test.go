package mmap

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"
)

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

func TestReadAtAndSlice(t *testing.T) {
	ps := os.Getpagesize()
	data := pattern(3*ps + 123)
	m, err := Open(writeTemp(t, data))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Size() != int64(len(data)) || !bytes.Equal(m.Bytes(), data) {
		t.Fatalf("mapping differs from file")
	}
	tests := []struct {
		off, n  int64
		wantN   int
		wantEOF bool
	}{
		{0, 10, 10, false},
		{int64(ps) - 5, 10, 10, false},
		{int64(len(data)) - 4, 10, 4, true},
		{int64(len(data)), 1, 0, true},
	}
	for _, tc := range tests {
		p := make([]byte, tc.n)
		n, err := m.ReadAt(p, tc.off)
		if n != tc.wantN || (err == io.EOF) != tc.wantEOF || (err != nil && err != io.EOF) {
			t.Errorf("ReadAt(off=%d,n=%d) = %d, %v", tc.off, tc.n, n, err)
		}
		if !bytes.Equal(p[:n], data[tc.off:tc.off+int64(n)]) {
			t.Errorf("ReadAt(off=%d) wrong bytes", tc.off)
		}
	}
	if _, err := m.Slice(int64(len(data))-2, 3); err == nil {
		t.Errorf("Slice past end: no error")
	}
	s, err := m.Slice(5, 7)
	if err != nil || !bytes.Equal(s, data[5:12]) || cap(s) != 7 {
		t.Errorf("Slice(5,7) = %v (cap %d), %v", s, cap(s), err)
	}
}

func TestEmptyFile(t *testing.T) {
	m, err := Open(writeTemp(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Size() != 0 || len(m.Bytes()) != 0 {
		t.Fatal("empty file mapped non-empty")
	}
	if _, err := m.ReadAt(make([]byte, 1), 0); err != io.EOF {
		t.Fatalf("ReadAt on empty = %v, want EOF", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("directory: no error")
	}
}

func TestAdvise(t *testing.T) {
	ps := os.Getpagesize()
	data := pattern(8*ps + 17)
	m, err := Open(writeTemp(t, data))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, a := range []Advice{Normal, Sequential, Random, WillNeed, Populate, DontNeed} {
		// Unaligned ranges, including the partial last page. Advice this
		// OS has no mechanism for must be refused as unsupported, never
		// silently ignored.
		check := func(what string, err error) {
			t.Helper()
			if unsupportedAdvice(a) {
				if !errors.Is(err, errors.ErrUnsupported) {
					t.Errorf("Advise %v%s: %v, want errors.ErrUnsupported", a, what, err)
				}
			} else if err != nil {
				t.Errorf("Advise %v%s: %v", a, what, err)
			}
		}
		check("", m.Advise(int64(ps)+3, int64(ps)*2+9, a))
		check(" on last page", m.Advise(int64(len(data))-5, 5, a))
	}
	if err := m.Advise(int64(len(data))-5, 6, WillNeed); err == nil {
		t.Error("Advise past end: no error")
	}
	if err := m.Advise(0, 1, Advice(99)); err == nil {
		t.Error("unknown advice: no error")
	}
	// The data is unchanged after DONTNEED: the page cache still holds it.
	if !bytes.Equal(m.Bytes(), data) {
		t.Error("data changed after DontNeed")
	}
}

// TestTruncatedUnderMapping truncates the file after mapping it: reading a
// page past the new end raises SIGBUS, which Copy/ReadAt/Touch must turn
// into ErrFault rather than crash the test binary.
func TestTruncatedUnderMapping(t *testing.T) {
	ps := os.Getpagesize()
	data := pattern(16 * ps)
	p := writeTemp(t, data)
	m, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !truncateMapped(t, p, int64(2*ps)) {
		return
	}
	buf := make([]byte, 4*ps)
	if _, err := m.ReadAt(buf, int64(8*ps)); !errors.Is(err, ErrFault) {
		t.Fatalf("ReadAt past truncation: err = %v, want ErrFault", err)
	}
	if err := Copy(buf[:ps], m.Bytes()[10*ps:]); !errors.Is(err, ErrFault) {
		t.Fatalf("Copy past truncation: err = %v, want ErrFault", err)
	}
	if _, err := Touch(m.Bytes()[4*ps:]); !errors.Is(err, ErrFault) {
		t.Fatalf("Touch past truncation: err = %v, want ErrFault", err)
	}
	// The part still backed by the file reads fine.
	if _, err := m.ReadAt(buf[:ps], 0); err != nil || !bytes.Equal(buf[:ps], data[:ps]) {
		t.Fatalf("ReadAt of surviving prefix: %v", err)
	}
	if sz, err := m.CurrentSize(); err != nil || sz != int64(2*ps) {
		t.Fatalf("CurrentSize = %d, %v", sz, err)
	}
}

func TestGuardRepanicsNonFault(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("non-fault panic swallowed")
		}
	}()
	_ = guard(func() { panic("boom") })
}

// TestAlignedMapping: on Linux, files of at least 2 MiB are mapped at a 2 MiB
// boundary (so large page-cache folios can be PMD-mapped); the contents and
// the fault protection are the same as for the plain mapping.
func TestAlignedMapping(t *testing.T) {
	data := pattern(3<<20 + 4097)
	p := writeTemp(t, data)
	m, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if addr := uintptr(unsafe.Pointer(unsafe.SliceData(m.Bytes()))); addr%hugeAlign != 0 && runtime.GOOS == "linux" {
		t.Fatalf("mapping at %#x is not 2 MiB aligned", addr)
	}
	if !bytes.Equal(m.Bytes(), data) || len(m.Bytes()) != len(data) {
		t.Fatal("aligned mapping differs from file")
	}
	if !truncateMapped(t, p, 1<<20) {
		return
	}
	if _, err := m.ReadAt(make([]byte, 100), 2<<20); !errors.Is(err, ErrFault) {
		t.Fatalf("ReadAt past truncation: %v, want ErrFault", err)
	}
}
