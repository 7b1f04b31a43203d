package kernels

// The long AccumF16 cases (accumLongCases) cross the AVX2 route's widening
// blocks only if their block size is the route's: a compile-time check.
var _ = [1]struct{}{}[accumBlock-accumTestBlock]
