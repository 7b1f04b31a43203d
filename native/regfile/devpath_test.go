package regfile

import (
	"strings"
	"testing"
)

func TestDeviceNamespace(t *testing.T) {
	refused := []string{
		`\\.\PhysicalDrive0`, `\\.\C:`, `\\.\pipe\model`, `\\.\NUL`, `//./pipe/model`,
		`\\?\GLOBALROOT\Device\HarddiskVolume1\m.gguf`, `\\?\Volume{01234567-89ab-cdef-0123-456789abcdef}\m.gguf`,
	}
	for _, p := range refused {
		err := deviceNamespace(p)
		if err == nil || !strings.Contains(err.Error(), "device path") || !strings.Contains(err.Error(), p) {
			t.Errorf("deviceNamespace(%q) = %v, want a device-path refusal naming the path", p, err)
		}
	}
	allowed := []string{
		`C:\models\m.gguf`, `m.gguf`, `\\?\C:\models\m.gguf`, `\\?\unc\server\share\m.gguf`,
		`\\server\share\m.gguf`, `/tmp/m.gguf`, `\\`, `..\m.gguf`,
	}
	for _, p := range allowed {
		if err := deviceNamespace(p); err != nil {
			t.Errorf("deviceNamespace(%q) = %v, want nil", p, err)
		}
	}
}
