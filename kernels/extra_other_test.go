//go:build !amd64 && !arm64

package kernels

// simdExtraPaths: architectures without SIMD routines have no variants
// beyond Available().
func simdExtraPaths() []*Impl { return nil }
