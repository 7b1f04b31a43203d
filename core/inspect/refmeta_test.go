package inspect

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/kernels"
)

// golden is one testdata/refmeta file written by scripts/ref-meta.sh from
// llama.cpp (load log) and node-llama-cpp's GGUF reader.
type golden struct {
	File      string   `json:"file"`
	SynthArgs []string `json:"synth_args"`
	LlamaCpp  struct {
		Loaded       bool   `json:"loaded"`
		KVCount      int    `json:"kv_count"`
		TensorCount  int    `json:"tensor_count"`
		Version      string `json:"version"`
		Architecture string `json:"architecture"`
		KV           []struct {
			Key, Type string
		} `json:"kv"`
		TensorTypes map[string]int `json:"tensor_types"`
	} `json:"llama_cpp"`
	GgufJS struct {
		Version       uint32                     `json:"version"`
		TensorCount   int                        `json:"tensor_count"`
		TensorTypeIDs map[string]int             `json:"tensor_type_ids"`
		Metadata      map[string]json.RawMessage `json:"metadata"`
	} `json:"gguf_js"`
}

// sparse is a file of the given size: header bytes, then zeros.
type sparse struct {
	header []byte
	size   int64
}

func (s *sparse) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), s.size-off)
	clear(p[:n])
	if off < int64(len(s.header)) {
		copy(p[:n], s.header[off:])
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// refFile finds the file a golden describes, or re-creates a synthetic
// one; (nil, nil) = not available here.
func refFile(t *testing.T, g golden) (*gguf.File, *sparse) {
	if g.SynthArgs != nil {
		fs := flag.NewFlagSet("synth", flag.ContinueOnError)
		sf := synth.RegisterFlags(fs)
		if err := fs.Parse(g.SynthArgs); err != nil {
			t.Fatal(err)
		}
		cfg, err := sf.Config()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Quantize = kernels.Quantize
		if *sf.VocabFrom != "" {
			// Recorded relative to the repo root.
			p := filepath.Join("../..", *sf.VocabFrom)
			if _, err := os.Stat(p); err != nil {
				return nil, nil
			}
			cfg.Vocab = parsePath(t, p)
		}
		// The layout is all the comparison needs: serve the real header
		// and zeros for the tensor data instead of generating weights.
		h, size, err := synth.Header(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return nil, &sparse{h, size}
	}
	for _, p := range []string{"../../../shared/vocab/" + g.File, "../../../shared/models/" + g.File, "../../testdata/gguf/valid/" + g.File} {
		if _, err := os.Stat(p); err == nil {
			return parsePath(t, p), nil
		}
	}
	return nil, nil
}

func parsePath(t *testing.T, p string) *gguf.File {
	t.Helper()
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(fh, st.Size(), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// llamaType renders a value type the way llama_model_loader logs it.
func llamaType(v gguf.Value) string {
	name := func(t gguf.ValueType) string {
		if t == gguf.TypeString {
			return "str"
		}
		return t.String()
	}
	if v.Type != gguf.TypeArray {
		return name(v.Type)
	}
	return fmt.Sprintf("arr[%s,%d]", name(v.Elem), v.Len())
}

// jsEqual compares our value with node-llama-cpp's JSON rendering (bigints
// as decimal strings, arrays as {array_length, head}).
func jsEqual(v gguf.Value, raw json.RawMessage) error {
	if v.Type == gguf.TypeArray {
		var a struct {
			ArrayLength int               `json:"array_length"`
			Head        []json.RawMessage `json:"head"`
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return err
		}
		if a.ArrayLength != v.Len() {
			return fmt.Errorf("length %d, llama.cpp %d", v.Len(), a.ArrayLength)
		}
		for i, h := range a.Head {
			if err := scalarEqual(arrayJSON(v, len(a.Head))[i], h); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		return nil
	}
	return scalarEqual(scalarJSON(v), raw)
}

func scalarEqual(x any, raw json.RawMessage) error {
	var js any
	if err := json.Unmarshal(raw, &js); err != nil {
		return err
	}
	var ours any
	switch d := x.(type) {
	case string, bool:
		ours = d
	case float32:
		ours = float64(d)
	case float64:
		ours = d
	default: // integers: JS has them as numbers, or strings for bigints
		s := fmt.Sprint(d)
		if str, ok := js.(string); ok {
			ours, js = s, str
		} else {
			f, _ := strconv.ParseFloat(s, 64)
			ours = f
		}
	}
	if ours != js {
		return fmt.Errorf("ours %v, reference %v", ours, js)
	}
	return nil
}

func TestAgreesWithLlamaCpp(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/refmeta/*.json")
	if len(paths) == 0 {
		t.Fatal("no goldens in testdata/refmeta (run scripts/ref-meta.sh)")
	}
	for _, gp := range paths {
		t.Run(filepath.Base(gp), func(t *testing.T) {
			b, err := os.ReadFile(gp)
			if err != nil {
				t.Fatal(err)
			}
			var g golden
			if err := json.Unmarshal(b, &g); err != nil {
				t.Fatal(err)
			}
			f, sp := refFile(t, g)
			if sp != nil {
				var err error
				if f, err = gguf.Parse(sp, sp.size, gguf.DefaultLimits()); err != nil {
					t.Fatal(err)
				}
			}
			if f == nil {
				t.Skipf("%s not available", g.File)
			}
			r := Build(f, Options{})
			lc := g.LlamaCpp
			if lc.Version != fmt.Sprintf("GGUF V%d", f.Version) || g.GgufJS.Version != f.Version {
				t.Errorf("version %d, llama.cpp %q, gguf_js %d", f.Version, lc.Version, g.GgufJS.Version)
			}
			if lc.Architecture != "" && r.Architecture != lc.Architecture {
				t.Errorf("architecture %q, llama.cpp %q", r.Architecture, lc.Architecture)
			}
			if r.TensorCount != lc.TensorCount || r.TensorCount != g.GgufJS.TensorCount {
				t.Errorf("tensors %d, llama.cpp %d, gguf_js %d", r.TensorCount, lc.TensorCount, g.GgufJS.TensorCount)
			}
			if len(f.KV) != lc.KVCount || len(lc.KV) != lc.KVCount {
				t.Errorf("kv %d, llama.cpp %d (logged %d)", len(f.KV), lc.KVCount, len(lc.KV))
			}
			for i := 0; i < min(len(f.KV), len(lc.KV)); i++ {
				if f.KV[i].Key != lc.KV[i].Key || llamaType(f.KV[i].Value) != lc.KV[i].Type {
					t.Errorf("kv %d: %s %s, llama.cpp %s %s", i, f.KV[i].Key, llamaType(f.KV[i].Value), lc.KV[i].Key, lc.KV[i].Type)
				}
			}
			if lc.Loaded {
				got := map[string]int{}
				for _, tc := range r.TypeMix {
					got[strings.ToLower(tc.Type)] = tc.Count
				}
				if fmt.Sprint(got) != fmt.Sprint(lc.TensorTypes) {
					t.Errorf("type mix %v, llama.cpp %v", got, lc.TensorTypes)
				}
			}
			ids := map[string]int{}
			for _, ti := range f.Tensors {
				ids[strconv.Itoa(int(ti.Type))]++
			}
			if fmt.Sprint(ids) != fmt.Sprint(g.GgufJS.TensorTypeIDs) {
				t.Errorf("type ids %v, gguf_js %v", ids, g.GgufJS.TensorTypeIDs)
			}
			if len(g.GgufJS.Metadata) != len(f.KV) {
				t.Errorf("%d keys, gguf_js %d", len(f.KV), len(g.GgufJS.Metadata))
			}
			for _, kv := range f.KV {
				raw, ok := g.GgufJS.Metadata[kv.Key]
				if !ok {
					t.Errorf("%s missing from gguf_js", kv.Key)
					continue
				}
				if err := jsEqual(kv.Value, raw); err != nil {
					t.Errorf("%s: %v", kv.Key, err)
				}
			}
		})
	}
}
