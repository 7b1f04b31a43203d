// Package telemetry measures what memvanta reports beside every throughput
// figure: resident memory and page faults of this process.
package telemetry

import "time"

// Usage is a snapshot of getrusage(RUSAGE_SELF), or of its nearest
// equivalents on Windows (rss_windows.go).
type Usage struct {
	PeakRSS     int64 // bytes, ru_maxrss (KiB on Linux, bytes on macOS)
	MinorFaults int64
	MajorFaults int64
	CPU         time.Duration // user + system time of every thread so far
}

// PeakRSS returns the process's peak resident set size in bytes (0 if unknown).
func PeakRSS() int64 {
	u, err := Rusage()
	if err != nil {
		return 0
	}
	return u.PeakRSS
}
