//go:build race

package weights

// raceEnabled: the race detector shadows every heap byte and slows the
// collector, so a process's peak RSS no longer measures what the runtime
// holds; RSS bounds are checked in a build without it (.ci/run).
const raceEnabled = true
