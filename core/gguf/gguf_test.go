package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/memvanta/memvanta/core/ggml"
)

func mustValue(t testing.TB, x any) Value {
	t.Helper()
	v, err := ValueOf(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// allTypesKV has one pair of every scalar type, every array element type,
// and nested arrays two levels deep.
func allTypesKV(t testing.TB) []KV {
	inner1 := mustValue(t, []int32{1, -2, 3})
	inner2 := mustValue(t, []int32{})
	deepInner := mustValue(t, []Value{mustValue(t, []string{"x", "y"})})
	vals := []any{
		uint8(200), int8(-100), uint16(60000), int16(-30000), uint32(4000000000), int32(-2000000000),
		float32(3.25), true, false, "hello, 世界", uint64(1 << 63), int64(-1 << 62), math.Pi,
		float32(math.Inf(-1)), "",
		[]uint8{0, 255}, []int8{-128, 127}, []uint16{1, 65535}, []int16{-32768, 32767},
		[]uint32{7, 8}, []int32{-1}, []float32{0.5, -0.25}, []bool{true, false, true},
		[]string{"<s>", "", "▁the"}, []uint64{math.MaxUint64}, []int64{math.MinInt64}, []float64{1e300},
		[]string{},
		[]Value{inner1, inner2},
		[]Value{deepInner},
	}
	kvs := make([]KV, len(vals))
	for i, x := range vals {
		kvs[i] = KV{Key: "test.k" + string(rune('a'+i)), Value: mustValue(t, x)}
	}
	return kvs
}

// writeFile encodes kvs and tensors with the Writer, filling tensor i's data
// with bytes derived from i, and returns the file and the assigned infos.
func writeFile(t testing.TB, kvs []KV, tensors []TensorInfo) ([]byte, []TensorInfo) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, kv := range kvs {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range tensors {
		if _, err := w.AddTensor(ti); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	for i, ti := range w.Tensors() {
		data := make([]byte, ti.Size)
		for j := range data {
			data[j] = byte(i*31 + j)
		}
		// Write in uneven pieces to exercise the streaming path.
		for len(data) > 0 {
			k := min(len(data), 7)
			if _, err := w.Write(data[:k]); err != nil {
				t.Fatal(err)
			}
			data = data[k:]
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.Tensors()
}

func testTensors() []TensorInfo {
	var ts []TensorInfo
	for i, typ := range ggml.All() {
		n := uint64(typ.BlockSize())
		ts = append(ts, TensorInfo{Name: "t." + typ.String(), Type: typ, Dims: []uint64{n * 2, uint64(i%3 + 1)}})
	}
	ts = append(ts, TensorInfo{Name: "four", Type: ggml.F32, Dims: []uint64{3, 2, 2, 2}})
	ts = append(ts, TensorInfo{Name: "empty", Type: ggml.F32, Dims: []uint64{0}})
	return ts
}

func TestRoundTrip(t *testing.T) {
	for _, align := range []uint32{0, 1, 64} {
		kvs := allTypesKV(t)
		if align != 0 {
			kvs = append([]KV{{KeyAlignment, mustValue(t, align)}}, kvs...)
		}
		data, infos := writeFile(t, kvs, testTensors())
		f, err := Parse(bytes.NewReader(data), int64(len(data)), DefaultLimits())
		if err != nil {
			t.Fatalf("align %d: %v", align, err)
		}
		if diff := cmp.Diff(kvs, f.KV, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("align %d: KV mismatch (-want +got):\n%s", align, diff)
		}
		if diff := cmp.Diff(infos, f.Tensors); diff != "" {
			t.Errorf("align %d: tensors mismatch (-want +got):\n%s", align, diff)
		}
		wantAlign := uint64(DefaultAlignment)
		if align != 0 {
			wantAlign = uint64(align)
		}
		if f.Alignment != wantAlign || f.DataOffset%int64(wantAlign) != 0 || f.Version != 3 {
			t.Errorf("align %d: got version %d alignment %d data offset %d", align, f.Version, f.Alignment, f.DataOffset)
		}
		// Tensor data is where the table says, with the bytes written.
		for i, ti := range f.Tensors {
			for j := uint64(0); j < ti.Size; j++ {
				if got := data[f.DataOffset+int64(ti.Offset+j)]; got != byte(i*31+int(j)) {
					t.Fatalf("align %d: tensor %s byte %d = %d", align, ti.Name, j, got)
				}
			}
			if ti.Offset%wantAlign != 0 {
				t.Errorf("tensor %s offset %d misaligned", ti.Name, ti.Offset)
			}
		}
		// Writing the parsed file again reproduces the same bytes.
		again, _ := writeFile(t, f.KV, f.Tensors)
		if !bytes.Equal(again, data) {
			t.Errorf("align %d: rewrite differs", align)
		}
	}
}

func TestParseV2(t *testing.T) {
	data, _ := writeFile(t, allTypesKV(t), testTensors()[:3])
	binary.LittleEndian.PutUint32(data[4:], 2)
	f, err := Parse(bytes.NewReader(data), int64(len(data)), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 2 {
		t.Errorf("version %d", f.Version)
	}
}

func TestAccessors(t *testing.T) {
	kvs := []KV{
		{"u8", mustValue(t, uint8(7))}, {"i32neg", mustValue(t, int32(-5))}, {"u64big", mustValue(t, uint64(1<<40))},
		{"u64huge", mustValue(t, uint64(math.MaxUint64))}, {"f32", mustValue(t, float32(1.5))}, {"f64", mustValue(t, 2.5)},
		{"b", mustValue(t, true)}, {"s", mustValue(t, "str")}, {"ss", mustValue(t, []string{"a", "b"})},
		{"fs", mustValue(t, []float32{1, 2})}, {"is", mustValue(t, []int32{-1, 2})},
	}
	data, _ := writeFile(t, kvs, nil)
	f, err := Parse(bytes.NewReader(data), int64(len(data)), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want any, err, wantErr error) {
		t.Helper()
		if wantErr != nil {
			if !errors.Is(err, wantErr) {
				t.Errorf("%s: err %v, want %v", name, err, wantErr)
			}
			return
		}
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("%s = %v, %v; want %v", name, got, err, want)
		}
	}
	u32, err := f.Uint32("u8")
	check("Uint32(u8)", u32, uint32(7), err, nil)
	_, err = f.Uint32("i32neg")
	check("Uint32(i32neg)", nil, nil, err, ErrType)
	_, err = f.Uint32("u64big")
	check("Uint32(u64big)", nil, nil, err, ErrType)
	u64, err := f.Uint64("u64big")
	check("Uint64(u64big)", u64, uint64(1<<40), err, nil)
	i64, err := f.Int64("i32neg")
	check("Int64(i32neg)", i64, int64(-5), err, nil)
	_, err = f.Int64("u64huge")
	check("Int64(u64huge)", nil, nil, err, ErrType)
	f32, err := f.Float32("f32")
	check("Float32(f32)", f32, float32(1.5), err, nil)
	f32, err = f.Float32("f64")
	check("Float32(f64)", f32, float32(2.5), err, nil)
	_, err = f.Float32("u8")
	check("Float32(u8)", nil, nil, err, ErrType)
	b, err := f.Bool("b")
	check("Bool", b, true, err, nil)
	s, err := f.String("s")
	check("String", s, "str", err, nil)
	_, err = f.String("u8")
	check("String(u8)", nil, nil, err, ErrType)
	_, err = f.String("nope")
	check("String(nope)", nil, nil, err, ErrNotFound)
	ss, err := f.Strings("ss")
	check("Strings", ss, []string{"a", "b"}, err, nil)
	_, err = f.Strings("fs")
	check("Strings(fs)", nil, nil, err, ErrType)
	fs, err := f.Float32s("fs")
	check("Float32s", fs, []float32{1, 2}, err, nil)
	is, err := f.Int32s("is")
	check("Int32s", is, []int32{-1, 2}, err, nil)
	_, err = f.Int32s("missing")
	check("Int32s(missing)", nil, nil, err, ErrNotFound)
	_, err = f.Bool("s")
	check("Bool(s)", nil, nil, err, ErrType)
	if _, ok := f.Get("s"); !ok {
		t.Error("Get(s) missing")
	}
}

func TestTensorLookup(t *testing.T) {
	data, infos := writeFile(t, nil, testTensors())
	f, err := Parse(bytes.NewReader(data), int64(len(data)), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range infos {
		got, ok := f.Tensor(want.Name)
		if !ok || !cmp.Equal(got, want) {
			t.Errorf("Tensor(%q) = %+v, %v", want.Name, got, ok)
		}
	}
	if _, ok := f.Tensor("absent"); ok {
		t.Error("absent tensor found")
	}
	// A File assembled by hand (no index) still answers.
	g := &File{KV: f.KV, Tensors: f.Tensors}
	if _, ok := g.Tensor(infos[0].Name); !ok {
		t.Error("unindexed lookup failed")
	}
	if q, ok := f.Tensor("t.Q4_0"); !ok || q.Size != 2*18*q.Dims[1] || q.Elements() != 64*q.Dims[1] {
		t.Errorf("Q4_0 tensor %+v", q)
	}
}

// hugeArrayFile is a 1 KiB file whose one metadata pair claims 2^40 u8s.
func hugeArrayFile() []byte {
	b := []byte("GGUF")
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.LittleEndian.AppendUint64(b, 1)
	b = binary.LittleEndian.AppendUint64(b, 1)
	b = append(b, 'x')
	b = binary.LittleEndian.AppendUint32(b, uint32(TypeArray))
	b = binary.LittleEndian.AppendUint32(b, uint32(TypeUint8))
	b = binary.LittleEndian.AppendUint64(b, 1<<40)
	return append(b, make([]byte, 1024-len(b))...)
}

func TestHugeCountBoundedAllocation(t *testing.T) {
	data := hugeArrayFile()
	for _, tc := range []struct {
		name string
		lim  Limits
		want error
	}{
		{"default limits", DefaultLimits(), ErrLimit},
		{"limits off", Limits{MaxArrayLen: math.MaxUint64}, ErrTruncated},
	} {
		var err error
		allocs := testing.AllocsPerRun(20, func() {
			_, err = Parse(bytes.NewReader(data), int64(len(data)), tc.lim)
		})
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
		var ms0, ms1 = new(runtimeMem), new(runtimeMem)
		ms0.read()
		_, _ = Parse(bytes.NewReader(data), int64(len(data)), tc.lim)
		ms1.read()
		if allocs > 30 || ms1.total-ms0.total > 128<<10 {
			t.Errorf("%s: %v allocs, %d bytes to reject a 1 KiB file", tc.name, allocs, ms1.total-ms0.total)
		}
	}
}

// countingReader serves a synthetic file of any size: the real header
// bytes followed by zeros, counting every byte handed out.
type countingReader struct {
	header []byte
	size   int64
	read   int64
	calls  int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= c.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && off+int64(n) < c.size {
		o := off + int64(n)
		if o < int64(len(c.header)) {
			n += copy(p[n:], c.header[o:])
		} else {
			k := min(int64(len(p)-n), c.size-o)
			clear(p[n : n+int(k)])
			n += int(k)
		}
	}
	c.read += int64(n)
	c.calls++
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func TestParseReadsOnlyHeader(t *testing.T) {
	// A 20 GiB llama-shaped table: 200 tensors of 100 MiB F16 each.
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.AddKV("general.architecture", mustValue(t, "llama")); err != nil {
		t.Fatal(err)
	}
	// A 150k-token vocabulary makes the header span many windows.
	toks := make([]string, 150000)
	for i := range toks {
		toks[i] = fmt.Sprintf("tok%d", i)
	}
	if err := w.AddKV("tokenizer.ggml.tokens", mustValue(t, toks)); err != nil {
		t.Fatal(err)
	}
	var total uint64
	for i := 0; i < 200; i++ {
		ti, err := w.AddTensor(TensorInfo{Name: "blk." + string(rune('A'+i%26)) + string(rune('a'+i/26)), Type: ggml.F16, Dims: []uint64{8192, 6400}})
		if err != nil {
			t.Fatal(err)
		}
		total = ti.Offset + padTo(ti.Size, DefaultAlignment)
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	if err := w.w.Flush(); err != nil {
		t.Fatal(err)
	}
	header := buf.Bytes()
	r := &countingReader{header: header, size: int64(len(header)) + int64(total)}
	f, err := Parse(r, r.size, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != 200 {
		t.Fatalf("%d tensors", len(f.Tensors))
	}
	if got, _ := f.Strings("tokenizer.ggml.tokens"); len(got) != len(toks) || got[149999] != "tok149999" {
		t.Fatalf("tokens not read back")
	}
	if r.read != f.BytesRead || r.read > int64(len(header))+windowSize {
		t.Errorf("read %d bytes (BytesRead %d) of a %d-byte file with a %d-byte header", r.read, f.BytesRead, r.size, len(header))
	}
	// Buffered: one ReadAt per window, not one per field.
	t.Logf("%d-byte header read in %d calls", len(header), r.calls)
	if max := len(header)/windowSize + 2; r.calls > max {
		t.Errorf("%d ReadAt calls for a %d-byte header, want <= %d", r.calls, len(header), max)
	}
}

func TestLimits(t *testing.T) {
	data, _ := writeFile(t, allTypesKV(t), testTensors())
	for _, tc := range []struct {
		name string
		lim  Limits
	}{
		{"string", Limits{MaxStringLen: 5}},
		{"array", Limits{MaxArrayLen: 2}},
		{"kv", Limits{MaxKV: 3}},
		{"tensors", Limits{MaxTensors: 3}},
		{"depth", Limits{MaxDepth: 2}},
		{"header", Limits{MaxHeaderBytes: 200}},
	} {
		_, err := Parse(bytes.NewReader(data), int64(len(data)), tc.lim)
		var e *Error
		if !errors.As(err, &e) || e.Category != Limit || !errors.Is(err, ErrLimit) || errors.Is(err, ErrTruncated) {
			t.Errorf("%s: %v, want a limit error", tc.name, err)
		}
	}
	// A depth of 3 (array of array of array) is within a limit of 3.
	if _, err := Parse(bytes.NewReader(data), int64(len(data)), Limits{MaxDepth: 3}); err != nil {
		t.Errorf("depth 3: %v", err)
	}
}

type failingReader struct{ err error }

func (f failingReader) ReadAt([]byte, int64) (int, error) { return 0, f.err }

func TestReaderErrorIsNotAFormatError(t *testing.T) {
	boom := errors.New("disk on fire")
	_, err := Parse(failingReader{boom}, 1000, DefaultLimits())
	var e *Error
	if !errors.Is(err, boom) || errors.As(err, &e) {
		t.Errorf("err = %v (%T), want the reader's error unwrapped and no *Error", err, err)
	}
	// A reader that ends early although the size said more: truncated.
	data := hugeArrayFile()[:30]
	_, err = Parse(bytes.NewReader(data), 1024, DefaultLimits())
	if !errors.Is(err, ErrTruncated) {
		t.Errorf("short reader: %v", err)
	}
}

func TestErrorFields(t *testing.T) {
	data, _ := writeFile(t, []KV{{"general.name", mustValue(t, "x")}, {"flag", mustValue(t, true)}}, nil)
	i := bytes.LastIndexByte(data[:len(data)-1], 1) // the bool byte
	for data[i] != 1 {
		i--
	}
	data[i] = 9
	_, err := Parse(bytes.NewReader(data), int64(len(data)), DefaultLimits())
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v", err)
	}
	if e.Category != Invalid || e.Key != "flag" || e.Offset != int64(i) || !errors.Is(err, ErrInvalid) {
		t.Errorf("got %+v, want invalid at %d key flag", e, i)
	}
}

func TestWriterRejects(t *testing.T) {
	w := NewWriter(io.Discard)
	if err := w.AddKV("a", mustValue(t, uint8(1))); err != nil {
		t.Fatal(err)
	}
	if err := w.AddKV("a", mustValue(t, uint8(1))); err == nil {
		t.Error("duplicate key accepted")
	}
	if err := w.AddKV("bad", Value{Type: TypeUint32, Data: "x"}); !errors.Is(err, ErrType) {
		t.Errorf("mismatched value: %v", err)
	}
	if err := w.AddKV(KeyAlignment, mustValue(t, uint32(48))); err == nil {
		t.Error("alignment 48 accepted")
	}
	if _, err := w.AddTensor(TensorInfo{Name: "q", Type: ggml.Q4_0, Dims: []uint64{33}}); err == nil {
		t.Error("Q4_0 row of 33 accepted")
	}
	if _, err := w.AddTensor(TensorInfo{Name: "x", Type: ggml.F32, Dims: []uint64{4}, Size: 3}); err == nil {
		t.Error("wrong size accepted")
	}
	if _, err := w.AddTensor(TensorInfo{Name: "x", Type: ggml.F32, Dims: []uint64{4}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddTensor(TensorInfo{Name: "x", Type: ggml.F32, Dims: []uint64{4}}); err == nil {
		t.Error("duplicate tensor accepted")
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close with 8 of 16 bytes written succeeded")
	}
	w2 := NewWriter(io.Discard)
	if _, err := w2.Write([]byte{1}); err == nil {
		t.Error("data before header accepted")
	}
}

func TestTensorSize(t *testing.T) {
	for _, tc := range []struct {
		typ  ggml.Type
		dims []uint64
		want uint64
	}{
		{ggml.F32, []uint64{10, 3}, 120},
		{ggml.Q4_0, []uint64{64, 2}, 72},
		{ggml.Q4_K, []uint64{256, 1, 2}, 288},
		{ggml.Q8_0, []uint64{4096, 4096}, 4096 / 32 * 34 * 4096},
		{ggml.BF16, []uint64{3}, 6},
	} {
		got, err := TensorSize(tc.typ, tc.dims)
		if err != nil || got != tc.want {
			t.Errorf("%s %v = %d, %v; want %d", tc.typ, tc.dims, got, err, tc.want)
		}
	}
	if _, err := TensorSize(ggml.F64, []uint64{1 << 40, 1 << 40}); err == nil {
		t.Error("overflow accepted")
	}
}
