package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzParse: no input panics or hangs; every rejection is a categorised
// *Error; every accepted file satisfies the layout invariants and survives a
// write/parse round trip. Seeded with the valid and malformed corpus.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/gguf/*/*.gguf")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	data, _ := writeFile(f, allTypesKV(f), testTensors()[:6])
	f.Add(data)
	// Seeds for the classes a corruption corpus found: strings longer than
	// the 64 KiB read window, many nested arrays, huge counts.
	f.Add(rawFile(2, rawStringKV("general.name", strings.Repeat("N", 70000)), rawStringKV("k", "v")))
	f.Add(rawFile(1, nestedArrayKV("x", 2000, TypeString, rawStr(binary.LittleEndian.AppendUint64(nil, 1), "x"))))
	f.Add(rawFile(1, nestedArrayKV("x", 2000, TypeUint8, binary.LittleEndian.AppendUint64(nil, 0))))
	huge := rawStr(nil, "x")
	huge = binary.LittleEndian.AppendUint32(huge, uint32(TypeArray))
	huge = binary.LittleEndian.AppendUint32(huge, uint32(TypeArray))
	huge = binary.LittleEndian.AppendUint64(huge, 1<<40) // 2^40 nested arrays claimed
	huge = binary.LittleEndian.AppendUint32(huge, uint32(TypeUint8))
	huge = binary.LittleEndian.AppendUint64(huge, 1<<40)
	f.Add(rawFile(1, huge))
	f.Add(hugeArrayFile())
	// Strings may be longer than the read window (the limits stay far
	// below what a fuzz input can hold, so Limit errors are reachable too).
	lim := Limits{MaxStringLen: 1 << 20, MaxArrayLen: 1 << 20, MaxHeaderBytes: 8 << 20}
	f.Fuzz(func(t *testing.T, b []byte) {
		pf, err := Parse(bytes.NewReader(b), int64(len(b)), lim)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Category < Truncated || e.Category > Unsupported {
				t.Fatalf("uncategorised error %T: %v", err, err)
			}
			if e.Offset < 0 || e.Offset > int64(len(b)) {
				t.Fatalf("error offset %d outside the %d-byte input: %v", e.Offset, len(b), err)
			}
			if len(err.Error()) > 1024 {
				t.Fatalf("error line of %d bytes", len(err.Error()))
			}
			return
		}
		if pf.BytesRead > int64(len(b)) {
			t.Fatalf("read %d bytes of a %d-byte input", pf.BytesRead, len(b))
		}
		// Long keys and string values are the file's bytes, not a
		// corrupted copy (the window once zeroed strings over 64 KiB).
		for _, kv := range pf.KV {
			if s, ok := kv.Value.Data.(string); ok && len(s) > 1024 && !bytes.Contains(b, []byte(s)) {
				t.Fatalf("string value of %q (%d bytes) is not in the input", QuoteName(kv.Key), len(s))
			}
			if len(kv.Key) > 1024 && !bytes.Contains(b, []byte(kv.Key)) {
				t.Fatalf("key of %d bytes is not in the input", len(kv.Key))
			}
		}
		for _, ti := range pf.Tensors {
			if ti.Offset%pf.Alignment != 0 || pf.DataOffset+int64(ti.Offset+ti.Size) > int64(len(b)) {
				t.Fatalf("accepted bad tensor %+v (data offset %d, size %d)", ti, pf.DataOffset, len(b))
			}
		}
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for _, kv := range pf.KV {
			if err := w.AddKV(kv.Key, kv.Value); err != nil {
				t.Fatalf("rewrite %q: %v", kv.Key, err)
			}
		}
		for _, ti := range pf.Tensors {
			if _, err := w.AddTensor(TensorInfo{Name: ti.Name, Type: ti.Type, Dims: ti.Dims}); err != nil {
				t.Fatalf("rewrite tensor: %v", err)
			}
		}
		if err := w.WriteHeader(); err != nil {
			t.Fatal(err)
		}
		if err := w.w.Flush(); err != nil {
			t.Fatal(err)
		}
		hdr := buf.Bytes()
		// Parse only the header (data is not materialised: sizes can be huge).
		r := &countingReader{header: hdr, size: int64(len(hdr)) + sumPadded(w.Tensors(), pf.Alignment)}
		again, err := Parse(r, r.size, lim)
		if err != nil {
			t.Fatalf("reparse: %v", err)
		}
		if diff := cmp.Diff(pf.KV, again.KV, cmpopts.EquateEmpty(), cmpopts.EquateNaNs()); diff != "" {
			t.Fatalf("KV changed on rewrite:\n%s", diff)
		}
	})
}

func sumPadded(ts []TensorInfo, align uint64) int64 {
	var n uint64
	for _, t := range ts {
		n = t.Offset + padTo(t.Size, align)
	}
	return int64(n)
}

func BenchmarkParseVocab(b *testing.B) {
	path := "../../../shared/vocab/ggml-vocab-llama-bpe.gguf"
	data, err := os.ReadFile(path)
	if err != nil {
		b.Skip("shared vocab absent")
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(data), int64(len(data)), DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}
