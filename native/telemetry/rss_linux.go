package telemetry

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// maxrssUnit is ru_maxrss's unit: KiB on Linux (getrusage(2)).
const maxrssUnit = 1024

// CurrentRSS returns the resident set size now, from /proc/self/status VmRSS.
func CurrentRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("telemetry: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(string(f[0]), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("telemetry: VmRSS %q: %w", f[0], err)
				}
				return kb * 1024, nil
			}
		}
	}
	return 0, fmt.Errorf("telemetry: no VmRSS in /proc/self/status")
}
