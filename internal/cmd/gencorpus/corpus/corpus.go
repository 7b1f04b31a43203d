// Package corpus builds the malformed-GGUF corpus: small files, each with
// exactly one defect, and the error category the parser must report for it.
// The bytes are assembled by hand here (not with gguf.Writer) so the corpus
// checks the parser against an independent encoding of the format.
// gencorpus writes Cases to testdata/gguf/malformed; the gguf
// tests regenerate them and fail if the committed files are stale.
package corpus

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Case is one malformed file.
type Case struct {
	Name     string // file name stem, unique
	Category string // expected gguf.Category name: truncated, limit, invalid, layout, unsupported
	Why      string // the one defect
	Data     []byte
}

// Value type ids (GGUF spec).
const (
	tU8, tI8, tU16, tI16, tU32, tI32, tF32, tBool, tStr, tArr, tU64, tI64, tF64 = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
)

// ggml type ids used here.
const (
	gF32, gF16, gQ4_0, gQ8_0, gQ4_K, gF64 = 0, 1, 2, 8, 12, 28
)

type enc struct{ b []byte }

func (e *enc) raw(p ...byte) *enc { e.b = append(e.b, p...); return e }
func (e *enc) u8(v uint8) *enc    { e.b = append(e.b, v); return e }
func (e *enc) u32(v uint32) *enc  { e.b = binary.LittleEndian.AppendUint32(e.b, v); return e }
func (e *enc) u64(v uint64) *enc  { e.b = binary.LittleEndian.AppendUint64(e.b, v); return e }
func (e *enc) str(s string) *enc  { return e.u64(uint64(len(s))).raw([]byte(s)...) }
func (e *enc) f32(v float32) *enc { return e.u32(math.Float32bits(v)) }
func kv(key string, typ uint32, payload func(*enc)) []byte {
	e := (&enc{}).str(key).u32(typ)
	payload(e)
	return e.b
}

type tensor struct {
	name string
	dims []uint64
	typ  uint32
	off  uint64
}

func (t tensor) enc() []byte {
	e := (&enc{}).str(t.name).u32(uint32(len(t.dims)))
	for _, d := range t.dims {
		e.u64(d)
	}
	return e.u32(t.typ).u64(t.off).b
}

// file describes a GGUF file to assemble. Counts default to len(kvs) and
// len(tensors) unless overridden; data is appended after padding the header
// to align.
type file struct {
	magic      string
	version    uint32
	nT, nKV    *uint64
	kvs        [][]byte
	tensors    [][]byte
	align      uint64
	dataLen    int
	noPad      bool
	rawVersion []byte
}

func (f file) build() []byte {
	e := &enc{}
	magic := f.magic
	if magic == "" {
		magic = "GGUF"
	}
	e.raw([]byte(magic)...)
	if f.rawVersion != nil {
		e.raw(f.rawVersion...)
	} else {
		v := f.version
		if v == 0 {
			v = 3
		}
		e.u32(v)
	}
	nT, nKV := uint64(len(f.tensors)), uint64(len(f.kvs))
	if f.nT != nil {
		nT = *f.nT
	}
	if f.nKV != nil {
		nKV = *f.nKV
	}
	e.u64(nT).u64(nKV)
	for _, k := range f.kvs {
		e.raw(k...)
	}
	for _, t := range f.tensors {
		e.raw(t...)
	}
	align := f.align
	if align == 0 {
		align = 32
	}
	if !f.noPad {
		for uint64(len(e.b))%align != 0 {
			e.u8(0)
		}
	}
	for i := 0; i < f.dataLen; i++ {
		e.u8(byte(i*7 + 1))
	}
	return e.b
}

func n(v uint64) *uint64 { return &v }

// make70k is 70,000 copies of c: longer than the parser's 64 KiB window.
func make70k(c byte) []byte {
	b := make([]byte, 70000)
	for i := range b {
		b[i] = c
	}
	return b
}

// Base metadata: one pair of each common kind, as a real model has.
func baseKVs() [][]byte {
	return [][]byte{
		kv("general.architecture", tStr, func(e *enc) { e.str("llama") }),
		kv("general.name", tStr, func(e *enc) { e.str("corpus") }),
		kv("llama.block_count", tU32, func(e *enc) { e.u32(2) }),
		kv("llama.rope.freq_base", tF32, func(e *enc) { e.f32(10000) }),
		kv("tokenizer.ggml.add_bos_token", tBool, func(e *enc) { e.u8(1) }),
		kv("tokenizer.ggml.tokens", tArr, func(e *enc) { e.u32(tStr).u64(3).str("<s>").str("a").str("b") }),
		kv("tokenizer.ggml.token_type", tArr, func(e *enc) { e.u32(tI32).u64(3).u32(3).u32(1).u32(1) }),
	}
}

