package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/grammar"
	"github.com/memvanta/memvanta/core/tokenizer"
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
