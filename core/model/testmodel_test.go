package model

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/kernels"
)

// tiny describes a small random model written in memory for tests.
type tiny struct {
	arch                         string
	embd, layers, heads, kvHeads int
	ff, vocab, ctx, rot          int
	typ                          ggml.Type            // matrices
	types                        map[string]ggml.Type // per-tensor overrides (full name), any type
	tied, bias, ropeFreqs        bool
	ropeScale                    float32 // linear factor, 0 = none
	seed                         uint64
	skip                         map[string]bool  // tensors to leave out
	dims                         map[string][]int // shape overrides
	meta                         map[string]any   // extra/overriding metadata
	extra                        []gguf.TensorInfo
}

func defTiny() tiny {
	return tiny{arch: "llama", embd: 64, layers: 2, heads: 4, kvHeads: 2, ff: 96, vocab: 80, ctx: 512, rot: 16,
		typ: ggml.F32, seed: 1}
}

// tensors returns the model's tensors (name, dims, type) in file order.
func (c tiny) tensors() []gguf.TensorInfo {
	hd := c.embd / c.heads
	q, kv := c.heads*hd, c.kvHeads*hd
	var ts []gguf.TensorInfo
	add := func(name string, t ggml.Type, dims ...int) {
		if c.skip[name] {
			return
		}
		if d, ok := c.dims[name]; ok {
			dims = d
		}
		if o, ok := c.types[name]; ok {
			t = o
		}
		u := make([]uint64, len(dims))
		for i, d := range dims {
			u[i] = uint64(d)
		}
		ts = append(ts, gguf.TensorInfo{Name: name, Type: t, Dims: u})
	}
	add("token_embd.weight", c.typ, c.embd, c.vocab)
	if c.ropeFreqs {
		add("rope_freqs.weight", ggml.F32, c.rot/2)
	}
	for i := 0; i < c.layers; i++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", i, s) }
		add(b("attn_norm.weight"), ggml.F32, c.embd)
		add(b("attn_q.weight"), c.typ, c.embd, q)
		add(b("attn_k.weight"), c.typ, c.embd, kv)
		add(b("attn_v.weight"), c.typ, c.embd, kv)
		if c.bias {
			add(b("attn_q.bias"), ggml.F32, q)
			add(b("attn_k.bias"), ggml.F32, kv)
			add(b("attn_v.bias"), ggml.F32, kv)
		}
		add(b("attn_output.weight"), c.typ, q, c.embd)
		add(b("ffn_norm.weight"), ggml.F32, c.embd)
		add(b("ffn_gate.weight"), c.typ, c.embd, c.ff)
		add(b("ffn_up.weight"), c.typ, c.embd, c.ff)
		add(b("ffn_down.weight"), c.typ, c.ff, c.embd)
	}
	add("output_norm.weight", ggml.F32, c.embd)
	if !c.tied {
		add("output.weight", c.typ, c.embd, c.vocab)
	}
	return append(ts, c.extra...)
}

// values fills a tensor deterministically: norms near 1, rope factors >= 1,
// everything else small and centred.
func (c tiny) values(ti gguf.TensorInfo, rng *sample.RNG) []float32 {
	n := int(ti.Elements())
	v := make([]float32, n)
	name := ti.Name
	switch {
	case bytes.HasSuffix([]byte(name), []byte("norm.weight")):
		for i := range v {
			v[i] = float32(0.8 + 0.4*rng.Float64())
		}
	case name == "rope_freqs.weight":
		for i := range v {
			v[i] = float32(1 + 3*rng.Float64())
		}
	default:
		s := 1 / math.Sqrt(float64(ti.Dims[0]))
		if name == "token_embd.weight" {
			s = 1
		}
		for i := range v {
			v[i] = float32((2*rng.Float64() - 1) * s * 1.7)
		}
	}
	return v
}

