package gguf

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"unsafe"

	"github.com/memvanta/memvanta/core/ggml"
)

// Magic is the four bytes every GGUF file starts with.
const Magic = "GGUF"

// DefaultAlignment is the tensor data alignment when general.alignment is absent.
const DefaultAlignment = 32

// KeyAlignment is the metadata key that overrides DefaultAlignment.
const KeyAlignment = "general.alignment"

// MaxDims is the most dimensions a ggml tensor can have.
const MaxDims = 4

// KV is one metadata key/value pair.
type KV struct {
	Key   string
	Value Value
}

// File is the parsed header and tensor table of a GGUF file. Tensor data is
// not read: it lives at DataOffset+TensorInfo.Offset in the source.
type File struct {
	Version    uint32
	Alignment  uint64
	DataOffset int64 // absolute file offset of the tensor data section
	Size       int64 // file size given to Parse
	KV         []KV
	Tensors    []TensorInfo

	// BytesRead is how many bytes Parse fetched from the reader (the header
	// and tensor table plus at most one read-ahead window).
	BytesRead int64

	kvIndex     map[string]int
	tensorIndex map[string]int
}

type parser struct {
	w      *window
	lim    Limits
	key    string
	tensor string
	// arena holds the bytes of short strings of every string array in the
	// file. It is shared by all arrays (one per array once made a file of
	// many nested one-string arrays allocate 64 KiB for every few bytes).
	arena []byte
}

// fail builds a *Error carrying the current key/tensor context.
func (p *parser) fail(c Category, off int64, format string, args ...any) *Error {
	return &Error{Category: c, Offset: off, Key: CapName(p.key), Tensor: CapName(p.tensor), Err: fmt.Errorf(format, args...)}
}

// ctx adds the current key/tensor to an error from the window.
func (p *parser) ctx(err error) error {
	var e *Error
	if errors.As(err, &e) {
		if e.Key == "" {
			e.Key = CapName(p.key)
		}
		if e.Tensor == "" {
			e.Tensor = CapName(p.tensor)
		}
	}
	return err
}

// Parse reads and validates the header, metadata and tensor table of a GGUF
// v2 or v3 little-endian file of the given size. It never reads tensor data.
// Defects of the file are reported as *Error; failures of r are returned
// wrapped as they are.
func Parse(r io.ReaderAt, size int64, lim Limits) (*File, error) {
	lim = lim.withDefaults()
	if size < 0 {
		return nil, &Error{Category: Invalid, Err: fmt.Errorf("negative file size %d", size)}
	}
	p := &parser{w: newWindow(r, size, lim.MaxHeaderBytes), lim: lim}
	f, err := p.parse()
	if err != nil {
		return nil, p.ctx(err)
	}
	f.BytesRead = p.w.nread
	return f, nil
}

