package wasmhost

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/wasmhost/forwardjob"
)

// The inspect guest must stay free of kernel and model code: that is what
// makes it small, and it keeps the committed inspect.wasm fresh while
// kernels/ and core/model change.
func TestInspectGuestDeps(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain")
	}
	cmd := exec.Command(gobin, "list", "-deps", "./inspectguest")
	cmd.Env = append(cmd.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list listed only %q", deps)
	}
	const mod = "github.com/memvanta/memvanta/"
	allowed := map[string]bool{"core/ggml": true, "core/gguf": true, "core/inspect": true, "core/arch": true,
		"wasmhost/job": true, "wasmhost/internal/guestmain": true, "wasmhost/inspectguest": true}
	for _, d := range deps {
		if strings.HasPrefix(d, mod) && !allowed[strings.TrimPrefix(d, mod)] {
			t.Errorf("the inspect guest links %s", d)
		}
		if !strings.HasPrefix(d, mod) && strings.Contains(d, ".") {
			t.Errorf("the inspect guest links third-party package %s", d)
		}
	}
}

// A host on the inspect guest refuses full-guest jobs up front, and the
// guest itself does not know them either.
func TestInspectGuestRefusesOtherJobs(t *testing.T) {
	if raceEnabled {
		t.Skip("testHost runs the full guest under -race")
	}
	h := testHost(t, Config{Guest: GuestInspect})
	ctx := context.Background()
	if _, err := h.Kernels(ctx, nil); err == nil || !strings.Contains(err.Error(), "inspect guest") {
		t.Errorf("Kernels: err = %v", err)
	}
	if _, err := h.Forward(ctx, "x.gguf", forwardjob.ForwardOptions{Tokens: []int32{1}}); err == nil || !strings.Contains(err.Error(), "inspect guest") {
		t.Errorf("Forward: err = %v", err)
	}
	for _, mode := range []string{"kernels", "forward"} {
		_, err := h.run(ctx, runSpec{args: []string{mode}})
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 3 {
			t.Errorf("guest mode %s: err = %v, want usage exit 3", mode, err)
		}
	}
}

func TestUnknownGuest(t *testing.T) {
	if _, err := New(context.Background(), Config{Guest: 7, NoDiskCache: true}); err == nil {
		t.Fatal("no error for an unknown guest")
	}
}
