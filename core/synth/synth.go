// Package synth writes synthetic Llama-architecture GGUF models with seeded
// pseudo-random weights, so tests and benchmarks can have a model of any
// shape without downloading one. Tensors are generated row by row from
// (seed, tensor name, row) and streamed through gguf.Writer: memory use is a
// few rows, whatever the model size, and the same flags always give the
// same bytes.
//
// # Weight design
//
// Random weights alone give greedy decoding tiny top-1 margins (the gap
// between the two largest of 32k Gaussian logits averages ~0.2σ), so two
// engines with slightly different rounding would diverge. The model is
// therefore structured:
//
//   - token_embd row t is u_t with elements ~ N(0,1) (approximately; an
//     Irwin–Hall sum of four uniforms), so the residual stream has RMS ≈ 1.
//   - Every block's input is RMS-normalised; q/k/v/gate/up are
//     N(0, 1/fan_in) so their outputs are O(1) and attention scores are
//     well spread; attn_output and ffn_down are scaled by 0.5/sqrt(layers)
//     so the whole stack adds a perturbation of about half the embedding.
//   - output row j is (Gain/n_embd)·Σ u_t over the tokens t whose successor
//     is j (a seeded permutation of the "normal" tokens; control, unknown
//     and byte tokens are mapped onto normal ones), plus an N(0, Noise²/n_embd)
//     random part. Other tokens' structured logits have std
//     Gain/sqrt(n_embd), so for n_embd ≥ 256 the successor of the current
//     token wins by several logits (llama.cpp measured min 4.2 over 16
//     greedy steps at n_embd 256), while the random part (which depends
//     on the whole forward pass) still moves every logit by O(Noise).
//     Narrower models work but have smaller margins.
//
// A consequence: the greedy token sequence follows the successor map
// almost regardless of the layers (the same seed and vocab give the same
// text at any depth), so comparing two engines token by token checks the
// embedding/output path and the plumbing, while comparing their top-k
// logits or probabilities (the random part) checks the whole forward pass.
// Lower Gain (--logit-gain) trades margin for more context-dependent tokens.
//   - Norm weights are 1 ± 0.1 (F32).
package synth

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
)

// Config is the model shape and generation parameters.
type Config struct {
	Embd, Layers, Heads, KVHeads, FF, Ctx int
	RopeBase, Eps                         float32
	Type                                  ggml.Type // matrix weights (token_embd, attn_*, ffn_*, output)
	// Vocab, when non-nil, supplies every tokenizer.* key (a vocab-only
	// GGUF such as ggml-vocab-llama-spm.gguf). Otherwise a synthetic SPM
	// vocabulary of VocabSize tokens is made.
	Vocab     *gguf.File
	VocabSize int
	Seed      uint64
	Name      string  // general.name; default describes the shape
	Gain      float32 // structured logit gain (default 12)
	Noise     float32 // random logit std (default 1)
	// Quantize encodes one row of f32 into Type (kernels.Quantize). It is
	// injected rather than imported so this package stays free of the
	// native kernel dispatch (cpuid, x/sys); nil handles F32 only.
	Quantize func(t ggml.Type, src []float32, dst []byte) error
}

// Progress is called after each chunk of rows with bytes of tensor data
// written so far, the total, and the tensor being written.
type Progress func(done, total uint64, tensor string)

// fileType maps a weight type to llama.cpp's general.file_type enum.
var fileType = map[ggml.Type]uint32{
	ggml.F32: 0, ggml.F16: 1, ggml.Q4_0: 2, ggml.Q4_1: 3, ggml.Q8_0: 7, ggml.Q5_0: 8, ggml.Q5_1: 9, ggml.BF16: 32,
}

// Types are the weight types synth can write.
func Types() []ggml.Type {
	return []ggml.Type{ggml.F32, ggml.F16, ggml.BF16, ggml.Q8_0, ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1}
}

func (c *Config) defaults() {
	if c.Gain == 0 {
		c.Gain = 12
	}
	if c.Noise == 0 {
		c.Noise = 1
	}
	if c.KVHeads == 0 {
		c.KVHeads = c.Heads
	}
}

