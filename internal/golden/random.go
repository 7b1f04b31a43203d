package golden

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/sample"
)

// Random describes an unstructured F32 model with uniform random weights,
// for architectures core/synth does not write (qwen2: q/k/v biases, NeoX
// RoPE, untied output). Its greedy margins are those of random logits, so
// the tests check llama.cpp's argmax only where its top-2 gap is clear.
type Random struct {
	Arch     string  `json:"arch"`
	Embd     int     `json:"embd"`
	Layers   int     `json:"layers"`
	Heads    int     `json:"heads"`
	KVHeads  int     `json:"kv_heads"`
	FF       int     `json:"ff"`
	Ctx      int     `json:"ctx"`
	RopeBase float32 `json:"rope_base"`
	Eps      float32 `json:"eps"`
	Bias     bool    `json:"bias"` // attn_q/k/v.bias
	Seed     uint64  `json:"seed"`
}

// WriteRandom streams the model to w, copying tokenizer.* keys from vocab.
// The bytes depend only on r and vocab.
func WriteRandom(w io.Writer, r Random, vocab *gguf.File) error {
	if r.Embd <= 0 || r.Heads <= 0 || r.KVHeads <= 0 || r.Embd%r.Heads != 0 || r.Heads%r.KVHeads != 0 || r.Layers <= 0 || r.FF <= 0 {
		return fmt.Errorf("golden: bad random model shape %+v", r)
	}
	toks, err := vocab.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return fmt.Errorf("golden: vocab: %w", err)
	}
	gw := gguf.NewWriter(w)
	a := r.Arch
	for _, kv := range []struct {
		k string
		v any
	}{
		{"general.architecture", a},
		{a + ".context_length", uint32(r.Ctx)},
		{a + ".embedding_length", uint32(r.Embd)},
		{a + ".block_count", uint32(r.Layers)},
		{a + ".feed_forward_length", uint32(r.FF)},
		{a + ".attention.head_count", uint32(r.Heads)},
		{a + ".attention.head_count_kv", uint32(r.KVHeads)},
		{a + ".rope.freq_base", r.RopeBase},
		{a + ".attention.layer_norm_rms_epsilon", r.Eps},
	} {
		v, err := gguf.ValueOf(kv.v)
		if err != nil {
			return err
		}
		if err := gw.AddKV(kv.k, v); err != nil {
			return err
		}
	}
	for _, kv := range vocab.KV {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			if err := gw.AddKV(kv.Key, kv.Value); err != nil {
				return err
			}
		}
	}
	hd := r.Embd / r.Heads
	q, kv := r.Heads*hd, r.KVHeads*hd
	type tensor struct {
		name string
		dims []int
	}
	ts := []tensor{{"token_embd.weight", []int{r.Embd, len(toks)}}}
	for i := 0; i < r.Layers; i++ {
		b := func(s string, d ...int) tensor { return tensor{fmt.Sprintf("blk.%d.%s", i, s), d} }
		ts = append(ts, b("attn_norm.weight", r.Embd), b("attn_q.weight", r.Embd, q), b("attn_k.weight", r.Embd, kv),
			b("attn_v.weight", r.Embd, kv))
		if r.Bias {
			ts = append(ts, b("attn_q.bias", q), b("attn_k.bias", kv), b("attn_v.bias", kv))
		}
		ts = append(ts, b("attn_output.weight", q, r.Embd), b("ffn_norm.weight", r.Embd), b("ffn_gate.weight", r.Embd, r.FF),
			b("ffn_up.weight", r.Embd, r.FF), b("ffn_down.weight", r.FF, r.Embd))
	}
	ts = append(ts, tensor{"output_norm.weight", []int{r.Embd}}, tensor{"output.weight", []int{r.Embd, len(toks)}})
	for _, t := range ts {
		d := make([]uint64, len(t.dims))
		for i, x := range t.dims {
			d[i] = uint64(x)
		}
		if _, err := gw.AddTensor(gguf.TensorInfo{Name: t.name, Type: ggml.F32, Dims: d}); err != nil {
			return err
		}
	}
	if err := gw.WriteHeader(); err != nil {
		return err
	}
	rng := sample.NewRNG(r.Seed)
	for _, t := range ts {
		cols, rows := t.dims[0], 1
		if len(t.dims) > 1 {
			rows = t.dims[1]
		}
		row := make([]byte, 4*cols)
		for range rows {
			for i := 0; i < cols; i++ {
				u := 2*rng.Float64() - 1
				var v float64
				switch {
				case strings.HasSuffix(t.name, "norm.weight"):
					v = 1 + 0.2*u
				case strings.HasSuffix(t.name, ".bias"), t.name == "token_embd.weight":
					v = u
				default:
					v = u * 1.7 / math.Sqrt(float64(cols))
				}
				binary.LittleEndian.PutUint32(row[4*i:], math.Float32bits(float32(v)))
			}
			if _, err := gw.Write(row); err != nil {
				return err
			}
		}
	}
	return gw.Close()
}
