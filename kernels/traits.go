package kernels

import (
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
)

// A dispatch path (Impl) is a table with one row per ggml type id plus a
// set of op function fields (opsTable, ops_dispatch.go). The scalar path's table is
// portableRows below; a SIMD path is derived from another path by applying
// the arch file's list of archRows (derive), each of which replaces named
// fields of one type's row. Adding a routine for a type is one archRow edit;
// adding a type is one portableRows entry (plus the arch rows that
// accelerate it).

// numTypes bounds the ggml type ids a table has a row for.
const numTypes = 64

// dotSet is one weight type's dot routine together with the multi-row
// routines written against it. It is only ever set and replaced whole:
// dot4 and rows4 promise bit-identity with exactly this dot, so a derived
// path that swaps in its own dot drops the base path's dot4/rows4 with it
// unless its row supplies its own.
type dotSet struct {
	dot   DotFunc      // nil: the type is not executable
	dot4  Dot4Func     // optional: four activation rows per weight row (MatMul)
	rows4 DotRows4Func // optional: four weight rows per activation row (MatVec)
}

// routines is one type's row of a path's table.
type routines struct {
	// act is the encoding activations take for this weight type's dots
	// (ActType; meaningless where dots.dot is nil). It is a property of
	// the type (ggml's vec_dot_type), the same on every path.
	act  ggml.Type
	dots dotSet
	// gemm optionally adds packed matrix × matrix routines (nil: MatMul
	// uses dot4/dot). They are not bit-identical to dot: see gemm.go.
	gemm *gemmRoutines
	// deq decodes a row of this type (nil: not decodable); quant encodes
	// into it for Quantize (weights, the KV cache; nil: not supported);
	// quantAct, set on the activation encodings' rows, is QuantizeAct's
	// encoder. Lengths are checked by the callers. Every path's entries
	// are bit-exact with the portable ones (for quantAct: on finite input).
	deq      func(src []byte, dst []float32)
	quant    func(x []float32, dst []byte)
	quantAct func(x []float32, dst []byte)
}

// portableRows is the scalar path's table: the pure-Go reference every
// SIMD path is tested against. Built at package initialization and never
// written afterwards (paths copy it).
var portableRows = [numTypes]routines{
	ggml.F32:    {act: ggml.F32, dots: dotSet{dot: dotF32}, deq: deqF32, quant: quantF32, quantAct: quantF32},
	ggml.F16:    {act: ggml.F16, dots: dotSet{dot: dotF16}, deq: deqF16, quant: quantF16, quantAct: quantF16},
	ggml.BF16:   {act: ggml.BF16, dots: dotSet{dot: dotBF16}, deq: deqBF16, quant: quantBF16, quantAct: quantBF16},
	ggml.Q4_0:   {act: ggml.Q8_0, dots: dotSet{dot: dotQ4_0}, deq: deqQ4_0, quant: quantQ4_0},
	ggml.Q4_1:   {act: ggml.Q8_1, dots: dotSet{dot: dotQ4_1}, deq: deqQ4_1, quant: quantQ4_1},
	ggml.Q5_0:   {act: ggml.Q8_0, dots: dotSet{dot: dotQ5_0}, deq: deqQ5_0, quant: quantQ5_0},
	ggml.Q5_1:   {act: ggml.Q8_1, dots: dotSet{dot: dotQ5_1}, deq: deqQ5_1, quant: quantQ5_1},
	ggml.Q8_0:   {act: ggml.Q8_0, dots: dotSet{dot: dotQ8_0}, deq: deqQ8_0, quant: quantQ8_0, quantAct: quantQ8_0},
	ggml.Q8_1:   {deq: deqQ8_1, quant: quantQ8_1, quantAct: quantQ8_1},
	ggml.Q2_K:   {act: ggml.Q8_K, dots: dotSet{dot: dotQ2_K}, deq: deqQ2_K},
	ggml.Q3_K:   {act: ggml.Q8_K, dots: dotSet{dot: dotQ3_K}, deq: deqQ3_K},
	ggml.Q4_K:   {act: ggml.Q8_K, dots: dotSet{dot: dotQ4_K}, deq: deqQ4_K},
	ggml.Q5_K:   {act: ggml.Q8_K, dots: dotSet{dot: dotQ5_K}, deq: deqQ5_K},
	ggml.Q6_K:   {act: ggml.Q8_K, dots: dotSet{dot: dotQ6_K}, deq: deqQ6_K},
	ggml.Q8_K:   {deq: deqQ8_K, quant: quantQ8_K, quantAct: quantQ8_K},
	ggml.IQ4_NL: {act: ggml.Q8_0, dots: dotSet{dot: dotIQ4_NL}, deq: deqIQ4_NL},
	ggml.IQ4_XS: {act: ggml.Q8_K, dots: dotSet{dot: dotIQ4_XS}, deq: deqIQ4_XS},
	ggml.MXFP4:  {act: ggml.Q8_0, dots: dotSet{dot: dotMXFP4}, deq: deqMXFP4, quant: quantMXFP4},
	ggml.TQ1_0:  {act: ggml.Q8_K, dots: dotSet{dot: dotTQ1_0}, deq: deqTQ1_0, quant: quantTQ1_0},
	ggml.TQ2_0:  {act: ggml.Q8_K, dots: dotSet{dot: dotTQ2_0}, deq: deqTQ2_0, quant: quantTQ2_0},

	// The 3- and 1-bit grid i-quants (iq3.go, iq1.go).
	ggml.IQ3_XXS: {act: ggml.Q8_K, dots: dotSet{dot: dotIQ3_XXS}, deq: deqIQ3_XXS},
	ggml.IQ3_S:   {act: ggml.Q8_K, dots: dotSet{dot: dotIQ3_S}, deq: deqIQ3_S},
	ggml.IQ1_S:   {act: ggml.Q8_K, dots: dotSet{dot: dotIQ1_S}, deq: deqIQ1_S},
	ggml.IQ1_M:   {act: ggml.Q8_K, dots: dotSet{dot: dotIQ1_M}, deq: deqIQ1_M},
	// The IQ2 codebook types (iq2.go).
	ggml.IQ2_XXS: {act: ggml.Q8_K, dots: dotSet{dot: dotIQ2_XXS}, deq: deqIQ2_XXS},
	ggml.IQ2_XS:  {act: ggml.Q8_K, dots: dotSet{dot: dotIQ2_XS}, deq: deqIQ2_XS},
	ggml.IQ2_S:   {act: ggml.Q8_K, dots: dotSet{dot: dotIQ2_S}, deq: deqIQ2_S},
}

