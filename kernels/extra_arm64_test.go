package kernels

import "github.com/klauspost/cpuid/v2"

// simdExtraPaths are dispatch variants Available() does not return on this
// CPU but that must still be checked: with ASIMDDP the "neon" path uses the
// SDOT routines, so the ARMv8.0 routines are tested through their own table.
func simdExtraPaths() []*Impl {
	if cpuid.CPU.Supports(cpuid.ASIMDDP) {
		return []*Impl{derive(Scalar(), "neon-v8.0", neonRows, nil)}
	}
	return nil
}
