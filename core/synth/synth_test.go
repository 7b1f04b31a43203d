package synth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/kernels"
)

func small(t ggml.Type) Config {
	return Config{Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, Ctx: 256, RopeBase: 10000, Eps: 1e-5, Type: t, VocabSize: 400, Seed: 7, Quantize: kernels.Quantize}
}

func write(t *testing.T, c Config) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(context.Background(), &buf, c, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func parse(t *testing.T, b []byte) *gguf.File {
	t.Helper()
	f, err := gguf.Parse(bytes.NewReader(b), int64(len(b)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestLayoutAndMetadata(t *testing.T) {
	for _, typ := range Types() {
		c := small(typ)
		f := parse(t, write(t, c))
		if len(f.Tensors) != 2+9*c.Layers+1 {
			t.Errorf("%s: %d tensors", typ, len(f.Tensors))
		}
		for _, tc := range []struct {
			name string
			typ  ggml.Type
			dims []uint64
		}{
			{"token_embd.weight", typ, []uint64{64, 400}},
			{"blk.0.attn_norm.weight", ggml.F32, []uint64{64}},
			{"blk.1.attn_q.weight", typ, []uint64{64, 64}},
			{"blk.1.attn_k.weight", typ, []uint64{64, 32}},
			{"blk.1.attn_v.weight", typ, []uint64{64, 32}},
			{"blk.1.attn_output.weight", typ, []uint64{64, 64}},
			{"blk.0.ffn_norm.weight", ggml.F32, []uint64{64}},
			{"blk.0.ffn_gate.weight", typ, []uint64{64, 128}},
			{"blk.0.ffn_up.weight", typ, []uint64{64, 128}},
			{"blk.0.ffn_down.weight", typ, []uint64{128, 64}},
			{"output_norm.weight", ggml.F32, []uint64{64}},
			{"output.weight", typ, []uint64{64, 400}},
		} {
			ti, ok := f.Tensor(tc.name)
			if !ok || ti.Type != tc.typ || len(ti.Dims) != len(tc.dims) || ti.Dims[0] != tc.dims[0] || ti.Dims[len(ti.Dims)-1] != tc.dims[len(tc.dims)-1] {
				t.Errorf("%s: %s = %+v, %v", typ, tc.name, ti, ok)
			}
		}
		for key, want := range map[string]uint32{
			"llama.context_length": 256, "llama.embedding_length": 64, "llama.block_count": 2, "llama.feed_forward_length": 128,
			"llama.attention.head_count": 4, "llama.attention.head_count_kv": 2, "llama.rope.dimension_count": 16, "llama.vocab_size": 400,
			"general.file_type": fileType[typ],
		} {
			if got, err := f.Uint32(key); err != nil || got != want {
				t.Errorf("%s: %s = %d, %v; want %d", typ, key, got, err, want)
			}
		}
		if eps, _ := f.Float32("llama.attention.layer_norm_rms_epsilon"); eps != 1e-5 {
			t.Errorf("eps %v", eps)
		}
		if toks, _ := f.Strings("tokenizer.ggml.tokens"); len(toks) != 400 || toks[1] != "<s>" || toks[3] != "<0x00>" {
			t.Errorf("tokens %d %q", len(toks), toks[:4])
		}
	}
}

func TestDeterministic(t *testing.T) {
	c := small(ggml.Q4_0)
	a, b := sha256.Sum256(write(t, c)), sha256.Sum256(write(t, c))
	if a != b {
		t.Fatal("same config gave different bytes")
	}
	c.Seed++
	if sha256.Sum256(write(t, c)) == a {
		t.Fatal("seed has no effect")
	}
}

func TestHeaderMatchesWrite(t *testing.T) {
	c := small(ggml.Q4_0)
	full := write(t, c)
	h, size, err := Header(c)
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(len(full)) || !bytes.Equal(h, full[:len(h)]) {
		t.Fatalf("header %d bytes, size %d; file %d bytes", len(h), size, len(full))
	}
	if f := parse(t, full); f.DataOffset != int64(len(h)) {
		t.Errorf("data offset %d, header %d", f.DataOffset, len(h))
	}
}

func TestCopiesVocab(t *testing.T) {
	src := parse(t, write(t, small(ggml.F32)))
	c := small(ggml.F16)
	c.Vocab = src
	c.VocabSize = 0
	f := parse(t, write(t, c))
	for _, kv := range src.KV {
		if len(kv.Key) > 10 && kv.Key[:10] == "tokenizer." {
			if _, ok := f.Get(kv.Key); !ok {
				t.Errorf("%s not copied", kv.Key)
			}
		}
	}
}

// rows dequantizes a whole tensor.
func rows(t *testing.T, b []byte, f *gguf.File, name string) [][]float32 {
	t.Helper()
	ti, _ := f.Tensor(name)
	n := int(ti.Dims[0])
	rs, _ := ggml.RowSize(ti.Type, ti.Dims[0])
	data := b[f.DataOffset+int64(ti.Offset):][:ti.Size]
	var out [][]float32
	for r := 0; r < len(data)/int(rs); r++ {
		x := make([]float32, n)
		if err := kernels.Dequantize(ti.Type, data[r*int(rs):(r+1)*int(rs)], x); err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}

// TestLogitStructure checks the design's promise from first principles:
// with the residual stream equal to a token's normalised embedding, the
// output projection puts that token's successor ahead of every other
// token by a wide margin, and never prefers a control or byte token.
func TestLogitStructure(t *testing.T) {
	// Off-target logits have std Gain/sqrt(n_embd): the margin needs a
	// realistic width (the smallest the package doc promises, 256).
	c := small(ggml.Q8_0)
	c.Embd, c.FF, c.Layers = 256, 256, 1
	c.VocabSize = 2000
	b := write(t, c)
	f := parse(t, b)
	emb, out := rows(t, b, f, "token_embd.weight"), rows(t, b, f, "output.weight")
	types, _ := f.Int32s("tokenizer.ggml.token_type")
	minMargin := math.Inf(1)
	for tok := 0; tok < len(emb); tok += 7 {
		h := emb[tok]
		var ss float64
		for _, v := range h {
			ss += float64(v) * float64(v)
		}
		rms := math.Sqrt(ss / float64(len(h)))
		best, second, arg := math.Inf(-1), math.Inf(-1), -1
		for j, row := range out {
			var l float64
			for i := range h {
				l += float64(row[i]) * float64(h[i]) / rms
			}
			if l > best {
				best, second, arg = l, best, j
			} else if l > second {
				second = l
			}
		}
		if types[arg] != 1 {
			t.Fatalf("token %d: top-1 %d is type %d", tok, arg, types[arg])
		}
		minMargin = min(minMargin, best-second)
	}
	if minMargin < 3 {
		t.Errorf("min top-1 margin %.2f, want >= 3 (gain %v noise %v)", minMargin, c.Gain, c.Noise)
	}
	t.Logf("min margin %.2f", minMargin)
}

func TestStreamsWithBoundedMemory(t *testing.T) {
	c := Config{Embd: 512, Layers: 4, Heads: 8, KVHeads: 8, FF: 2048, Ctx: 256, RopeBase: 10000, Eps: 1e-5, Type: ggml.F32, VocabSize: 4000, Seed: 1}
	var n countWriter
	runtime.GC()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	if err := Write(context.Background(), &n, c, nil); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ms1)
	if n < 64<<20 {
		t.Fatalf("model only %d bytes", n)
	}
	if grow := int64(ms1.HeapSys) - int64(ms0.HeapSys); grow > 24<<20 {
		t.Errorf("heap grew by %d MiB writing a %d MiB model", grow>>20, n>>20)
	}
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Write(ctx, io.Discard, small(ggml.F32), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v", err)
	}
}

func TestRejects(t *testing.T) {
	for name, mut := range map[string]func(*Config){
		"heads":     func(c *Config) { c.Heads = 5 },
		"kv":        func(c *Config) { c.KVHeads = 3 },
		"type":      func(c *Config) { c.Type = ggml.Q4_K },
		"block":     func(c *Config) { c.FF = 100; c.Type = ggml.Q4_0 },
		"vocab":     func(c *Config) { c.VocabSize = 10 },
		"zero":      func(c *Config) { c.Layers = 0 },
		"rope base": func(c *Config) { c.RopeBase = 0 },
		"no quant":  func(c *Config) { c.Type = ggml.Q8_0; c.Quantize = nil },
	} {
		c := small(ggml.F32)
		mut(&c)
		if err := Write(context.Background(), io.Discard, c, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestArchOptions: options that the chosen architecture does not have are
// refused with a message naming them; the zero Arch is the llama file.
func TestArchOptions(t *testing.T) {
	for _, tc := range []struct {
		a    Arch
		want string
	}{
		{Arch{Name: "mamba"}, `unknown architecture "mamba"`},
		{Arch{Window: 8}, "sliding-window options apply to gemma2/gemma3"},
		{Arch{Name: "qwen3", AttnSoftcap: 5}, "soft-caps apply to gemma2/gemma3"},
		{Arch{Name: "gemma3", AttnSoftcap: 5}, "gemma3 has no attention soft-cap"},
		{Arch{Name: "qwen2", RopeFreqs: true}, "qwen2 has no --rope-freqs option"},
		{Arch{Name: "qwen3", HeadDim: 32, Rot: 16}, "qwen3 rotates the whole head"},
		{Arch{Name: "phi3", HeadDim: 32}, "phi3's query width is n_embd"},
		{Arch{OrigCtx: 64}, "LongRoPE options apply to phi3"},
		{Arch{Name: "qwen3", Experts: 8, ExpertsUsed: 2}, "--experts, --experts-used and --ff-exp apply to qwen3moe, qwen2moe, mixtral and gpt-oss"},
		{Arch{Name: "qwen3moe"}, "qwen3moe needs --experts in [1, 512]"},
		{Arch{Name: Mixtral, Experts: 600, ExpertsUsed: 2}, "mixtral needs --experts in [1, 512]"},
		{Arch{Name: "qwen3moe", Experts: 4, ExpertsUsed: 5}, "--experts-used 5 must be in [1, --experts 4]"},
		{Arch{Name: "qwen3moe", Experts: 4, ExpertsUsed: 2, FFExp: 48}, "row length 48 is not a multiple"},
		{Arch{Name: "qwen2moe", HeadDim: 32, Experts: 4, ExpertsUsed: 2}, "qwen2moe's query width is n_embd"},
		{Arch{Name: GPTOSS, Experts: 4, ExpertsUsed: 2, YaRN: true}, "--yarn needs --rope-scale > 0"},
		{Arch{Name: GPTOSS, HeadDim: 32, Rot: 16, Experts: 4, ExpertsUsed: 2}, "gpt-oss rotates the whole head"},
		{Arch{Name: "qwen3", Window: 8}, "sliding-window options apply to gemma2/gemma3/gpt-oss, not qwen3"},
		{Arch{Name: "qwen3moe", Experts: 4, ExpertsUsed: 2, RouterReuse: 0.25}, "--router-reuse 0.25: the router models are tuned for 0.18 and 0.38"},
		{Arch{Name: "qwen3", RouterReuse: 0.18}, "--router-reuse 0.18"},
	} {
		c := small(ggml.F32)
		if tc.a.Experts != 0 || tc.a.Name == "qwen3moe" {
			c.Type = ggml.Q8_0 // block 32, for the row-length check
		}
		c.Arch = tc.a
		_, _, err := Header(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.a, err, tc.want)
		}
	}
	// gpt-oss-20b's shape (head 64 with n_embd 2880 = 64 heads of 45)
	// is laid out without generating a weight: ~9.9 GiB with every matrix
	// MXFP4 and a 32000-token vocabulary (the published file keeps
	// attention in BF16 and has 201088 tokens: ~12.8 GiB).
	oss := Config{Embd: 2880, Layers: 24, Heads: 64, KVHeads: 8, FF: 2880, Ctx: 131072, RopeBase: 150000, Eps: 1e-5,
		Type: ggml.MXFP4, VocabSize: 32000, Quantize: func(ggml.Type, []float32, []byte) error { return nil },
		Arch: Arch{Name: GPTOSS, HeadDim: 64, Bias: true, RopeScale: 32, YaRN: true, OrigCtx: 4096, Experts: 32, ExpertsUsed: 4, FFExp: 2880}}
	if _, size, err := Header(oss); err != nil || size < 9<<30 || size > 11<<30 {
		t.Errorf("gpt-oss-20b shape: %d bytes, %v (want about 10 GiB)", size, err)
	}
	a, _, err := Header(small(ggml.F32))
	if err != nil {
		t.Fatal(err)
	}
	c := small(ggml.F32)
	c.Arch = Arch{Name: "llama"}
	if b, _, err := Header(c); err != nil || !bytes.Equal(a, b) {
		t.Errorf("Arch{Name: llama} writes other bytes than the zero Arch (%v)", err)
	}
}