// build writes the model and returns the file bytes.
func (c tiny) build(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf)
	written := map[string]bool{}
	kv := func(k string, v any) {
		written[k] = true
		if o, ok := c.meta[k]; ok {
			v = o
		}
		if v == nil {
			return
		}
		val, err := gguf.ValueOf(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddKV(k, val); err != nil {
			t.Fatal(err)
		}
	}
	a := c.arch
	kv("general.architecture", a)
	kv(a+".context_length", uint32(c.ctx))
	kv(a+".embedding_length", uint32(c.embd))
	kv(a+".block_count", uint32(c.layers))
	kv(a+".feed_forward_length", uint32(c.ff))
	kv(a+".attention.head_count", uint32(c.heads))
	kv(a+".attention.head_count_kv", uint32(c.kvHeads))
	kv(a+".rope.dimension_count", uint32(c.rot))
	kv(a+".rope.freq_base", float32(10000))
	kv(a+".attention.layer_norm_rms_epsilon", float32(1e-5))
	if c.ropeScale != 0 {
		kv(a+".rope.scaling.type", "linear")
		kv(a+".rope.scaling.factor", c.ropeScale)
	}
	for k, v := range c.meta {
		if !written[k] {
			kv(k, v)
		}
	}
	ts := c.tensors()
	for _, ti := range ts {
		if _, err := w.AddTensor(ti); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	rng := sample.NewRNG(c.seed)
	for _, ti := range ts {
		v := c.values(ti, rng)
		rs, err := ggml.RowSize(ti.Type, ti.Dims[0])
		if err != nil {
			t.Fatal(err)
		}
		row := make([]byte, rs)
		if _, ok := kBlockScales[ti.Type]; ok {
			for r := 0; r < len(v)/int(ti.Dims[0]); r++ {
				kQuantRow(t, ti.Type, row, rms(v[r*int(ti.Dims[0]):(r+1)*int(ti.Dims[0])]), rng)
				if _, err := w.Write(row); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if !canQuantize(ti.Type) {
			for r := 0; r < len(v)/int(ti.Dims[0]); r++ {
				w.Write(row) // zero blocks: only the header matters for such tests
			}
			continue
		}
		for r := 0; r < len(v)/int(ti.Dims[0]); r++ {
			if err := kernels.Quantize(ti.Type, v[r*int(ti.Dims[0]):(r+1)*int(ti.Dims[0])], row); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(row); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func parse(t testing.TB, b []byte) *gguf.File {
	t.Helper()
	f, err := gguf.Parse(bytes.NewReader(b), int64(len(b)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// open builds, parses and wraps a tiny model.
func (c tiny) open(t testing.TB, opt Options) *Model {
	t.Helper()
	b := c.build(t)
	f := parse(t, b)
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	w, err := MemWeightsFromBytes(f, b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(cfg, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func canQuantize(t ggml.Type) bool {
	return kernels.Quantize(t, make([]float32, t.BlockSize()), make([]byte, t.TypeSize())) == nil
}

// kBlockScales are the byte offsets of a K-quant (or IQ4) block's f16
// super-block scale d and min dmin (-1: the type has no min), as laid out
// in ggml's block_q*_K / block_iq4_* structs.
var kBlockScales = map[ggml.Type][2]int{
	ggml.Q2_K: {80, 82},
	ggml.Q3_K: {108, -1},
	ggml.Q4_K: {0, 2},
	ggml.Q5_K: {0, 2},
	ggml.Q6_K: {208, -1},
	// IQ4 blocks have one f16 scale at the start and no min.
	ggml.IQ4_NL: {0, -1},
	ggml.IQ4_XS: {0, -1},
}

// kQuantRow fills row (one row of K-quant blocks of type t) with random
// quants and sub-block scales, then sets each block's d (and dmin) so the
// block is centred and has RMS target. There is no K-quant encoder in
// kernels (llama.cpp's quantizer makes real files, see internal/quantfiles);
// random blocks with sane scales are enough to exercise each type's kernels
// inside the graph, which the float64 reference then dequantizes.
func kQuantRow(t testing.TB, typ ggml.Type, row []byte, target float64, rng *sample.RNG) {
	t.Helper()
	off := kBlockScales[typ]
	bs, n := typ.TypeSize(), typ.BlockSize()
	f := make([]float32, n)
	set := func(b []byte, d, m float32) {
		binary.LittleEndian.PutUint16(b[off[0]:], kernels.F32ToF16(d))
		if off[1] >= 0 {
			binary.LittleEndian.PutUint16(b[off[1]:], kernels.F32ToF16(m))
		}
	}
	stats := func(b []byte) (mean, rms float64) {
		if err := kernels.Dequantize(typ, b, f); err != nil {
			t.Fatal(err)
		}
		for _, v := range f {
			mean += float64(v)
			rms += float64(v) * float64(v)
		}
		return mean / float64(n), math.Sqrt(rms / float64(n))
	}
	for b := 0; b+bs <= len(row); b += bs {
		blk := row[b : b+bs]
		for i := range blk {
			blk[i] = byte(rng.Uint64())
		}
		ratio := 0.0 // dmin/d that centres the block
		if off[1] >= 0 {
			set(blk, 1, 0)
			a, _ := stats(blk)
			set(blk, 0, 1)
			m, _ := stats(blk)
			if m != 0 {
				ratio = -a / m
			}
		}
		set(blk, 1, float32(ratio))
		_, r := stats(blk)
		if r == 0 {
			r = 1
		}
		set(blk, float32(target/r), float32(ratio*target/r))
	}
}

func rms(v []float32) float64 {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s / float64(max(len(v), 1)))
}
