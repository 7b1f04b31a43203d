package regfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusesNonRegularWindows: the console and null devices are refused by
// their type (GetFileType, through os.Stat), device-namespace paths by
// name, directories as elsewhere; a regular file opens with its size.
func TestRefusesNonRegularWindows(t *testing.T) {
	dir := t.TempDir()
	for path, what := range map[string]string{
		"NUL":              "character device",
		`\\.\NUL`:          "device path",
		`\\.\pipe\nothing`: "device path",
		dir:                "directory",
	} {
		if f, _, err := Open(path); err == nil || !strings.Contains(err.Error(), what) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open(%s): %v, want a refusal naming a %s", path, err, what)
		}
		if err := Check(path); err == nil {
			t.Errorf("Check(%s) passed", path)
		}
	}
	reg := filepath.Join(dir, "f")
	if err := os.WriteFile(reg, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, size, err := Open(reg)
	if err != nil || size != 5 {
		t.Fatalf("%s: size %d, %v", reg, size, err)
	}
	f.Close()
}
