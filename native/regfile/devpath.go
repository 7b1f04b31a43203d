package regfile

import (
	"fmt"
	"strings"
)

// deviceNamespace refuses a Windows path in the Win32 device namespace
// (\\.\name, \\?\GLOBALROOT\..., \\?\Volume{...}): pipes, consoles, disks
// and volumes, none of them a model file. \\?\C:\... and \\?\UNC\... are
// long-path spellings of ordinary files and pass. It has no build tag so
// its logic is tested on every OS; only Windows calls it.
func deviceNamespace(path string) error {
	p := strings.ReplaceAll(path, "/", `\`)
	if len(p) < 4 || p[0] != '\\' || p[1] != '\\' || (p[2] != '.' && p[2] != '?') || p[3] != '\\' {
		return nil
	}
	rest := p[4:]
	if p[2] == '?' {
		if len(rest) >= 3 && isLetter(rest[0]) && rest[1] == ':' && rest[2] == '\\' {
			return nil // \\?\C:\...
		}
		if len(rest) >= 4 && strings.EqualFold(rest[:4], `UNC\`) {
			return nil // \\?\UNC\server\share\...
		}
	}
	return fmt.Errorf("%s: not a regular file (a device path); a model must be a regular file", path)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
