package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/kernels"
)

// naive is a from-first-principles float64 llama forward pass over
// dequantized weights, written without any of the graph's code: the
// reference the real pass must match on F32 weights.
type naive struct {
	c   Config
	w   map[string][]float64
	rf  []float64 // rope freq factors or nil
	kc  [][][]float64
	vc  [][][]float64
	pos int
}

func newNaive(t *testing.T, f *gguf.File, b []byte) *naive {
	cfg, err := ConfigFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	n := &naive{c: cfg, w: map[string][]float64{}}
	for _, ti := range f.Tensors {
		off := f.DataOffset + int64(ti.Offset)
		v := make([]float32, ti.Elements())
		if err := kernels.Dequantize(ti.Type, b[off:off+int64(ti.Size)], v); err != nil {
			t.Fatal(err)
		}
		d := make([]float64, len(v))
		for i := range v {
			d[i] = float64(v[i])
		}
		n.w[ti.Name] = d
	}
	n.rf = n.w["rope_freqs.weight"]
	n.kc = make([][][]float64, cfg.NLayer)
	n.vc = make([][][]float64, cfg.NLayer)
	return n
}

func (n *naive) rms(x, w []float64) []float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	r := 1 / math.Sqrt(s/float64(len(x))+float64(n.c.RMSEps))
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] * r * w[i]
	}
	return out
}

// mv multiplies by a GGUF matrix [cols, rows] (row-major rows of cols).
func mv(w []float64, x []float64, rows int) []float64 {
	cols := len(x)
	y := make([]float64, rows)
	for r := 0; r < rows; r++ {
		s := 0.0
		for c := 0; c < cols; c++ {
			s += w[r*cols+c] * x[c]
		}
		y[r] = s
	}
	return y
}

func (n *naive) rope(x []float64, pos int) {
	c := n.c
	hd := c.HeadDim
	scale := float64(c.RopeFreqScale)
	for h := 0; h < len(x)/hd; h++ {
		v := x[h*hd : (h+1)*hd]
		for i := 0; i < c.NRot/2; i++ {
			theta := float64(pos) * math.Pow(float64(c.RopeBase), -2*float64(i)/float64(c.NRot))
			if n.rf != nil {
				theta /= n.rf[i]
			}
			theta *= scale
			a, b := 2*i, 2*i+1
			if c.RopeStyle == RopeNeoX {
				a, b = i, i+c.NRot/2
			}
			x0, x1 := v[a], v[b]
			v[a] = x0*math.Cos(theta) - x1*math.Sin(theta)
			v[b] = x0*math.Sin(theta) + x1*math.Cos(theta)
		}
	}
}

func (n *naive) step(tok int32) []float64 {
	c := n.c
	E, hd := c.NEmbd, c.HeadDim
	x := append([]float64(nil), n.w["token_embd.weight"][int(tok)*E:(int(tok)+1)*E]...)
	for l := 0; l < c.NLayer; l++ {
		W := func(s string) []float64 { return n.w[fmt.Sprintf("blk.%d.%s", l, s)] }
		xn := n.rms(x, W("attn_norm.weight"))
		q := mv(W("attn_q.weight"), xn, c.QDim())
		k := mv(W("attn_k.weight"), xn, c.KVDim())
		v := mv(W("attn_v.weight"), xn, c.KVDim())
		if bq := W("attn_q.bias"); bq != nil {
			for i := range q {
				q[i] += bq[i]
			}
			for i := range k {
				k[i] += W("attn_k.bias")[i]
				v[i] += W("attn_v.bias")[i]
			}
		}
		n.rope(q, n.pos)
		n.rope(k, n.pos)
		n.kc[l] = append(n.kc[l], k)
		n.vc[l] = append(n.vc[l], v)
		att := make([]float64, c.QDim())
		for h := 0; h < c.NHead; h++ {
			g := h / (c.NHead / c.NHeadKV)
			sc := make([]float64, n.pos+1)
			mx := math.Inf(-1)
			for p := range sc {
				s := 0.0
				for d := 0; d < hd; d++ {
					s += q[h*hd+d] * n.kc[l][p][g*hd+d]
				}
				sc[p] = s / math.Sqrt(float64(hd))
				mx = math.Max(mx, sc[p])
			}
			sum := 0.0
			for p := range sc {
				sc[p] = math.Exp(sc[p] - mx)
				sum += sc[p]
			}
			for p := range sc {
				for d := 0; d < hd; d++ {
					att[h*hd+d] += sc[p] / sum * n.vc[l][p][g*hd+d]
				}
			}
		}
		o := mv(W("attn_output.weight"), att, E)
		for i := range x {
			x[i] += o[i]
		}
		xn = n.rms(x, W("ffn_norm.weight"))
		g := mv(W("ffn_gate.weight"), xn, c.NFF)
		u := mv(W("ffn_up.weight"), xn, c.NFF)
		for i := range g {
			g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
		}
		d := mv(W("ffn_down.weight"), g, E)
		for i := range x {
			x[i] += d[i]
		}
	}
	n.pos++
	xn := n.rms(x, n.w["output_norm.weight"])
	out := n.w["output.weight"]
	if out == nil {
		out = n.w["token_embd.weight"]
	}
	return mv(out, xn, c.NVocab)
}

