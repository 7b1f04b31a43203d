package job

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
)

func TestInspectArgsRoundTrip(t *testing.T) {
	for _, o := range []InspectOptions{
		{},
		{JSON: true, Full: true, Name: "a b=c.gguf"},
		{Tensors: true, VerifyOnly: true, Limits: gguf.Limits{MaxStringLen: 1, MaxArrayLen: 2, MaxKV: 3, MaxTensors: 4, MaxDepth: 5, MaxHeaderBytes: 6}},
	} {
		args := o.Args("/model.gguf")
		if args[0] != "inspect" {
			t.Fatalf("args %q", args)
		}
		got, path, err := ParseArgs(args[1:])
		if err != nil || path != "/model.gguf" {
			t.Fatalf("%q: path %q, err %v", args, path, err)
		}
		if d := cmp.Diff(o, got); d != "" {
			t.Errorf("%q (-want +got):\n%s", args, d)
		}
	}
	for _, bad := range [][]string{{}, {"--json"}, {"--bogus", "--", "f"}, {"--", "a", "b"}, {"--limits=1,2", "--", "f"}, {"--limits=1,2,3,4,5,x", "--", "f"}} {
		if _, _, err := ParseArgs(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

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
