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
	"github.com/memvanta/memvanta/internal/archfixtures"
)

func write(t *testing.T, a synth.Arch) *gguf.File {
	t.Helper()
	return writeEmbd(t, a, 64)
}

func writeEmbd(t *testing.T, a synth.Arch, embd int) *gguf.File {
	t.Helper()
	c := synth.Config{Embd: embd, Layers: 3, Heads: 4, KVHeads: 2, FF: 96, Ctx: 256, RopeBase: 10000, Eps: 1e-6,
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

// TestLoadFixtures: every shared test architecture (internal/archfixtures)
// loads back as its architecture, with its table's graph options and the
// options core/synth wrote for it. (128 wide: phi3's fixture rotates 24 of
// each head's elements.)
func TestLoadFixtures(t *testing.T) {
	for _, fx := range archfixtures.All() {
		a := fx.Arch
		c, s, err := arch.Load(writeEmbd(t, a, 128))
		if err != nil {
			t.Errorf("%s: %v", fx.Label, err)
			continue
		}
		g := s.Graph
		for _, chk := range []struct {
			what string
			ok   bool
		}{
			{"architecture " + s.Name, s.Name == fx.Name()},
			{"graph", c.RopeStyle == g.Rope && c.EmbedScale == g.EmbedScale && c.ScaleQ == g.ScaleQ && c.GeGLU == g.GeGLU},
			{"head length", a.HeadDim == 0 || c.HeadDim == a.HeadDim},
			{"rotary length", a.Rot == 0 || c.NRot == a.Rot},
			{"sliding window", c.SlidingWindow == a.Window || a.Window == 0},
			{"window pattern", c.SWAPattern == a.WindowPattern || a.WindowPattern == 0},
			{"sliding RoPE base", c.RopeBaseSWA == a.RopeBaseSWA || a.RopeBaseSWA == 0},
			{"attention soft-cap", c.AttnSoftcap == a.AttnSoftcap || a.AttnSoftcap == 0},
			{"final soft-cap", c.FinalSoftcap == a.FinalSoftcap || a.FinalSoftcap == 0},
			{"rope scaling", a.RopeScale == 0 || c.RopeFreqScale == 1/a.RopeScale},
			{"rope_freqs", c.RopeFreqs == a.RopeFreqs},
			{"LongRoPE", c.RopeFactors == (fx.Name() == "phi3" && !a.NoLongRope)},
			{"original context", a.OrigCtx == 0 || c.RopeOrigCtx == a.OrigCtx},
			{"fused q/k/v", !a.FusedQKV || c.FusedQKV},
			{"biases", !a.Bias || c.QKVBias || c.FusedQKV && c.FusedBias},
			{"tied output", !a.Tied || c.TiedOutput},
		} {
			if !chk.ok {
				t.Errorf("%s: %s not as written: config %+v", fx.Label, chk.what, c)
			}
		}
	}
}

// Load reads the options and defaults each architecture's table and
// metadata imply.
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
}

// TestFixtureForEveryArchitecture: the shared test architectures
// (internal/archfixtures) name only registered architectures and cover
// every one, so the arch, model and golden tests see a new architecture
// as soon as it is registered.
func TestFixtureForEveryArchitecture(t *testing.T) {
	has := map[string]bool{}
	for _, fx := range archfixtures.All() {
		if _, ok := arch.Lookup(fx.Name()); !ok {
			t.Errorf("fixture %s: architecture %s not registered", fx.Label, fx.Name())
		}
		has[fx.Name()] = true
	}
	for _, n := range arch.Names() {
		if !has[n] {
			t.Errorf("architecture %s has no fixture in internal/archfixtures", n)
		}
	}
}

// TestSlots: every layer row of every table has its own slot (core/model
// reads a layer's tensors by slot, so two rows sharing one would alias)
// and no global row has one.
func TestSlots(t *testing.T) {
	for _, n := range arch.Names() {
		s, _ := arch.Lookup(n)
		for _, g := range s.Global {
			if g.Slot != arch.NoSlot {
				t.Errorf("%s: global tensor %s has slot %d", n, g.Name, g.Slot)
			}
		}
		by := map[arch.Slot]string{}
		for _, l := range s.Layer {
			if l.Slot <= arch.NoSlot || l.Slot >= arch.NSlots {
				t.Errorf("%s: layer tensor %s has no slot (%d)", n, l.Name, l.Slot)
			}
			if o, dup := by[l.Slot]; dup {
				t.Errorf("%s: layer tensors %s and %s share slot %d", n, o, l.Name, l.Slot)
			}
			by[l.Slot] = l.Name
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
