package arch_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
)

var ossArch = synth.Arch{Name: synth.GPTOSS, HeadDim: 32, Window: 16, Bias: true, RopeScale: 4, YaRN: true, OrigCtx: 64,
	Experts: 8, ExpertsUsed: 2, FFExp: 32}

// gpt-oss loads with its graph options: sinks, expert biases, the clamped
// SwiGLU, softmax over the chosen logits without renormalisation, a
// window on the even layers, YaRN on every layer.
func TestLoadGPTOSS(t *testing.T) {
	c, s, err := arch.Load(write(t, ossArch))
	if err != nil {
		t.Fatal(err)
	}
	ok := s.Name == "gpt-oss" && c.AttnSinks && c.ExpertBias && c.SwiGLUOAI && c.MoE && c.OutBias && c.QKVBias &&
		c.ExpertGating == arch.GatingSoftmaxWeight && !c.ExpertNorm && c.ExpertScale == 0 &&
		c.NExpert == 8 && c.NExpertUsed == 2 && c.NFFExp == 32 && c.RopeStyle == arch.RopeNeoX &&
		c.SlidingWindow == 16 && c.Sliding(0) && !c.Sliding(1) && c.Sliding(2) &&
		c.RopeYaRN && c.RopeFreqScale == 0.25 && c.RopeScaleSWA == 0.25 && c.RopeOrigCtx == 64 && c.RopeBaseSWA == c.RopeBase
	if !ok {
		t.Errorf("config %+v", c)
	}
	// Without q/k/v biases (llama.cpp's table has them optional).
	a := ossArch
	a.Bias = false
	if c, _, err := arch.Load(write(t, a)); err != nil || c.QKVBias || !c.OutBias {
		t.Errorf("without q/k/v biases: %v, config %+v", err, c)
	}
}

// putKV replaces or adds metadata key k of f.
func putKV(t *testing.T, f *gguf.File, k string, v any) *gguf.File {
	t.Helper()
	val, err := gguf.ValueOf(v)
	if err != nil {
		t.Fatal(err)
	}
	g := unindexed(f)
	g.KV = append([]gguf.KV(nil), f.KV...)
	for i := range g.KV {
		if g.KV[i].Key == k {
			g.KV[i].Value = val
			return g
		}
	}
	g.KV = append(g.KV, gguf.KV{Key: k, Value: val})
	return g
}

func dropKV(f *gguf.File, k string) *gguf.File {
	g := unindexed(f)
	g.KV = nil
	for _, kv := range f.KV {
		if kv.Key != k {
			g.KV = append(g.KV, kv)
		}
	}
	return g
}

func retensor(f *gguf.File, name string, mod func(*gguf.TensorInfo)) *gguf.File {
	g := unindexed(f)
	for i := range g.Tensors {
		if g.Tensors[i].Name == name {
			mod(&g.Tensors[i])
		}
	}
	return g
}

// Hostile gpt-oss metadata and tensors are refused at load, naming the key
// or tensor and what is wrong with it.
func TestGPTOSSErrors(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name string
		mod  func(f *gguf.File) *gguf.File
		want string
	}{
		{"window 0", func(f *gguf.File) *gguf.File { return putKV(t, f, "gpt-oss.attention.sliding_window", uint32(0)) },
			"gpt-oss.attention.sliding_window = 0: a window of no positions"},
		{"window huge", func(f *gguf.File) *gguf.File {
			return putKV(t, f, "gpt-oss.attention.sliding_window", uint64(1)<<40)
		}, "gpt-oss.attention.sliding_window = 1099511627776: out of range"},
		{"window missing", func(f *gguf.File) *gguf.File { return dropKV(f, "gpt-oss.attention.sliding_window") },
			"gpt-oss.attention.sliding_window is missing"},
		{"window a string", func(f *gguf.File) *gguf.File { return putKV(t, f, "gpt-oss.attention.sliding_window", "128") },
			"gpt-oss.attention.sliding_window"},
		{"sink shape", func(f *gguf.File) *gguf.File {
			return retensor(f, "blk.1.attn_sinks.weight", func(ti *gguf.TensorInfo) { ti.Dims = []uint64{2, 2} })
		}, "tensor blk.1.attn_sinks.weight has shape [2 2], want [4]"},
		{"sink type", func(f *gguf.File) *gguf.File {
			return retensor(f, "blk.0.attn_sinks.weight", func(ti *gguf.TensorInfo) { ti.Type = ggml.F16 })
		}, "tensor blk.0.attn_sinks.weight has type F16, want F32"},
		{"sinks missing", func(f *gguf.File) *gguf.File {
			return retensor(f, "blk.2.attn_sinks.weight", func(ti *gguf.TensorInfo) { ti.Name = "blk.2.attn_sinks.bogus" })
		}, "tensor blk.2.attn_sinks.weight is missing"},
		{"expert bias shape", func(f *gguf.File) *gguf.File {
			return retensor(f, "blk.0.ffn_up_exps.bias", func(ti *gguf.TensorInfo) { ti.Dims = []uint64{32, 4} })
		}, "tensor blk.0.ffn_up_exps.bias has shape [32 4], want [32 8]"},
		{"router bias missing", func(f *gguf.File) *gguf.File {
			return retensor(f, "blk.1.ffn_gate_inp.bias", func(ti *gguf.TensorInfo) { ti.Name = "blk.1.ffn_gate_inp.bogus" })
		}, "tensor blk.1.ffn_gate_inp.bias is missing"},
		{"yarn factor 0", func(f *gguf.File) *gguf.File { return putKV(t, f, "gpt-oss.rope.scaling.factor", float32(0)) },
			"gpt-oss.rope.scaling.factor = 0 with rope.scaling.type yarn"},
		{"yarn factor negative", func(f *gguf.File) *gguf.File { return putKV(t, f, "gpt-oss.rope.scaling.factor", float32(-2)) },
			"gpt-oss.rope.scaling.factor = -2: the rope scaling factor must be > 0"},
		{"yarn factor NaN", func(f *gguf.File) *gguf.File { return putKV(t, f, "gpt-oss.rope.scaling.factor", nan) },
			"gpt-oss.rope.scaling.factor = NaN: the rope scaling factor must be > 0"},
		{"yarn factor Inf", func(f *gguf.File) *gguf.File {
			return putKV(t, f, "gpt-oss.rope.scaling.factor", float32(math.Inf(1)))
		}, "gpt-oss.rope.scaling.factor = +Inf: the rope scaling factor must be > 0 and finite"},
		{"original context 0", func(f *gguf.File) *gguf.File {
			return putKV(t, f, "gpt-oss.rope.scaling.original_context_length", uint32(0))
		}, "gpt-oss.rope.scaling.original_context_length = 0: out of range"},
		{"sliding base 0", func(f *gguf.File) *gguf.File { return putKV(t, f, "gpt-oss.rope.freq_base_swa", float32(0)) },
			"gpt-oss.rope.freq_base_swa = 0: must be > 0"},
		{"partial rotary", func(f *gguf.File) *gguf.File { return putKV(t, f, "gpt-oss.rope.dimension_count", uint32(16)) },
			"gpt-oss.rope.dimension_count 16 must equal the head length 32"},
	}
	for _, tc := range cases {
		_, _, err := arch.Load(tc.mod(write(t, ossArch)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
		if errors.Is(err, gguf.ErrNotFound) && !strings.Contains(tc.name, "missing") {
			t.Errorf("%s: %v reads as a missing key", tc.name, err)
		}
	}
}

// YaRN is a general option: a llama file with rope.scaling.type yarn loads
// with it on (it was refused before), and an unknown type is still refused.
func TestYaRNGeneral(t *testing.T) {
	c, _, err := arch.Load(write(t, synth.Arch{Name: "llama", RopeScale: 2, YaRN: true, OrigCtx: 128}))
	if err != nil || !c.RopeYaRN || c.RopeFreqScale != 0.5 || c.RopeOrigCtx != 128 {
		t.Errorf("llama with yarn: %v, config %+v", err, c)
	}
	f := putKV(t, write(t, synth.Arch{Name: "llama", RopeScale: 2}), "llama.rope.scaling.type", "longrope")
	if _, _, err := arch.Load(f); !errors.Is(err, arch.ErrUnsupported) || !strings.Contains(err.Error(), `rope scaling type "longrope"`) {
		t.Errorf("longrope: err = %v", err)
	}
}
