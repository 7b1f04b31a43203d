package inspect

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
)

func val(t *testing.T, x any) gguf.Value {
	t.Helper()
	v, err := gguf.ValueOf(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// build writes a small llama-like file and parses it back.
func build(t *testing.T) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf)
	tokens := make([]string, 20)
	for i := range tokens {
		tokens[i] = string(rune('a' + i))
	}
	kvs := []struct {
		k string
		v any
	}{
		{"general.architecture", "llama"}, {"general.name", "tiny"}, {"general.file_type", uint32(2)},
		{"llama.context_length", uint32(256)}, {"llama.embedding_length", uint32(64)}, {"llama.block_count", uint32(1)},
		{"llama.rope.freq_base", float32(10000)}, {"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"tokenizer.ggml.model", "llama"}, {"tokenizer.ggml.tokens", tokens}, {"tokenizer.ggml.bos_token_id", uint32(1)},
		{"tokenizer.chat_template", "{{ x }}"}, {"test.nan", float32(math.NaN())}, {"test.inf", []float64{math.Inf(1), 1}},
		{"test.bytes", []uint8{1, 2}},
		{"test.nested", []gguf.Value{val(t, []int32{1, 2}), val(t, []int32{3})}},
	}
	for _, kv := range kvs {
		if err := w.AddKV(kv.k, val(t, kv.v)); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range []gguf.TensorInfo{
		{Name: "a", Type: ggml.F32, Dims: []uint64{4, 3}},
		{Name: "b", Type: ggml.Q4_0, Dims: []uint64{64, 2}},
		{Name: "c", Type: ggml.Q4_0, Dims: []uint64{32}},
	} {
		if _, err := w.AddTensor(ti); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 48+72+18)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestBuild(t *testing.T) {
	f := build(t)
	r := Build(f, Options{})
	if r.Parameters != 12+128+32 || r.TensorCount != 3 || r.TensorBytes != 48+72+18 {
		t.Errorf("params %d tensors %d bytes %d", r.Parameters, r.TensorCount, r.TensorBytes)
	}
	want := []TypeCount{{"F32", 1, 48}, {"Q4_0", 2, 90}}
	if len(r.TypeMix) != 2 || r.TypeMix[0] != want[0] || r.TypeMix[1] != want[1] {
		t.Errorf("type mix %+v", r.TypeMix)
	}
	if r.Architecture != "llama" || !r.KnownArchitecture || r.Name != "tiny" || r.FileType == nil || *r.FileType != 2 {
		t.Errorf("arch %q known %v name %q", r.Architecture, r.KnownArchitecture, r.Name)
	}
	if r.ContextLength == nil || *r.ContextLength != 256 {
		t.Errorf("context length %v", r.ContextLength)
	}
	var keys []string
	for _, h := range r.Hyperparameters {
		keys = append(keys, h.Key)
	}
	if got := strings.Join(keys, ","); got != "context_length,embedding_length,block_count,attention.layer_norm_rms_epsilon,rope.freq_base" {
		t.Errorf("hyperparameters %s", got)
	}
	if tk := r.Tokenizer; tk == nil || tk.Model != "llama" || tk.VocabSize != 20 || tk.BOS != 1 || tk.EOS != -1 {
		t.Errorf("tokenizer %+v", r.Tokenizer)
	}
	if !r.ChatTemplate {
		t.Error("chat template not detected")
	}
}

func decode(t *testing.T, r *Report) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	return m
}

func TestJSONSchema(t *testing.T) {
	f := build(t)
	for _, full := range []bool{false, true} {
		m := decode(t, Build(f, Options{Full: full}))
		for _, k := range []string{"schema", "gguf_version", "file_size", "alignment", "data_offset", "architecture",
			"known_architecture", "name", "file_type", "parameters", "tensor_count", "tensor_bytes", "type_mix",
			"context_length", "hyperparameters", "tokenizer", "chat_template", "metadata", "tensors"} {
			if _, ok := m[k]; !ok {
				t.Errorf("full=%v: field %s missing", full, k)
			}
		}
		if m["schema"] != Schema {
			t.Errorf("schema %v", m["schema"])
		}
		meta := m["metadata"].([]any)
		if len(meta) != len(f.KV) {
			t.Fatalf("%d metadata entries, %d keys", len(meta), len(f.KV))
		}
		byKey := map[string]map[string]any{}
		for _, e := range meta {
			em := e.(map[string]any)
			byKey[em["key"].(string)] = em
		}
		tok := byKey["tokenizer.ggml.tokens"]
		if tok["len"] != float64(20) || tok["type"] != "array[string]" {
			t.Errorf("tokens entry %v", tok)
		}
		if full {
			if len(tok["value"].([]any)) != 20 || tok["head"] != nil {
				t.Errorf("full tokens entry %v", tok)
			}
		} else if len(tok["head"].([]any)) != headLen || tok["value"] != nil {
			t.Errorf("summarised tokens entry %v", tok)
		}
		if v := byKey["test.nan"]["value"]; v != "NaN" {
			t.Errorf("NaN encoded as %v", v)
		}
		if v := byKey["general.file_type"]["value"]; v != float64(2) {
			t.Errorf("file_type %v", v)
		}
		items := func(e map[string]any) []any {
			if full {
				return e["value"].([]any)
			}
			return e["head"].([]any)
		}
		if v := byKey["test.bytes"]; v["type"] != "array[u8]" || len(items(v)) != 2 || items(v)[1] != float64(2) {
			t.Errorf("u8 array %v", v)
		}
		if v := byKey["test.inf"]; items(v)[0] != "+Inf" {
			t.Errorf("inf array %v", v)
		}
		if v := byKey["test.nested"]; v["type"] != "array[array[i32]]" || len(items(v)[0].([]any)) != 2 {
			t.Errorf("nested %v", v)
		}
		ts := m["tensors"].([]any)
		b := ts[1].(map[string]any)
		if b["name"] != "b" || b["type"] != "Q4_0" || b["offset"] != float64(64) || b["bytes"] != float64(72) || len(b["dims"].([]any)) != 2 {
			t.Errorf("tensor b %v", b)
		}
	}
}

func TestOutputDeterministic(t *testing.T) {
	f := build(t)
	out := func() string {
		var buf bytes.Buffer
		r := Build(f, Options{Name: "x.gguf", Tensors: true, Metadata: true})
		if err := r.WriteText(&buf); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	a := out()
	for i := 0; i < 5; i++ {
		if out() != a {
			t.Fatal("output differs between runs")
		}
	}
	for _, want := range []string{"file:            x.gguf", "Q4_0         2 tensors", "chat template:   present", "  b  ", "test.nested"} {
		if !strings.Contains(a, want) {
			t.Errorf("text lacks %q:\n%s", want, a)
		}
	}
}

func TestErrorForms(t *testing.T) {
	b, err := os.ReadFile("../../testdata/gguf/malformed/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var manifest []struct{ File, Category string }
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	for _, e := range manifest {
		data, err := os.ReadFile(filepath.Join("../../testdata/gguf/malformed", e.File))
		if err != nil {
			t.Fatal(err)
		}
		_, perr := gguf.Parse(bytes.NewReader(data), int64(len(data)), gguf.DefaultLimits())
		var out struct {
			Schema string
			Error  struct {
				Category string
				Offset   *int64
				Message  string
			}
		}
		if err := json.Unmarshal(ErrorJSON(perr), &out); err != nil {
			t.Fatal(err)
		}
		if out.Schema != Schema || out.Error.Category != e.Category || out.Error.Offset == nil || out.Error.Message != perr.Error() {
			t.Errorf("%s: %+v", e.File, out)
		}
		if txt := ErrorText(perr); !strings.HasPrefix(txt, "error: "+e.Category+": ") {
			t.Errorf("%s: text %q", e.File, txt)
		}
	}
	var out struct{ Error map[string]any }
	if err := json.Unmarshal(ErrorJSON(errors.New("disk gone")), &out); err != nil || out.Error["category"] != "io" || out.Error["offset"] != nil {
		t.Errorf("io error json %v %v", out, err)
	}
}

func TestSharedVocab(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/vocab/*.gguf")
	if len(files) == 0 {
		t.Skip("../shared/vocab absent")
	}
	for _, p := range files {
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := fh.Stat()
		f, err := gguf.Parse(fh, st.Size(), gguf.DefaultLimits())
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		r := Build(f, Options{})
		toks, _ := f.Strings("tokenizer.ggml.tokens")
		if r.Tokenizer == nil || r.Tokenizer.VocabSize != len(toks) {
			t.Errorf("%s: tokenizer %+v", p, r.Tokenizer)
		}
		var buf bytes.Buffer
		if err := r.WriteText(&buf); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
	}
}
