package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/tokenizer"
)

// Encoder serves an encoder model's (bert, nomic-bert) embeddings and
// rerank scores. An encoder attends over its whole input at once, so an
// input cannot be cut into the scheduler's prompt chunks: requests run
// outside the scheduler (whose decoding passes the model refuses).
//
// Requests that arrive while a pass runs are batched across requests: the
// next pass takes every waiting request's inputs together, so many small
// requests (one short text each, as retrieval pipelines send them) share
// the packed passes of model.EmbedBatch instead of taking one pass each.
// An input's vector does not depend on what it is packed with (each input
// attends over itself only; TestEncoderEmbeddings checks it bit for bit).
type Encoder struct {
	m    *model.Model
	pool arch.Pooling

	mu      sync.Mutex
	waiting []*encodeJob
	running bool // a goroutine is draining waiting

	// perRequest turns cross-request batching off (benchmarks compare).
	perRequest bool
	passes     atomic.Int64 // model.EmbedBatch calls, for the tests
}

// encodeJob is one request's inputs waiting for a pass.
type encodeJob struct {
	ctx    context.Context
	inputs [][]int32
	out    [][]float32
	err    error
	done   chan struct{}
}

// NewEncoder serves m (Cfg.Encoder) pooled as p.
func NewEncoder(m *model.Model, p arch.Pooling) *Encoder { return &Encoder{m: m, pool: p} }

// Pooling is the pooling the encoder applies.
func (e *Encoder) Pooling() arch.Pooling { return e.pool }

// EmbedBatch pools a request's inputs, packed into passes of up to the
// model's batch rows (model.EmbedBatch) together with the inputs of the
// requests waiting beside it.
func (e *Encoder) EmbedBatch(ctx context.Context, inputs [][]int32) ([][]float32, error) {
	j := &encodeJob{ctx: ctx, inputs: inputs, done: make(chan struct{})}
	e.mu.Lock()
	e.waiting = append(e.waiting, j)
	if !e.running {
		e.running = true
		go e.drain()
	}
	e.mu.Unlock()
	select {
	case <-j.done:
		return j.out, j.err
	case <-ctx.Done():
		// The pass that holds these inputs, if one does, finishes for the
		// others; this request's vectors are dropped.
		return nil, ctx.Err()
	}
}

// drain runs passes until no request waits. Each pass takes the waiting
// requests whose context is still live (all of them, or only the first
// when batching is off) and is cancelled only if every one of them is.
func (e *Encoder) drain() {
	for {
		e.mu.Lock()
		var jobs []*encodeJob
		for len(e.waiting) > 0 && (!e.perRequest || len(jobs) == 0) {
			j := e.waiting[0]
			e.waiting = e.waiting[1:]
			if j.ctx.Err() != nil {
				j.err = j.ctx.Err()
				close(j.done)
				continue
			}
			jobs = append(jobs, j)
		}
		if len(jobs) == 0 {
			e.running = false
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
		e.run(jobs)
	}
}

// run encodes jobs' inputs in one model.EmbedBatch call and hands each job
// its vectors (or the pass's error).
func (e *Encoder) run(jobs []*encodeJob) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var live atomic.Int64
	live.Store(int64(len(jobs)))
	for _, j := range jobs {
		stop := context.AfterFunc(j.ctx, func() {
			if live.Add(-1) == 0 { // every job's context done
				cancel()
			}
		})
		defer stop()
	}
	var all [][]int32
	for _, j := range jobs {
		all = append(all, j.inputs...)
	}
	e.passes.Add(1)
	out, err := e.m.EmbedBatch(ctx, all, e.pool)
	for _, j := range jobs {
		if err != nil {
			j.err = err
		} else {
			j.out, out = out[:len(j.inputs):len(j.inputs)], out[len(j.inputs):]
		}
		close(j.done)
	}
}

// rerankRules are /v1/rerank's fields: llama-server's (Jina's API, or
// TEI's when the documents come as texts).
var rerankRules = map[string]fieldRule{
	"query": honoured, "documents": honoured, "texts": honoured, "top_n": honoured, "model": honoured,
	"return_text":      honoured,
	"return_documents": ignored, // Jina's: llama-server does not return them either
}

