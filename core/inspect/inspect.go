package inspect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
)

// Schema names the JSON layout documented in the package comment. It
// changes only when a field changes meaning or disappears.
const Schema = "memvanta.inspect/v1"

// Options select what the report includes.
type Options struct {
	Name     string // display name of the file (e.g. its base name); optional
	Full     bool   // JSON: arrays in full instead of len + head
	Tensors  bool   // text: list every tensor
	Metadata bool   // text: list every metadata key
}

// headLen is how many leading elements summarise a long array.
const headLen = 8

// hyperKeys are the <arch>.* hyperparameters shown for any architecture,
// in display order.
var hyperKeys = []string{
	"context_length", "embedding_length", "block_count", "feed_forward_length",
	"attention.head_count", "attention.head_count_kv", "attention.key_length", "attention.value_length",
	"attention.layer_norm_rms_epsilon", "attention.layer_norm_epsilon", "attention.sliding_window",
	"rope.dimension_count", "rope.freq_base", "rope.scaling.type", "rope.scaling.factor",
	"rope.scaling.original_context_length", "expert_count", "expert_used_count", "vocab_size",
}

// archHyperKeys are hyperKeys followed by the keys an executable
// architecture's table reads beyond them (core/arch Spec.Keys: soft-caps,
// sliding-window pattern, LongRoPE factor ...).
func archHyperKeys(name string) []string {
	s, ok := arch.Lookup(name)
	if !ok {
		return hyperKeys
	}
	keys := append([]string(nil), hyperKeys...)
	for _, k := range s.Keys {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// Report is the inspect summary. Its JSON form is the documented schema.
type Report struct {
	Schema            string       `json:"schema"`
	File              string       `json:"file,omitempty"`
	Version           uint32       `json:"gguf_version"`
	FileSize          int64        `json:"file_size"`
	Alignment         uint64       `json:"alignment"`
	DataOffset        int64        `json:"data_offset"`
	Architecture      string       `json:"architecture"`
	KnownArchitecture bool         `json:"known_architecture"`
	Name              string       `json:"name"`
	FileType          *uint32      `json:"file_type,omitempty"`
	Parameters        uint64       `json:"parameters"`
	TensorCount       int          `json:"tensor_count"`
	TensorBytes       uint64       `json:"tensor_bytes"`
	TypeMix           []TypeCount  `json:"type_mix"`
	ContextLength     *uint64      `json:"context_length,omitempty"`
	Hyperparameters   []Hyper      `json:"hyperparameters"`
	Tokenizer         *Tokenizer   `json:"tokenizer,omitempty"`
	ChatTemplate      bool         `json:"chat_template"`
	Metadata          []Meta       `json:"metadata"`
	Tensors           []TensorJSON `json:"tensors"`

	opts Options
	kv   []gguf.KV
}

// TypeCount is the count and bytes of the tensors of one ggml type.
type TypeCount struct {
	Type  string `json:"type"`
	Count int    `json:"count"`
	Bytes uint64 `json:"bytes"`
}

// Hyper is one architecture hyperparameter.
type Hyper struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// Tokenizer summarises the tokenizer.ggml.* keys.
type Tokenizer struct {
	Model     string `json:"model"`
	Pre       string `json:"pre"`
	VocabSize int    `json:"vocab_size"`
	Merges    int    `json:"merges"`
	BOS       int64  `json:"bos_id"`
	EOS       int64  `json:"eos_id"`
}

// Meta is one metadata key as it appears in the JSON.
type Meta struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Len   *int   `json:"len,omitempty"`
	Head  any    `json:"head,omitempty"`
	Value any    `json:"value,omitempty"`
}

// TensorJSON is one tensor as it appears in the JSON.
type TensorJSON struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Dims   []uint64 `json:"dims"`
	Offset uint64   `json:"offset"`
	Bytes  uint64   `json:"bytes"`
}

// Build summarises f.
func Build(f *gguf.File, opts Options) *Report {
	r := &Report{
		Schema: Schema, File: opts.Name, Version: f.Version, FileSize: f.Size,
		Alignment: f.Alignment, DataOffset: f.DataOffset, TensorCount: len(f.Tensors),
		TypeMix: []TypeCount{}, Hyperparameters: []Hyper{}, Metadata: []Meta{}, Tensors: []TensorJSON{},
		opts: opts, kv: f.KV,
	}
	r.Architecture, _ = f.String("general.architecture")
	r.Name, _ = f.String("general.name")
	_, r.KnownArchitecture = arch.Lookup(r.Architecture)
	if ft, err := f.Uint32("general.file_type"); err == nil {
		r.FileType = &ft
	}
	mix := map[ggml.Type]*TypeCount{}
	for _, t := range f.Tensors {
		r.Parameters += t.Elements()
		r.TensorBytes += t.Size
		tc := mix[t.Type]
		if tc == nil {
			tc = &TypeCount{Type: t.Type.String()}
			mix[t.Type] = tc
		}
		tc.Count++
		tc.Bytes += t.Size
		r.Tensors = append(r.Tensors, TensorJSON{Name: t.Name, Type: t.Type.String(), Dims: t.Dims, Offset: t.Offset, Bytes: t.Size})
	}
	for id := ggml.Type(0); id < 1024; id++ { // id order, independent of map order
		if tc := mix[id]; tc != nil {
			r.TypeMix = append(r.TypeMix, *tc)
		}
	}
	if r.Architecture != "" {
		for _, k := range archHyperKeys(r.Architecture) {
			if v, ok := f.Get(r.Architecture + "." + k); ok && v.Type != gguf.TypeArray {
				r.Hyperparameters = append(r.Hyperparameters, Hyper{Key: k, Value: scalarJSON(v)})
			}
		}
		if n, err := f.Uint64(r.Architecture + ".context_length"); err == nil {
			r.ContextLength = &n
		}
	}
	for _, kv := range f.KV {
		if strings.HasPrefix(kv.Key, "tokenizer.ggml.") {
			r.Tokenizer = tokenizer(f)
			break
		}
	}
	_, r.ChatTemplate = f.Get("tokenizer.chat_template")
	for _, kv := range f.KV {
		r.Metadata = append(r.Metadata, meta(kv, opts.Full))
	}
	return r
}

