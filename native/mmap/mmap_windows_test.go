package mmap

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// unsupportedAdvice: a view of a file has no per-range access-pattern
// hints on Windows (mmap_windows.go).
func unsupportedAdvice(a Advice) bool { return a == Normal || a == Sequential || a == Random }

// truncateMapped checks that Windows refuses to truncate a file while a
// view of it exists (ERROR_USER_MAPPED_FILE), the reason truncation faults
// cannot happen there, and reports false: nothing past the end to read.
func truncateMapped(t *testing.T, p string, size int64) bool {
	t.Helper()
	err := os.Truncate(p, size)
	if !errors.Is(err, windows.ERROR_USER_MAPPED_FILE) {
		t.Fatalf("truncating a mapped file: %v, want ERROR_USER_MAPPED_FILE", err)
	}
	return false
}

// TestFaultRecoveryWindows: on Windows the faults Copy and Touch recover
// from are access violations and in-page errors (an I/O error under a
// view). Reading reserved, uncommitted memory raises the former at a known
// address, which must come back as ErrFault, as SIGBUS does elsewhere.
func TestFaultRecoveryWindows(t *testing.T) {
	const n = 64 << 10
	addr, err := windows.VirtualAlloc(0, n, windows.MEM_RESERVE, windows.PAGE_NOACCESS)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.VirtualFree(addr, 0, windows.MEM_RELEASE)
	b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), addr)), n)
	if err := Copy(make([]byte, 16), b[4096:]); !errors.Is(err, ErrFault) {
		t.Errorf("Copy from reserved memory: %v, want ErrFault", err)
	}
	if _, err := Touch(b); !errors.Is(err, ErrFault) {
		t.Errorf("Touch of reserved memory: %v, want ErrFault", err)
	}
}

// TestViewHintsKeepData: PrefetchVirtualMemory, the touch of Populate and
// VirtualUnlock (DontNeed) on a view leave its contents as the file's, on
// whole and partial pages, and a view of a file holds it open for reading.
func TestViewHintsKeepData(t *testing.T) {
	ps := os.Getpagesize()
	data := pattern(40*ps + 123)
	m, err := Open(writeTemp(t, data))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, a := range []Advice{WillNeed, Populate, DontNeed, Populate} {
		if err := m.Advise(0, int64(len(data)), a); err != nil {
			t.Fatalf("Advise %v: %v", a, err)
		}
		if !bytes.Equal(m.Bytes(), data) {
			t.Fatalf("view differs from file after %v", a)
		}
	}
}