// RerankTokens is the input llama-server scores for a query–document
// pair (format_prompt_rerank without a rerank template): BOS when the
// vocabulary adds it, the query, EOS when it adds one, SEP when it adds
// one, the document, EOS when it adds one; both texts tokenized without
// special tokens. For a WordPiece vocabulary that is
// [CLS] query [SEP] document.
func RerankTokens(tok *tokenizer.Tokenizer, query, doc string) ([]int32, error) {
	q, err := tok.EncodeChecked(query, false, false)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	d, err := tok.EncodeChecked(doc, false, false)
	if err != nil {
		return nil, fmt.Errorf("document: %w", err)
	}
	out := make([]int32, 0, len(q)+len(d)+4)
	if tok.AddBOS() {
		out = append(out, tok.BOS())
	}
	out = append(out, q...)
	if tok.AddEOS() {
		out = append(out, tok.EOS())
	}
	if tok.AddSEP() {
		out = append(out, tok.SEP())
	}
	out = append(out, d...)
	if tok.AddEOS() {
		out = append(out, tok.EOS())
	}
	return out, nil
}

// rerank answers llama-server's POST /v1/rerank (and /rerank,
// /v1/reranking, /reranking): each document is scored against the query
// by the model's classifier head (rank pooling; the score is the head's
// first output, not normalised, as llama-server returns it), and the
// results come sorted by score, best first, cut to top_n. With "texts"
// instead of "documents" the answer is TEI's: a bare array of
// {index, score} (plus text with return_text).
func (s *Server) rerank(w http.ResponseWriter, r *http.Request, b *Backend) {
	var req struct {
		Query      json.RawMessage `json:"query"`
		Documents  []string        `json:"documents"`
		Texts      []string        `json:"texts"`
		TopN       *int            `json:"top_n"`
		Model      string          `json:"model"`
		ReturnText bool            `json:"return_text"`
	}
	if e := decodeBody(r, w, s.cfg.MaxBody, &req, rerankRules); e != nil {
		s.reject(w, e)
		return
	}
	if e := s.checkModel(req.Model); e != nil {
		s.reject(w, e)
		return
	}
	if b.Encoder == nil || b.Encoder.Pooling() != arch.PoolRank {
		s.reject(w, &apiError{status: http.StatusNotImplemented, Message: "this server does not support reranking: it needs an encoder model with a classifier head pooled by rank (pooling_type rank, or serve --reranking)", Type: "not_supported_error"})
		return
	}
	var query string
	if q := bytes.TrimSpace(req.Query); len(q) == 0 || json.Unmarshal(q, &query) != nil {
		s.reject(w, invalid("query", "\"query\" must be provided as a string"))
		return
	}
	tei := req.Texts != nil
	docs := req.Documents
	if docs == nil {
		docs = req.Texts
	}
	if len(docs) == 0 {
		s.reject(w, invalid("documents", "\"documents\" must be a non-empty string array"))
		return
	}
	if len(docs) > maxEmbedInputs {
		s.reject(w, invalid("documents", "%d documents, at most %d", len(docs), maxEmbedInputs))
		return
	}
	topN := len(docs)
	if req.TopN != nil {
		topN = max(0, min(*req.TopN, len(docs)))
	}
	inputs := make([][]int32, len(docs))
	for i, d := range docs {
		toks, err := RerankTokens(b.Tokenizer, query, d)
		if err != nil {
			s.reject(w, invalid("documents", "document %d: %v", i, err))
			return
		}
		if len(toks) == 0 {
			s.reject(w, invalid("documents", "document %d: the query and document are empty", i))
			return
		}
		if len(toks) > b.NCtx {
			s.reject(w, invalid("documents", "document %d: %d tokens with the query, but the context holds %d", i, len(toks), b.NCtx))
			return
		}
		inputs[i] = toks
	}
	s.wg.Add(1)
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
	defer cancel()
	type result struct {
		index int
		score float64
	}
	vs, err := b.Encoder.EmbedBatch(ctx, inputs)
	if err != nil {
		s.reject(w, &apiError{status: http.StatusInternalServerError, Message: err.Error(), Type: "server_error"})
		return
	}
	res := make([]result, len(docs))
	ntok := 0
	for i, v := range vs {
		res[i] = result{i, float64(v[0])}
		ntok += len(inputs[i])
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].score > res[j].score })
	res = res[:topN]
	if tei {
		out := make([]map[string]any, len(res))
		for i, x := range res {
			out[i] = map[string]any{"index": x.index, "score": x.score}
			if req.ReturnText {
				out[i]["text"] = docs[x.index]
			}
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	out := make([]map[string]any, len(res))
	for i, x := range res {
		out[i] = map[string]any{"index": x.index, "relevance_score": x.score}
	}
	name := req.Model
	if name == "" {
		name = s.cfg.ModelID
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"model":   name,
		"object":  "list",
		"usage":   map[string]int{"prompt_tokens": ntok, "total_tokens": ntok},
		"results": out,
	})
}