func tokenizer(f *gguf.File) *Tokenizer {
	t := &Tokenizer{BOS: -1, EOS: -1}
	t.Model, _ = f.String("tokenizer.ggml.model")
	t.Pre, _ = f.String("tokenizer.ggml.pre")
	if v, ok := f.Get("tokenizer.ggml.tokens"); ok {
		t.VocabSize = v.Len()
	}
	if v, ok := f.Get("tokenizer.ggml.merges"); ok {
		t.Merges = v.Len()
	}
	if id, err := f.Int64("tokenizer.ggml.bos_token_id"); err == nil {
		t.BOS = id
	}
	if id, err := f.Int64("tokenizer.ggml.eos_token_id"); err == nil {
		t.EOS = id
	}
	return t
}

func meta(kv gguf.KV, full bool) Meta {
	m := Meta{Key: kv.Key, Type: kv.Value.TypeName()}
	if kv.Value.Type != gguf.TypeArray {
		m.Value = scalarJSON(kv.Value)
		if m.Value == nil { // never omit: encode explicitly
			m.Value = json.RawMessage("null")
		}
		return m
	}
	n := kv.Value.Len()
	m.Len = &n
	if full {
		m.Value = arrayJSON(kv.Value, n)
	} else {
		m.Head = arrayJSON(kv.Value, min(n, headLen))
	}
	return m
}

// floatJSON keeps non-finite floats representable in JSON.
func floatJSON(f float64, bits32 bool) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	if bits32 {
		return float32(f)
	}
	return f
}

func scalarJSON(v gguf.Value) any {
	switch d := v.Data.(type) {
	case float32:
		return floatJSON(float64(d), true)
	case float64:
		return floatJSON(d, false)
	}
	return v.Data
}

// arrayJSON returns the first n elements of an array value as JSON-ready
// values (numbers stay numbers: a []uint8 is not base64).
func arrayJSON(v gguf.Value, n int) []any {
	out := make([]any, n)
	switch d := v.Data.(type) {
	case []float32:
		for i := range out {
			out[i] = floatJSON(float64(d[i]), true)
		}
	case []float64:
		for i := range out {
			out[i] = floatJSON(d[i], false)
		}
	case []gguf.Value:
		for i := range out {
			out[i] = arrayJSON(d[i], d[i].Len())
		}
	case []uint8:
		fill(out, d)
	case []int8:
		fill(out, d)
	case []uint16:
		fill(out, d)
	case []int16:
		fill(out, d)
	case []uint32:
		fill(out, d)
	case []int32:
		fill(out, d)
	case []bool:
		fill(out, d)
	case []string:
		fill(out, d)
	case []uint64:
		fill(out, d)
	case []int64:
		fill(out, d)
	}
	return out
}

func fill[T any](out []any, d []T) {
	for i := range out {
		out[i] = d[i]
	}
}

// WriteJSON writes the report as one indented JSON document and a newline.
func (r *Report) WriteJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("inspect: encode json: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// ErrorJSON renders a parse failure in the documented error schema.
func ErrorJSON(err error) []byte {
	type ej struct {
		Category string `json:"category"`
		Offset   *int64 `json:"offset,omitempty"`
		Key      string `json:"key,omitempty"`
		Tensor   string `json:"tensor,omitempty"`
		Message  string `json:"message"`
	}
	out := struct {
		Schema string `json:"schema"`
		Error  ej     `json:"error"`
	}{Schema: Schema, Error: ej{Category: "io", Message: err.Error()}}
	var ge *gguf.Error
	if errors.As(err, &ge) {
		off := ge.Offset
		out.Error.Category = ge.Category.String()
		out.Error.Offset = &off
		out.Error.Key = ge.Key
		out.Error.Tensor = ge.Tensor
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out) // only strings and numbers: cannot fail
	return buf.Bytes()
}

// ErrorText renders a parse failure for a terminal: one line with the
// category first, so it can be grepped.
func ErrorText(err error) string {
	var ge *gguf.Error
	if errors.As(err, &ge) {
		return fmt.Sprintf("error: %s: %v\n", ge.Category, err)
	}
	return fmt.Sprintf("error: io: %v\n", err)
}
