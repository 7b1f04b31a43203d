package realfiles

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/internal/golden"
	"github.com/memvanta/memvanta/kernels"
)

// quantizedByGo maps the file types (as the goldens name them) whose
// tensor type kernels.Quantize writes to that type: llama.cpp's quantizer
// runs the same reference quantizer on them (no importance matrix), so its
// tensors must be our Quantize of the source's values byte for byte.
var quantizedByGo = map[string]ggml.Type{
	"MXFP4_MOE" + PureSuffix: ggml.MXFP4,
	"TQ1_0":                  ggml.TQ1_0,
	"TQ2_0":                  ggml.TQ2_0,
}

// TestQuantizeMatchesLlamaCpp re-quantizes, with kernels.Quantize, every
// tensor that llama.cpp's quantizer wrote in one of the quantizedByGo types
// (from the golden's F16 source model, whose values are decoded first as
// llama.cpp decodes them) and compares the bytes with llama.cpp's file:
// Quantize must be bit-exact with ggml's quantizer on real tensors, not
// only on the unit goldens' blocks. Needs MEMVANTA_QUANTIZE and
// MEMVANTA_LIBLLAMA (skips otherwise).
func TestQuantizeMatchesLlamaCpp(t *testing.T) {
	tools, err := ToolsFromEnv()
	if err != nil {
		t.Skip(err)
	}
	dir, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	for ftype, typ := range quantizedByGo {
		t.Run(ftype, func(t *testing.T) {
			g, err := golden.Read(filepath.Join(goldenDir, "quant-"+ftype+".json"))
			if err != nil {
				t.Fatal(err)
			}
			vocab, err := ReadVocab(filepath.Join(sharedDir, "vocab", g.Synth.Vocab))
			if err != nil {
				t.Skipf("vocab not available: %v", err)
			}
			src, err := SynthBytes(context.Background(), g.Synth, vocab)
			if err != nil {
				t.Fatal(err)
			}
			sf := parseBytes(t, src)
			path, err := tools.FileFrom(context.Background(), dir, src, ftype)
			if err != nil {
				t.Fatal(err)
			}
			qb, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			qf := parseBytes(t, qb)
			n := 0
			for _, qt := range qf.Tensors {
				if qt.Type != typ {
					continue
				}
				st, ok := sf.Tensor(qt.Name)
				if !ok {
					t.Fatalf("%s: not in the source model", qt.Name)
				}
				x := make([]float32, st.Elements())
				if err := kernels.Dequantize(st.Type, tensorBytes(sf, src, st), x); err != nil {
					t.Fatalf("%s: %v", qt.Name, err)
				}
				got := make([]byte, qt.Size)
				if err := kernels.Quantize(typ, x, got); err != nil {
					t.Fatalf("%s: %v", qt.Name, err)
				}
				want := tensorBytes(qf, qb, qt)
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("%s (%s from %s): byte %d of %d (block %d) = %#x, llama.cpp %#x",
						qt.Name, typ, st.Type, i, len(want), i/typ.TypeSize(), got[i], want[i])
				}
				n++
			}
			if n == 0 {
				t.Fatalf("llama.cpp's %s file has no %s tensor", ftype, typ)
			}
			t.Logf("%d %s tensors identical to llama.cpp's", n, typ)
		})
	}
}

func parseBytes(t *testing.T, b []byte) *gguf.File {
	t.Helper()
	f, err := gguf.Parse(bytes.NewReader(b), int64(len(b)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func tensorBytes(f *gguf.File, b []byte, ti gguf.TensorInfo) []byte {
	o := uint64(f.DataOffset) + ti.Offset
	return b[o : o+ti.Size]
}

func firstDiff(a, b []byte) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
