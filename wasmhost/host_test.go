package wasmhost

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// Each guest is compiled once per test binary: every test host shares one
// in-memory compilation cache per guest and termination mode, whatever its
// caps (wazero's cache ignores compile options, and a cache holding both
// guests would serve either).
var (
	sharedMu    sync.Mutex
	sharedCache = map[[2]int]wazero.CompilationCache{}
)

func testHost(t testing.TB, cfg Config) *Host {
	t.Helper()
	if cfg.StrictTermination && raceEnabled {
		t.Skip("StrictTermination needs a second guest compile, too slow under -race")
	}
	if raceEnabled && cfg.Guest == GuestInspect {
		// Under -race it is the host code that is checked, and compiling
		// a second guest with the race-instrumented compiler would cost
		// another half minute: the full guest, which has the same inspect
		// job, stands in. The ordinary run tests the inspect guest itself.
		cfg.Guest = GuestFull
	}
	key := [2]int{int(cfg.Guest), 0}
	if cfg.StrictTermination {
		key[1] = 1
	}
	sharedMu.Lock()
	if sharedCache[key] == nil {
		sharedCache[key] = wazero.NewCompilationCache()
	}
	cfg.shared = sharedCache[key]
	sharedMu.Unlock()
	h, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func TestCaps(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		args    []string
		want    error  // nil: success
		wantOut string // prefix of stdout on success
	}{
		{"alloc within cap", Config{MemoryLimit: 64 << 20}, []string{"_alloc", "8"}, nil, "8"},
		{"alloc past cap", Config{MemoryLimit: 64 << 20}, []string{"_alloc", "200"}, ErrMemoryLimit, ""},
		{"spin past timeout, strict", Config{Timeout: 300 * time.Millisecond, StrictTermination: true}, []string{"_spin"}, ErrTimeLimit, ""},
		{"host calls past timeout", Config{Timeout: 300 * time.Millisecond}, []string{"_spincall"}, ErrTimeLimit, ""},
		{"host calls past timeout, strict", Config{Timeout: 300 * time.Millisecond, StrictTermination: true}, []string{"_spincall"}, ErrTimeLimit, ""},
		{"stdout within cap", Config{StdoutLimit: 1000}, []string{"_flood", "1000"}, nil, "xxx"},
		{"stdout past cap", Config{StdoutLimit: 1000}, []string{"_flood", "1001"}, ErrOutputLimit, ""},
		{"stderr past cap", Config{StderrLimit: 1000}, []string{"_flood", "100000", "2"}, ErrOutputLimit, ""},
		{"panic", Config{}, []string{"_panic"}, nil, ""},
	}
	// Both guests share the start-up and test modes (internal/guestmain);
	// the strict-termination cases, which compile a guest a second time,
	// run on the inspect guest, the one facing untrusted files.
	for _, g := range guests {
		if raceEnabled && g == GuestInspect {
			continue // testHost would run the full guest again
		}
		for _, tc := range tests {
			if tc.cfg.StrictTermination && g != GuestInspect {
				continue
			}
			tc.cfg.Guest = g
			t.Run(g.String()+"/"+tc.name, func(t *testing.T) { checkCap(t, tc.cfg, tc.args, tc.want, tc.wantOut) })
		}
	}
}

// checkCap runs the cap-test mode args on a host with cfg and checks it ends
// in want (nil: success with stdout starting wantOut).
func checkCap(t *testing.T, cfg Config, args []string, want error, wantOut string) {
	h := testHost(t, cfg)
	var out bytes.Buffer
	stderr, err := h.run(context.Background(), runSpec{args: args, stdout: &out})
	if args[0] == "_panic" {
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(string(stderr), "panic:") {
			t.Fatalf("panic: err = %v, stderr %q", err, stderr)
		}
		return
	}
	if want == nil {
		if err != nil {
			t.Fatalf("err = %v; stderr %s", err, stderr)
		}
		if !strings.HasPrefix(out.String(), wantOut) {
			t.Fatalf("stdout = %.40q, want prefix %q", out.String(), wantOut)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v; stderr %.300s", err, want, stderr)
	}
	if h.abandoned.Load() != 0 {
		t.Fatalf("run was abandoned (%v); the guest should have been stopped", err)
	}
	if int64(out.Len()) > h.cfg.StdoutLimit {
		t.Fatalf("stdout received %d bytes, over the %d cap", out.Len(), h.cfg.StdoutLimit)
	}
}

func TestParentCancelIsNotTimeLimit(t *testing.T) {
	for _, strict := range []bool{false, true} {
		if strict && raceEnabled {
			continue
		}
		h := testHost(t, Config{StrictTermination: strict, Guest: GuestInspect})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := h.run(ctx, runSpec{args: []string{"_spincall"}})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeLimit) {
			t.Fatalf("strict=%v: err = %v, want the caller's context error, not the cap", strict, err)
		}
	}
}

// Without StrictTermination a guest looping without host calls cannot be
// stopped, but the caller still gets ErrTimeLimit on time and the guest can
// no longer write to the caller's stdout. The loop here is finite (a few
// seconds) so the abandoned goroutine ends on its own, and long enough that
// a loaded machine, where the host's timers fire late while the guest's
// thread keeps running, cannot let it finish within the cap plus grace.
func TestAbandonedGuest(t *testing.T) {
	h := testHost(t, Config{Timeout: 200 * time.Millisecond, Guest: GuestInspect})
	var out bytes.Buffer
	_, err := h.run(context.Background(), runSpec{args: []string{"_spin", "6000000000"}, stdout: &out})
	if !errors.Is(err, ErrTimeLimit) || !strings.Contains(err.Error(), "abandoned") {
		t.Fatalf("err = %v, want an abandoned run and ErrTimeLimit", err)
	}
	if h.abandoned.Load() != 1 {
		t.Fatalf("abandoned = %d", h.abandoned.Load())
	}
}
