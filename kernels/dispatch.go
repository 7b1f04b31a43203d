package kernels

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// EnvVar names the environment variable that forces a dispatch path.
const EnvVar = "MEMVANTA_KERNELS"

// knownNames are every path name any build can have, so ByName can tell
// "unsupported here" from "misspelt".
var knownNames = []string{"scalar", "avx2", "avxvnni", "avx512", "neon"}

// The dispatch table is built once and never changes afterwards: it is the
// package's only global state.
var (
	implsOnce sync.Once
	impls     []*Impl // best first, scalar last

	selectOnce sync.Once
	selected   *Impl
	selectErr  error
)

func allImpls() []*Impl {
	implsOnce.Do(func() {
		s := newScalar()
		impls = append(archImpls(s), s)
	})
	return impls
}

// Scalar returns the portable pure-Go path, the reference every SIMD path is
// tested against and the only path in wasm.
func Scalar() *Impl { a := allImpls(); return a[len(a)-1] }

// Available returns the paths this CPU can run, best first, scalar last.
func Available() []*Impl { return append([]*Impl(nil), allImpls()...) }

// ByName returns the path called name if this CPU supports it. A known path
// the CPU (or this build's architecture) lacks and an unknown name give
// different errors, both listing what is available.
func ByName(name string) (*Impl, error) {
	var have []string
	for _, k := range allImpls() {
		if k.Name == name {
			return k, nil
		}
		have = append(have, k.Name)
	}
	for _, n := range knownNames {
		if n == name {
			return nil, fmt.Errorf("kernels: path %q is not supported on this CPU/architecture (available: %s)", name, strings.Join(have, ", "))
		}
	}
	return nil, fmt.Errorf("kernels: unknown path %q (known: %s; available here: %s)", name, strings.Join(knownNames, ", "), strings.Join(have, ", "))
}

// Selected returns the process-wide path, chosen once: MEMVANTA_KERNELS if
// set, else the best available. A bad MEMVANTA_KERNELS value yields the best
// path AND a non-nil error, so that the CLI can refuse to run (or at least say
// so) instead of silently benchmarking a path the user did not ask for. The
// CLI should call this at start-up and report k.Name (e.g. in bench output).
func Selected() (*Impl, error) {
	selectOnce.Do(func() { selected, selectErr = choose(os.Getenv(EnvVar)) })
	return selected, selectErr
}

// choose applies an EnvVar value: empty means best available.
func choose(env string) (*Impl, error) {
	best := allImpls()[0]
	name := strings.ToLower(strings.TrimSpace(env))
	if name == "" {
		return best, nil
	}
	k, err := ByName(name)
	if err != nil {
		return best, fmt.Errorf("%s=%s: %w", EnvVar, env, err)
	}
	return k, nil
}

// Select returns the path chosen by Selected. Code below the CLI uses this;
// the CLI itself checks Selected's error once at start-up. So that a bad
// MEMVANTA_KERNELS is never ignored silently even by a caller that skipped
// Selected, Select prints Selected's error to stderr (once).
func Select() *Impl {
	k, err := Selected()
	if err != nil {
		warnOnce.Do(func() { fmt.Fprintf(os.Stderr, "memvanta: warning: %v; using %s\n", err, k.Name) })
	}
	return k
}

var warnOnce sync.Once

// clone copies k under a new name (tests derive variants with it; arch
// files use derive).
func (k *Impl) clone(name string) *Impl { return derive(k, name, nil, nil) }

// String is the path name, for logs and bench output.
func (k *Impl) String() string { return k.Name }
