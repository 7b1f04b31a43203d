package wasmhost

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/wasmhost/forwardjob"
)

// Whole-model differential: greedy runs of small synthetic models, the
// portable scalar kernels inside the sandbox against every native path.
// Greedy tokens must be identical. Logits may differ by at most pathTol of
// the largest |logit| over the run: the bounds core/model's golden tests
// derive for scalar vs SIMD paths (core/model/golden_test.go, pathTol:
// F32 differ only by summation order; F16 and quantized weights re-encode
// activations before each matmul, so last-bit differences flip roundings).
// On amd64 the wasm run is also compared with native scalar, which runs the
// same Go code: only math.Exp (assembly on amd64) can tell them apart.
var pathTol = map[ggml.Type]float64{ggml.F32: 1e-4, ggml.F16: 5e-4, ggml.Q8_0: 1e-2, ggml.Q4_0: 1e-2}

func writeSynth(t *testing.T, typ ggml.Type) string {
	t.Helper()
	var buf bytes.Buffer
	cfg := synth.Config{Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, Ctx: 128, RopeBase: 10000, Eps: 1e-5,
		Type: typ, VocabSize: 320, Seed: 7, Quantize: kernels.Quantize}
	if err := synth.Write(context.Background(), &buf, cfg, nil); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "synth-"+typ.String()+".gguf")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func relDiff(a, b []float32) float64 {
	var d, m float64
	for i := range b {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
		m = math.Max(m, math.Abs(float64(b[i])))
	}
	return d / m
}

func TestForwardWasmVsNative(t *testing.T) {
	h := testHost(t, Config{})
	ctx := context.Background()
	o := forwardjob.ForwardOptions{Tokens: []int32{1, 17, 42, 99, 250, 3}, Steps: 8, Batch: 4}
	types := []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0, ggml.Q4_0}
	paths := kernels.Available()
	if raceEnabled {
		types, paths = []ggml.Type{ggml.F16, ggml.Q4_0}, []*kernels.Impl{kernels.Select()}
	}
	for _, typ := range types {
		t.Run(typ.String(), func(t *testing.T) {
			path := writeSynth(t, typ)
			got, err := h.Forward(ctx, path, o)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range paths {
				var out bytes.Buffer
				if err := forwardjob.Forward(ctx, &out, bytes.NewReader(b), int64(len(b)), o, k); err != nil {
					t.Fatal(err)
				}
				want, err := forwardjob.DecodeForward(out.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) || len(got) != 1+o.Steps {
					t.Fatalf("%s: %d steps from wasm, %d native, want %d", k.Name, len(got), len(want), 1+o.Steps)
				}
				worst := 0.0
				for i := range want {
					if got[i].Argmax != want[i].Argmax {
						t.Errorf("%s step %d: greedy token %d in wasm, %d native", k.Name, i, got[i].Argmax, want[i].Argmax)
					}
					worst = math.Max(worst, relDiff(got[i].Logits, want[i].Logits))
				}
				if worst > pathTol[typ] {
					t.Errorf("%s: wasm scalar logits differ from native %s by %.3g of max |logit|, tolerance %.3g", typ, k.Name, worst, pathTol[typ])
				}
				t.Logf("%s: wasm scalar vs native %s: max logit diff %.3g of max |logit| (tolerance %.3g)", typ, k.Name, worst, pathTol[typ])
			}
		})
	}
}
