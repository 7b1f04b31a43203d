package kernels

// The four-row routines of dot4_arm64.s, dispatched through the rows of
// arch_arm64.go: each is bit-identical to the dot of its row (the four-row
// tests check every dispatched pair, and the ARMv8.0 table through
// simdExtraPaths on CPUs with ASIMDDP).

//go:noescape
func dotRows4Q4_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q4_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q4_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q4_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q8_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q8_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q8_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q8_0Q8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_NLQ8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4IQ4_NLQ8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_NLQ8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4IQ4_NLQ8_0NEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q4_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q4_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q5_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q5_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q6_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q6_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_XSQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4IQ4_XSQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q4_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q4_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q6_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q6_KQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4IQ4_XSQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4IQ4_XSQ8_KNEONDot(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q2_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q2_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q3_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q3_KQ8_KNEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q4_1Q8_1NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q4_1Q8_1NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q5_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q5_0Q8_0NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dotRows4Q5_1Q8_1NEON(nb int, w, a *byte, stride int, y *[4]float32)

//go:noescape
func dot4Q5_1Q8_1NEON(nb int, w, a *byte, stride int, y *[4]float32)
