package kvec

import (
	"encoding/binary"
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/kernels"
)

// RunAll executes every case on k.
func RunAll(k *kernels.Impl, p *kernels.Pool, cs []Case) []Result {
	rs := make([]Result, len(cs))
	for i, c := range cs {
		rs[i] = Run(k, p, c)
	}
	return rs
}

// Run executes one case on k. A malformed case (wrong counts, a kernel's own
// panic on a shape mismatch) becomes an error result, so one bad vector does
// not end the batch.
func Run(k *kernels.Impl, p *kernels.Pool, c Case) (r Result) {
	defer func() {
		if v := recover(); v != nil {
			r = Result{Err: fmt.Sprintf("%v: panic: %v", c.Op, v)}
		}
	}()
	out, err := run(k, p, c)
	if err != nil {
		return Result{Err: fmt.Sprintf("%v %v: %v", c.Op, c.Type, err)}
	}
	return Result{Blobs: out}
}

func need(c Case, ints, floats, blobs int) error {
	if len(c.Ints) < ints || len(c.Floats) < floats || len(c.Blobs) < blobs {
		return fmt.Errorf("needs %d ints, %d floats, %d buffers; has %d, %d, %d",
			ints, floats, blobs, len(c.Ints), len(c.Floats), len(c.Blobs))
	}
	return nil
}

// elems is the element count of a row of b bytes of type t.
func elems(t ggml.Type, b int) (int, error) {
	bs, ts := t.BlockSize(), t.TypeSize()
	if bs <= 0 || ts <= 0 || b%ts != 0 {
		return 0, fmt.Errorf("%d bytes are not whole %s blocks", b, t)
	}
	return b / ts * bs, nil
}

func f32s(c Case, i int) ([]float32, error) { return BytesF32(c.Blobs[i]) }

// smallInt bounds shape parameters so a bad case fails instead of asking for
// an absurd allocation.
func smallInt(v int64) (int, error) {
	if v < 0 || v > 1<<30 {
		return 0, fmt.Errorf("shape value %d out of range", v)
	}
	return int(v), nil
}

