//go:build race

package kernels

// gemmRace: the race detector slows the float64 references of
// TestMatMulPacked ~10×, so under -race it skips its widest shape (5632
// columns; 2048 still spans several K-ranges at the 32- and 5-block settings).
const gemmRace = true
