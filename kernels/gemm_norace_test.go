//go:build !race

package kernels

const gemmRace = false
