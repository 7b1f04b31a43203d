//go:build !race

package realfiles

const raceEnabled = false
