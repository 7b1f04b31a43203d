// Command wasmpack rewrites the data section of a guest module built by the
// Go toolchain into a few large segments. Go emits one active segment per
// run of non-zero bytes, tens of thousands for a guest, and wazero decodes,
// allocates and copies each one on every start; packed, the same memory
// image costs a handful. The transformation is exact: the module's memory
// is its own (not imported) and starts zeroed, so writing the bytes of the
// original segments, in their order, into one image and emitting the
// image's non-zero stretches yields identical memory after instantiation.
// Anything that would make that untrue (passive or non-zero-memory
// segments, a data count section that instructions may refer to, an
// imported memory, a non-constant offset) is refused with an error rather
// than packed.
//
// Usage: go run ./internal/wasmpack IN.wasm OUT.wasm   (build-guest.sh runs it)
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: wasmpack IN.wasm OUT.wasm")
		os.Exit(2)
	}
	in, err := os.ReadFile(os.Args[1])
	if err == nil {
		var out []byte
		if out, _, _, err = Pack(in); err == nil {
			err = os.WriteFile(os.Args[2], out, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// MinGap is the shortest run of zeros at which the packed image is split
// into two segments: a longer run costs more bytes in the file than a
// segment header.
const MinGap = 1024

// maxImage bounds the image a module may describe (the 4 GiB of wasm32 would
// be allowed by the format but no guest is near it).
const maxImage = 256 << 20

const (
	secImport    = 2
	secData      = 11
	secDataCount = 12
)

// Pack returns wasm with its data section packed, and the segment counts
// before and after.
func Pack(wasm []byte) (out []byte, before, after int, err error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:8], []byte("\x00asm\x01\x00\x00\x00")) {
		return nil, 0, 0, errors.New("wasmpack: not a version-1 wasm module")
	}
	out = append(out, wasm[:8]...)
	seen := false
	for r := (reader{b: wasm, i: 8}); r.i < len(r.b); {
		start := r.i
		id := r.byte()
		n := r.u32()
		if r.err != nil || uint64(r.i)+uint64(n) > uint64(len(r.b)) {
			return nil, 0, 0, fmt.Errorf("wasmpack: section at offset %d runs past the end", start)
		}
		body := r.b[r.i : r.i+int(n)]
		r.i += int(n)
		switch id {
		case secDataCount:
			return nil, 0, 0, errors.New("wasmpack: the module has a data count section (memory.init/data.drop may name segments)")
		case secImport:
			if err := noMemoryImport(body); err != nil {
				return nil, 0, 0, err
			}
		case secData:
			if seen {
				return nil, 0, 0, errors.New("wasmpack: two data sections")
			}
			seen = true
			packed, b, a, err := packData(body)
			if err != nil {
				return nil, 0, 0, err
			}
			before, after = b, a
			out = append(out, secData)
			out = binary.AppendUvarint(out, uint64(len(packed)))
			out = append(out, packed...)
			continue
		}
		out = append(out, r.b[start:r.i]...)
	}
	if !seen {
		return nil, 0, 0, errors.New("wasmpack: no data section")
	}
	return out, before, after, nil
}

type segment struct {
	off  uint32
	data []byte
}

func packData(body []byte) ([]byte, int, int, error) {
	r := reader{b: body}
	n := r.u32()
	var segs []segment
	lo, hi := uint64(1<<32), uint64(0)
	for k := uint32(0); k < n && r.err == nil; k++ {
		if flag := r.u32(); flag != 0 {
			return nil, 0, 0, fmt.Errorf("wasmpack: data segment %d has flags %d; only active segments of memory 0 are packed", k, flag)
		}
		if op := r.byte(); op != 0x41 { // i32.const
			return nil, 0, 0, fmt.Errorf("wasmpack: data segment %d offset is not an i32.const", k)
		}
		off := uint32(r.s32())
		if end := r.byte(); end != 0x0b {
			return nil, 0, 0, fmt.Errorf("wasmpack: data segment %d offset expression is not a lone constant", k)
		}
		size := r.u32()
		d := r.bytes(int(size))
		if r.err != nil {
			break
		}
		segs = append(segs, segment{off, d})
		lo = min(lo, uint64(off))
		hi = max(hi, uint64(off)+uint64(size))
	}
	if r.err != nil || r.i != len(body) {
		return nil, 0, 0, fmt.Errorf("wasmpack: malformed data section: %v", r.err)
	}
	if len(segs) == 0 {
		return body, 0, 0, nil
	}
	if hi-lo > maxImage {
		return nil, 0, 0, fmt.Errorf("wasmpack: data spans %d bytes, over %d", hi-lo, maxImage)
	}
	img := make([]byte, hi-lo)
	for _, s := range segs {
		copy(img[uint64(s.off)-lo:], s.data)
	}
	runs := nonZeroRuns(img, MinGap)
	out := binary.AppendUvarint(nil, uint64(len(runs)))
	for _, run := range runs {
		out = append(out, 0, 0x41)
		out = appendS32(out, int32(uint32(lo)+uint32(run[0])))
		out = append(out, 0x0b)
		out = binary.AppendUvarint(out, uint64(run[1]-run[0]))
		out = append(out, img[run[0]:run[1]]...)
	}
	return out, len(segs), len(runs), nil
}

// nonZeroRuns returns the [start, end) stretches of img that begin and end
// with a non-zero byte and contain no run of gap or more zeros.
func nonZeroRuns(img []byte, gap int) [][2]int {
	var runs [][2]int
	i := 0
	for {
		for i < len(img) && img[i] == 0 {
			i++
		}
		if i == len(img) {
			return runs
		}
		start, last := i, i // last: index of the latest non-zero byte
		for i < len(img) && i-last <= gap {
			if img[i] != 0 {
				last = i
			}
			i++
		}
		runs = append(runs, [2]int{start, last + 1})
		i = last + 1
	}
}

// noMemoryImport fails if the import section imports a memory, whose
// contents need not start zeroed.
func noMemoryImport(body []byte) error {
	r := reader{b: body}
	n := r.u32()
	for k := uint32(0); k < n && r.err == nil; k++ {
		r.bytes(int(r.u32())) // module
		r.bytes(int(r.u32())) // name
		switch kind := r.byte(); kind {
		case 0: // func: type index
			r.u32()
		case 1: // table: reftype, limits
			r.byte()
			r.limits()
		case 2:
			return errors.New("wasmpack: the module imports its memory, which need not start zeroed")
		case 3: // global: valtype, mutability
			r.byte()
			r.byte()
		default:
			return fmt.Errorf("wasmpack: import %d has unknown kind %d", k, kind)
		}
	}
	if r.err != nil {
		return fmt.Errorf("wasmpack: malformed import section: %v", r.err)
	}
	return nil
}

func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// reader decodes LEB128 and bytes, remembering the first error.
type reader struct {
	b   []byte
	i   int
	err error
}

var errShort = errors.New("unexpected end")

func (r *reader) byte() byte {
	if r.err != nil || r.i >= len(r.b) {
		r.err = errShort
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.i {
		r.err = errShort
		return nil
	}
	s := r.b[r.i : r.i+n]
	r.i += n
	return s
}

func (r *reader) u32() uint32 {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if v > 1<<32-1 {
				r.err = errors.New("u32 overflow")
			}
			return uint32(v)
		}
	}
	r.err = errors.New("u32 too long")
	return 0
}

func (r *reader) s32() int32 {
	var v int64
	shift := 0
	for ; shift < 35; shift += 7 {
		c := r.byte()
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			shift += 7
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			if v < -1<<31 || v > 1<<31-1 {
				r.err = errors.New("s32 overflow")
			}
			return int32(v)
		}
	}
	r.err = errors.New("s32 too long")
	return 0
}

func (r *reader) limits() {
	if flag := r.byte(); flag&1 != 0 {
		r.u32()
	}
	r.u32()
}
