package kernels

import "github.com/memvanta/memvanta/core/ggml"

// Four-weight-row AVX2 routines for the K-quants and IQ4 types
// (rows4k_amd64.s), in the asmDot4 convention with the stride stepping
// through the weight rows; each is bit-identical to the same type's one-row
// AVX2 routine.

//go:noescape
func dotRows4Q4_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q6_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q5_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_XSQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_NLQ8_0AVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q3_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q2_KQ8_KAVX2(nb int, w, a *byte, stride int, y *[4]float32)

// avx2Rows4K lists this file's routines for the dispatch table; each is
// bit-identical to the avx2 path's one-row routine for its type.
var avx2Rows4K = []archDot4{
	{ggml.Q4_K, dotRows4Q4_KQ8_KAVX2},
	{ggml.Q5_K, dotRows4Q5_KQ8_KAVX2},
	{ggml.Q6_K, dotRows4Q6_KQ8_KAVX2},
	{ggml.IQ4_XS, dotRows4IQ4_XSQ8_KAVX2},
	{ggml.IQ4_NL, dotRows4IQ4_NLQ8_0AVX2},
	{ggml.Q3_K, dotRows4Q3_KQ8_KAVX2},
	{ggml.Q2_K, dotRows4Q2_KQ8_KAVX2},
}
