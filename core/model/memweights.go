package model

import (
	"context"
	"fmt"
	"io"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
)

// MemWeights serves every tensor from memory. It is the Weights of the wasm
// guest and of tests; native runs use the mmap-backed store in
// native/weights instead, which never copies the whole model.
type MemWeights struct {
	f      *gguf.File
	data   map[string][]byte
	plan   *Plan
	held   []bool
	groups [][][]byte // per plan group, the tensors' bytes in order
	byName map[string]gguf.TensorInfo
}

// NewMemWeights reads every tensor of f from r into memory (r is the file
// f was parsed from). Tensors that run past the end of the file are an
// error naming the tensor.
func NewMemWeights(f *gguf.File, r io.ReaderAt) (*MemWeights, error) {
	m := newMem(f)
	for _, ti := range f.Tensors {
		off, err := tensorOffset(f, ti)
		if err != nil {
			return nil, err
		}
		b := make([]byte, ti.Size)
		if _, err := r.ReadAt(b, off); err != nil {
			return nil, fmt.Errorf("model: reading tensor %s at offset %d: %w", ti.Name, off, err)
		}
		m.data[ti.Name] = b
	}
	return m, nil
}

// MemWeightsFromBytes serves tensors by slicing file (the whole GGUF file
// f was parsed from) without copying.
func MemWeightsFromBytes(f *gguf.File, file []byte) (*MemWeights, error) {
	m := newMem(f)
	for _, ti := range f.Tensors {
		off, err := tensorOffset(f, ti)
		if err != nil {
			return nil, err
		}
		if off+int64(ti.Size) > int64(len(file)) {
			return nil, fmt.Errorf("model: tensor %s [%d, +%d) runs past the %d-byte buffer", ti.Name, off, ti.Size, len(file))
		}
		m.data[ti.Name] = file[off : off+int64(ti.Size) : off+int64(ti.Size)]
	}
	return m, nil
}

func newMem(f *gguf.File) *MemWeights {
	m := &MemWeights{f: f, data: make(map[string][]byte, len(f.Tensors)), byName: make(map[string]gguf.TensorInfo, len(f.Tensors))}
	for _, ti := range f.Tensors {
		m.byName[ti.Name] = ti
	}
	return m
}

func tensorOffset(f *gguf.File, ti gguf.TensorInfo) (int64, error) {
	off := uint64(f.DataOffset) + ti.Offset
	if off < ti.Offset || off+ti.Size < off || (f.Size > 0 && off+ti.Size > uint64(f.Size)) || off > 1<<62 {
		return 0, fmt.Errorf("model: tensor %s [%d, +%d) lies outside the %d-byte file", ti.Name, off, ti.Size, f.Size)
	}
	want, err := ggml.RowSize(ti.Type, ti.Elements())
	if err != nil {
		return 0, fmt.Errorf("model: tensor %s: %w", ti.Name, err)
	}
	if want != ti.Size {
		return 0, fmt.Errorf("model: tensor %s: size %d, want %d for %s %v", ti.Name, ti.Size, want, ti.Type, ti.Dims)
	}
	return int64(off), nil
}

// Info implements Weights.
func (m *MemWeights) Info(name string) (gguf.TensorInfo, bool) {
	ti, ok := m.byName[name]
	return ti, ok
}

// Declare implements Weights; every tensor the plan names must exist.
func (m *MemWeights) Declare(p Plan) error {
	for _, g := range p.Groups {
		for _, n := range g.Tensors {
			if _, ok := m.data[n]; !ok {
				return fmt.Errorf("model: plan group %s names missing tensor %s", g.Name, n)
			}
		}
	}
	m.plan = &p
	m.held = make([]bool, len(p.Groups))
	// Each group's slice list is built once, so Acquire allocates nothing.
	m.groups = make([][][]byte, len(p.Groups))
	for i, g := range p.Groups {
		m.groups[i] = make([][]byte, len(g.Tensors))
		for j, n := range g.Tensors {
			m.groups[i][j] = m.data[n]
		}
	}
	return nil
}

// Acquire implements Weights.
func (m *MemWeights) Acquire(ctx context.Context, g int) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if m.plan == nil {
		return nil, fmt.Errorf("model: Acquire(%d) before Declare", g)
	}
	if g < 0 || g >= len(m.plan.Groups) {
		return nil, fmt.Errorf("model: Acquire(%d): plan has %d groups", g, len(m.plan.Groups))
	}
	m.held[g] = true
	return m.groups[g], nil
}

// Release implements Weights.
func (m *MemWeights) Release(g int) {
	if m.held != nil && g >= 0 && g < len(m.held) {
		m.held[g] = false
	}
}

// Row implements Weights.
func (m *MemWeights) Row(ctx context.Context, name string, r int, dst []byte) error {
	ti, ok := m.byName[name]
	if !ok {
		return fmt.Errorf("model: Row: no tensor %s", name)
	}
	rs, nrows, err := rowGeometry(ti)
	if err != nil {
		return err
	}
	if r < 0 || uint64(r) >= nrows {
		return fmt.Errorf("model: Row: row %d of tensor %s out of range [0, %d)", r, name, nrows)
	}
	if uint64(len(dst)) != rs {
		return fmt.Errorf("model: Row: tensor %s rows are %d bytes, dst has %d", name, rs, len(dst))
	}
	copy(dst, m.data[name][uint64(r)*rs:])
	return nil
}

// rowGeometry returns the bytes per row and the number of rows of a tensor.
func rowGeometry(ti gguf.TensorInfo) (rowSize, rows uint64, err error) {
	if len(ti.Dims) == 0 || ti.Dims[0] == 0 {
		return 0, 0, fmt.Errorf("model: tensor %s has empty shape %v", ti.Name, ti.Dims)
	}
	rs, err := ggml.RowSize(ti.Type, ti.Dims[0])
	if err != nil {
		return 0, 0, fmt.Errorf("model: tensor %s: %w", ti.Name, err)
	}
	return rs, ti.Elements() / ti.Dims[0], nil
}