func (c Config) validate() error {
	switch {
	case c.Embd <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.KVHeads <= 0 || c.FF <= 0 || c.Ctx <= 0:
		return fmt.Errorf("synth: embd, layers, heads, kv-heads, ff and ctx must be positive (got %d %d %d %d %d %d)", c.Embd, c.Layers, c.Heads, c.KVHeads, c.FF, c.Ctx)
	case c.Embd%c.Heads != 0:
		return fmt.Errorf("synth: embd %d is not a multiple of heads %d", c.Embd, c.Heads)
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("synth: heads %d is not a multiple of kv-heads %d", c.Heads, c.KVHeads)
	case (c.Embd/c.Heads)%2 != 0:
		return fmt.Errorf("synth: head dim %d must be even for RoPE", c.Embd/c.Heads)
	case c.RopeBase <= 0 || c.Eps <= 0:
		return fmt.Errorf("synth: rope base and eps must be positive")
	}
	if _, ok := fileType[c.Type]; !ok {
		return fmt.Errorf("synth: weight type %s is not supported (use one of %v)", c.Type, Types())
	}
	bs := uint64(c.Type.BlockSize())
	for _, n := range []int{c.Embd, c.FF} {
		if uint64(n)%bs != 0 {
			return fmt.Errorf("synth: row length %d is not a multiple of the %s block size %d", n, c.Type, bs)
		}
	}
	if c.Quantize == nil && c.Type != ggml.F32 {
		return fmt.Errorf("synth: type %s needs Config.Quantize (kernels.Quantize)", c.Type)
	}
	if c.Vocab == nil && c.VocabSize < 259+26 {
		return fmt.Errorf("synth: synthetic vocab needs at least %d tokens, got %d", 259+26, c.VocabSize)
	}
	return nil
}

// kind says how a tensor's rows are generated.
type kind int

const (
	kEmbd kind = iota
	kOutput
	kNorm
	kDense    // N(0, 1/fan_in)
	kResidual // N(0, 1/fan_in) · 0.5/sqrt(layers)
)

type plan struct {
	info gguf.TensorInfo
	kind kind
}

func (c Config) plans(vocab int) []plan {
	n, hd := uint64(c.Embd), uint64(c.Embd/c.Heads)
	kv := hd * uint64(c.KVHeads)
	ff := uint64(c.FF)
	t := c.Type
	ps := []plan{{gguf.TensorInfo{Name: "token_embd.weight", Type: t, Dims: []uint64{n, uint64(vocab)}}, kEmbd}}
	for i := 0; i < c.Layers; i++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", i, s) }
		ps = append(ps,
			plan{gguf.TensorInfo{Name: b("attn_norm.weight"), Type: ggml.F32, Dims: []uint64{n}}, kNorm},
			plan{gguf.TensorInfo{Name: b("attn_q.weight"), Type: t, Dims: []uint64{n, n}}, kDense},
			plan{gguf.TensorInfo{Name: b("attn_k.weight"), Type: t, Dims: []uint64{n, kv}}, kDense},
			plan{gguf.TensorInfo{Name: b("attn_v.weight"), Type: t, Dims: []uint64{n, kv}}, kDense},
			plan{gguf.TensorInfo{Name: b("attn_output.weight"), Type: t, Dims: []uint64{n, n}}, kResidual},
			plan{gguf.TensorInfo{Name: b("ffn_norm.weight"), Type: ggml.F32, Dims: []uint64{n}}, kNorm},
			plan{gguf.TensorInfo{Name: b("ffn_gate.weight"), Type: t, Dims: []uint64{n, ff}}, kDense},
			plan{gguf.TensorInfo{Name: b("ffn_up.weight"), Type: t, Dims: []uint64{n, ff}}, kDense},
			plan{gguf.TensorInfo{Name: b("ffn_down.weight"), Type: t, Dims: []uint64{ff, n}}, kResidual},
		)
	}
	return append(ps,
		plan{gguf.TensorInfo{Name: "output_norm.weight", Type: ggml.F32, Dims: []uint64{n}}, kNorm},
		plan{gguf.TensorInfo{Name: "output.weight", Type: t, Dims: []uint64{n, uint64(vocab)}}, kOutput},
	)
}

