// Package ggml describes ggml's tensor element types: their ids as stored in
// GGUF files, their names, and the block geometry that fixes how many bytes a
// row of n elements occupies. It is the one table that the GGUF parser, the
// kernels and the CLI share, so a new type is added in exactly one place.
package ggml

import (
	"fmt"
	"math/bits"
)

// Type is a ggml tensor element type id as written in a GGUF tensor info.
type Type uint32

// Type ids, numbered as in ggml.h. Gaps (4, 5, 31–33, 36–38) are ids that
// ggml removed; files using them are rejected as unknown.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
)

// QK_K is the super-block length of the K-quant and most IQ formats.
const QK_K = 256

type traits struct {
	name      string
	blockSize int // elements per block
	typeSize  int // bytes per block
}

var table = map[Type]traits{
	F32:     {"F32", 1, 4},
	F16:     {"F16", 1, 2},
	Q4_0:    {"Q4_0", 32, 2 + 16},
	Q4_1:    {"Q4_1", 32, 2 + 2 + 16},
	Q5_0:    {"Q5_0", 32, 2 + 4 + 16},
	Q5_1:    {"Q5_1", 32, 2 + 2 + 4 + 16},
	Q8_0:    {"Q8_0", 32, 2 + 32},
	Q8_1:    {"Q8_1", 32, 2 + 2 + 32},
	Q2_K:    {"Q2_K", QK_K, QK_K/16 + QK_K/4 + 2 + 2},
	Q3_K:    {"Q3_K", QK_K, QK_K/8 + QK_K/4 + 12 + 2},
	Q4_K:    {"Q4_K", QK_K, 2 + 2 + 12 + QK_K/2},
	Q5_K:    {"Q5_K", QK_K, 2 + 2 + 12 + QK_K/8 + QK_K/2},
	Q6_K:    {"Q6_K", QK_K, QK_K/2 + QK_K/4 + QK_K/16 + 2},
	Q8_K:    {"Q8_K", QK_K, 4 + QK_K + QK_K/16*2},
	IQ2_XXS: {"IQ2_XXS", QK_K, 2 + QK_K/8*2},
	IQ2_XS:  {"IQ2_XS", QK_K, 2 + QK_K/8*2 + QK_K/32},
	IQ3_XXS: {"IQ3_XXS", QK_K, 2 + 3*QK_K/8},
	IQ1_S:   {"IQ1_S", QK_K, 2 + QK_K/8 + QK_K/16},
	IQ4_NL:  {"IQ4_NL", 32, 2 + 16},
	IQ3_S:   {"IQ3_S", QK_K, 2 + QK_K/4 + QK_K/32 + QK_K/8 + QK_K/64},
	IQ2_S:   {"IQ2_S", QK_K, 2 + QK_K/4 + QK_K/32 + QK_K/32},
	IQ4_XS:  {"IQ4_XS", QK_K, 2 + 2 + QK_K/64 + QK_K/2},
	I8:      {"I8", 1, 1},
	I16:     {"I16", 1, 2},
	I32:     {"I32", 1, 4},
	I64:     {"I64", 1, 8},
	F64:     {"F64", 1, 8},
	IQ1_M:   {"IQ1_M", QK_K, QK_K/8 + QK_K/16 + QK_K/32},
	BF16:    {"BF16", 1, 2},
	TQ1_0:   {"TQ1_0", QK_K, 2 + (QK_K-4*QK_K/64)/5 + QK_K/64},
	TQ2_0:   {"TQ2_0", QK_K, 2 + QK_K/4},
	MXFP4:   {"MXFP4", 32, 1 + 16},
}

// Known reports whether t is a type id this build understands.
func (t Type) Known() bool { _, ok := table[t]; return ok }

// String returns ggml's name for t, or "type(N)" for an unknown id.
func (t Type) String() string {
	if tr, ok := table[t]; ok {
		return tr.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize is the number of elements in one block of t (1 for plain types),
// or 0 for an unknown type.
func (t Type) BlockSize() int { return table[t].blockSize }

// TypeSize is the number of bytes in one block of t, or 0 for an unknown type.
func (t Type) TypeSize() int { return table[t].typeSize }

// Quantized reports whether t stores blocks of more than one element.
func (t Type) Quantized() bool { return table[t].blockSize > 1 }

// Parse returns the type whose ggml name is s (case-sensitive, e.g. "Q4_K").
func Parse(s string) (Type, bool) {
	for t, tr := range table {
		if tr.name == s {
			return t, true
		}
	}
	return 0, false
}

// All returns every known type in id order.
func All() []Type {
	out := make([]Type, 0, len(table))
	for t := Type(0); t < 64; t++ {
		if t.Known() {
			out = append(out, t)
		}
	}
	return out
}

// RowSize returns the bytes of a row of n elements of type t. It fails when t
// is unknown or n is not a whole number of blocks, the two ways a tensor row
// can be unrepresentable.
func RowSize(t Type, n uint64) (uint64, error) {
	tr, ok := table[t]
	if !ok {
		return 0, fmt.Errorf("ggml: unknown type id %d", uint32(t))
	}
	if n%uint64(tr.blockSize) != 0 {
		return 0, fmt.Errorf("ggml: row of %d elements is not a multiple of %s block size %d", n, tr.name, tr.blockSize)
	}
	hi, lo := bits.Mul64(n/uint64(tr.blockSize), uint64(tr.typeSize))
	if hi != 0 {
		return 0, fmt.Errorf("ggml: row of %d %s elements overflows 64 bits", n, tr.name)
	}
	return lo, nil
}
