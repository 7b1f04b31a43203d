package job

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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
