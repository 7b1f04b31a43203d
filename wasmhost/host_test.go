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

// The guest is compiled once per test binary: every test host shares one
// in-memory compilation cache, whatever its caps.
var (
	sharedOnce  sync.Once
	sharedCache [2]wazero.CompilationCache
)

func testHost(t testing.TB, cfg Config) *Host {
	t.Helper()
	if cfg.StrictTermination && raceEnabled {
		t.Skip("StrictTermination needs a second guest compile, too slow under -race")
	}
	// wazero's cache ignores compile options: one cache per termination mode.
	sharedOnce.Do(func() {
		sharedCache = [2]wazero.CompilationCache{wazero.NewCompilationCache(), wazero.NewCompilationCache()}
	})
	cfg.shared = sharedCache[0]
	if cfg.StrictTermination {
		cfg.shared = sharedCache[1]
	}
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
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := testHost(t, tc.cfg)
			var out bytes.Buffer
			stderr, err := h.run(context.Background(), runSpec{args: tc.args, stdout: &out})
			if tc.name == "panic" {
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(string(stderr), "panic:") {
					t.Fatalf("panic: err = %v, stderr %q", err, stderr)
				}
				return
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("err = %v; stderr %s", err, stderr)
				}
				if !strings.HasPrefix(out.String(), tc.wantOut) {
					t.Fatalf("stdout = %.40q, want prefix %q", out.String(), tc.wantOut)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v; stderr %.300s", err, tc.want, stderr)
			}
			if h.abandoned.Load() != 0 {
				t.Fatalf("run was abandoned (%v); the guest should have been stopped", err)
			}
			if int64(out.Len()) > h.cfg.StdoutLimit {
				t.Fatalf("stdout received %d bytes, over the %d cap", out.Len(), h.cfg.StdoutLimit)
			}
		})
	}
}

func TestParentCancelIsNotTimeLimit(t *testing.T) {
	for _, strict := range []bool{false, true} {
		if strict && raceEnabled {
			continue
		}
		h := testHost(t, Config{StrictTermination: strict})
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
// seconds at most) so the abandoned goroutine ends on its own.
func TestAbandonedGuest(t *testing.T) {
	h := testHost(t, Config{Timeout: 200 * time.Millisecond})
	var out bytes.Buffer
	_, err := h.run(context.Background(), runSpec{args: []string{"_spin", "1000000000"}, stdout: &out})
	if !errors.Is(err, ErrTimeLimit) || !strings.Contains(err.Error(), "abandoned") {
		t.Fatalf("err = %v, want an abandoned run and ErrTimeLimit", err)
	}
	if h.abandoned.Load() != 1 {
		t.Fatalf("abandoned = %d", h.abandoned.Load())
	}
}
