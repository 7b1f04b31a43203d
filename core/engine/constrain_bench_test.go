package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/grammar"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/kernels"
)

// benchSchema is a realistic nested structured-output schema: objects in
// arrays, enums, formats, bounded integers, optional fields.
const benchSchema = `{
  "type": "object",
  "properties": {
    "order_id": {"type": "string", "format": "uuid"},
    "created": {"type": "string", "format": "date-time"},
    "status": {"enum": ["pending", "shipped", "delivered", "cancelled"]},
    "customer": {
      "type": "object",
      "properties": {
        "name": {"type": "string", "maxLength": 80},
        "email": {"type": "string"},
        "vip": {"type": "boolean"}
      },
      "required": ["name", "email"],
      "additionalProperties": false
    },
    "items": {
      "type": "array",
      "minItems": 1,
      "maxItems": 20,
      "items": {
        "type": "object",
        "properties": {
          "sku": {"type": "string"},
          "quantity": {"type": "integer", "minimum": 1, "maximum": 999},
          "price": {"type": "number"},
          "tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["sku", "quantity", "price"],
        "additionalProperties": false
      }
    },
    "notes": {"type": ["string", "null"]}
  },
  "required": ["order_id", "created", "status", "customer", "items"],
  "additionalProperties": false
}`

// benchDoc is a document of benchSchema, tokenized as a model would write it.
const benchDoc = `{"order_id": "3f2b8c1e-9a4d-4e6b-8f0a-1c2d3e4f5a6b", "created": "2024-06-01T12:34:56Z", "status": "shipped", "customer": {"name": "Ada Lovelace", "email": "ada@example.com", "vip": true}, "items": [{"sku": "BK-1843-NOTES", "quantity": 2, "price": 19.99, "tags": ["book", "history", "mathematics"]}, {"sku": "PEN-FOUNTAIN", "quantity": 1, "price": 45.5}], "notes": "Leave at the front desk, please. Thank you!"}`

func benchTokenizer(b testing.TB, name string) *tokenizer.Tokenizer {
	path := filepath.Join("..", "..", "..", "shared", "vocab", name)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Skipf("%s: %v", path, err)
	}
	f, err := gguf.Parse(bytes.NewReader(data), int64(len(data)), gguf.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		b.Fatal(err)
	}
	return tok
}