// Write generates the model and streams it to w.
func Write(ctx context.Context, w io.Writer, c Config, progress Progress) error {
	c.defaults()
	gw, plans, vocab, types, err := c.header(w)
	if err != nil {
		return err
	}
	total := gw.DataSize()
	g := &gen{c: c, vocab: vocab, succ: successors(c.Seed, types)}
	g.buildPreimages()
	var done uint64
	for _, p := range plans {
		if err := g.tensor(ctx, gw, p, func(n uint64) {
			done += n
			if progress != nil {
				progress(done, total, p.info.Name)
			}
		}); err != nil {
			return err
		}
	}
	if err := gw.Close(); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	return nil
}

// Header returns the bytes Write would emit before the tensor data (header,
// metadata, tensor table, padding) and the size of the complete file,
// without generating any weights: enough to inspect the model's layout.
func Header(c Config) ([]byte, int64, error) {
	var buf bytes.Buffer
	gw, _, _, _, err := c.header(&buf)
	if err != nil {
		return nil, 0, err
	}
	if err := gw.Flush(); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), int64(buf.Len()) + int64(gw.DataSize()), nil
}

func (c Config) header(w io.Writer) (*gguf.Writer, []plan, int, []int32, error) {
	c.defaults()
	if err := c.validate(); err != nil {
		return nil, nil, 0, nil, err
	}
	gw := gguf.NewWriter(w)
	vocab, types, err := c.addMetadata(gw)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	plans := c.plans(vocab)
	for i := range plans {
		info, err := gw.AddTensor(plans[i].info)
		if err != nil {
			return nil, nil, 0, nil, fmt.Errorf("synth: %w", err)
		}
		plans[i].info = info
	}
	if err := gw.WriteHeader(); err != nil {
		return nil, nil, 0, nil, fmt.Errorf("synth: %w", err)
	}
	return gw, plans, vocab, types, nil
}

// addMetadata writes the llama hyperparameters and tokenizer keys and
// returns the vocab size and token types.
func (c Config) addMetadata(gw *gguf.Writer) (int, []int32, error) {
	name := c.Name
	if name == "" {
		name = fmt.Sprintf("memvanta-synth-%dx%d-%s", c.Layers, c.Embd, c.Type)
	}
	add := func(k string, x any) error {
		v, err := gguf.ValueOf(x)
		if err != nil {
			return err
		}
		return gw.AddKV(k, v)
	}
	kvs := []struct {
		k string
		v any
	}{
		{"general.architecture", "llama"},
		{"general.name", name},
		{"general.file_type", fileType[c.Type]},
		{"general.quantization_version", uint32(2)},
		{"llama.context_length", uint32(c.Ctx)},
		{"llama.embedding_length", uint32(c.Embd)},
		{"llama.block_count", uint32(c.Layers)},
		{"llama.feed_forward_length", uint32(c.FF)},
		{"llama.attention.head_count", uint32(c.Heads)},
		{"llama.attention.head_count_kv", uint32(c.KVHeads)},
		{"llama.rope.freq_base", c.RopeBase},
		{"llama.attention.layer_norm_rms_epsilon", c.Eps},
		{"llama.rope.dimension_count", uint32(c.Embd / c.Heads)},
	}
	for _, kv := range kvs {
		if err := add(kv.k, kv.v); err != nil {
			return 0, nil, fmt.Errorf("synth: %w", err)
		}
	}
	var vocab int
	var types []int32
	if c.Vocab != nil {
		toks, err := c.Vocab.Strings("tokenizer.ggml.tokens")
		if err != nil {
			return 0, nil, fmt.Errorf("synth: vocab file: %w", err)
		}
		vocab = len(toks)
		types, _ = c.Vocab.Int32s("tokenizer.ggml.token_type")
		if err := add("llama.vocab_size", uint32(vocab)); err != nil {
			return 0, nil, err
		}
		for _, kv := range c.Vocab.KV {
			if strings.HasPrefix(kv.Key, "tokenizer.") {
				if err := gw.AddKV(kv.Key, kv.Value); err != nil {
					return 0, nil, fmt.Errorf("synth: copy %s: %w", kv.Key, err)
				}
			}
		}
	} else {
		toks, scores, tt := syntheticVocab(c.VocabSize)
		vocab, types = len(toks), tt
		for _, kv := range []struct {
			k string
			v any
		}{
			{"llama.vocab_size", uint32(vocab)},
			{"tokenizer.ggml.model", "llama"},
			{"tokenizer.ggml.tokens", toks},
			{"tokenizer.ggml.scores", scores},
			{"tokenizer.ggml.token_type", tt},
			{"tokenizer.ggml.bos_token_id", uint32(1)},
			{"tokenizer.ggml.eos_token_id", uint32(2)},
			{"tokenizer.ggml.unknown_token_id", uint32(0)},
			{"tokenizer.ggml.add_bos_token", true},
			{"tokenizer.ggml.add_eos_token", false},
		} {
			if err := add(kv.k, kv.v); err != nil {
				return 0, nil, fmt.Errorf("synth: %w", err)
			}
		}
	}
	if len(types) != vocab {
		types = nil // treat every token as normal
	}
	return vocab, types, nil
}

