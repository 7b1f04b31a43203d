package weights

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/windows"
)

// skipIfTruncationRefused checks that Windows refuses to truncate the model
// file while it is mapped (ERROR_USER_MAPPED_FILE), and skips the test:
// the truncation faults it provokes elsewhere cannot happen there.
func skipIfTruncationRefused(t *testing.T, path string) {
	t.Helper()
	err := os.Truncate(path, 0)
	if !errors.Is(err, windows.ERROR_USER_MAPPED_FILE) {
		t.Fatalf("truncating a mapped model: %v, want ERROR_USER_MAPPED_FILE", err)
	}
	t.Skip("Windows refuses to truncate a mapped file: no truncation faults to recover from")
}
