package weights

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/windows"
)

// truncationRefused checks that Windows refuses to truncate the model file
// while it is mapped (ERROR_USER_MAPPED_FILE) and reports true: the
// truncation faults the caller would provoke cannot happen there.
func truncationRefused(t *testing.T, path string) bool {
	t.Helper()
	err := os.Truncate(path, 0)
	if !errors.Is(err, windows.ERROR_USER_MAPPED_FILE) {
		t.Fatalf("truncating a mapped model: %v, want ERROR_USER_MAPPED_FILE", err)
	}
	return true
}
