//go:build !windows

package kernels

import "github.com/klauspost/cpuid/v2"

// hasDotProd reports the ARMv8.2 dot-product extension (ASIMDDP), which
// cpuid reads from the OS (Linux HWCAP, macOS sysctl).
func hasDotProd() bool { return cpuid.CPU.Supports(cpuid.ASIMDDP) }