func run(k *kernels.Impl, p *kernels.Pool, c Case) ([][]byte, error) {
	one := func(x []float32) [][]byte { return [][]byte{F32Bytes(x)} }
	switch c.Op {
	case OpDequantize:
		if err := need(c, 0, 0, 1); err != nil {
			return nil, err
		}
		n, err := elems(c.Type, len(c.Blobs[0]))
		if err != nil {
			return nil, err
		}
		dst := make([]float32, n)
		if err := k.Dequantize(c.Type, c.Blobs[0], dst); err != nil {
			return nil, err
		}
		return one(dst), nil
	case OpQuantizeAct, OpQuantize:
		if err := need(c, 0, 0, 1); err != nil {
			return nil, err
		}
		x, err := f32s(c, 0)
		if err != nil {
			return nil, err
		}
		t := c.Type
		if c.Op == OpQuantizeAct {
			// Type may be a weight type (mapped through ActType) or an
			// activation encoding itself (for which ActType says NoType).
			if a := kernels.ActType(t); a != kernels.NoType {
				t = a
			}
		}
		size, err := kernels.RowSize(t, len(x))
		if err != nil {
			return nil, err
		}
		dst := make([]byte, size)
		if c.Op == OpQuantizeAct {
			err = kernels.QuantizeAct(c.Type, x, dst)
		} else {
			err = kernels.Quantize(c.Type, x, dst)
		}
		if err != nil {
			return nil, err
		}
		return [][]byte{dst}, nil
	case OpDot:
		if err := need(c, 1, 0, 2); err != nil {
			return nil, err
		}
		n, err := smallInt(c.Ints[0])
		if err != nil {
			return nil, err
		}
		dot := k.Dot(c.Type)
		if dot == nil {
			return nil, fmt.Errorf("no dot routine on %s", k.Name)
		}
		ws, err := kernels.RowSize(c.Type, n)
		if err != nil {
			return nil, err
		}
		as, err := kernels.RowSize(kernels.ActType(c.Type), n)
		if err != nil {
			return nil, err
		}
		if len(c.Blobs[0]) != ws || len(c.Blobs[1]) != as {
			return nil, fmt.Errorf("%d elements need w %d, a %d bytes; have %d, %d", n, ws, as, len(c.Blobs[0]), len(c.Blobs[1]))
		}
		return one([]float32{dot(n, c.Blobs[0], c.Blobs[1])}), nil
	case OpMatVec, OpMatMul:
		ni := 2
		if c.Op == OpMatMul {
			ni = 3
		}
		if err := need(c, ni, 0, 2); err != nil {
			return nil, err
		}
		rows, err := smallInt(c.Ints[0])
		if err != nil {
			return nil, err
		}
		cols, err := smallInt(c.Ints[1])
		if err != nil {
			return nil, err
		}
		nb := 1
		if c.Op == OpMatMul {
			if nb, err = smallInt(c.Ints[2]); err != nil {
				return nil, err
			}
		}
		if rows*nb > 1<<26 {
			return nil, fmt.Errorf("%d×%d outputs is too many", rows, nb)
		}
		y := make([]float32, rows*nb)
		if c.Op == OpMatVec {
			k.MatVec(p, c.Type, rows, cols, c.Blobs[0], c.Blobs[1], y)
		} else {
			k.MatMul(p, c.Type, rows, cols, c.Blobs[0], c.Blobs[1], nb, y)
		}
		return one(y), nil
	case OpRMSNorm:
		if err := need(c, 0, 1, 2); err != nil {
			return nil, err
		}
		x, err := f32s(c, 0)
		if err != nil {
			return nil, err
		}
		w, err := f32s(c, 1)
		if err != nil {
			return nil, err
		}
		out := make([]float32, len(x))
		kernels.RMSNorm(out, x, w, c.Floats[0])
		return one(out), nil
	case OpSoftmax, OpScale, OpArgmax:
		nf := 0
		if c.Op == OpScale {
			nf = 1
		}
		if err := need(c, 0, nf, 1); err != nil {
			return nil, err
		}
		x, err := f32s(c, 0)
		if err != nil {
			return nil, err
		}
		switch c.Op {
		case OpSoftmax:
			kernels.Softmax(x)
		case OpScale:
			kernels.Scale(x, c.Floats[0])
		case OpArgmax:
			return [][]byte{binary.LittleEndian.AppendUint64(nil, uint64(int64(kernels.Argmax(x))))}, nil
		}
		return one(x), nil
	case OpSiLUMul, OpAdd, OpAddScaled, OpDotF32:
		nf := 0
		if c.Op == OpAddScaled {
			nf = 1
		}
		if err := need(c, 0, nf, 2); err != nil {
			return nil, err
		}
		a, err := f32s(c, 0)
		if err != nil {
			return nil, err
		}
		b, err := f32s(c, 1)
		if err != nil {
			return nil, err
		}
		switch c.Op {
		case OpSiLUMul:
			kernels.SiLUMul(a, b)
		case OpAdd:
			kernels.Add(a, b)
		case OpAddScaled:
			kernels.AddScaled(a, b, c.Floats[0])
		case OpDotF32:
			return one([]float32{kernels.DotF32(a, b)}), nil
		}
		return one(a), nil
	case OpRope:
		if err := need(c, 4, 2, 2); err != nil {
			return nil, err
		}
		x, err := f32s(c, 0)
		if err != nil {
			return nil, err
		}
		ff, err := f32s(c, 1)
		if err != nil {
			return nil, err
		}
		if len(ff) == 0 {
			ff = nil
		}
		dims, err := smallInt(c.Ints[0])
		if err != nil {
			return nil, err
		}
		head, err := smallInt(c.Ints[1])
		if err != nil {
			return nil, err
		}
		pos, err := smallInt(c.Ints[2])
		if err != nil {
			return nil, err
		}
		r := kernels.Rope{Dims: dims, Base: c.Floats[0], Scale: c.Floats[1], NeoX: c.Ints[3] != 0, FreqFactors: ff}
		if err := r.Check(head); err != nil {
			return nil, err
		}
		if head == 0 || len(x)%head != 0 {
			return nil, fmt.Errorf("%d values are not whole heads of %d", len(x), head)
		}
		r.Apply(x, head, pos)
		return one(x), nil
	}
	return nil, fmt.Errorf("unknown operation")
}
