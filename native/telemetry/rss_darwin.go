package telemetry

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxrssUnit is ru_maxrss's unit: bytes on macOS (its getrusage(2)), where
// Linux counts KiB.
const maxrssUnit = 1

// procTaskInfo is struct proc_taskinfo (XNU bsd/sys/proc_info.h), what
// proc_pidinfo(pid, PROC_PIDTASKINFO, ...) in libproc returns.
type procTaskInfo struct {
	VirtualSize      uint64
	ResidentSize     uint64
	TotalUser        uint64
	TotalSystem      uint64
	ThreadsUser      uint64
	ThreadsSystem    uint64
	Policy           int32
	Faults           int32
	Pageins          int32
	CowFaults        int32
	MessagesSent     int32
	MessagesReceived int32
	SyscallsMach     int32
	SyscallsUnix     int32
	Csw              int32
	Threadnum        int32
	Numrunning       int32
	Priority         int32
}

// __proc_info call number and flavor (XNU bsd/sys/proc_info.h).
const (
	procInfoCallPIDInfo = 2
	procPIDTaskInfo     = 4
)

// CurrentRSS returns the resident set size now: pti_resident_size from
// proc_pidinfo(getpid(), PROC_PIDTASKINFO), the figure ps and top show.
// Go does not link libproc without cgo, so this makes the system call
// libproc's proc_pidinfo makes (__proc_info, SYS_proc_info), with an
// explicit buffer size that the kernel checks before copying out.
func CurrentRSS() (int64, error) {
	var ti procTaskInfo
	//lint:ignore SA1019 libproc's proc_pidinfo has no libSystem wrapper in x/sys/unix, and cgo is off.
	n, _, errno := unix.Syscall6(unix.SYS_PROC_INFO, procInfoCallPIDInfo, uintptr(os.Getpid()), procPIDTaskInfo, 0,
		uintptr(unsafe.Pointer(&ti)), unsafe.Sizeof(ti))
	if errno != 0 {
		return 0, fmt.Errorf("telemetry: proc_pidinfo PROC_PIDTASKINFO: %w", errno)
	}
	if n != unsafe.Sizeof(ti) {
		return 0, fmt.Errorf("telemetry: proc_pidinfo PROC_PIDTASKINFO returned %d bytes, want %d", n, unsafe.Sizeof(ti))
	}
	return int64(ti.ResidentSize), nil
}
