package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a Go CPU profile to path until stop is called: the
// --cpuprofile of bench and bench-serve, for go tool pprof.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
