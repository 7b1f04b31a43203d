package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/memvanta/memvanta/core/ggml"
)

// NoType is what ActType returns for a weight type no dot routine executes.
// It is not a ggml type id (Known() is false, TypeSize() is 0).
const NoType ggml.Type = ^ggml.Type(0)

// ActType is the encoding activations take for a dot product with weights of
// type w — the pairing llama.cpp's CPU backend uses (its vec_dot_type), so our
// integer sums see the same quantized activations. It returns NoType for a
// type without a dot routine.
func ActType(w ggml.Type) ggml.Type {
	if !Executes(w) {
		return NoType
	}
	return portableRows[w].act
}

// isActType reports whether t is one of the activation encodings (a row
// with an activation encoder).
func isActType(t ggml.Type) bool {
	return uint64(t) < numTypes && portableRows[t].quantAct != nil
}

// RowSize is the byte length of n elements of t, failing for an unknown type
// or a partial block (see ggml.RowSize).
func RowSize(t ggml.Type, n int) (int, error) {
	if n < 0 {
		return 0, fmt.Errorf("kernels: negative row length %d", n)
	}
	s, err := ggml.RowSize(t, uint64(n))
	if err != nil {
		return 0, fmt.Errorf("kernels: %w", err)
	}
	if s > math.MaxInt {
		return 0, fmt.Errorf("kernels: row of %d %s elements is too large", n, t)
	}
	return int(s), nil
}

// checkRow validates that b holds exactly n elements of t.
func checkRow(op string, t ggml.Type, n int, b int) error {
	want, err := RowSize(t, n)
	if err != nil {
		return fmt.Errorf("kernels: %s %s: %w", op, t, err)
	}
	if b != want {
		return fmt.Errorf("kernels: %s %s: %d elements need %d bytes, buffer has %d", op, t, n, want, b)
	}
	return nil
}

// QuantizeAct encodes one activation row x into dst in the activation format
// for t. t may be the activation type itself (Q8_0, Q8_1, Q8_K, F32, F16,
// BF16) or a weight type, which is mapped through ActType. The encodings are
// bit-exact with ggml's reference quantize_row_q8_0/q8_1/q8_K_ref (note that
// ggml's AVX2 quantize_row_q8_0 rounds ties to even and scales by 127/amax, so
// it can differ from the reference in the last bit on ties).
func QuantizeAct(t ggml.Type, x []float32, dst []byte) error {
	return quantizeAct(&portableRows, t, x, dst)
}

// quantizeAct is QuantizeAct through a path's table.
func quantizeAct(rows *[numTypes]routines, t ggml.Type, x []float32, dst []byte) error {
	a := t
	if !isActType(a) {
		a = ActType(t)
		if a == NoType {
			return fmt.Errorf("kernels: no activation encoding for %s", t)
		}
	}
	if err := checkRow("quantize activations", a, len(x), len(dst)); err != nil {
		return err
	}
	rows[a].quantAct(x, dst)
	return nil
}

// Quantize encodes a row of f32 values into t, bit-exact with ggml's
// reference quantize_row_*_ref (the ones llama.cpp's quantize tool uses for
// these types without an importance matrix). Block types reject non-finite
// input because ggml's scale search turns it into garbage blocks.
func Quantize(t ggml.Type, src []float32, dst []byte) error {
	return quantize(&portableRows, t, src, dst)
}

// quantize is Quantize through a path's table.
func quantize(rows *[numTypes]routines, t ggml.Type, src []float32, dst []byte) error {
	if err := checkRow("quantize", t, len(src), len(dst)); err != nil {
		return err
	}
	if t.Quantized() {
		for i, v := range src {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("kernels: quantize %s: element %d is %v", t, i, v)
			}
		}
	}
	if uint64(t) >= numTypes || rows[t].quant == nil {
		return fmt.Errorf("kernels: quantize to %s is not supported (supported: %s)", t, quantizable())
	}
	rows[t].quant(src, dst)
	return nil
}

// quantizable lists the types Quantize encodes: the float types, then the
// block types, each in type id order.
func quantizable() string {
	var names []string
	for _, quantized := range []bool{false, true} {
		for t := range portableRows {
			if typ := ggml.Type(t); portableRows[t].quant != nil && typ.Quantized() == quantized {
				names = append(names, typ.String())
			}
		}
	}
	return strings.Join(names, " ")
}

func putF16(b []byte, f float32) { binary.LittleEndian.PutUint16(b, F32ToF16(f)) }

// getF16 loads a little-endian fp16 block scale.
func getF16(b []byte) float32 {
	h := binary.LittleEndian.Uint16(b)
	if f16IsNormal(h) {
		return f16Normal(h)
	}
	return f16Special(h)
}

func quantF32(x []float32, dst []byte) {
	for i, v := range x {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func quantF16(x []float32, dst []byte) {
	for i, v := range x {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToF16(v))
	}
}

func quantBF16(x []float32, dst []byte) {
	for i, v := range x {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToBF16(v))
	}
}

// absMax returns the element of largest magnitude (first one on ties) and
// its magnitude, as ggml's `if (amax < fabsf(v))` scan does.
func absMax(x []float32) (amax, max float32) {
	for _, v := range x {
		if a := abs32(v); amax < a {
			amax, max = a, v
		}
	}
	return amax, max
}

