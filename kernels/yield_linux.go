//go:build linux

package kernels

import "syscall"

// osYield offers the CPU to any other runnable thread, of this process or
// another (sched_yield); it returns at once when there is none. This file is
// the pool's one native dependency (like the assembly beside it); the
// wasip1 build, which runs the pool on one goroutine, gets yield_other.go.
func osYield() { syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
