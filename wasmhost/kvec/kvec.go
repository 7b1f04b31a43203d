// Package kvec is the wire format and the executor for kernel test vectors:
// a batch of cases (operation, type, parameters, input buffers) that the
// sandbox guest runs on the portable scalar kernels and a native test runs on
// the SIMD path, so the two can be compared value by value. It is portable
// (builds for wasip1) and used by both sides, so the cases mean the same on
// each.
//
// Framing, all little-endian: a batch is u32 count, then per case u8 op,
// u32 type, u32 n + n×i64 ints, u32 n + n×f32 floats (as bits, so NaN
// payloads survive), u32 n + n×(u32 len + bytes) blobs. A result is u32 len +
// error text (empty on success), then u32 n + blobs. f32 vectors travel as
// their raw bits.
package kvec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
)

// Op is one kernel operation.
type Op uint8

// The operations and the Case fields each reads. Outputs are f32 vectors
// unless noted.
const (
	OpDequantize  Op = iota + 1 // Blobs[0] src; out: dst (len from src size)
	OpQuantizeAct               // Blobs[0] x (f32); out: bytes in the act encoding for Type
	OpQuantize                  // Blobs[0] x (f32); out: bytes of Type
	OpDot                       // Ints[0] n; Blobs w, a; out: one f32
	OpMatVec                    // Ints rows, cols; Blobs w, a; out: y
	OpMatMul                    // Ints rows, cols, nb; Blobs w, a; out: y
	OpRMSNorm                   // Floats[0] eps; Blobs x, weight
	OpSoftmax                   // Blobs x
	OpSiLUMul                   // Blobs gate, up; out: gate
	OpAdd                       // Blobs dst, x; out: dst
	OpScale                     // Floats[0] s; Blobs x
	OpAddScaled                 // Floats[0] s; Blobs dst, x; out: dst
	OpDotF32                    // Blobs a, b; out: one f32
	OpArgmax                    // Blobs x; out: one i64 (8 bytes)
	OpRope                      // Ints dims, headDim, pos, neox; Floats base, scale; Blobs x, freq factors (empty: none)
	opEnd
)

var opNames = [...]string{"", "dequantize", "quantize-act", "quantize", "dot", "matvec", "matmul", "rmsnorm",
	"softmax", "silu-mul", "add", "scale", "add-scaled", "dot-f32", "argmax", "rope"}

func (o Op) String() string {
	if o > 0 && o < opEnd {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Case is one test vector.
type Case struct {
	Op     Op
	Type   ggml.Type
	Ints   []int64
	Floats []float32
	Blobs  [][]byte
}

// Result is one case's outcome: Err is empty on success.
type Result struct {
	Err   string
	Blobs [][]byte
}

// F32Bytes encodes f32 values as their little-endian bits.
func F32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// BytesF32 decodes what F32Bytes encoded; a trailing partial value is an
// error.
func BytesF32(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("kvec: f32 vector of %d bytes is not a multiple of 4", len(b))
	}
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x, nil
}

type enc struct{ b []byte }

func (e *enc) u8(v uint8)   { e.b = append(e.b, v) }
func (e *enc) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) blob(p []byte) {
	e.u32(uint32(len(p)))
	e.b = append(e.b, p...)
}
func (e *enc) blobs(ps [][]byte) {
	e.u32(uint32(len(ps)))
	for _, p := range ps {
		e.blob(p)
	}
}

// EncodeCases frames a batch.
func EncodeCases(cs []Case) []byte {
	var e enc
	e.u32(uint32(len(cs)))
	for _, c := range cs {
		e.u8(uint8(c.Op))
		e.u32(uint32(c.Type))
		e.u32(uint32(len(c.Ints)))
		for _, v := range c.Ints {
			e.u64(uint64(v))
		}
		e.u32(uint32(len(c.Floats)))
		for _, v := range c.Floats {
			e.u32(math.Float32bits(v))
		}
		e.blobs(c.Blobs)
	}
	return e.b
}

// EncodeResults frames a batch of results.
func EncodeResults(rs []Result) []byte {
	var e enc
	e.u32(uint32(len(rs)))
	for _, r := range rs {
		e.blob([]byte(r.Err))
		e.blobs(r.Blobs)
	}
	return e.b
}

var errShort = errors.New("kvec: truncated batch")

// dec reads a frame; every count is checked against the bytes left before
// anything is allocated, so a bad frame fails instead of allocating.
type dec struct {
	b   []byte
	err error
}

func (d *dec) take(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}
func (d *dec) u8() uint8 {
	if p := d.take(1); p != nil {
		return p[0]
	}
	return 0
}
func (d *dec) u32() uint32 {
	if p := d.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}
func (d *dec) u64() uint64 {
	if p := d.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// count reads a count of items at least min bytes each.
func (d *dec) count(min uint64) int {
	n := uint64(d.u32())
	if d.err == nil && n*min > uint64(len(d.b)) {
		d.err = errShort
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}
func (d *dec) blob() []byte { return d.take(uint64(d.u32())) }
func (d *dec) blobs() [][]byte {
	n := d.count(4)
	if n == 0 {
		return nil
	}
	ps := make([][]byte, n)
	for i := range ps {
		ps[i] = d.blob()
	}
	return ps
}

// DecodeCases parses a batch framed by EncodeCases. Blobs alias b.
func DecodeCases(b []byte) ([]Case, error) {
	d := &dec{b: b}
	n := d.count(1 + 4*4)
	cs := make([]Case, n)
	for i := range cs {
		c := &cs[i]
		c.Op = Op(d.u8())
		c.Type = ggml.Type(d.u32())
		if k := d.count(8); k > 0 {
			c.Ints = make([]int64, k)
			for j := range c.Ints {
				c.Ints[j] = int64(d.u64())
			}
		}
		if k := d.count(4); k > 0 {
			c.Floats = make([]float32, k)
			for j := range c.Floats {
				c.Floats[j] = math.Float32frombits(d.u32())
			}
		}
		c.Blobs = d.blobs()
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("kvec: %d bytes after the last case", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return cs, nil
}

// DecodeResults parses what EncodeResults framed.
func DecodeResults(b []byte) ([]Result, error) {
	d := &dec{b: b}
	n := d.count(8)
	rs := make([]Result, n)
	for i := range rs {
		rs[i].Err = string(d.blob())
		rs[i].Blobs = d.blobs()
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("kvec: %d bytes after the last result", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return rs, nil
}
