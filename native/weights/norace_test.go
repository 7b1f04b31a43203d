//go:build !race

package weights

const raceEnabled = false
