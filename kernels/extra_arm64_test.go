package kernels

import "github.com/memvanta/memvanta/core/ggml"

// simdExtraPaths are dispatch variants Available() does not return on this
// CPU but that must still be checked: with ASIMDDP the "neon" path uses the
// SDOT routines, so the ARMv8.0 routines are tested through their own table.
func simdExtraPaths() []*Impl {
	if hasDotProd() {
		return []*Impl{derive(Scalar(), "neon-v8.0", neonRows, nil)}
	}
	return nil
}

// With ASIMDDP the neon path has packed Q4_0/Q8_0/IQ4_NL MatMul
// (gemm_arm64.go).
func init() {
	if hasDotProd() {
		packedAt["neon"] = []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.IQ4_NL}
	}
}
