package arch_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
)

// encoderHeader is a bert file's header and zero tensor data, with edit
// applied to its bytes (a same-length key rename removes a key).
func encoderHeader(t *testing.T, a synth.Arch, edit func([]byte) []byte) (*gguf.File, error) {
	t.Helper()
	h, size, err := synth.Header(synth.Config{Embd: 64, Layers: 2, Heads: 4, KVHeads: 4, FF: 128, Ctx: 64,
		RopeBase: 10000, Eps: 1e-12, VocabSize: 300, Arch: a})
	if err != nil {
		t.Fatal(err)
	}
	h = append(h, make([]byte, size-int64(len(h)))...)
	h = edit(h)
	f, err := gguf.Parse(bytes.NewReader(h), int64(len(h)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = arch.Load(f)
	return f, err
}

// TestEncoderMetadata: the encoders read llama.cpp's keys: the LayerNorm
// epsilon (attention.layer_norm_epsilon, required), attention.causal
// (default true), the token type count (required > 0, as llama.cpp), the
// classifier's labels; and the tensors bert needs (position_embd).
func TestEncoderMetadata(t *testing.T) {
	bert := synth.Arch{Name: "bert", Bias: true, Classifier: true, Pooling: "rank"}
	rename := func(from, to string) func([]byte) []byte {
		return func(h []byte) []byte {
			if len(from) != len(to) || !bytes.Contains(h, []byte(from)) {
				t.Fatalf("cannot rename %q", from)
			}
			return bytes.Replace(h, []byte(from), []byte(to), 1)
		}
	}
	same := func(h []byte) []byte { return h }
	f, err := encoderHeader(t, bert, same)
	if err != nil {
		t.Fatal(err)
	}
	c, _, _ := arch.Load(f)
	if !c.Encoder || !c.NonCausal || c.RMSEps != 1e-12 || c.NTokTypes != 2 || c.NClsOut != 1 ||
		!c.PosEmbd || !c.TypeEmbd || !c.ClsDense || !c.ClsBias || !c.ClsOutput || !c.ClsOutBias || !c.UpBias || !c.DownBias || !c.OutBias || !c.QKVBias {
		t.Fatalf("bert config: %+v", c)
	}
	f, err = encoderHeader(t, bert, rename("bert.attention.causal", "bert.attention.xausal"))
	if err != nil {
		t.Fatal(err)
	}
	if c, _, _ := arch.Load(f); c.NonCausal {
		t.Error("no attention.causal: want llama.cpp's default, causal")
	}
	for _, bad := range []struct {
		edit func([]byte) []byte
		want string
	}{
		{rename("tokenizer.ggml.token_type_count", "tokenizer.ggml.token_type_xount"), "token_type_count"},
		{rename("bert.attention.layer_norm_epsilon", "bert.attention.layer_norm_xpsilon"), "layer_norm_epsilon"},
		{rename("position_embd.weight", "xosition_embd.weight"), "position_embd.weight"},
		{rename("blk.1.layer_output_norm.bias", "blk.1.layer_output_norm.xias"), "blk.1.layer_output_norm.bias"},
		{rename("cls.output.bias", "cls.output.xias"), ""}, // optional: absent is fine
	} {
		_, err := encoderHeader(t, bert, bad.edit)
		switch {
		case bad.want == "" && err != nil:
			t.Errorf("optional tensor absent: %v", err)
		case bad.want != "" && (err == nil || !strings.Contains(err.Error(), bad.want)):
			t.Errorf("want an error naming %s, got %v", bad.want, err)
		}
	}
	// nomic-bert: RoPE instead of positions, a gate, no classifier.
	f, err = encoderHeader(t, synth.Arch{Name: "nomic-bert", FusedQKV: true, Pooling: "mean"}, same)
	if err != nil {
		t.Fatal(err)
	}
	c, s, _ := arch.Load(f)
	if c.NoRope || c.PosEmbd || !c.FusedQKV || c.FFNGeLU || c.RopeStyle != arch.RopeNeoX || s.Offers(arch.ClsDense) {
		t.Fatalf("nomic-bert config: %+v", c)
	}
}