// Base tensors: F32 [8] = 32 bytes at 0, Q8_0 [32 2] = 68 bytes at 32.
func baseTensors() [][]byte {
	return [][]byte{
		tensor{"a.weight", []uint64{8}, gF32, 0}.enc(),
		tensor{"b.weight", []uint64{32, 2}, gQ8_0, 32}.enc(),
	}
}

const baseData = 32 + 68

func base() file { return file{kvs: baseKVs(), tensors: baseTensors(), dataLen: baseData} }

// Valid returns the well-formed file every corruption starts from.
func Valid() []byte { return base().build() }

// boundaries returns named offsets of every field boundary in the header of
// Valid(), for truncation cases.
func boundaries() []struct {
	name string
	off  int
} {
	type mark = struct {
		name string
		off  int
	}
	var out []mark
	off := 0
	add := func(name string, n int) { off += n; out = append(out, mark{name, off}) }
	out = append(out, mark{"empty", 0})
	out = append(out, mark{"mid-magic", 2})
	add("after-magic", 4)
	out = append(out, mark{"mid-version", 6})
	add("after-version", 4)
	add("after-tensor-count", 8)
	add("after-kv-count", 8)
	// First KV (string): key len, key bytes, type, value len, value bytes.
	out = append(out, mark{"mid-key-length", off + 3})
	add("after-key-length", 8)
	out = append(out, mark{"mid-key", off + 5})
	add("after-key", len("general.architecture"))
	add("after-value-type", 4)
	add("after-string-length", 8)
	out = append(out, mark{"mid-string", off + 2})
	kvs := baseKVs()
	off = 24 + len(kvs[0]) + len(kvs[1])
	// u32 value
	out = append(out, mark{"mid-u32-value", off + 8 + len("llama.block_count") + 4 + 2})
	off += len(kvs[2])
	out = append(out, mark{"mid-f32-value", off + 8 + len("llama.rope.freq_base") + 4 + 1})
	off += len(kvs[3])
	out = append(out, mark{"before-bool-value", off + 8 + len("tokenizer.ggml.add_bos_token") + 4})
	off += len(kvs[4])
	a := off + 8 + len("tokenizer.ggml.tokens") + 4
	out = append(out, mark{"after-array-type", a})
	out = append(out, mark{"mid-array-elem-type", a + 2})
	out = append(out, mark{"after-array-elem-type", a + 4})
	out = append(out, mark{"after-array-length", a + 12})
	out = append(out, mark{"mid-array-strings", a + 12 + 8 + 3 + 4})
	off += len(kvs[5])
	out = append(out, mark{"mid-i32-array", off + 8 + len("tokenizer.ggml.token_type") + 4 + 4 + 8 + 6})
	off += len(kvs[6])
	out = append(out, mark{"before-tensor-table", off})
	out = append(out, mark{"after-tensor-name-length", off + 8})
	out = append(out, mark{"mid-tensor-name", off + 8 + 3})
	out = append(out, mark{"after-tensor-name", off + 8 + len("a.weight")})
	out = append(out, mark{"after-n-dims", off + 8 + len("a.weight") + 4})
	out = append(out, mark{"mid-dim", off + 8 + len("a.weight") + 4 + 5})
	out = append(out, mark{"after-dims", off + 8 + len("a.weight") + 4 + 8})
	out = append(out, mark{"after-tensor-type", off + 8 + len("a.weight") + 4 + 8 + 4})
	out = append(out, mark{"mid-tensor-offset", off + 8 + len("a.weight") + 4 + 8 + 4 + 4})
	off += len(baseTensors()[0])
	out = append(out, mark{"mid-second-tensor", off + 8 + 4})
	off += len(baseTensors()[1])
	out = append(out, mark{"mid-data-padding", off + 1})
	return out
}

