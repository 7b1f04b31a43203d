package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/memvanta/memvanta/core/ggml"
)

// Writer writes a GGUF v3 file: declare metadata (AddKV) and tensors
// (AddTensor), WriteHeader, then stream every tensor's bytes in declaration
// order through Write, then Close. Offsets and padding are computed by the
// Writer, so tensor data never has to be in memory at once: synthesising a
// 7B-shaped model only needs one row at a time.
type Writer struct {
	w       *bufio.Writer
	kv      []KV
	keys    map[string]bool
	tensors []TensorInfo
	names   map[string]bool
	align   uint64
	next    uint64 // offset the next added tensor gets

	headerDone bool
	cur        int    // tensor whose data is being written
	done       uint64 // bytes of tensors[cur] written
	err        error  // sticky
}

// NewWriter returns a Writer with the default alignment (32).
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 1<<16), keys: map[string]bool{}, names: map[string]bool{}, align: DefaultAlignment}
}

// AddKV appends a metadata pair. A general.alignment pair (u32, power of
// two) changes the alignment, so it must come before any AddTensor.
func (w *Writer) AddKV(key string, v Value) error {
	if w.headerDone {
		return errors.New("gguf: AddKV after WriteHeader")
	}
	if key == "" {
		return errors.New("gguf: empty metadata key")
	}
	if w.keys[key] {
		return fmt.Errorf("gguf: duplicate metadata key %s", QuoteName(key))
	}
	if err := checkValue(v, 0); err != nil {
		return fmt.Errorf("gguf: key %s: %w", QuoteName(key), err)
	}
	if key == KeyAlignment {
		a, ok := v.Data.(uint32)
		if !ok || a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: %s must be a power-of-two u32, got %s %v", KeyAlignment, v.TypeName(), v.Data)
		}
		if len(w.tensors) > 0 {
			return fmt.Errorf("gguf: %s must be set before the first tensor", KeyAlignment)
		}
		w.align = uint64(a)
	}
	w.keys[key] = true
	w.kv = append(w.kv, KV{Key: key, Value: v})
	return nil
}

// AddTensor declares the next tensor from its Name, Type and Dims. Its Size
// is computed (a non-zero info.Size must agree) and its Offset assigned; the
// completed info is returned.
func (w *Writer) AddTensor(info TensorInfo) (TensorInfo, error) {
	if w.headerDone {
		return TensorInfo{}, errors.New("gguf: AddTensor after WriteHeader")
	}
	if info.Name == "" {
		return TensorInfo{}, errors.New("gguf: empty tensor name")
	}
	if w.names[info.Name] {
		return TensorInfo{}, fmt.Errorf("gguf: duplicate tensor name %s", QuoteName(info.Name))
	}
	if len(info.Dims) < 1 || len(info.Dims) > MaxDims {
		return TensorInfo{}, fmt.Errorf("gguf: tensor %s has %d dims, want 1..%d", QuoteName(info.Name), len(info.Dims), MaxDims)
	}
	size, err := TensorSize(info.Type, info.Dims)
	if err != nil {
		return TensorInfo{}, fmt.Errorf("gguf: tensor %s: %w", QuoteName(info.Name), err)
	}
	if info.Size != 0 && info.Size != size {
		return TensorInfo{}, fmt.Errorf("gguf: tensor %s: size %d given, %s %v is %d bytes", QuoteName(info.Name), info.Size, info.Type, info.Dims, size)
	}
	out := TensorInfo{Name: info.Name, Type: info.Type, Dims: append([]uint64(nil), info.Dims...), Offset: w.next, Size: size}
	w.next += padTo(size, w.align)
	w.names[info.Name] = true
	w.tensors = append(w.tensors, out)
	return out, nil
}

// Tensors returns the declared tensors with their assigned offsets.
func (w *Writer) Tensors() []TensorInfo { return w.tensors }

// TensorSize is the byte size of a tensor of type t with the given dims, or
// an error when the row is not whole blocks or the size overflows.
func TensorSize(t ggml.Type, dims []uint64) (uint64, error) {
	if len(dims) == 0 {
		return 0, errors.New("no dimensions")
	}
	row, err := ggml.RowSize(t, dims[0])
	if err != nil {
		return 0, err
	}
	size := row
	for _, d := range dims[1:] {
		hi, lo := bitsMul(size, d)
		if hi != 0 {
			return 0, fmt.Errorf("%s %v overflows 64 bits", t, dims)
		}
		size = lo
	}
	return size, nil
}

