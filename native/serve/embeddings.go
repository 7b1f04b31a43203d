package serve

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/model"
)

// maxEmbedInputs bounds the inputs of one /v1/embeddings request (OpenAI
// allows 2048).
const maxEmbedInputs = 2048

// embeddingsRules are /v1/embeddings' fields (openai-go's
// EmbeddingNewParams; TestEveryOpenAIFieldHasAFate checks the list).
var embeddingsRules = map[string]fieldRule{
	"input": honoured, "model": honoured, "encoding_format": honoured, "dimensions": honoured,
	"user":       ignored, // an end-user id for abuse monitoring: nothing to monitor here
	"keep_alive": keepAliveRule,
}

// embeddings answers OpenAI's POST /v1/embeddings: each input (a string, an
// array of strings, an array of token ids or an array of such arrays) is
// tokenized as llama-server does (with the model's special tokens), run
// through the scheduler as an Embed request, pooled as the file says (last
// token: decoder embedders such as Qwen3-Embedding) and normalised to unit
// length. dimensions truncates the vector and normalises it again, as
// Matryoshka-trained models expect; encoding_format base64 sends the
// little-endian float32 bytes.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request, b *Backend) {
	var req struct {
		Input          json.RawMessage `json:"input"`
		Model          string          `json:"model"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     *int            `json:"dimensions"`
	}
	if e := decodeBody(r, w, s.cfg.MaxBody, &req, embeddingsRules); e != nil {
		s.reject(w, e)
		return
	}
	if e := s.checkModel(req.Model); e != nil {
		s.reject(w, e)
		return
	}
	if !b.Embeddings {
		s.reject(w, invalid("", "this model serves no embeddings: a decoder needs last-token pooling (pooling_type, or serve --pooling last), an encoder mean, cls or last pooling"))
		return
	}
	switch req.EncodingFormat {
	case "", "float", "base64":
	default:
		s.reject(w, invalid("encoding_format", "encoding_format %q: must be float or base64", req.EncodingFormat))
		return
	}
	inputs, e := s.embedInputs(req.Input, b)
	if e != nil {
		s.reject(w, e)
		return
	}
	dims := 0
	if req.Dimensions != nil {
		dims = *req.Dimensions
		if dims < 1 {
			s.reject(w, invalid("dimensions", "dimensions %d: must be >= 1", dims))
			return
		}
	}

	s.wg.Add(1)
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
	defer cancel()
	// Every input is submitted before any is awaited, so the scheduler runs
	// them side by side in its slots (an encoder's are packed into passes
	// by serve.Encoder).
	hs := make([]*engine.Handle, len(inputs))
	var encoded [][]float32
	if b.Encoder != nil {
		var err error
		if encoded, err = b.Encoder.EmbedBatch(ctx, inputs); err != nil {
			s.reject(w, &apiError{status: http.StatusInternalServerError, Message: err.Error(), Type: "server_error"})
			return
		}
	}
	for i, toks := range inputs {
		if b.Encoder != nil {
			break
		}
		h, err := b.Engine.Submit(ctx, engine.Request{Prompt: toks, Embed: true})
		if err != nil {
			cancel()
			s.rejectSubmit(w, err)
			return
		}
		hs[i] = h
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	data := make([]item, len(inputs))
	ntok := 0
	for i, h := range hs {
		var v []float32
		var err error
		if b.Encoder != nil {
			v = encoded[i]
		} else {
			var ev engine.Event
			if _, ev, err = h.Collect(ctx); err == nil {
				err, v = ev.Err, ev.Embedding
			}
		}
		if err != nil {
			cancel()
			s.reject(w, &apiError{status: http.StatusInternalServerError, Message: err.Error(), Type: "server_error"})
			return
		}
		if dims > 0 && dims < len(v) {
			v = v[:dims]
		}
		model.Normalize(v)
		var out any = v
		if req.EncodingFormat == "base64" {
			buf := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
			}
			out = base64.StdEncoding.EncodeToString(buf)
		}
		data[i] = item{"embedding", i, out}
		ntok += len(inputs[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   data,
		"model":  s.idOf(b),
		"usage":  map[string]int{"prompt_tokens": ntok, "total_tokens": ntok},
	})
}

// embedInputs turns OpenAI's input union into token sequences.
func (s *Server) embedInputs(raw json.RawMessage, b *Backend) ([][]int32, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, invalid("input", "input is required")
	}
	var one string
	var strs []string
	var ids []int32
	var idss [][]int32
	var out [][]int32
	switch {
	case json.Unmarshal(raw, &one) == nil:
		strs = []string{one}
	case json.Unmarshal(raw, &strs) == nil && len(strs) > 0:
	case json.Unmarshal(raw, &ids) == nil && len(ids) > 0:
		out = [][]int32{ids}
	case json.Unmarshal(raw, &idss) == nil && len(idss) > 0:
		out = idss
	default:
		return nil, invalid("input", "input must be a string, an array of strings, an array of token ids or an array of such arrays (non-empty)")
	}
	if len(strs)+len(out) > maxEmbedInputs {
		return nil, invalid("input", "%d inputs, at most %d", len(strs)+len(out), maxEmbedInputs)
	}
	for _, t := range strs {
		toks, err := b.Tokenizer.EncodeChecked(t, true, true)
		if err != nil {
			return nil, invalid("input", "%v", err)
		}
		out = append(out, toks)
	}
	n := int32(b.Tokenizer.NVocab())
	for i, toks := range out {
		if len(toks) == 0 {
			return nil, invalid("input", "input %d is empty", i)
		}
		for _, t := range toks {
			if t < 0 || t >= n {
				return nil, invalid("input", "input %d: token %d outside the vocabulary [0, %d)", i, t, n)
			}
		}
		if len(toks) >= b.NCtx {
			return nil, invalid("input", "input %d has %d tokens but a slot's context holds %d", i, len(toks), b.NCtx)
		}
	}
	return out, nil
}

// rejectSubmit answers a refused Submit as generate does.
func (s *Server) rejectSubmit(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, engine.ErrQueueFull):
		w.Header().Set("Retry-After", "1")
		s.reject(w, &apiError{status: http.StatusTooManyRequests, Message: "all slots are busy and the queue is full; retry later", Type: "rate_limit_error", Code: "queue_full"})
	case errors.Is(err, engine.ErrClosed):
		s.reject(w, &apiError{status: http.StatusServiceUnavailable, Message: "server is shutting down", Type: "unavailable_error", Code: 503})
	default:
		s.reject(w, invalid("", "%v", err))
	}
}

// checkModel refuses a request naming another model than the one served
// (a router has already found the model the request names).
func (s *Server) checkModel(m string) *apiError {
	if m != "" && s.cfg.Models == nil && m != s.cfg.ModelID {
		return &apiError{status: 400, Message: fmt.Sprintf("model %q is not served here (have %q)", m, s.cfg.ModelID),
			Type: "invalid_request_error", Code: "model_not_found", Param: strp("model")}
	}
	return nil
}
