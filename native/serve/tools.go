package serve

import (
	"encoding/json"
	"net/http"
)

// llama-server's utility endpoints.

func (s *Server) tokenize(w http.ResponseWriter, r *http.Request, b *Backend) {
	var req struct {
		Content      *string `json:"content"`
		AddSpecial   bool    `json:"add_special"`
		ParseSpecial *bool   `json:"parse_special"`
		WithPieces   bool    `json:"with_pieces"`
	}
	if e := decodeBody(r, w, s.cfg.MaxBody, &req, tokenizeRules); e != nil {
		s.reject(w, e)
		return
	}
	if req.Content == nil {
		s.reject(w, invalid("content", "content is required"))
		return
	}
	special := req.ParseSpecial == nil || *req.ParseSpecial
	ids, err := b.Tokenizer.EncodeChecked(*req.Content, req.AddSpecial, special)
	if err != nil {
		s.reject(w, invalid("content", "%v", err))
		return
	}
	if !req.WithPieces {
		writeJSON(w, 200, map[string]any{"tokens": ids})
		return
	}
	type piece struct {
		ID    int32  `json:"id"`
		Piece string `json:"piece"`
	}
	ps := make([]piece, len(ids))
	for i, id := range ids {
		ps[i] = piece{id, string(b.Tokenizer.PieceSpecial(id))}
	}
	writeJSON(w, 200, map[string]any{"tokens": ps})
}

func (s *Server) detokenize(w http.ResponseWriter, r *http.Request, b *Backend) {
	var req struct {
		Tokens []int32 `json:"tokens"`
	}
	if e := decodeBody(r, w, s.cfg.MaxBody, &req, detokenizeRules); e != nil {
		s.reject(w, e)
		return
	}
	n := int32(b.Tokenizer.NVocab())
	for _, t := range req.Tokens {
		if t < 0 || t >= n {
			s.reject(w, invalid("tokens", "token %d outside the vocabulary [0, %d)", t, n))
			return
		}
	}
	writeJSON(w, 200, map[string]any{"content": b.Tokenizer.Detokenize(req.Tokens, true)})
}

func (s *Server) applyTemplate(w http.ResponseWriter, r *http.Request, b *Backend) {
	var req struct {
		Messages json.RawMessage `json:"messages"`
		Tools    json.RawMessage `json:"tools"`
	}
	if e := decodeBody(r, w, s.cfg.MaxBody, &req, applyTemplateRules); e != nil {
		s.reject(w, e)
		return
	}
	text, e := s.render(b, req.Messages, req.Tools, nil)
	if e != nil {
		s.reject(w, e)
		return
	}
	writeJSON(w, 200, map[string]any{"prompt": text})
}