func padTo(n, align uint64) uint64 { return (n + align - 1) / align * align }

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return w.err
}

// WriteHeader writes the header, metadata, tensor table and the padding up
// to the data section.
func (w *Writer) WriteHeader() error {
	if w.err != nil {
		return w.err
	}
	if w.headerDone {
		return errors.New("gguf: WriteHeader called twice")
	}
	w.headerDone = true
	e := &enc{w: w.w}
	e.bytes([]byte(Magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kv)))
	for _, kv := range w.kv {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.Type))
		e.value(kv.Value)
	}
	for _, t := range w.tensors {
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(t.Offset)
	}
	e.zeros(padTo(e.n, w.align) - e.n)
	if e.err != nil {
		return w.fail(fmt.Errorf("gguf: write header: %w", e.err))
	}
	w.skipEmpty()
	return nil
}

// skipEmpty advances past zero-size tensors, which take no data.
func (w *Writer) skipEmpty() {
	for w.cur < len(w.tensors) && w.tensors[w.cur].Size == 0 {
		w.cur++
	}
}

// Write streams tensor data: bytes fill the tensors in declaration order,
// and the alignment padding after each tensor is inserted automatically.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if !w.headerDone {
		return 0, w.fail(errors.New("gguf: tensor data written before WriteHeader"))
	}
	n := 0
	for len(p) > 0 {
		if w.cur >= len(w.tensors) {
			return n, w.fail(fmt.Errorf("gguf: %d bytes of tensor data beyond the last tensor", len(p)))
		}
		t := w.tensors[w.cur]
		k := min(uint64(len(p)), t.Size-w.done)
		m, err := w.w.Write(p[:k])
		n += m
		if err != nil {
			return n, w.fail(err)
		}
		w.done += k
		p = p[k:]
		if w.done == t.Size {
			if err := writeZeros(w.w, padTo(t.Size, w.align)-t.Size); err != nil {
				return n, w.fail(err)
			}
			w.cur++
			w.done = 0
			w.skipEmpty()
		}
	}
	return n, nil
}

// Close checks that every tensor's data was written and flushes. It does
// not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if !w.headerDone {
		if err := w.WriteHeader(); err != nil {
			return err
		}
	}
	if w.cur < len(w.tensors) {
		t := w.tensors[w.cur]
		return w.fail(fmt.Errorf("gguf: tensor %s: %d of %d data bytes written", QuoteName(t.Name), w.done, t.Size))
	}
	return w.fail(w.w.Flush())
}

// Flush pushes buffered bytes to the underlying writer without the
// completeness check of Close (e.g. to use a header on its own).
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.fail(w.w.Flush())
}

// DataSize is the bytes of the data section once every tensor is written
// (each tensor padded to the alignment).
func (w *Writer) DataSize() uint64 { return w.next }

var zeroBuf [256]byte