// maxRelErr is max|a-b| relative to max|b|.
func maxRelErr(a []float32, b []float64) float64 {
	d, m := 0.0, 0.0
	for i := range b {
		d = math.Max(d, math.Abs(float64(a[i])-b[i]))
		m = math.Max(m, math.Abs(b[i]))
	}
	return d / m
}

var testTokens = []int32{1, 17, 42, 5, 77, 3, 3, 60, 12, 9, 31, 0, 64}

func TestForwardMatchesNaive(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*tiny)
	}{
		{"llama gqa", func(c *tiny) {}},
		{"mha full rope", func(c *tiny) { c.kvHeads = c.heads; c.rot = c.embd / c.heads }},
		{"tied output", func(c *tiny) { c.tied = true }},
		{"linear rope scaling", func(c *tiny) { c.ropeScale = 4 }},
		{"rope freq factors", func(c *tiny) { c.ropeFreqs = true }},
		{"qwen2 neox bias", func(c *tiny) { c.arch = "qwen2"; c.bias = true; c.kvHeads = 1 }},
		{"llama optional bias", func(c *tiny) { c.bias = true }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := defTiny()
			tc.mod(&c)
			b := c.build(t)
			f := parse(t, b)
			ref := newNaive(t, f, b)
			// Batch 5 so prompt batches split unevenly; F32 cache so only
			// float32-vs-float64 rounding separates the two.
			m := c.open(t, Options{Threads: 2, Batch: 5, KVType: ggml.F32})
			prompt := testTokens[:9]
			var want []float64
			for _, tok := range prompt {
				want = ref.step(tok)
			}
			got, err := m.Forward(context.Background(), prompt)
			if err != nil {
				t.Fatal(err)
			}
			if e := maxRelErr(got, want); e > 2e-5 {
				t.Fatalf("prompt logits differ from the float64 reference by %.2g (relative)", e)
			}
			for _, tok := range testTokens[9:] {
				want = ref.step(tok)
				got, err = m.Forward(context.Background(), []int32{tok})
				if err != nil {
					t.Fatal(err)
				}
				if e := maxRelErr(got, want); e > 2e-5 {
					t.Fatalf("step logits at pos %d differ by %.2g (relative)", m.Pos()-1, e)
				}
			}
		})
	}
}

// Batched prefill must give the logits of feeding tokens one at a time.
// For F32 and F16 weights each output is the same dot product either way,
// so they must be equal. For Q4_0 and Q8_0 the SIMD paths' MatMul is the
// packed kernel, which sums a row's blocks in another f32 order than
// MatVec (integer block sums exact; per dot within (n+1)·2⁻²⁴ of the terms'
// magnitude, kernels/gemm_test.go), so there the logits may move by a few
// ulps of their scale: 1e-5 of the largest logit is ~100× that per-dot
// bound for this two-layer model and still catches a wrong row or token.
func TestBatchInvariance(t *testing.T) {
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0, ggml.Q4_0} {
		c := defTiny()
		c.typ = typ
		var ref []float32
		for _, batch := range []int{1, 4, 32} {
			m := c.open(t, Options{Threads: 2, Batch: batch, KVType: ggml.F16})
			got, err := m.Forward(context.Background(), testTokens)
			if err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref = append([]float32(nil), got...)
				continue
			}
			tol := 0.0
			if typ == ggml.Q8_0 || typ == ggml.Q4_0 {
				for _, v := range ref {
					tol = max(tol, 1e-5*math.Abs(float64(v)))
				}
			}
			for i := range ref {
				if d := math.Abs(float64(got[i] - ref[i])); d > tol {
					t.Fatalf("%s batch %d: logit %d = %v, batch 1 gave %v (tolerance %.3g)", typ, batch, i, got[i], ref[i], tol)
				}
			}
		}
	}
}

