package forwardjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memvanta/memvanta/core/ggml"
)

func TestForwardArgsRoundTrip(t *testing.T) {
	o := ForwardOptions{Tokens: []int32{1, 2, 300}, Steps: 7, KV: ggml.F16, Batch: 3}
	args := o.Args("/m.gguf")
	got, path, err := ParseForwardArgs(args[1:])
	if err != nil || path != "/m.gguf" {
		t.Fatalf("%q: %q %v", args, path, err)
	}
	if d := cmp.Diff(o, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, bad := range [][]string{{"--tokens=1,x", "--", "f"}, {"--steps=-1", "--", "f"}, {"--nope", "--", "f"}, {"--steps=1"}} {
		if _, _, err := ParseForwardArgs(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestDecodeForwardRejects(t *testing.T) {
	for _, b := range [][]byte{nil, {1, 0}, {0, 0, 0, 0}, {2, 0, 0, 0, 1, 2, 3}} {
		if _, err := DecodeForward(b); err == nil {
			t.Errorf("%x: no error", b)
		}
	}
}
