// Package telemetry measures what memvanta reports beside every throughput
// figure: resident memory and page faults of this process.
package telemetry

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Usage is a snapshot of getrusage(RUSAGE_SELF).
type Usage struct {
	PeakRSS     int64 // bytes, ru_maxrss
	MinorFaults int64
	MajorFaults int64
	CPU         time.Duration // user + system time of every thread so far
}

// Rusage reads this process's resource usage.
func Rusage() (Usage, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return Usage{}, fmt.Errorf("telemetry: getrusage: %w", err)
	}
	return Usage{PeakRSS: int64(ru.Maxrss) * 1024, MinorFaults: int64(ru.Minflt), MajorFaults: int64(ru.Majflt),
		CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}, nil
}

// PeakRSS returns the process's peak resident set size in bytes (0 if unknown).
func PeakRSS() int64 {
	u, err := Rusage()
	if err != nil {
		return 0
	}
	return u.PeakRSS
}

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