// The cache encodings trade precision for memory; each must stay close to
// the F32 cache (Q8_0 by its ~1/127 step, F16 by ~1e-3, the 5-bit types by
// ~1/31 and the 4-bit ones by ~1/15 of a block's range, a few steps in
// the logits of this two-layer model).
func TestKVTypes(t *testing.T) {
	c := defTiny()
	c.embd, c.ff, c.rot = 128, 128, 32 // Q8_0 rows need heads of a whole 32-element block
	var ref []float32
	for _, kt := range []struct {
		t, v ggml.Type
		tol  float64
	}{{ggml.F32, ggml.F32, 0}, {ggml.F16, ggml.F16, 3e-3}, {ggml.Q8_0, ggml.Q8_0, 3e-2},
		{ggml.Q5_1, ggml.Q5_1, 0.1}, {ggml.Q5_0, ggml.Q5_0, 0.1}, {ggml.Q4_1, ggml.Q4_1, 0.2}, {ggml.Q4_0, ggml.Q4_0, 0.2},
		{ggml.Q8_0, ggml.Q4_0, 0.2}, {ggml.F16, ggml.Q8_0, 3e-2}} {
		m := c.open(t, Options{Threads: 1, Batch: 4, KVType: kt.t, KVTypeV: kt.v, KVTypeVSet: true})
		got, err := m.Forward(context.Background(), testTokens)
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = append([]float32(nil), got...)
			continue
		}
		r := make([]float64, len(ref))
		for i := range ref {
			r[i] = float64(ref[i])
		}
		e := maxRelErr(got, r)
		t.Logf("KV %s/%s: %.3g", kt.t, kt.v, e)
		if e > kt.tol {
			t.Errorf("KV %s: logits differ from F32 cache by %.3g, tolerance %.3g", kt.t, e, kt.tol)
		}
		if e == 0 {
			t.Errorf("KV %s: logits identical to F32 cache: the cache type had no effect", kt.t)
		}
	}
}

func TestContextLimitAndPages(t *testing.T) {
	c := defTiny()
	m := c.open(t, Options{Threads: 1, Batch: 8, Ctx: PageSize + 13, KVType: ggml.F16})
	ctx := context.Background()
	if m.KV().Bytes() != 0 {
		t.Fatalf("cache holds %d bytes before any token", m.KV().Bytes())
	}
	if _, err := m.Forward(ctx, []int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	onePage := m.KV().Bytes()
	if onePage == 0 {
		t.Fatal("no page allocated after 3 tokens")
	}
	long := make([]int32, PageSize)
	for i := range long {
		long[i] = int32(i % c.vocab)
	}
	if _, err := m.Forward(ctx, long); err != nil {
		t.Fatal(err)
	}
	if m.KV().Bytes() != 2*onePage {
		t.Fatalf("after %d positions cache holds %d bytes, want two pages (%d)", m.Pos(), m.KV().Bytes(), 2*onePage)
	}
	before := m.Pos()
	_, err := m.Forward(ctx, long[:20])
	if !errors.Is(err, ErrContextFull) {
		t.Fatalf("overflowing the context: err = %v, want ErrContextFull", err)
	}
	if m.Pos() != before {
		t.Fatalf("failed Forward moved the sequence from %d to %d", before, m.Pos())
	}
	if _, err := m.Forward(ctx, long[:10]); err != nil {
		t.Fatalf("filling exactly to the limit: %v", err)
	}
	if _, err := m.Forward(ctx, []int32{int32(c.vocab)}); err == nil {
		t.Fatal("token id outside the vocabulary accepted")
	}
}

func TestCancel(t *testing.T) {
	c := defTiny()
	m := c.open(t, Options{Threads: 1, Batch: 4, KVType: ggml.F16})
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := m.Forward(ctx, testTokens[:3]); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := m.Forward(ctx, testTokens); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if m.Pos() != 3 {
		t.Fatalf("cancelled Forward left the sequence at %d, want 3", m.Pos())
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*tiny)
		want string
	}{
		{"unsupported arch", func(c *tiny) { c.meta = map[string]any{"general.architecture": "mamba"} }, `architecture "mamba"`},
		{"missing tensor", func(c *tiny) { c.skip = map[string]bool{"blk.1.ffn_up.weight": true} }, "blk.1.ffn_up.weight is missing"},
		{"bad shape", func(c *tiny) { c.dims = map[string][]int{"blk.0.attn_k.weight": {64, 48}} }, "blk.0.attn_k.weight has shape"},
		{"missing eps", func(c *tiny) { c.meta = map[string]any{"llama.attention.layer_norm_rms_epsilon": nil} }, "layer_norm_rms_epsilon"},
		{"heads not dividing", func(c *tiny) { c.meta = map[string]any{"llama.attention.head_count_kv": uint32(3)} }, "head_count_kv 3"},
		{"yarn with a negative factor", func(c *tiny) {
			c.meta = map[string]any{"llama.rope.scaling.type": "yarn", "llama.rope.scaling.factor": float32(-4)}
		}, "llama.rope.scaling.factor = -4: the rope scaling factor must be > 0"},
		{"unknown rope scaling", func(c *tiny) {
			c.meta = map[string]any{"llama.rope.scaling.type": "longrope", "llama.rope.scaling.factor": float32(4)}
		}, `rope scaling type "longrope"`},
		{"qwen2 without bias", func(c *tiny) { c.arch = "qwen2" }, "attn_q.bias is missing"},
		{"router without expert_count", func(c *tiny) {
			c.extra = []gguf.TensorInfo{{Name: "blk.0.ffn_gate_inp.weight", Type: ggml.F32, Dims: []uint64{64, 4}}}
		}, "llama.expert_count is missing or 0 but the file has experts (blk.0.ffn_gate_inp.weight)"},
		{"expert_count without router", func(c *tiny) {
			c.meta = map[string]any{"llama.expert_count": uint32(4), "llama.expert_used_count": uint32(2)}
		}, "llama.expert_count = 4 but the file has no router"},
		{"unsupported type", func(c *tiny) { c.typ = ggml.I8 }, "has type I8"},
		{"vocab larger than the embedding", func(c *tiny) {
			c.meta = map[string]any{"tokenizer.ggml.tokens": tokenNames(c.vocab + 1)}
		}, "tokenizer has 81 tokens (tokenizer.ggml.tokens) but token_embd.weight and output.weight have 80 rows"},
		{"vocab smaller than the tied embedding", func(c *tiny) {
			c.tied = true
			c.meta = map[string]any{"tokenizer.ggml.tokens": tokenNames(c.vocab - 1)}
		}, "tokenizer has 79 tokens (tokenizer.ggml.tokens) but token_embd.weight has 80 rows"},
		{"vocab_size disagrees", func(c *tiny) {
			c.meta = map[string]any{"tokenizer.ggml.tokens": tokenNames(c.vocab), "llama.vocab_size": uint32(96)}
		}, "llama.vocab_size = 96 but token_embd.weight"},
		{"valid", func(c *tiny) {}, ""},
		{"valid with yarn", func(c *tiny) {
			c.meta = map[string]any{"llama.rope.scaling.type": "yarn", "llama.rope.scaling.factor": float32(4)}
		}, ""},
		{"valid with vocab", func(c *tiny) {
			c.meta = map[string]any{"tokenizer.ggml.tokens": tokenNames(c.vocab), "llama.vocab_size": uint32(c.vocab)}
		}, ""},
	}
	for _, tc := range cases {
		c := defTiny()
		tc.mod(&c)
		f := parse(t, c.build(t))
		_, err := ConfigFromGGUF(f)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

func tokenNames(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("t%d", i)
	}
	return s
}

func TestConfigValues(t *testing.T) {
	c := defTiny()
	c.tied, c.ropeScale = true, 2
	cfg, err := ConfigFromGGUF(parse(t, c.build(t)))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Arch: "llama", NEmbd: 64, NLayer: 2, NHead: 4, NHeadKV: 2, HeadDim: 16, NFF: 96, NRot: 16,
		NVocab: 80, NCtxTrain: 512, RopeBase: 10000, RopeFreqScale: 0.5, RMSEps: 1e-5, TiedOutput: true}
	if cfg != want {
		t.Fatalf("config\n got %+v\nwant %+v", cfg, want)
	}
}

