package kernels

import "github.com/memvanta/memvanta/core/ggml"

// e8m0Fields lists, per block type, the offsets of E8M0 exponent bytes
// (2^(e-128) scales), which random rows set to realistic exponents as they
// set fp16 scales (scaleFields): a random byte would reach 2^127 and turn
// the dots into Inf.
var e8m0Fields = map[ggml.Type][]int{
	ggml.MXFP4: {0},
}
