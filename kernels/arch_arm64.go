package kernels

// archImpls returns the SIMD dispatch paths this CPU supports, best first,
// each built from the scalar table with its SIMD routines swapped in.
func archImpls(scalar *Impl) []*Impl { return nil }