// Seeded sampling must give the same tokens on every kernel path: with F32
// and F16 weights the paths' logits differ by rounding only (~1e-6), far
// below the probability gaps a seeded draw can land between. (Q8_0/Q4_0
// paths are not bit-identical: their dots sum blocks in different orders
// and the Q8_0 re-quantization of activations amplifies the last-bit
// differences to ~1e-2, so a long sampled run can differ; see the golden
// tests' pathTol.)
func TestSeededSamplingAcrossPaths(t *testing.T) {
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16} {
		c := defTiny()
		c.typ = typ
		var ref []int32
		for _, k := range kernels.Available() {
			m := c.open(t, Options{Threads: 2, Batch: 8, KVType: ggml.F16, Kernels: k})
			p := sample.DefaultParams()
			p.Seed, p.RepeatPenalty = 42, 1.1
			s, err := sample.New(p)
			if err != nil {
				t.Fatal(err)
			}
			toks := []int32{1, 5, 9}
			for _, x := range toks {
				s.Accept(x)
			}
			logits, err := m.Forward(context.Background(), toks)
			if err != nil {
				t.Fatal(err)
			}
			var out []int32
			for range 40 {
				next := s.Sample(logits)
				s.Accept(next)
				out = append(out, next)
				if logits, err = m.Forward(context.Background(), []int32{next}); err != nil {
					t.Fatal(err)
				}
			}
			if ref == nil {
				ref = out
				continue
			}
			for i := range ref {
				if out[i] != ref[i] {
					t.Fatalf("%s on %s: token %d = %d, first path gave %d", typ, k.Name, i, out[i], ref[i])
				}
			}
		}
	}
}