func writeZeros(w io.Writer, n uint64) error {
	for n > 0 {
		k := min(n, uint64(len(zeroBuf)))
		if _, err := w.Write(zeroBuf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// checkValue verifies that Data holds the Go type Type/Elem promise, so the
// header is never written half-way and then found unencodable.
func checkValue(v Value, depth int) error {
	if depth > 64 {
		return errors.New("array nesting too deep")
	}
	want := func(ok bool) error {
		if !ok {
			return fmt.Errorf("value of type %s holds %T: %w", v.TypeName(), v.Data, ErrType)
		}
		return nil
	}
	switch v.Type {
	case TypeUint8:
		_, ok := v.Data.(uint8)
		return want(ok)
	case TypeInt8:
		_, ok := v.Data.(int8)
		return want(ok)
	case TypeUint16:
		_, ok := v.Data.(uint16)
		return want(ok)
	case TypeInt16:
		_, ok := v.Data.(int16)
		return want(ok)
	case TypeUint32:
		_, ok := v.Data.(uint32)
		return want(ok)
	case TypeInt32:
		_, ok := v.Data.(int32)
		return want(ok)
	case TypeFloat32:
		_, ok := v.Data.(float32)
		return want(ok)
	case TypeBool:
		_, ok := v.Data.(bool)
		return want(ok)
	case TypeString:
		_, ok := v.Data.(string)
		return want(ok)
	case TypeUint64:
		_, ok := v.Data.(uint64)
		return want(ok)
	case TypeInt64:
		_, ok := v.Data.(int64)
		return want(ok)
	case TypeFloat64:
		_, ok := v.Data.(float64)
		return want(ok)
	case TypeArray:
		if v.Elem == TypeArray {
			items, ok := v.Data.([]Value)
			if !ok {
				return want(false)
			}
			for i, it := range items {
				if it.Type != TypeArray {
					return fmt.Errorf("nested array element %d is %s, not an array", i, it.TypeName())
				}
				if err := checkValue(it, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		if !v.Elem.Valid() {
			return fmt.Errorf("unknown array element type %d", uint32(v.Elem))
		}
		w, err := ValueOf(v.Data)
		if err != nil || w.Type != TypeArray || w.Elem != v.Elem {
			return want(false)
		}
		return nil
	}
	return fmt.Errorf("unknown value type %d", uint32(v.Type))
}

// enc is a little-endian encoder that remembers the first error and counts
// bytes (for the header padding).
type enc struct {
	w   io.Writer
	n   uint64
	err error
	b   [8]byte
}

func (e *enc) bytes(p []byte) {
	if e.err != nil {
		return
	}
	_, e.err = e.w.Write(p)
	e.n += uint64(len(p))
}
func (e *enc) u8(v uint8)   { e.b[0] = v; e.bytes(e.b[:1]) }
func (e *enc) u16(v uint16) { binary.LittleEndian.PutUint16(e.b[:], v); e.bytes(e.b[:2]) }
func (e *enc) u32(v uint32) { binary.LittleEndian.PutUint32(e.b[:], v); e.bytes(e.b[:4]) }
func (e *enc) u64(v uint64) { binary.LittleEndian.PutUint64(e.b[:], v); e.bytes(e.b[:8]) }
func (e *enc) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
		e.n += uint64(len(s))
	}
}
func (e *enc) zeros(n uint64) {
	if e.err == nil {
		e.err = writeZeros(e.w, n)
		e.n += n
	}
}
func (e *enc) boolean(b bool) {
	if b {
		e.u8(1)
	} else {
		e.u8(0)
	}
}

// value writes v's payload (not its type id).
func (e *enc) value(v Value) {
	switch d := v.Data.(type) {
	case uint8:
		e.u8(d)
	case int8:
		e.u8(uint8(d))
	case uint16:
		e.u16(d)
	case int16:
		e.u16(uint16(d))
	case uint32:
		e.u32(d)
	case int32:
		e.u32(uint32(d))
	case float32:
		e.u32(math.Float32bits(d))
	case bool:
		e.boolean(d)
	case string:
		e.str(d)
	case uint64:
		e.u64(d)
	case int64:
		e.u64(uint64(d))
	case float64:
		e.u64(math.Float64bits(d))
	default:
		e.u32(uint32(v.Elem))
		e.u64(uint64(v.Len()))
		switch d := v.Data.(type) {
		case []uint8:
			e.bytes(d)
		case []int8:
			for _, x := range d {
				e.u8(uint8(x))
			}
		case []uint16:
			for _, x := range d {
				e.u16(x)
			}
		case []int16:
			for _, x := range d {
				e.u16(uint16(x))
			}
		case []uint32:
			for _, x := range d {
				e.u32(x)
			}
		case []int32:
			for _, x := range d {
				e.u32(uint32(x))
			}
		case []float32:
			for _, x := range d {
				e.u32(math.Float32bits(x))
			}
		case []bool:
			for _, x := range d {
				e.boolean(x)
			}
		case []string:
			for _, x := range d {
				e.str(x)
			}
		case []uint64:
			for _, x := range d {
				e.u64(x)
			}
		case []int64:
			for _, x := range d {
				e.u64(uint64(x))
			}
		case []float64:
			for _, x := range d {
				e.u64(math.Float64bits(x))
			}
		case []Value:
			// Elements of an array of arrays carry no type id of their
			// own: each is its element type, count and items.
			for _, x := range d {
				e.value(x)
			}
		}
	}
}

func bitsMul(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }
