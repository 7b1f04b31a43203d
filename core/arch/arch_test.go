package arch_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
)

func write(t *testing.T, a synth.Arch) *gguf.File {
	t.Helper()
	c := synth.Config{Embd: 64, Layers: 3, Heads: 4, KVHeads: 2, FF: 96, Ctx: 256, RopeBase: 10000, Eps: 1e-6,
		VocabSize: 300, Seed: 1, Arch: a}
	c.Type = 0 // F32: no quantizer needed
	var buf bytes.Buffer
	if err := synth.Write(context.Background(), &buf, c, nil); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Every architecture synth writes loads back with the options its table
// and metadata imply.
func TestLoadSynthesized(t *testing.T) {
	cases := []struct {
		a    synth.Arch
		want func(c arch.Config) bool
	}{
		{synth.Arch{Name: "llama"}, func(c arch.Config) bool {
			return c.RopeStyle == arch.RopeNormal && !c.TiedOutput && !c.QKVBias && !c.FusedQKV
		}},
		{synth.Arch{Name: "llama", RopeFreqs: true, FusedQKV: true, Tied: true}, func(c arch.Config) bool {
			return c.RopeFreqs && c.FusedQKV && c.TiedOutput && !c.QKVBias
		}},
		{synth.Arch{Name: "qwen2"}, func(c arch.Config) bool { return c.RopeStyle == arch.RopeNeoX && c.QKVBias }},
		{synth.Arch{Name: "qwen3", HeadDim: 32}, func(c arch.Config) bool {
			return c.QKNorm && c.HeadDim == 32 && c.QDim() == 128 && c.NRot == 32 && !c.QKVBias
		}},
		{synth.Arch{Name: "gemma2", HeadDim: 32}, func(c arch.Config) bool {
			return c.PostNorms && c.GeGLU && c.EmbedScale && c.ScaleQ && c.TiedOutput && c.AttnSoftcap == 50 &&
				c.FinalSoftcap == 30 && c.SlidingWindow == 4096 && c.Sliding(0) && !c.Sliding(1) && c.Sliding(2) &&
				c.RopeBaseSWA == 10000 && c.AttnScale == 1/float32(5.656854249)
		}},
		{synth.Arch{Name: "gemma3", HeadDim: 32, Window: 16, WindowPattern: 3, RopeBaseSWA: 1000, RopeScale: 8}, func(c arch.Config) bool {
			return c.PostNorms && c.QKNorm && c.GeGLU && c.AttnSoftcap == 0 && c.FinalSoftcap == 0 && c.SlidingWindow == 16 &&
				c.Sliding(0) && c.Sliding(1) && !c.Sliding(2) && c.RopeBaseSWA == 1000 && c.RopeScaleSWA == 1 &&
				c.RopeFreqScale == 0.125 && !c.TiedOutput
		}},
		{synth.Arch{Name: "gemma3"}, func(c arch.Config) bool { return c.SlidingWindow == 0 && !c.Sliding(0) }},
		{synth.Arch{Name: "phi3", Rot: 12}, func(c arch.Config) bool {
			return c.FusedQKV && c.FusedUp && c.RopeFactors && c.NRot == 12 && c.RopeOrigCtx == 64 &&
				c.RopeAttnFactor > 1 && c.ScaleQ
		}},
		{synth.Arch{Name: "phi3", NoLongRope: true}, func(c arch.Config) bool { return !c.RopeFactors && c.RopeAttnFactor == 0 }},
	}
	for _, tc := range cases {
		f := write(t, tc.a)
		c, s, err := arch.Load(f)
		if err != nil {
			t.Errorf("%+v: %v", tc.a, err)
			continue
		}
		if s.Name != tc.a.Name || !tc.want(c) {
			t.Errorf("%+v: config %+v", tc.a, c)
		}
	}
}

func TestUnknownArchitecture(t *testing.T) {
	f := write(t, synth.Arch{})
	for i := range f.KV {
		if f.KV[i].Key == "general.architecture" {
			v, _ := gguf.ValueOf("mamba")
			f.KV[i].Value = v
		}
	}
	_, _, err := arch.Load(f)
	if !errors.Is(err, arch.ErrUnsupported) || !strings.Contains(err.Error(), `"mamba"`) ||
		!strings.Contains(err.Error(), strings.Join(arch.Names(), ", ")) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v", err)
	}
	for _, n := range []string{"llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3"} {
		if _, ok := arch.Lookup(n); !ok {
			t.Errorf("%s not registered", n)
		}
	}
}

func writeMoE(t *testing.T, a synth.Arch) *gguf.File {
	t.Helper()
	return write(t, a)
}

// setKV replaces (or adds) metadata key k of f.
func setKV(t *testing.T, f *gguf.File, k string, v any) {
	t.Helper()
	val, err := gguf.ValueOf(v)
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.KV {
		if f.KV[i].Key == k {
			f.KV[i].Value = val
			return
		}
	}
	t.Fatalf("no key %s", k)
}

// unindexed is f with its tables edited freely (a File built by hand has
// no name indexes, so lookups scan the slices).
func unindexed(f *gguf.File) *gguf.File {
	return &gguf.File{Version: f.Version, Alignment: f.Alignment, DataOffset: f.DataOffset, Size: f.Size,
		KV: f.KV, Tensors: append([]gguf.TensorInfo(nil), f.Tensors...)}
}

// The mixture-of-experts architectures load with their counts, defaults
// and gating options.
func TestLoadMoE(t *testing.T) {
	cases := []struct {
		a    synth.Arch
		want func(c arch.Config) bool
	}{
		{synth.Arch{Name: "qwen3moe", HeadDim: 32, Experts: 8, ExpertsUsed: 2, FFExp: 64}, func(c arch.Config) bool {
			return c.MoE && !c.SharedExpert && c.NExpert == 8 && c.NExpertUsed == 2 && c.NFFExp == 64 && c.ExpertNorm &&
				c.QKNorm && c.ExpertGating == arch.GatingSoftmax
		}},
		{synth.Arch{Name: "qwen3moe", Experts: 4, ExpertsUsed: 3}, func(c arch.Config) bool { return c.NFFExp == 96/3 }},
		{synth.Arch{Name: synth.Mixtral, Experts: 8, ExpertsUsed: 2}, func(c arch.Config) bool {
			return c.Arch == "llama" && c.MoE && c.NFFExp == c.NFF && c.ExpertNorm
		}},
		{synth.Arch{Name: "qwen2moe", Experts: 6, ExpertsUsed: 2, FFExp: 32}, func(c arch.Config) bool {
			return c.MoE && c.SharedExpert && c.NFFShexp == 96 && !c.ExpertNorm && c.QKVBias
		}},
	}
	for _, tc := range cases {
		f := writeMoE(t, tc.a)
		c, _, err := arch.Load(f)
		if err != nil {
			t.Errorf("%+v: %v", tc.a, err)
			continue
		}
		if !tc.want(c) {
			t.Errorf("%+v: config %+v", tc.a, c)
		}
	}
}

// Hostile expert counts and tensors are refused at load with the key or
// tensor named.
func TestMoEErrors(t *testing.T) {
	q3 := synth.Arch{Name: "qwen3moe", Experts: 8, ExpertsUsed: 2, FFExp: 32}
	cases := []struct {
		name string
		mod  func(f *gguf.File) *gguf.File
		want string
	}{
		{"too many experts", func(f *gguf.File) *gguf.File { setKV(t, f, "qwen3moe.expert_count", uint32(600)); return f }, "qwen3moe.expert_count = 600: more than the 512"},
		{"used above count", func(f *gguf.File) *gguf.File { setKV(t, f, "qwen3moe.expert_used_count", uint32(9)); return f }, "qwen3moe.expert_used_count = 9: must be in [1, qwen3moe.expert_count = 8]"},
		{"used 0", func(f *gguf.File) *gguf.File { setKV(t, f, "qwen3moe.expert_used_count", uint32(0)); return f }, "expert_used_count = 0"},
		{"count 0", func(f *gguf.File) *gguf.File { setKV(t, f, "qwen3moe.expert_count", uint32(0)); return f }, "expert_used_count = 2 without qwen3moe.expert_count"},
		{"no counts", func(f *gguf.File) *gguf.File {
			setKV(t, f, "qwen3moe.expert_count", uint32(0))
			setKV(t, f, "qwen3moe.expert_used_count", uint32(0))
			return f
		}, "qwen3moe.expert_count is missing or 0 but the file has experts"},
		{"count disagrees with tensors", func(f *gguf.File) *gguf.File { setKV(t, f, "qwen3moe.expert_count", uint32(16)); return f }, "blk.0.ffn_gate_inp.weight has shape [64 8], want [64 16]"},
		{"ff_exp disagrees", func(f *gguf.File) *gguf.File {
			setKV(t, f, "qwen3moe.expert_feed_forward_length", uint32(64))
			return f
		}, "blk.0.ffn_gate_exps.weight has shape [64 32 8], want [64 64 8]"},
		{"missing expert tensor", func(f *gguf.File) *gguf.File {
			f = unindexed(f)
			for i := range f.Tensors {
				if f.Tensors[i].Name == "blk.2.ffn_down_exps.weight" {
					f.Tensors[i].Name = "blk.2.ffn_down_exps.bogus"
				}
			}
			return f
		}, "blk.2.ffn_down_exps.weight is missing"},
	}
	for _, tc := range cases {
		f := tc.mod(writeMoE(t, q3))
		_, _, err := arch.Load(f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
	// Experts in an architecture without them.
	f := unindexed(write(t, synth.Arch{Name: "qwen3"}))
	f.Tensors = append(f.Tensors, gguf.TensorInfo{Name: "blk.0.ffn_gate_inp.weight", Dims: []uint64{64, 4}})
	if _, _, err := arch.Load(f); !errors.Is(err, arch.ErrUnsupported) || !strings.Contains(err.Error(), "mixture-of-experts layers in a qwen3 file") {
		t.Errorf("qwen3 with a router: err = %v", err)
	}
}
