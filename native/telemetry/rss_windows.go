package telemetry

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows has no getrusage: the working set is its resident set, and
// GetProcessMemoryInfo reports it now and at its peak with the page-fault
// count. That count includes soft faults (pages found in memory, on the
// standby list or shared) as well as hard ones read from disk; Windows
// does not split them per process, so MinorFaults holds the total and
// MajorFaults stays 0. CPU time comes from GetProcessTimes.

var (
	modkernel32              = windows.NewLazySystemDLL("kernel32.dll")
	procGetProcessMemoryInfo = modkernel32.NewProc("K32GetProcessMemoryInfo")
)

// processMemoryCounters is PROCESS_MEMORY_COUNTERS (psapi.h).
type processMemoryCounters struct {
	cb                         uint32
	PageFaultCount             uint32
	PeakWorkingSetSize         uintptr
	WorkingSetSize             uintptr
	QuotaPeakPagedPoolUsage    uintptr
	QuotaPagedPoolUsage        uintptr
	QuotaPeakNonPagedPoolUsage uintptr
	QuotaNonPagedPoolUsage     uintptr
	PagefileUsage              uintptr
	PeakPagefileUsage          uintptr
}

func memoryInfo() (processMemoryCounters, error) {
	var c processMemoryCounters
	if err := procGetProcessMemoryInfo.Find(); err != nil {
		return c, fmt.Errorf("telemetry: %w", err)
	}
	c.cb = uint32(unsafe.Sizeof(c))
	r, _, err := procGetProcessMemoryInfo.Call(uintptr(windows.CurrentProcess()), uintptr(unsafe.Pointer(&c)), uintptr(c.cb))
	if r == 0 {
		return c, fmt.Errorf("telemetry: GetProcessMemoryInfo: %w", err)
	}
	return c, nil
}

// Rusage reads this process's resource usage.
func Rusage() (Usage, error) {
	c, err := memoryInfo()
	if err != nil {
		return Usage{}, err
	}
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return Usage{}, fmt.Errorf("telemetry: GetProcessTimes: %w", err)
	}
	// FILETIME durations count 100 ns intervals.
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return Usage{PeakRSS: int64(c.PeakWorkingSetSize), MinorFaults: int64(c.PageFaultCount),
		CPU: time.Duration((ticks(kernel) + ticks(user)) * 100)}, nil
}

// CurrentRSS returns the working set size now.
func CurrentRSS() (int64, error) {
	c, err := memoryInfo()
	if err != nil {
		return 0, err
	}
	return int64(c.WorkingSetSize), nil
}
