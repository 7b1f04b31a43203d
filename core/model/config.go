package model

import (
	"strings"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/kernels"
)

// Config is the shape, numerics and graph options of a model, resolved from
// its GGUF file against the architecture table in core/arch.
type Config = arch.Config

// RopeStyle says which elements RoPE rotates together (see core/arch).
type RopeStyle = arch.RopeStyle

const (
	RopeNormal = arch.RopeNormal
	RopeNeoX   = arch.RopeNeoX
)

// ErrUnsupported marks a model this build cannot run (architecture, tensor
// type, scaling scheme); the CLI reports it as one line.
var ErrUnsupported = arch.ErrUnsupported

// ConfigFromGGUF reads the hyperparameters of a model of any architecture
// in core/arch and checks every tensor the graph will use: presence and
// shape against the architecture's table (core/arch), type against the
// kernels, so a malformed file fails here with the tensor's name instead of
// deep inside a kernel.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	c, s, err := arch.Load(f)
	if err != nil {
		return Config{}, err
	}
	global, layer := s.Tensors(&c)
	check := func(t arch.Tensor, name string) error {
		ti, _ := f.Tensor(name) // present: arch.Load checked
		switch t.Kind {
		case arch.Matrix:
			if !matmulType(ti.Type) {
				return unsupportedType(name, ti.Type)
			}
		case arch.Vector:
			if !dequantizable(ti.Type) {
				return unsupportedType(name, ti.Type)
			}
		}
		return nil
	}
	for _, t := range global {
		if err := check(t, t.Name); err != nil {
			return Config{}, err
		}
	}
	if c.TiedOutput {
		if emb, _ := f.Tensor(tokEmbd); !matmulType(emb.Type) {
			return Config{}, unsupportedType(tokEmbd+" (tied output projection)", emb.Type)
		}
	}
	for l := 0; l < c.NLayer; l++ {
		for _, t := range layer {
			if err := check(t, arch.LayerName(l, t.Name)); err != nil {
				return Config{}, err
			}
		}
	}
	return c, nil
}

// Tensor names the graph uses outside the layers.
const (
	tokEmbd   = arch.TokEmbdName
	outNorm   = arch.OutNormName
	outWeight = arch.OutputName
	outBias   = arch.OutputBiasName
)

func blk(i int, s string) string { return arch.LayerName(i, s) }

func unsupported(format string, a ...any) error {
	return arch.Unsupported(format, a...)
}

// unsupportedType is the load-time refusal of a tensor whose type no kernel
// path can execute (IQ1/IQ2/IQ3, TQ, integer types ...): one line
// naming the tensor, its type and the types this build runs.
func unsupportedType(name string, t ggml.Type) error {
	var ok []string
	for _, u := range ggml.All() {
		if matmulType(u) {
			ok = append(ok, u.String())
		}
	}
	return unsupported("tensor %s has type %s, which this build cannot execute (executable types: %s)",
		name, t, strings.Join(ok, " "))
}

// matmulType reports whether every kernel path can multiply by t.
func matmulType(t ggml.Type) bool { return kernels.Executes(t) }

// dequantizable reports whether norms, biases and embeddings of type t can
// be decoded to f32 (the executable types all can).
func dequantizable(t ggml.Type) bool { return matmulType(t) }