// syntheticVocab is an SPM-style vocabulary: <unk>, <s>, </s>, the 256
// byte-fallback tokens, then distinct letter pieces with and without the
// word-start marker, scored so shorter pieces merge first.
func syntheticVocab(n int) ([]string, []float32, []int32) {
	toks := []string{"<unk>", "<s>", "</s>"}
	tt := []int32{2, 3, 3}
	for b := 0; b < 256; b++ {
		toks = append(toks, fmt.Sprintf("<0x%02X>", b))
		tt = append(tt, 6)
	}
	for i := 0; len(toks) < n; i++ {
		// i -> base-26 word: a, b, ..., z, aa, ab, ...
		var w []byte
		for k := i/2 + 1; k > 0; k = (k - 1) / 26 {
			w = append([]byte{byte('a' + (k-1)%26)}, w...)
		}
		piece := string(w)
		if i%2 == 0 {
			piece = "▁" + piece
		}
		toks = append(toks, piece)
		tt = append(tt, 1)
	}
	scores := make([]float32, len(toks))
	for i := range scores {
		if tt[i] == 1 {
			scores[i] = -float32(i)
		}
	}
	return toks, scores, tt
}

// successors maps every token to the normal token that should follow it:
// a seeded permutation on normal tokens (type 1, or all tokens when types
// are absent), and other tokens onto a seeded normal token.
func successors(seed uint64, types []int32) func(vocab int) []int32 {
	return func(vocab int) []int32 {
		var normal []int32
		for t := 0; t < vocab; t++ {
			if types == nil || types[t] == 1 {
				normal = append(normal, int32(t))
			}
		}
		if len(normal) == 0 {
			for t := 0; t < vocab; t++ {
				normal = append(normal, int32(t))
			}
		}
		perm := append([]int32(nil), normal...)
		r := newRNG(seed, "successors", 0)
		for i := len(perm) - 1; i > 0; i-- {
			j := int(r.next() % uint64(i+1))
			perm[i], perm[j] = perm[j], perm[i]
		}
		succ := make([]int32, vocab)
		for i := range succ {
			succ[i] = -1
		}
		for i, t := range normal {
			succ[t] = perm[i]
		}
		for t := range succ {
			if succ[t] < 0 {
				succ[t] = normal[r.next()%uint64(len(normal))]
			}
		}
		return succ
	}
}

type gen struct {
	c     Config
	vocab int
	succ  func(int) []int32
	pre   [][]int32 // pre[j] = tokens whose successor is j
}

func (g *gen) buildPreimages() {
	s := g.succ(g.vocab)
	g.pre = make([][]int32, g.vocab)
	for t, j := range s {
		g.pre[j] = append(g.pre[j], int32(t))
	}
}

// rowsPerChunk bounds the rows generated between writes (and so memory).
const rowsPerChunk = 64

