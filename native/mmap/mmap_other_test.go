//go:build !windows

package mmap

import (
	"os"
	"testing"
)

// unsupportedAdvice: Linux and macOS have a madvise for every Advice.
func unsupportedAdvice(Advice) bool { return false }

// truncateMapped truncates the mapped file at p to size; the caller then
// checks that reading past the new end faults. It reports true.
func truncateMapped(t *testing.T, p string, size int64) bool {
	t.Helper()
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	return true
}