func (p *parser) parse() (*File, error) {
	w := p.w
	magic, err := w.bytes(4)
	if err != nil {
		return nil, err
	}
	if string(magic) != Magic {
		return nil, p.fail(Invalid, 0, "bad magic %q, want %q (not a GGUF file)", magic, Magic)
	}
	version, err := w.u32()
	if err != nil {
		return nil, err
	}
	switch {
	case version == 2 || version == 3:
	case version == 1:
		return nil, p.fail(Unsupported, 4, "GGUF version 1 is not supported (only v2 and v3); re-convert the model with a current llama.cpp")
	case bits.ReverseBytes32(version) >= 1 && bits.ReverseBytes32(version) <= 3:
		return nil, p.fail(Unsupported, 4, "big-endian GGUF (version %d byte-swapped) is not supported; only little-endian files are", bits.ReverseBytes32(version))
	default:
		return nil, p.fail(Unsupported, 4, "unknown GGUF version %d (supported: 2, 3)", version)
	}
	f := &File{Version: version, Size: w.size, Alignment: DefaultAlignment}

	off := w.offset()
	nTensors, err := w.u64()
	if err != nil {
		return nil, err
	}
	if nTensors > p.lim.MaxTensors {
		return nil, p.fail(Limit, off, "tensor count %d exceeds limit %d", nTensors, p.lim.MaxTensors)
	}
	off = w.offset()
	nKV, err := w.u64()
	if err != nil {
		return nil, err
	}
	if nKV > p.lim.MaxKV {
		return nil, p.fail(Limit, off, "metadata count %d exceeds limit %d", nKV, p.lim.MaxKV)
	}
	// Each KV needs at least 13 bytes and each tensor info 32: a count the
	// file cannot hold is rejected before any allocation.
	const minKV, minTensor = 8 + 4 + 1, 8 + 4 + 8 + 4 + 8
	if rem := w.remaining(); nKV > uint64(rem)/minKV || nTensors > uint64(rem)/minTensor || nKV*minKV+nTensors*minTensor > uint64(rem) {
		return nil, p.fail(Truncated, off, "%d metadata pairs and %d tensor infos cannot fit in the %d bytes left in the file", nKV, nTensors, rem)
	}

	f.KV = make([]KV, 0, nKV)
	f.kvIndex = make(map[string]int, nKV)
	kvOffs := make([]int64, 0, nKV) // where each pair starts, for errors
	for i := uint64(0); i < nKV; i++ {
		p.key = ""
		koff := w.offset()
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.key = key
		if key == "" {
			return nil, p.fail(Invalid, koff, "metadata key %d is empty", i)
		}
		if _, dup := f.kvIndex[key]; dup {
			return nil, p.fail(Invalid, koff, "duplicate metadata key")
		}
		toff := w.offset()
		t, err := w.u32()
		if err != nil {
			return nil, err
		}
		v, err := p.value(ValueType(t), toff, 0)
		if err != nil {
			return nil, err
		}
		f.kvIndex[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: v})
		kvOffs = append(kvOffs, koff)
	}
	p.key = ""

	if i, ok := f.kvIndex[KeyAlignment]; ok {
		p.key = KeyAlignment
		v := f.KV[i].Value
		a, isU32 := v.Data.(uint32)
		if !isU32 {
			return nil, p.fail(Invalid, kvOffs[i], "general.alignment must be a u32, got %s", v.TypeName())
		}
		if a == 0 || a&(a-1) != 0 {
			return nil, p.fail(Invalid, kvOffs[i], "general.alignment %d is not a power of two", a)
		}
		f.Alignment = uint64(a)
		p.key = ""
	}

	f.Tensors = make([]TensorInfo, 0, nTensors)
	f.tensorIndex = make(map[string]int, nTensors)
	toffs := make([]int64, 0, nTensors) // where each tensor info starts, for errors
	for i := uint64(0); i < nTensors; i++ {
		p.tensor = ""
		ioff := w.offset()
		ti, err := p.tensorInfo(i)
		if err != nil {
			return nil, err
		}
		if _, dup := f.tensorIndex[ti.Name]; dup {
			return nil, p.fail(Invalid, ioff, "duplicate tensor name")
		}
		f.tensorIndex[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
		toffs = append(toffs, ioff)
	}
	p.tensor = ""

	end := w.offset()
	pad := (f.Alignment - uint64(end)%f.Alignment) % f.Alignment
	f.DataOffset = end + int64(pad)
	if len(f.Tensors) > 0 && f.DataOffset > w.size {
		return nil, p.fail(Truncated, end, "data section would start at %d, past the end of the %d-byte file", f.DataOffset, w.size)
	}
	dataLen := uint64(w.size - min(f.DataOffset, w.size))
	for i := range f.Tensors {
		t := &f.Tensors[i]
		p.tensor = t.Name
		if t.Offset%f.Alignment != 0 {
			return nil, p.fail(Layout, toffs[i], "data offset %d is not a multiple of the alignment %d", t.Offset, f.Alignment)
		}
		if t.Offset > dataLen || t.Size > dataLen-t.Offset {
			return nil, p.fail(Layout, toffs[i], "data [%d, +%d) lies outside the %d-byte data section (file size %d; truncated file?)", t.Offset, t.Size, dataLen, w.size)
		}
	}
	p.tensor = ""
	// Overlap: sort by offset and compare neighbours. Zero-size tensors
	// occupy nothing and cannot overlap.
	order := make([]int, 0, len(f.Tensors))
	for i := range f.Tensors {
		if f.Tensors[i].Size > 0 {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(a, b int) bool { return f.Tensors[order[a]].Offset < f.Tensors[order[b]].Offset })
	for k := 1; k < len(order); k++ {
		a, b := &f.Tensors[order[k-1]], &f.Tensors[order[k]]
		if a.Offset+a.Size > b.Offset {
			p.tensor = b.Name
			return nil, p.fail(Layout, toffs[order[k]], "data [%d, %d) overlaps tensor %s [%d, %d)", b.Offset, b.Offset+b.Size, QuoteName(a.Name), a.Offset, a.Offset+a.Size)
		}
	}
	p.tensor = ""
	return f, nil
}

// str reads a length-prefixed string, checking the length against the limit
// and the bytes left before allocating it.
func (p *parser) str() (string, error) {
	off := p.w.offset()
	n, err := p.w.u64()
	if err != nil {
		return "", err
	}
	if n > p.lim.MaxStringLen {
		return "", p.fail(Limit, off, "string length %d exceeds limit %d", n, p.lim.MaxStringLen)
	}
	if n > uint64(p.w.remaining()) {
		return "", p.fail(Truncated, off, "string length %d exceeds the %d bytes left in the file", n, p.w.remaining())
	}
	b, err := p.w.bytes(int(n))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// value reads one value of type t; toff is where its type id was, depth the
// array nesting level of the value being read.
func (p *parser) value(t ValueType, toff int64, depth int) (Value, error) {
	w := p.w
	switch t {
	case TypeUint8:
		v, err := w.u8()
		return Value{Type: t, Data: v}, err
	case TypeInt8:
		v, err := w.u8()
		return Value{Type: t, Data: int8(v)}, err
	case TypeUint16:
		v, err := w.u16()
		return Value{Type: t, Data: v}, err
	case TypeInt16:
		v, err := w.u16()
		return Value{Type: t, Data: int16(v)}, err
	case TypeUint32:
		v, err := w.u32()
		return Value{Type: t, Data: v}, err
	case TypeInt32:
		v, err := w.u32()
		return Value{Type: t, Data: int32(v)}, err
	case TypeFloat32:
		v, err := w.f32()
		return Value{Type: t, Data: v}, err
	case TypeUint64:
		v, err := w.u64()
		return Value{Type: t, Data: v}, err
	case TypeInt64:
		v, err := w.u64()
		return Value{Type: t, Data: int64(v)}, err
	case TypeFloat64:
		v, err := w.f64()
		return Value{Type: t, Data: v}, err
	case TypeBool:
		off := w.offset()
		v, err := w.u8()
		if err != nil {
			return Value{}, err
		}
		if v > 1 {
			return Value{}, p.fail(Invalid, off, "bool byte is %d, want 0 or 1", v)
		}
		return Value{Type: t, Data: v == 1}, nil
	case TypeString:
		s, err := p.str()
		return Value{Type: t, Data: s}, err
	case TypeArray:
		return p.array(toff, depth+1)
	}
	return Value{}, p.fail(Invalid, toff, "unknown metadata value type %d", uint32(t))
}

func (p *parser) array(toff int64, depth int) (Value, error) {
	w := p.w
	if depth > p.lim.MaxDepth {
		return Value{}, p.fail(Limit, toff, "array nesting depth %d exceeds limit %d", depth, p.lim.MaxDepth)
	}
	eoff := w.offset()
	et32, err := w.u32()
	if err != nil {
		return Value{}, err
	}
	et := ValueType(et32)
	if !et.Valid() {
		return Value{}, p.fail(Invalid, eoff, "unknown array element type %d", et32)
	}
	noff := w.offset()
	n, err := w.u64()
	if err != nil {
		return Value{}, err
	}
	if n > p.lim.MaxArrayLen {
		return Value{}, p.fail(Limit, noff, "array length %d exceeds limit %d", n, p.lim.MaxArrayLen)
	}
	if rem := uint64(w.remaining()); n > rem/uint64(et.minSize()) {
		return Value{}, p.fail(Truncated, noff, "array of %d %s needs at least %d bytes, file has %d left", n, et, n*uint64(et.minSize()), rem)
	}
	v := Value{Type: TypeArray, Elem: et}
	if n == 0 {
		// An empty array is 12 bytes of file; boxing a fresh empty slice
		// for each would cost 24 more bytes of heap per 12 read.
		v.Data = emptyArrays[et]
		return v, nil
	}
	switch et {
	case TypeUint8:
		v.Data, err = readN(w, n, func() (uint8, error) { return w.u8() })
	case TypeInt8:
		v.Data, err = readN(w, n, func() (int8, error) { x, err := w.u8(); return int8(x), err })
	case TypeUint16:
		v.Data, err = readN(w, n, w.u16)
	case TypeInt16:
		v.Data, err = readN(w, n, func() (int16, error) { x, err := w.u16(); return int16(x), err })
	case TypeUint32:
		v.Data, err = readN(w, n, w.u32)
	case TypeInt32:
		v.Data, err = readN(w, n, func() (int32, error) { x, err := w.u32(); return int32(x), err })
	case TypeFloat32:
		v.Data, err = readN(w, n, w.f32)
	case TypeUint64:
		v.Data, err = readN(w, n, w.u64)
	case TypeInt64:
		v.Data, err = readN(w, n, func() (int64, error) { x, err := w.u64(); return int64(x), err })
	case TypeFloat64:
		v.Data, err = readN(w, n, w.f64)
	case TypeBool:
		v.Data, err = readN(w, n, func() (bool, error) {
			off := w.offset()
			x, err := w.u8()
			if err == nil && x > 1 {
				err = p.fail(Invalid, off, "bool byte is %d, want 0 or 1", x)
			}
			return x == 1, err
		})
	case TypeString:
		v.Data, err = p.strings(n)
	case TypeArray:
		v.Data, err = readN(w, n, func() (Value, error) { return p.value(TypeArray, w.offset(), depth) })
	}
	if err != nil {
		return Value{}, err
	}
	return v, nil
}

// arenaSize is the size of one string arena: strings of up to 4 KiB are
// packed into arenas, so at most 4 KiB of each is left unused.
const arenaSize = 64 << 10

// strings reads n strings for an array. Vocabularies are 100k+ short
// strings; copying them into 64 KiB arenas shared by the whole parse
// instead of one allocation each halves parse time. Arena bytes are never
// written after a string is made from them, which is what unsafe.String
// requires.
func (p *parser) strings(n uint64) ([]string, error) {
	if n == 0 {
		return []string{}, nil
	}
	out := make([]string, n)
	for i := range out {
		off := p.w.offset()
		l, err := p.w.u64()
		if err != nil {
			return nil, err
		}
		if l > p.lim.MaxStringLen {
			return nil, p.fail(Limit, off, "string length %d exceeds limit %d", l, p.lim.MaxStringLen)
		}
		if l > uint64(p.w.remaining()) {
			return nil, p.fail(Truncated, off, "string length %d exceeds the %d bytes left in the file", l, p.w.remaining())
		}
		b, err := p.w.bytes(int(l))
		if err != nil {
			return nil, err
		}
		if l == 0 {
			continue
		}
		if l > 4096 {
			out[i] = string(b)
			continue
		}
		if cap(p.arena)-len(p.arena) < int(l) {
			p.arena = make([]byte, 0, arenaSize)
		}
		start := len(p.arena)
		p.arena = append(p.arena, b...)
		out[i] = unsafe.String(&p.arena[start], int(l))
	}
	return out, nil
}

// emptyArrays holds, boxed once, the empty typed slice that Value.Data is
// for an empty array of each element type. The slices have no elements, so
// sharing them shares nothing a caller could change.
var emptyArrays = [...]any{
	TypeUint8: []uint8{}, TypeInt8: []int8{}, TypeUint16: []uint16{}, TypeInt16: []int16{},
	TypeUint32: []uint32{}, TypeInt32: []int32{}, TypeFloat32: []float32{}, TypeBool: []bool{},
	TypeString: []string{}, TypeArray: []Value{}, TypeUint64: []uint64{}, TypeInt64: []int64{},
	TypeFloat64: []float64{},
}

// readN reads n elements; n has been checked against the bytes left, so the
// allocation is bounded by a small multiple of the file size.
func readN[T any](w *window, n uint64, read func() (T, error)) ([]T, error) {
	out := make([]T, n)
	for i := range out {
		x, err := read()
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func (p *parser) tensorInfo(i uint64) (TensorInfo, error) {
	w := p.w
	noff := w.offset()
	name, err := p.str()
	if err != nil {
		return TensorInfo{}, err
	}
	p.tensor = name
	if name == "" {
		p.tensor = fmt.Sprintf("#%d", i)
		return TensorInfo{}, p.fail(Invalid, noff, "tensor %d has an empty name", i)
	}
	doff := w.offset()
	nd, err := w.u32()
	if err != nil {
		return TensorInfo{}, err
	}
	if nd < 1 || nd > MaxDims {
		return TensorInfo{}, p.fail(Invalid, doff, "%d dimensions, want 1..%d", nd, MaxDims)
	}
	dims := make([]uint64, nd)
	elems := uint64(1)
	for j := range dims {
		off := w.offset()
		d, err := w.u64()
		if err != nil {
			return TensorInfo{}, err
		}
		if d > 1<<63-1 {
			return TensorInfo{}, p.fail(Invalid, off, "dimension %d is %d, larger than int64", j, d)
		}
		hi, lo := bits.Mul64(elems, d)
		if hi != 0 || lo > 1<<63-1 {
			return TensorInfo{}, p.fail(Invalid, off, "element count overflows int64 at dimension %d", j)
		}
		elems = lo
		dims[j] = d
	}
	toff := w.offset()
	t32, err := w.u32()
	if err != nil {
		return TensorInfo{}, err
	}
	typ := ggml.Type(t32)
	if !typ.Known() {
		return TensorInfo{}, p.fail(Unsupported, toff, "unknown ggml type id %d", t32)
	}
	offset, err := w.u64()
	if err != nil {
		return TensorInfo{}, err
	}
	row, err := ggml.RowSize(typ, dims[0])
	if err != nil {
		return TensorInfo{}, p.fail(Invalid, toff, "%w", err)
	}
	var rows uint64 // elems / row length; 0 when the row is empty
	if dims[0] != 0 {
		rows = elems / dims[0]
	}
	hi, size := bits.Mul64(row, rows)
	if hi != 0 {
		return TensorInfo{}, p.fail(Invalid, toff, "byte size overflows 64 bits")
	}
	return TensorInfo{Name: name, Type: typ, Dims: dims, Offset: offset, Size: size}, nil
}
