package kernels

// simdExtraPaths are dispatch variants Available() does not return but that
// must still be checked; on amd64 every routine is reachable through the
// avx2 and avx512 paths of a CPU that has the features.
func simdExtraPaths() []*Impl { return nil }
