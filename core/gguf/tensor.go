package gguf

import "github.com/memvanta/memvanta/core/ggml"

// TensorInfo is one entry of a GGUF tensor table.
type TensorInfo struct {
	Name   string
	Type   ggml.Type
	Dims   []uint64 // ne[0] first: Dims[0] is the row length
	Offset uint64   // relative to File.DataOffset
	Size   uint64   // bytes of tensor data
}

// Elements is the product of the dims.
func (t TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}