// Cases returns every corruption, in a fixed order.
func Cases() []Case {
	var cs []Case
	add := func(name, cat, why string, data []byte) {
		cs = append(cs, Case{Name: name, Category: cat, Why: why, Data: data})
	}
	valid := Valid()
	for _, m := range boundaries() {
		add("trunc-"+m.name, "truncated", fmt.Sprintf("file cut at byte %d (%s)", m.off, m.name), valid[:m.off])
	}
	add("trunc-in-tensor-data", "layout", "file cut inside the tensor data", valid[:len(valid)-10])

	// Header.
	f := base()
	f.magic = "GGUG"
	add("bad-magic", "invalid", "magic is GGUG", f.build())
	add("magic-lowercase", "invalid", "magic is gguf", file{magic: "gguf"}.build())
	add("version-1", "unsupported", "GGUF v1", file{version: 1}.build())
	add("version-4", "unsupported", "unknown version 4", file{version: 4}.build())
	add("version-0", "unsupported", "version 0", file{rawVersion: []byte{0, 0, 0, 0}}.build())
	add("big-endian-v3", "unsupported", "version field big-endian 3", file{rawVersion: []byte{0, 0, 0, 3}}.build())
	add("big-endian-v2", "unsupported", "version field big-endian 2", file{rawVersion: []byte{0, 0, 0, 2}}.build())

	// Counts.
	f = base()
	f.nT = n(1 << 40)
	add("tensor-count-huge", "limit", "tensor count 2^40", f.build())
	f = base()
	f.nKV = n(1 << 40)
	add("kv-count-huge", "limit", "metadata count 2^40", f.build())
	f = base()
	f.nKV = n(1000)
	add("kv-count-past-eof", "truncated", "1000 metadata pairs in a small file", f.build())
	f = base()
	f.nT = n(1000)
	add("tensor-count-past-eof", "truncated", "1000 tensor infos in a small file", f.build())
	f = base()
	f.nKV = n(8)
	add("kv-count-one-too-many", "invalid", "one more pair than written: the tensor table is read as a key", f.build())

	// Strings.
	withKV := func(extra []byte) file {
		f := base()
		f.kvs = append(f.kvs, extra)
		return f
	}
	hugeKey := (&enc{}).u64(1 << 40).raw([]byte("x")...).u32(tU8).u8(0).b
	withKV2 := func(a, b []byte) file {
		f := base()
		f.kvs = append(f.kvs, a, b)
		return f
	}
	add("key-length-huge", "limit", "key length 2^40", withKV(hugeKey).build())
	longKey := (&enc{}).u64(5000).raw([]byte("key")...).b
	add("key-length-past-eof", "truncated", "key length 5000 in a small file", withKV(longKey).build())
	add("string-length-huge", "limit", "string value length 2^40", withKV(kv("s", tStr, func(e *enc) { e.u64(1 << 40) })).build())
	add("string-length-past-eof", "truncated", "string value length 1 MiB", withKV(kv("s", tStr, func(e *enc) { e.u64(1<<20).raw('a', 'b') })).build())
	add("empty-key", "invalid", "zero-length key", withKV(kv("", tU8, func(e *enc) { e.u8(1) })).build())
	add("duplicate-key", "invalid", "general.name twice", withKV(kv("general.name", tStr, func(e *enc) { e.str("again") })).build())

	// Value types.
	add("value-type-13", "invalid", "value type 13", withKV(kv("x", 13, func(e *enc) { e.u32(0) })).build())
	add("value-type-max", "invalid", "value type 0xffffffff", withKV(kv("x", 0xffffffff, func(e *enc) { e.u32(0) })).build())
	add("array-elem-type-bad", "invalid", "array element type 99", withKV(kv("x", tArr, func(e *enc) { e.u32(99).u64(1).u32(0) })).build())
	add("bool-byte-2", "invalid", "bool stored as 2", withKV(kv("x", tBool, func(e *enc) { e.u8(2) })).build())
	add("bool-array-byte-ff", "invalid", "bool array element 0xff", withKV(kv("x", tArr, func(e *enc) { e.u32(tBool).u64(3).u8(0).u8(1).u8(0xff) })).build())

	// Arrays.
	add("array-length-huge", "limit", "u8 array of 2^40 elements", withKV(kv("x", tArr, func(e *enc) { e.u32(tU8).u64(1 << 40) })).build())
	add("array-length-past-eof", "truncated", "u32 array of 1M elements in a small file", withKV(kv("x", tArr, func(e *enc) { e.u32(tU32).u64(1 << 20).u32(1) })).build())
	add("string-array-past-eof", "truncated", "string array of 1M elements", withKV(kv("x", tArr, func(e *enc) { e.u32(tStr).u64(1 << 20).str("a") })).build())
	add("string-in-array-huge", "limit", "string array element of length 2^40", withKV(kv("x", tArr, func(e *enc) { e.u32(tStr).u64(2).str("a").u64(1 << 40) })).build())
	add("nested-array-past-eof", "truncated", "array of 1M arrays", withKV(kv("x", tArr, func(e *enc) { e.u32(tArr).u64(1 << 20).u32(tU8).u64(0) })).build())
	add("nested-inner-elem-bad", "invalid", "inner array element type 77", withKV(kv("x", tArr, func(e *enc) { e.u32(tArr).u64(1).u32(77).u64(0) })).build())
	deep := func(depth int) []byte {
		e := (&enc{}).str("deep").u32(tArr)
		for i := 1; i < depth; i++ {
			e.u32(tArr).u64(1)
		}
		e.u32(tU8).u64(0)
		return e.b
	}
	add("nesting-depth-9", "limit", "arrays nested 9 deep (limit 8)", withKV(deep(9)).build())
	add("nesting-depth-200", "limit", "arrays nested 200 deep", withKV(deep(200)).build())

	// Hostile shapes found by a corruption corpus (issue 14): strings longer
	// than the parser's 64 KiB read window, many nested arrays (each once
	// allocated a fresh 64 KiB arena), and names long enough to make an
	// unbounded error line.
	longKey70k := string(make70k('k'))
	add("long-key-duplicate", "invalid", "70,000-byte key written twice (longer than the read window)",
		withKV2(kv(longKey70k, tU8, func(e *enc) { e.u8(1) }), kv(longKey70k, tU8, func(e *enc) { e.u8(2) })).build())
	add("long-key-bad-value-type", "invalid", "70,000-byte key with value type 99 (the error quotes a capped name)",
		withKV(kv(longKey70k, 99, func(e *enc) { e.u32(0) })).build())
	add("nested-one-string-arrays-past-eof", "truncated", "10,000 nested one-string arrays, then a pair the file does not hold",
		func() []byte {
			f := withKV(kv("x", tArr, func(e *enc) {
				e.u32(tArr).u64(10000)
				for range 10000 {
					e.u32(tStr).u64(1).str("s")
				}
			}))
			f.nKV = n(uint64(len(f.kvs) + 1))
			f.tensors = nil
			f.dataLen = 0
			f.noPad = true
			return f.build()
		}())
	add("nested-empty-arrays-past-eof", "truncated", "10,000 empty nested arrays, then a pair the file does not hold",
		func() []byte {
			f := withKV(kv("x", tArr, func(e *enc) {
				e.u32(tArr).u64(10000)
				for range 10000 {
					e.u32(tU8).u64(0)
				}
			}))
			f.nKV = n(uint64(len(f.kvs) + 1))
			f.tensors = nil
			f.dataLen = 0
			f.noPad = true
			return f.build()
		}())

	// Alignment.
	withAlign := func(payload []byte) file {
		f := base()
		f.kvs = append(f.kvs, payload)
		return f
	}
	alignU32 := func(a uint32) []byte { return kv("general.alignment", tU32, func(e *enc) { e.u32(a) }) }
	add("alignment-zero", "invalid", "general.alignment 0", withAlign(alignU32(0)).build())
	add("alignment-3", "invalid", "general.alignment 3", withAlign(alignU32(3)).build())
	add("alignment-48", "invalid", "general.alignment 48", withAlign(alignU32(48)).build())
	add("alignment-u64", "invalid", "general.alignment stored as u64", withAlign(kv("general.alignment", tU64, func(e *enc) { e.u64(32) })).build())
	add("alignment-string", "invalid", "general.alignment stored as a string", withAlign(kv("general.alignment", tStr, func(e *enc) { e.str("32") })).build())
	f = withAlign(alignU32(64))
	f.align = 64
	f.tensors = [][]byte{tensor{"a.weight", []uint64{8}, gF32, 0}.enc(), tensor{"b.weight", []uint64{32, 2}, gQ8_0, 32}.enc()}
	f.dataLen = 64 + 68
	add("offset-misaligned-align-64", "layout", "offset 32 under general.alignment 64", f.build())

	// Tensor infos.
	withTensors := func(ts ...tensor) file {
		f := base()
		f.tensors = nil
		for _, t := range ts {
			f.tensors = append(f.tensors, t.enc())
		}
		return f
	}
	a := tensor{"a.weight", []uint64{8}, gF32, 0}
	add("n-dims-0", "invalid", "tensor with 0 dims", withTensors(tensor{"z", nil, gF32, 0}).build())
	add("n-dims-5", "invalid", "tensor with 5 dims", withTensors(tensor{"z", []uint64{1, 1, 1, 1, 1}, gF32, 0}).build())
	nd := (&enc{}).str("z").u32(0xffffffff).b
	f = base()
	f.tensors = [][]byte{nd}
	add("n-dims-max", "invalid", "tensor claiming 2^32-1 dims", f.build())
	add("dim-over-int64", "invalid", "dimension 2^63", withTensors(tensor{"z", []uint64{1 << 63}, gF32, 0}).build())
	add("dims-product-overflow", "invalid", "dims 2^32 x 2^32", withTensors(tensor{"z", []uint64{1 << 32, 1 << 32}, gF32, 0}).build())
	add("bytes-overflow", "invalid", "F64 of 2^62 elements: 2^65 bytes", withTensors(tensor{"z", []uint64{1 << 31, 1 << 31}, gF64, 0}).build())
	add("ggml-type-removed-4", "unsupported", "ggml type id 4 (removed Q4_2)", withTensors(tensor{"z", []uint64{32}, 4, 0}).build())
	add("ggml-type-31", "unsupported", "ggml type id 31 (removed)", withTensors(tensor{"z", []uint64{32}, 31, 0}).build())
	add("ggml-type-1000", "unsupported", "ggml type id 1000", withTensors(tensor{"z", []uint64{32}, 1000, 0}).build())
	add("row-not-block-multiple-q4_0", "invalid", "Q4_0 row of 33 elements", withTensors(tensor{"z", []uint64{33}, gQ4_0, 0}).build())
	add("row-not-block-multiple-q4_k", "invalid", "Q4_K row of 32 elements (block 256)", withTensors(tensor{"z", []uint64{32, 4}, gQ4_K, 0}).build())
	add("tensor-name-huge", "limit", "tensor name length 2^40", func() []byte {
		f := base()
		f.tensors = [][]byte{(&enc{}).u64(1 << 40).b}
		return f.build()
	}())
	add("tensor-name-empty", "invalid", "empty tensor name", withTensors(a, tensor{"", []uint64{8}, gF32, 32}).build())
	add("duplicate-tensor-name", "invalid", "a.weight twice", withTensors(a, tensor{"a.weight", []uint64{8}, gF32, 32}).build())

	// Data layout.
	add("offset-misaligned-1", "layout", "offset 1", withTensors(tensor{"a.weight", []uint64{8}, gF32, 1}).build())
	add("offset-misaligned-16", "layout", "second tensor at 16 with alignment 32", withTensors(a, tensor{"b.weight", []uint64{32, 2}, gQ8_0, 48}).build())
	add("overlap", "layout", "second tensor starts inside the first", withTensors(tensor{"a.weight", []uint64{16}, gF32, 0}, tensor{"b.weight", []uint64{8}, gF32, 32}).build())
	add("overlap-same-offset", "layout", "two tensors at offset 0", withTensors(a, tensor{"b.weight", []uint64{32, 2}, gQ8_0, 0}).build())
	add("overlap-contained", "layout", "small tensor inside a larger later-listed one", withTensors(tensor{"b.weight", []uint64{8}, gF32, 32}, tensor{"a.weight", []uint64{25}, gF32, 0}).build())
	add("offset-past-eof", "layout", "offset 2^40", withTensors(tensor{"a.weight", []uint64{8}, gF32, 1 << 40}).build())
	add("offset-wraps", "layout", "offset near 2^64 so offset+size wraps", withTensors(tensor{"a.weight", []uint64{8}, gF32, 1<<64 - 32}).build())
	add("size-past-eof", "layout", "tensor bigger than the data section", withTensors(a, tensor{"b.weight", []uint64{32, 200}, gQ8_0, 32}).build())
	f = base()
	f.noPad = true
	f.dataLen = 0
	add("no-data-section", "truncated", "tensor table with no padding or data after it", f.build())
	return cs
}

// Entry is one manifest line.
type Entry struct {
	File     string `json:"file"`
	Category string `json:"category"`
	Why      string `json:"why"`
}

// Manifest lists the cases as committed in manifest.json.
func Manifest(cs []Case) []Entry {
	out := make([]Entry, len(cs))
	for i, c := range cs {
		out[i] = Entry{File: c.Name + ".gguf", Category: c.Category, Why: c.Why}
	}
	return out
}

// ValidFiles are the well-formed seed files (for fuzzing and as the
// corruption base), by file name.
func ValidFiles() map[string][]byte {
	return map[string][]byte{"base.gguf": Valid()}
}
