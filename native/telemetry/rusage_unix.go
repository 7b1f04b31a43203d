//go:build linux || darwin

package telemetry

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Rusage reads this process's resource usage.
func Rusage() (Usage, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return Usage{}, fmt.Errorf("telemetry: getrusage: %w", err)
	}
	return Usage{PeakRSS: int64(ru.Maxrss) * maxrssUnit, MinorFaults: int64(ru.Minflt), MajorFaults: int64(ru.Majflt),
		CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}, nil
}