func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// roundAway is C roundf (nearest, ties away from zero) for |v| < 2^31:
// trunc(v ± 0.5) computed in float64. The sum is exact whenever it matters —
// v has 24 significant bits, so v ± 0.5 fits in 53 bits unless |v| < 2^-29,
// where the rounded sum stays below 1 and truncates to 0 as it should. This
// is several times cheaper than math.Round, and QuantizeAct runs per matvec.
func roundAway(v float32) int32 {
	f := float64(v)
	return int32(f + math.Copysign(0.5, f))
}

func quantQ4_0(x []float32, dst []byte) {
	for b := 0; b*32 < len(x); b++ {
		xb := x[b*32 : b*32+32]
		o := dst[b*18 : b*18+18]
		_, max := absMax(xb)
		d := max / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(o, d)
		for j := 0; j < 16; j++ {
			// (int8_t)(x*id + 8.5f) truncates toward zero, then MIN(15, ·).
			q0 := min(int32(float32(xb[j]*id)+8.5), 15)
			q1 := min(int32(float32(xb[j+16]*id)+8.5), 15)
			o[2+j] = uint8(q0) | uint8(q1)<<4
		}
	}
}

func quantQ4_1(x []float32, dst []byte) {
	for b := 0; b*32 < len(x); b++ {
		xb := x[b*32 : b*32+32]
		o := dst[b*20 : b*20+20]
		lo, hi := minMax(xb)
		d := (hi - lo) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(o, d)
		putF16(o[2:], lo)
		for j := 0; j < 16; j++ {
			q0 := min(int32(float32((xb[j]-lo)*id)+0.5), 15)
			q1 := min(int32(float32((xb[j+16]-lo)*id)+0.5), 15)
			o[4+j] = uint8(q0) | uint8(q1)<<4
		}
	}
}

func quantQ5_0(x []float32, dst []byte) {
	for b := 0; b*32 < len(x); b++ {
		xb := x[b*32 : b*32+32]
		o := dst[b*22 : b*22+22]
		_, max := absMax(xb)
		d := max / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(o, d)
		var qh uint32
		for j := 0; j < 16; j++ {
			q0 := uint32(min(int32(float32(xb[j]*id)+16.5), 31))
			q1 := uint32(min(int32(float32(xb[j+16]*id)+16.5), 31))
			o[6+j] = uint8(q0&15) | uint8(q1&15)<<4
			qh |= (q0 >> 4 & 1) << j
			qh |= (q1 >> 4 & 1) << (j + 16)
		}
		binary.LittleEndian.PutUint32(o[2:], qh)
	}
}

func quantQ5_1(x []float32, dst []byte) {
	for b := 0; b*32 < len(x); b++ {
		xb := x[b*32 : b*32+32]
		o := dst[b*24 : b*24+24]
		lo, hi := minMax(xb)
		d := (hi - lo) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(o, d)
		putF16(o[2:], lo)
		var qh uint32
		for j := 0; j < 16; j++ {
			// ggml casts straight to uint8_t here, without MIN.
			q0 := uint32(uint8(int32(float32((xb[j]-lo)*id) + 0.5)))
			q1 := uint32(uint8(int32(float32((xb[j+16]-lo)*id) + 0.5)))
			o[8+j] = uint8(q0&15) | uint8(q1&15)<<4
			qh |= (q0 >> 4 & 1) << j
			qh |= (q1 >> 4 & 1) << (j + 16)
		}
		binary.LittleEndian.PutUint32(o[4:], qh)
	}
}

func quantQ8_0(x []float32, dst []byte) {
	for b := 0; b*32 < len(x); b++ {
		xb := x[b*32 : b*32+32]
		o := dst[b*34 : b*34+34]
		amax, _ := absMax(xb)
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(o, d)
		for j, v := range xb {
			o[2+j] = uint8(int8(roundAway(v * id)))
		}
	}
}

func quantQ8_1(x []float32, dst []byte) {
	for b := 0; b*32 < len(x); b++ {
		xb := x[b*32 : b*32+32]
		o := dst[b*36 : b*36+36]
		amax, _ := absMax(xb)
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(o, d)
		var sum int32
		for j, v := range xb {
			q := int8(roundAway(v * id))
			o[4+j] = uint8(q)
			sum += int32(q)
		}
		putF16(o[2:], float32(sum)*d)
	}
}

// quantQ8_K follows quantize_row_q8_K_ref: the signed extreme maps to -127
// (iscale = -127/max), values round half to even (ggml's nearest_int), and
// bsums hold the sums of each 16 quants. The scale is the f32 1/iscale. For an
// all-zero block ggml leaves bsums unwritten; we write zeros, their true value.
func quantQ8_K(x []float32, dst []byte) {
	for b := 0; b*256 < len(x); b++ {
		xb := x[b*256 : b*256+256]
		o := dst[b*292 : b*292+292]
		amax, max := absMax(xb)
		if amax == 0 {
			clear(o)
			continue
		}
		iscale := -127 / max
		for j, v := range xb {
			q := min(int32(math.RoundToEven(float64(iscale*v))), 127)
			o[4+j] = uint8(int8(q))
		}
		for j := 0; j < 16; j++ {
			var s int32
			for _, q := range o[4+16*j : 4+16*j+16] {
				s += int32(int8(q))
			}
			binary.LittleEndian.PutUint16(o[260+2*j:], uint16(int16(s)))
		}
		binary.LittleEndian.PutUint32(o, math.Float32bits(1/iscale))
	}
}