// row returns k's row for t, or nil for an id beyond the table.
func (k *Impl) row(t ggml.Type) *routines {
	if uint64(t) >= numTypes {
		return nil
	}
	return &k.types[t]
}

// asmDot is the calling convention shared by the assembly dot routines: nb
// counts blocks for quantized types and elements for the float types, so the
// assembly never divides. w and a point at the first byte of each row.
type asmDot func(nb int, w, a *byte) float32

// asmDot4 is the four-row convention: rows at p, p+stride, p+2*stride,
// p+3*stride (activation rows for dot4, weight rows for rows4); results to
// y[0..3].
type asmDot4 func(nb int, w, a *byte, stride int, y *[4]float32)

// archRow is one type's routines on a SIMD path, as an arch file lists
// them; derive applies it over the base path's row. Each non-nil field
// replaces the base's:
//
//   - dot replaces the base's whole dotSet, together with this row's dot4
//     and rows4 (nil ones stay nil: the base's were written against the
//     base's dot). A row with dot4 or rows4 but no dot is rejected, and so
//     is a dot for a type the base path does not execute.
//   - gemm (a constructor given the type) replaces the packed MatMul.
//   - deq, quant, quantAct replace the decoders/encoders; they must be
//     bit-exact with the portable ones (the differential tests check).
type archRow struct {
	t        ggml.Type
	dot      asmDot
	dot4     asmDot4
	rows4    asmDot4
	gemm     func(t ggml.Type) *gemmRoutines
	deq      func(src []byte, dst []float32)
	quant    func(x []float32, dst []byte)
	quantAct func(x []float32, dst []byte)
}

// derive copies base under a new name, applies rows (see archRow) and then
// ops, which replaces named fields of the op table. Arch files call it once
// per path; a malformed row is a programming error in a static table and
// panics at start-up (every test that touches Available() sees it).
func derive(base *Impl, name string, rows []archRow, ops func(*opsTable)) *Impl {
	k := *base
	k.Name = name
	for _, r := range rows {
		if uint64(r.t) >= numTypes {
			panic(fmt.Sprintf("kernels: %s row for type %d beyond the table", name, r.t))
		}
		row := &k.types[r.t]
		switch {
		case r.dot != nil:
			if row.dots.dot == nil {
				// Paths only accelerate what the portable path executes,
				// so every path executes the same types (Executes).
				panic(fmt.Sprintf("kernels: %s row %s: a dot for a type the base path does not execute", name, r.t))
			}
			ds := dotSet{dot: wrapAsm(r.t, r.dot)}
			if r.dot4 != nil {
				ds.dot4 = wrapAsm4(r.t, r.dot4)
			}
			if r.rows4 != nil {
				ds.rows4 = wrapAsmRows4(r.t, r.rows4)
			}
			row.dots = ds
		case r.dot4 != nil || r.rows4 != nil:
			panic(fmt.Sprintf("kernels: %s row %s: four-row routines without the dot they were written against", name, r.t))
		}
		if r.gemm != nil {
			row.gemm = r.gemm(r.t)
		}
		if r.deq != nil {
			row.deq = r.deq
		}
		if r.quant != nil {
			row.quant = r.quant
		}
		if r.quantAct != nil {
			row.quantAct = r.quantAct
		}
	}
	if ops != nil {
		ops(&k.ops)
	}
	return &k
}