func (g *gen) tensor(ctx context.Context, w io.Writer, p plan, progress func(uint64)) error {
	cols, rows := int(p.info.Dims[0]), 1
	for _, d := range p.info.Dims[1:] {
		rows *= int(d)
	}
	rowBytes, err := ggml.RowSize(p.info.Type, uint64(cols))
	if err != nil {
		return err
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	out := make([]byte, int(rowBytes)*min(rows, rowsPerChunk))
	scratch := make([][]float32, workers)
	for i := range scratch {
		scratch[i] = make([]float32, cols)
	}
	for r0 := 0; r0 < rows; r0 += rowsPerChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		r1 := min(rows, r0+rowsPerChunk)
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for wk := 0; wk < workers; wk++ {
			wg.Add(1)
			go func(wk int) {
				defer wg.Done()
				for r := r0 + wk; r < r1; r += workers {
					g.row(p, r, scratch[wk])
					dst := out[(r-r0)*int(rowBytes) : (r-r0+1)*int(rowBytes)]
					if err := g.quantize(p.info.Type, scratch[wk], dst); err != nil {
						errs[wk] = fmt.Errorf("synth: %s row %d: %w", p.info.Name, r, err)
						return
					}
				}
			}(wk)
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		n := (r1 - r0) * int(rowBytes)
		if _, err := w.Write(out[:n]); err != nil {
			return fmt.Errorf("synth: write %s: %w", p.info.Name, err)
		}
		progress(uint64(n))
	}
	return nil
}

func (g *gen) quantize(t ggml.Type, src []float32, dst []byte) error {
	if g.c.Quantize != nil {
		return g.c.Quantize(t, src, dst)
	}
	if t != ggml.F32 || len(dst) != 4*len(src) {
		return fmt.Errorf("no quantizer for %s", t)
	}
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
	return nil
}

// row fills x with row r of tensor p.
func (g *gen) row(p plan, r int, x []float32) {
	n := float64(len(x))
	switch p.kind {
	case kEmbd:
		g.embdRow(r, x)
	case kNorm:
		rg := newRNG(g.c.Seed, p.info.Name, r)
		for i := range x {
			x[i] = 1 + 0.1*float32(2*rg.uniform()-1)
		}
	case kDense, kResidual:
		s := 1 / math.Sqrt(n)
		if p.kind == kResidual {
			s *= 0.5 / math.Sqrt(float64(g.c.Layers))
		}
		rg := newRNG(g.c.Seed, p.info.Name, r)
		for i := range x {
			x[i] = float32(s * rg.normal())
		}
	case kOutput:
		rg := newRNG(g.c.Seed, p.info.Name, r)
		s := float64(g.c.Noise) / math.Sqrt(n)
		for i := range x {
			x[i] = float32(s * rg.normal())
		}
		if len(g.pre[r]) > 0 {
			u := make([]float32, len(x))
			gain := g.c.Gain / float32(n)
			for _, t := range g.pre[r] {
				g.embdRow(int(t), u)
				for i := range x {
					x[i] += gain * u[i]
				}
			}
		}
	}
}

func (g *gen) embdRow(t int, x []float32) {
	rg := newRNG(g.c.Seed, "token_embd.weight", t)
	for i := range x {
		x[i] = float32(rg.normal())
	}
}

// rng is splitmix64 seeded from (seed, tensor name, row), so any row can be
// regenerated independently (the output matrix re-derives embedding rows).
type rng struct{ s uint64 }

func newRNG(seed uint64, name string, row int) *rng {
	h := fnv.New64a()
	h.Write([]byte(name))
	r := &rng{s: seed ^ h.Sum64() ^ uint64(row)*0x9E3779B97F4A7C15}
	r.next()
	return r
}

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (r *rng) uniform() float64 { return float64(r.next()>>11) / (1 << 53) }

// normal is an Irwin–Hall approximation of N(0,1): four 16-bit uniforms
// from one draw, centred and scaled to unit variance. Cheap and bounded
// (|x| < 3.47), which is all weights need.
func (r *rng) normal() float64 {
	v := r.next()
	s := float64(v&0xffff) + float64(v>>16&0xffff) + float64(v>>32&0xffff) + float64(v>>48)
	return (s/65536 - 2) * math.Sqrt(3)
}
