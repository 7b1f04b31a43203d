//go:build race

package wasmhost

// raceEnabled trims the heaviest differential cases under -race, where
// wazero's compiler and the native reference both run ~10× slower; the full
// sets run in the ordinary test run.
const raceEnabled = true
