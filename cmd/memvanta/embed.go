package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/tokenizer"
)

// runEmbed plays llama-embedding's role: one pooled, normalised vector per
// text (the prompt split at --embd-separator), printed one vector per line
// or, with --json, as an OpenAI-style embedding list.
func runEmbed(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("embed", "embed -m MODEL (-p TEXT | -f FILE) [--pooling none|mean|cls|last|rank] [--embd-normalize 2|-1] [--json]",
		"Print the embedding of each text (the prompt split at --embd-separator, a newline by default),\n"+
			"pooled as the file's pooling_type says (or --pooling) and normalised as llama-embedding does.\n"+
			"Encoders (bert, nomic-bert) pool as any of none (a line per token), mean, cls, last or rank;\n"+
			"decoders (Qwen3-Embedding and the like) pool their last token. Rank pooling (rerankers) scores\n"+
			"each text QUERY<TAB>DOCUMENT (--cls-separator) as llama-embedding does and prints the\n"+
			"classifier's outputs; like llama-embedding it normalises them too unless --embd-normalize -1.")
	mf := modelFlags{}
	mf.register(c, "context size (0 = the model's training context)")
	var pf promptFlags
	pf.register(c)
	var pooling, sep, clsSep string
	var norm int
	var jsonOut, rerank bool
	c.group("Embedding")
	c.stringVar(&pooling, "pooling", "TYPE", "", "pooling when the file names none, or to override it: none, mean, cls, last, rank (decoders: last only)")
	c.boolVar(&rerank, "reranking|rerank", "rank pooling (--pooling rank): score QUERY<TAB>DOCUMENT pairs with a reranker's classifier head")
	c.stringVar(&clsSep, "cls-separator", "SEP", "\t", "rank pooling: separator between the query and the document of a text")
	c.intVar(&norm, "embd-normalize", "N", 2, "normalisation: 2 = Euclidean (unit length), -1 = none")
	c.stringVar(&sep, "embd-separator", "SEP", "\n", "separator between the texts of the prompt")
	c.boolVar(&jsonOut, "json|embd-output-format-json", "print {\"object\": \"list\", \"data\": [{\"index\": i, \"embedding\": [...]}]}")
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	if err := mf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if norm != 2 && norm != -1 {
		return c.usageErr(stderr, "--embd-normalize %d: must be 2 or -1", norm)
	}
	if sep == "" {
		return c.usageErr(stderr, "--embd-separator must not be empty")
	}
	if rerank {
		if pooling != "" && pooling != "rank" {
			return c.usageErr(stderr, "--reranking with --pooling %s: reranking pools by rank", pooling)
		}
		pooling = "rank"
	}
	if clsSep == "" {
		return c.usageErr(stderr, "--cls-separator must not be empty")
	}
	var over *arch.Pooling
	if pooling != "" {
		p, err := arch.ParsePooling(pooling)
		if err != nil {
			return c.usageErr(stderr, "--%v", err)
		}
		over = &p
	}
	text, given, err := pf.text(c)
	if !given {
		return c.usageErr(stderr, "-p TEXT or -f FILE is required")
	}
	if errors.Is(err, errBothPrompts) {
		return c.usageErr(stderr, "%v", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "memvanta embed: %v\n", err)
		return exitRuntime
	}
	texts := strings.Split(text, pf.unescape(sep))
	if len(texts) > 1 && texts[len(texts)-1] == "" {
		texts = texts[:len(texts)-1]
	}
	l, st := openModel(ctx, &mf, stderr)
	if l == nil {
		return st
	}
	defer l.Close()
	p, ok, err := arch.PoolingOf(l.rt.File())
	if err != nil {
		fmt.Fprintf(stderr, "memvanta embed: %s: %v\n", mf.path, err)
		return exitRuntime
	}
	if over != nil {
		p, ok = *over, true
	}
	if !ok {
		fmt.Fprintf(stderr, "memvanta embed: %s names no pooling_type; give --pooling (last for decoder embedding models)\n", mf.path)
		return exitRuntime
	}
	fail := func(err error) int {
		if errors.Is(err, context.Canceled) {
			return exitInterrupted
		}
		fmt.Fprintf(stderr, "memvanta embed: %v\n", err)
		return exitRuntime
	}
	inputs := make([][]int32, len(texts))
	ntok := 0
	for i, s := range texts {
		var err error
		if p == arch.PoolRank && strings.Contains(s, pf.unescape(clsSep)) {
			inputs[i], err = rankTokens(l.tok, s, pf.unescape(clsSep))
		} else {
			inputs[i], err = l.tok.EncodeChecked(s, !pf.noBOS, false)
		}
		if err == nil && len(inputs[i]) == 0 {
			err = fmt.Errorf("text %d is empty and the model adds no special tokens", i)
		}
		if err != nil {
			return fail(err)
		}
		ntok += len(inputs[i])
	}
	// An encoder packs the texts into passes of up to -b tokens.
	pooled, err := l.m.EmbedBatch(ctx, inputs, p)
	if err != nil {
		return fail(err)
	}
	var vecs [][]float32
	E := l.m.Cfg.NEmbd
	for _, v := range pooled {
		// Pooling none gives a vector per token, each its own line.
		rows := [][]float32{v}
		if p == arch.PoolNone && len(v) > E {
			rows = rows[:0]
			for r := 0; r+E <= len(v); r += E {
				rows = append(rows, v[r:r+E])
			}
		}
		for _, r := range rows {
			if norm == 2 {
				model.Normalize(r)
			}
			vecs = append(vecs, r)
		}
	}
	w := bufio.NewWriter(stdout)
	if jsonOut {
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Object string `json:"object"`
			Data   []item `json:"data"`
			Usage  struct {
				PromptTokens int `json:"prompt_tokens"`
				TotalTokens  int `json:"total_tokens"`
			} `json:"usage"`
		}{Object: "list"}
		for i, v := range vecs {
			out.Data = append(out.Data, item{"embedding", i, v})
		}
		out.Usage.PromptTokens, out.Usage.TotalTokens = ntok, ntok
		b, err := json.Marshal(out)
		if err != nil {
			fmt.Fprintf(stderr, "memvanta embed: %v\n", err)
			return exitRuntime
		}
		w.Write(append(b, '\n'))
	} else {
		var b []byte
		for _, v := range vecs {
			b = b[:0]
			for j, x := range v {
				if j > 0 {
					b = append(b, ' ')
				}
				b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
			}
			w.Write(append(b, '\n'))
		}
	}
	if err := w.Flush(); err != nil {
		if closedPipe(err) {
			return exitPipe
		}
		fmt.Fprintf(stderr, "memvanta embed: %v\n", err)
		return exitRuntime
	}
	return exitOK
}

// rankTokens tokenizes a QUERY<sep>DOCUMENT text as llama-embedding does
// for rank pooling: the parts joined by the text of the EOS and SEP
// tokens the vocabulary adds (a WordPiece vocabulary: [SEP]), tokenized
// with the special tokens added and parsed, so a bert reranker sees
// [CLS] query [SEP] document [SEP].
func rankTokens(tok *tokenizer.Tokenizer, text, sep string) ([]int32, error) {
	var join string
	if tok.AddEOS() {
		join += string(tok.PieceSpecial(tok.EOS()))
	}
	if tok.AddSEP() {
		join += string(tok.PieceSpecial(tok.SEP()))
	}
	return tok.EncodeChecked(strings.Join(strings.Split(text, sep), join), true, true)
}