// BenchmarkGrammarMask measures the cost grammar constraints add per
// generated token on real vocabularies (Llama 3's 128256-token BPE and
// Llama 2's 32000-token SPM), following benchDoc's tokens through
// benchSchema with a fresh matcher per document:
//
//   - check: the engine's path when the model's choice is allowed (every
//     token here): Allows, then Accept; ns/token;
//   - mask: the path when every choice is refused: Mask, applying it to
//     the logits, Accept; ns/token;
//   - cold: one mask computed from scratch (the cache cleared), at the
//     start of a string value, where most of the vocabulary is allowed.
func BenchmarkGrammarMask(b *testing.B) {
	src, err := grammar.FromJSONSchema([]byte(benchSchema), grammar.SchemaOptions{Strict: true})
	if err != nil {
		b.Fatal(err)
	}
	// SPM tokenizers write a leading space before the document; llama.cpp's
	// grammar would refuse it, so the benchmark grammar allows one.
	g, err := grammar.Parse("bench ::= \" \"? root\n"+src, "bench")
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"ggml-vocab-llama-bpe.gguf", "ggml-vocab-llama-spm.gguf"} {
		b.Run(name, func(b *testing.B) {
			tok := benchTokenizer(b, name)
			v, err := GrammarVocab(tok)
			if err != nil {
				b.Fatal(err)
			}
			doc := tok.Encode(benchDoc, false, false)
			if tok.Decode(doc) != benchDoc {
				b.Fatalf("document does not round-trip: %q", tok.Decode(doc))
			}
			logits := make([]float32, tok.NVocab())
			b.Run("check", func(b *testing.B) {
				n := 0
				for b.Loop() {
					m, err := grammar.NewMatcher(g)
					if err != nil {
						b.Fatal(err)
					}
					c := &constraint{m: m, v: v, tok: tok}
					for _, t := range doc {
						if !c.allows(t) {
							b.Fatalf("token %d %q refused", t, tok.PieceSpecial(t))
						}
						if err := c.accept(t); err != nil {
							b.Fatal(err)
						}
						n++
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/token")
			})
			b.Run("mask", func(b *testing.B) {
				var piece []byte
				n := 0
				for b.Loop() {
					m, err := grammar.NewMatcher(g)
					if err != nil {
						b.Fatal(err)
					}
					for _, t := range doc {
						mask, err := m.Mask(v)
						if err != nil {
							b.Fatal(err)
						}
						if mask[t>>6]&(1<<(t&63)) == 0 {
							b.Fatalf("token %d %q refused", t, tok.PieceSpecial(t))
						}
						applyMask(logits, mask)
						piece = tok.AppendPieceSpecial(piece[:0], t)
						if err := m.Accept(piece); err != nil {
							b.Fatal(err)
						}
						n++
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/token")
				b.ReportMetric(float64(len(doc)), "tokens/doc")
			})
			b.Run("cold", func(b *testing.B) {
				m, err := grammar.NewMatcher(g)
				if err != nil {
					b.Fatal(err)
				}
				if err := m.AcceptString(`{"order_id": "3f2b8c1e-9a4d-4e6b-8f0a-1c2d3e4f5a6b", "created": "2024-06-01T12:34:56Z", "status": "shipped", "customer": {"name": "`); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					m.DropMaskCache()
					if _, err := m.Mask(v); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// benchGenModel writes a synthetic model with the real vocabulary of the
// vocab-only file name (Q8_0, 8 layers of width 1024: a forward pass that
// costs what a small real model's does, so the grammar's share of a token
// is measured against a realistic step).
func benchGenModel(b *testing.B, name string) (*model.Model, *tokenizer.Tokenizer) {
	path := filepath.Join("..", "..", "..", "shared", "vocab", name)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Skipf("%s: %v", path, err)
	}
	vf, err := gguf.Parse(bytes.NewReader(data), int64(len(data)), gguf.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	cfg := synth.Config{Embd: 1024, Layers: 8, Heads: 16, KVHeads: 4, FF: 2816, Ctx: 512, Type: ggml.Q8_0, Vocab: vf,
		Seed: 5, RopeBase: 10000, Eps: 1e-5, Quantize: kernels.Quantize}
	if err := synth.Write(context.Background(), &buf, cfg, nil); err != nil {
		b.Fatal(err)
	}
	raw := buf.Bytes()
	f, err := gguf.Parse(bytes.NewReader(raw), int64(len(raw)), gguf.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	w, err := model.MemWeightsFromBytes(f, raw)
	if err != nil {
		b.Fatal(err)
	}
	mc, err := model.ConfigFromGGUF(f)
	if err != nil {
		b.Fatal(err)
	}
	m, err := model.New(mc, w, model.Options{Threads: 2, KVType: ggml.F16})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Close)
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		b.Fatal(err)
	}
	return m, tok
}

// steer makes the model write doc: after each real forward pass, the next
// document token gets the highest logit (the pass's cost is kept, its
// choice is replaced). It stands in for a model that follows the format.
// It also times the forward passes (fwd), so the engine's own time per
// token (sampling, the grammar) can be told from the model's.
type steer struct {
	Stepper
	doc []int32
	n   int
	fwd time.Duration
}

func (s *steer) Step(ctx context.Context, ws []Work) error {
	t0 := time.Now()
	err := s.Stepper.Step(ctx, ws)
	s.fwd += time.Since(t0)
	if err != nil {
		return err
	}
	for i := range ws {
		lg := ws[i].Logits
		if lg == nil || s.doc == nil {
			continue
		}
		top := lg[0]
		for _, v := range lg {
			top = max(top, v)
		}
		lg[s.doc[s.n%len(s.doc)]] = top + 1
		s.n++
	}
	return nil
}

// BenchmarkConstrainedGeneration is generation with and without a grammar
// (benchSchema) on the same model, 32 tokens per request, the engine
// stepped on the benchmark's goroutine as generate does. Each iteration
// runs five requests in turn, so the machine's load, which drifts, weighs
// on all alike:
//
//   - follow (free and constrained, greedy): the model is steered to write
//     benchDoc, as a model that follows the format does: the grammar costs
//     a one-token check per step (the typical case);
//   - random (free and constrained, sampled at temperature 1 with a new
//     seed per request, so every reply differs): the synthetic model's own
//     choices, which almost never fit the schema, so nearly every
//     constrained step refuses the first choice and needs a mask (the
//     worst case); the engine's matcher for the grammar is reused from
//     request to request, with the masks it computed;
//   - random-cold (constrained): the same with the grammar parsed anew
//     for each request, so every mask is computed from scratch (a schema
//     seen for the first time).
//
// The *-ratio metrics are constrained/free tokens per second: measured
// (wall), in CPU time per token (cpu), and as the engine's own work gives
// it (engine: one mean forward time per token for all kinds, since the
// passes are the same work, plus each kind's time outside them, which the
// load stretches less); *-grammar-us/tok is that outside time's
// constrained minus free. Run as
//
//	go test ./core/engine -run '^$' -bench ConstrainedGeneration -count 6 | benchstat -
func BenchmarkConstrainedGeneration(b *testing.B) {
	src, err := grammar.FromJSONSchema([]byte(benchSchema), grammar.SchemaOptions{Strict: true})
	if err != nil {
		b.Fatal(err)
	}
	g, err := grammar.Parse("bench ::= \" \"? root\n"+src, "bench")
	if err != nil {
		b.Fatal(err)
	}
	for _, vocab := range []struct{ name, file string }{{"spm32k", "ggml-vocab-llama-spm.gguf"}, {"bpe128k", "ggml-vocab-llama-bpe.gguf"}} {
		b.Run("vocab="+vocab.name, func(b *testing.B) {
			m, tok := benchGenModel(b, vocab.file)
			st := &steer{Stepper: PerSeq{M: m}}
			e, err := New(st, tok, Options{Slots: 1, Queue: 1})
			if err != nil {
				b.Fatal(err)
			}
			doc := tok.Encode(benchDoc, false, false)
			prompt := tok.Encode("Write the order as JSON:", true, false)
			ctx := context.Background()
			// gen runs one request and returns its tokens, its wall time,
			// the forward passes' share of it and its CPU time.
			seed := uint64(0)
			gen := func(gr *grammar.Grammar, follow bool) (int, time.Duration, time.Duration, time.Duration) {
				st.doc, st.n, st.fwd = nil, 0, 0
				p := sample.Params{Temp: 0, RepeatPenalty: 1}
				if follow {
					st.doc = doc
				} else {
					seed++
					p = sample.Params{Temp: 1, TopP: 1, RepeatPenalty: 1, Seed: seed}
				}
				r := Request{Prompt: prompt, Sample: p, MaxTokens: 32, IgnoreEOS: true, Grammar: gr}
				t0, c0 := time.Now(), cpuTime()
				h, err := e.Submit(ctx, r)
				if err != nil {
					b.Fatal(err)
				}
				for e.Step(ctx) {
				}
				c1 := cpuTime()
				text, ev, err := h.Collect(ctx)
				if err != nil || ev.Err != nil {
					b.Fatal(err, ev.Err)
				}
				if follow && gr != nil && !strings.HasPrefix(" "+benchDoc, text) && !strings.HasPrefix(benchDoc, text) {
					b.Fatalf("steered constrained reply %q is not the document's start", text)
				}
				return ev.Usage.CompletionTokens, time.Since(t0), st.fwd, c1 - c0
			}
			// The prompt's cache, so every request only generates, and the
			// engine's vocabulary index, built once by the first
			// constrained request.
			gen(g, false)
			type acc struct {
				n           int
				d, fwd, cpu time.Duration
			}
			var runs [5]acc // follow free, follow json, random free, random json, random json cold
			for b.Loop() {
				for i := range runs {
					var gr *grammar.Grammar
					switch i {
					case 1, 3:
						gr = g
					case 4:
						if gr, err = grammar.Parse("bench ::= \" \"? root\n"+src, "bench"); err != nil {
							b.Fatal(err)
						}
					}
					n, d, f, c := gen(gr, i < 2)
					runs[i].n += n
					runs[i].d += d
					runs[i].fwd += f
					runs[i].cpu += c
				}
			}
			rate := func(a acc) float64 { return float64(a.n) / a.d.Seconds() }
			b.ReportMetric(rate(runs[0]), "free-tok/s")
			b.ReportMetric(rate(runs[1])/rate(runs[0]), "follow-ratio")
			b.ReportMetric(rate(runs[3])/rate(runs[2]), "random-ratio")
			b.ReportMetric(rate(runs[4])/rate(runs[2]), "random-cold-ratio")
			// The load drifts between requests and stretches the forward
			// passes most, so the ratios are also given with one forward
			// time per token for all kinds (the mean over all: the passes
			// are the same work in every kind), plus each kind's own
			// engine time per token (sampling, grammar): the
			// constrained/free tok/s ratio the engine's work alone gives.
			var fwd time.Duration
			tokens := 0
			for _, r := range runs {
				fwd += r.fwd
				tokens += r.n
			}
			perFwd := fwd.Seconds() / float64(tokens)
			own := func(a acc) float64 { return (a.d - a.fwd).Seconds() / float64(a.n) }
			b.ReportMetric(perFwd*1e3, "fwd-ms/tok")
			for _, k := range []struct {
				name        string
				free, fixed int
			}{{"follow", 0, 1}, {"random", 2, 3}, {"random-cold", 2, 4}} {
				b.ReportMetric((own(runs[k.fixed])-own(runs[k.free]))*1e6, k.name+"-grammar-us/tok")
				b.ReportMetric((perFwd+own(runs[k.free]))/(perFwd+own(runs[k.fixed])), k.name+"-engine-ratio")
				// In CPU time (all threads) per token, which the load
				// stretches less.
				if runs[k.free].cpu > 0 && runs[k.fixed].cpu > 0 {
					per := func(a acc) float64 { return a.cpu.Seconds() / float64(a.n) }
					b.ReportMetric(per(runs[k.free])/per(runs[k.fixed]), k.name+"-cpu-ratio")
				}
			}
		})
	}
}

// cpuTime is the process's CPU time (user + system, all threads) from
// /proc/self/stat, 0 where there is none. Its clock ticks are taken as
// 100 Hz, Linux's USER_HZ.
func cpuTime() time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) start at ") ".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	st, err2 := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}
