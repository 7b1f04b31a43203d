// Package testgguf writes minimal GGUF v3 files for the native runtime's
// tests, so they do not depend on the synth generator. It writes only what
// the runtime needs: an architecture string and tensors of given types and
// dims filled with a deterministic byte pattern.
package testgguf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"sort"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
)

// Tensor is one tensor to write.
type Tensor struct {
	Name string
	Type ggml.Type
	Dims []uint64
}

const alignment = 32

// Write creates path with the given tensors (data: byte i of tensor k is
// Pattern(k, i)) and returns the tensor table as written and the absolute
// offset of the data section, so tests can check a parser against it.
func Write(path string, tensors []Tensor) ([]gguf.TensorInfo, int64, error) {
	return WriteMeta(path, tensors, nil)
}

// WriteMeta is Write with extra uint32 metadata (such as
// "llama.expert_used_count"), written in key order.
func WriteMeta(path string, tensors []Tensor, u32 map[string]uint32) ([]gguf.TensorInfo, int64, error) {
	var h bytes.Buffer
	le := binary.LittleEndian
	w32 := func(v uint32) { binary.Write(&h, le, v) }
	w64 := func(v uint64) { binary.Write(&h, le, v) }
	str := func(s string) { w64(uint64(len(s))); h.WriteString(s) }
	h.WriteString("GGUF")
	w32(3)
	w64(uint64(len(tensors)))
	w64(uint64(1 + len(u32)))
	str("general.architecture")
	w32(8) // string
	str("llama")
	keys := make([]string, 0, len(u32))
	for k := range u32 {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		str(k)
		w32(4) // uint32
		w32(u32[k])
	}
	sizes := make([]uint64, len(tensors))
	infos := make([]gguf.TensorInfo, len(tensors))
	var off uint64
	for i, t := range tensors {
		n := uint64(1)
		for _, d := range t.Dims[1:] {
			n *= d
		}
		rs, err := ggml.RowSize(t.Type, t.Dims[0])
		if err != nil {
			return nil, 0, fmt.Errorf("testgguf: %s: %w", t.Name, err)
		}
		sizes[i] = rs * n
		str(t.Name)
		w32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			w64(d)
		}
		w32(uint32(t.Type))
		w64(off)
		infos[i] = gguf.TensorInfo{Name: t.Name, Type: t.Type, Dims: append([]uint64(nil), t.Dims...), Offset: off, Size: sizes[i]}
		off += sizes[i]
		off = (off + alignment - 1) / alignment * alignment
	}
	for h.Len()%alignment != 0 {
		h.WriteByte(0)
	}
	dataOff := int64(h.Len())
	f, err := os.Create(path)
	if err != nil {
		return nil, 0, fmt.Errorf("testgguf: %w", err)
	}
	if _, err := f.Write(h.Bytes()); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("testgguf: %w", err)
	}
	buf := make([]byte, 1<<16)
	for k, sz := range sizes {
		var i uint64
		for i < sz {
			n := min(uint64(len(buf)), sz-i)
			for j := range n {
				buf[j] = Pattern(k, i+j)
			}
			if _, err := f.Write(buf[:n]); err != nil {
				f.Close()
				return nil, 0, fmt.Errorf("testgguf: %w", err)
			}
			i += n
		}
		if pad := (alignment - sz%alignment) % alignment; pad != 0 && k != len(sizes)-1 {
			if _, err := f.Write(make([]byte, pad)); err != nil {
				f.Close()
				return nil, 0, fmt.Errorf("testgguf: %w", err)
			}
		}
	}
	if err := f.Close(); err != nil {
		return nil, 0, fmt.Errorf("testgguf: %w", err)
	}
	return infos, dataOff, nil
}

// Pattern is byte i of tensor k's data.
func Pattern(k int, i uint64) byte {
	return byte(uint64(k)*131 + i*7 + i>>9)
}
