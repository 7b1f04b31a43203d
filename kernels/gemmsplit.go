package kernels

// Packed IQ4_NL for paths whose byte multiply (VPMADDUBSW) takes an
// unsigned operand of at most 15 without saturating (AVX2): the 32-element
// layout of gemm.go with the unsigned byte w+128 split into its two nibbles
// (w: the codebook value; Q8_0 has a signed layout instead, whose
// gemmKernelQ8PFAVX2 measured faster than this one). Per block
// of a 16-row tile (gemmSplitBlockB bytes): eight 64-byte vectors of the
// high nibbles (vector j: elements 4j..4j+3 of each row, one dword per
// row), eight of the low nibbles, then the 16 scales as f32. The kernel sums
// 16·Σ h·a + Σ l·a − 128·Σ a (the last from the prep), which is Σ w·a exactly.
const (
	gemmSplitBlockB = 2*512 + 64
	gemmSplitKB     = 128 // blocks per K-range: 136 KiB packed, in L2
)
