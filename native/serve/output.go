package serve

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/tokenizer"
)

// outputSpec is how a request's replies are shaped, beyond the engine's
// request: the endpoint, the number of choices, whether thoughts and tool
// calls are split out, and the log-probability format.
type outputSpec struct {
	chat       bool
	n          int
	tools      chat.ToolFormat
	reasoning  bool // split <think> thoughts (harmony: the analysis channel) into reasoning_content
	forcedOpen bool // the prompt left the model inside its thoughts
	harmony    bool // replies are harmony (gpt-oss): channels and calls parsed by chat.HarmonyStream
	logprobs   bool
}

// choiceOut is one choice's reply as it forms: its text goes through the
// reasoning split, then the tool-call split.
type choiceOut struct {
	idx   int
	h     *engine.Handle
	rs    *chat.ReasoningStream
	ts    *chat.ToolStream
	hs    *chat.HarmonyStream // instead of rs and ts for harmony replies
	ended bool                // ended at the close of a tool call

	content, reasoning strings.Builder // whole replies
	lps                []engine.TokenLogProb
	offset             int // text offset of the next token (completions' legacy logprobs)
}

// piece is what one event adds to a choice.
type piece struct {
	reasoning, content string
	deltas             []chat.ToolCallDelta
	lps                []engine.TokenLogProb
}

func (p piece) empty() bool {
	return p.reasoning == "" && p.content == "" && len(p.deltas) == 0 && len(p.lps) == 0
}

// feed routes text through the splits. stream asks for tool-call deltas.
func (c *choiceOut) feed(text string, stream bool) piece {
	var p piece
	if c.ended {
		return p
	}
	if c.hs != nil {
		hp := c.hs.Push(text)
		p.reasoning, p.content = hp.Reasoning, hp.Content
		if stream {
			p.deltas = hp.Deltas
		}
		return p
	}
	if c.rs != nil {
		p.reasoning, text = c.rs.Push(text)
	}
	if c.ts != nil {
		text = c.ts.Push(text)
		if stream {
			p.deltas = c.ts.Deltas()
		}
		if c.ts.Complete() {
			c.ended = true
			c.h.End()
		}
	}
	p.content = text
	return p
}

// end flushes the splits at the end of the reply: the last piece, the
// calls and the finish reason. A streamed call that the final parse
// rejects is an error, unless the reply was cut by its token limit (OpenAI
// then also ends with the partial call and finish_reason "length").
func (c *choiceOut) end(ev engine.Event, stream bool) (piece, []chat.ToolCall, string, error) {
	var p piece
	if c.hs != nil {
		hp, calls, ok := c.hs.Finish()
		p.reasoning, p.content = hp.Reasoning, hp.Content
		if stream {
			p.deltas = hp.Deltas
		}
		reason := ev.Finish
		if len(calls) > 0 {
			reason = "tool_calls"
		}
		if stream && !ok {
			if ev.Finish == "length" {
				return p, nil, "length", nil
			}
			return p, nil, "", errors.New("the model's tool call was streamed as it formed but is not a valid call at the end of the reply")
		}
		return p, calls, reason, nil
	}
	if c.rs != nil {
		r, text := c.rs.Finish()
		p.reasoning = r
		if c.ts != nil && !c.ended {
			text = c.ts.Push(text)
			if stream {
				p.deltas = c.ts.Deltas()
			}
		}
		p.content = text
	}
	reason := ev.Finish
	if c.ts == nil {
		return p, nil, reason, nil
	}
	rest, calls := c.ts.Finish()
	p.content += rest
	if len(calls) > 0 {
		reason = "tool_calls"
	}
	if stream {
		more, ok := c.ts.RestDeltas(calls)
		if !ok {
			if ev.Finish == "length" {
				return p, nil, "length", nil
			}
			return p, nil, "", errors.New("the model's tool call was streamed as it formed but is not a valid call at the end of the reply")
		}
		p.deltas = append(p.deltas, more...)
	}
	return p, calls, reason, nil
}

type choiceEvent struct {
	idx int
	ev  engine.Event
	err error
}

// generate submits er for spec.n choices and writes the response in either
// format.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, b *Backend, er engine.Request, f *samplingFields, spec outputSpec) {
	s.wg.Add(1)
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	hs, err := b.Engine.SubmitN(ctx, er, max(spec.n, 1))
	switch {
	case errors.Is(err, engine.ErrQueueFull):
		w.Header().Set("Retry-After", "1")
		s.reject(w, &apiError{status: http.StatusTooManyRequests, Message: "all slots are busy and the queue is full; retry later", Type: "rate_limit_error", Code: "queue_full"})
		return
	case errors.Is(err, engine.ErrClosed):
		s.reject(w, &apiError{status: http.StatusServiceUnavailable, Message: "server is shutting down", Type: "unavailable_error", Code: 503})
		return
	case errors.Is(err, engine.ErrTooManyChoices):
		s.reject(w, invalid("n", "%v", err))
		return
	case err != nil:
		s.reject(w, invalid("", "%v", err))
		return
	}
	choices := make([]*choiceOut, len(hs))
	// Each choice's events are read by its own goroutine, so choices
	// stream side by side and a tool call's end is seen as it happens.
	// Every event reaches the loop below, the error of a deadline
	// included; quit only frees the readers once generate has returned.
	evc := make(chan choiceEvent, 4*len(hs))
	quit := make(chan struct{})
	defer close(quit)
	for i, h := range hs {
		c := &choiceOut{idx: i, h: h}
		switch {
		case spec.harmony:
			c.hs = chat.NewHarmonyStream(chat.HarmonyOptions{Reasoning: spec.reasoning, Tools: spec.tools == chat.ToolHarmony})
		case spec.reasoning:
			c.rs = chat.NewReasoningStream(spec.forcedOpen)
		}
		if spec.tools != chat.ToolNone && !spec.harmony {
			c.ts = chat.NewToolStream(spec.tools)
		}
		choices[i] = c
		go func() {
			for {
				ev, err := h.Next(ctx)
				if err == nil && ev.Done && ev.Err != nil {
					err = ev.Err
				}
				select {
				case evc <- choiceEvent{i, ev, err}:
				case <-quit:
					return
				}
				if err != nil || ev.Done {
					return
				}
			}
		}()
	}
	id, created := newID("cmpl-"), time.Now().Unix()
	object := "text_completion"
	if spec.chat {
		id, object = newID("chatcmpl-"), "chat.completion"
	}
	tok := b.Tokenizer
	var usage engine.Usage
	addUsage := func(c *choiceOut, u engine.Usage) {
		if c.idx == 0 {
			usage.PromptTokens, usage.CachedTokens = u.PromptTokens, u.CachedTokens
		}
		usage.CompletionTokens += u.CompletionTokens
	}
	if !f.Stream {
		type final struct {
			calls  []chat.ToolCall
			reason string
		}
		finals := make([]final, len(choices))
		for left := len(choices); left > 0; {
			ce := <-evc
			if ce.err != nil {
				s.observe(ce.ev, start)
				writeError(w, genError(ce.err))
				return
			}
			c := choices[ce.idx]
			p := c.feed(ce.ev.Text, false)
			c.reasoning.WriteString(p.reasoning)
			c.content.WriteString(p.content)
			c.lps = append(c.lps, ce.ev.LogProbs...)
			if !ce.ev.Done {
				continue
			}
			left--
			s.observe(ce.ev, start)
			addUsage(c, ce.ev.Usage)
			p, calls, reason, _ := c.end(ce.ev, false)
			c.reasoning.WriteString(p.reasoning)
			c.content.WriteString(p.content)
			finals[ce.idx] = final{calls, reason}
		}
		out := make([]any, len(choices))
		for i, c := range choices {
			choice := map[string]any{"index": i, "finish_reason": finals[i].reason, "logprobs": nil}
			if spec.logprobs {
				choice["logprobs"] = logprobsJSON(tok, c.lps, spec.chat, &c.offset)
			}
			if spec.chat {
				msg := map[string]any{"role": "assistant", "content": c.content.String()}
				if c.reasoning.Len() > 0 {
					msg["reasoning_content"] = c.reasoning.String()
				}
				if calls := finals[i].calls; len(calls) > 0 {
					if c.content.Len() == 0 {
						msg["content"] = nil
					}
					msg["tool_calls"] = toolCallsJSON(calls)
				}
				choice["message"] = msg
			} else {
				choice["text"] = c.content.String()
			}
			out[i] = choice
		}
		writeJSON(w, 200, map[string]any{"id": id, "object": object, "created": created, "model": s.idOf(b),
			"choices": out, "usage": usageOf(usage)})
		return
	}
	sse := newSSE(w)
	chunkObj := object
	if spec.chat {
		chunkObj = "chat.completion.chunk"
	}
	chunk := func(c *choiceOut, p piece, finish any) map[string]any {
		ch := map[string]any{"index": c.idx, "finish_reason": finish, "logprobs": nil}
		if spec.logprobs && len(p.lps) > 0 {
			ch["logprobs"] = logprobsJSON(tok, p.lps, spec.chat, &c.offset)
		}
		if spec.chat {
			d := map[string]any{}
			if p.content != "" {
				d["content"] = p.content
			}
			if p.reasoning != "" {
				d["reasoning_content"] = p.reasoning
			}
			if len(p.deltas) > 0 {
				d["tool_calls"] = deltasJSON(c, p.deltas)
			}
			ch["delta"] = d
		} else {
			ch["text"] = p.content
		}
		return map[string]any{"id": id, "object": chunkObj, "created": created, "model": s.idOf(b), "choices": []any{ch}}
	}
	// sendPiece sends a piece as chunks, thoughts, content and tool calls
	// each in their own (OpenAI never mixes content and tool_calls in one
	// delta); the log-probabilities ride with the first.
	sendPiece := func(c *choiceOut, p piece) {
		if p.empty() {
			return
		}
		if !spec.chat {
			sse.send(chunk(c, p, nil))
			return
		}
		parts := []piece{{reasoning: p.reasoning}, {content: p.content}, {deltas: p.deltas}}
		sent := false
		for _, q := range parts {
			if q.empty() {
				continue
			}
			if !sent {
				q.lps = p.lps
			}
			sse.send(chunk(c, q, nil))
			sent = true
		}
		if !sent { // only log-probabilities (their text is held back)
			sse.send(chunk(c, piece{lps: p.lps}, nil))
		}
	}
	if spec.chat {
		for _, c := range choices {
			sse.send(map[string]any{"id": id, "object": chunkObj, "created": created, "model": s.idOf(b),
				"choices": []any{map[string]any{"index": c.idx, "finish_reason": nil, "logprobs": nil,
					"delta": map[string]any{"role": "assistant", "content": ""}}}})
		}
	}
	for left := len(choices); left > 0; {
		ce := <-evc
		if ce.err != nil {
			s.observe(ce.ev, start)
			// Never end a stream as if it were complete: say why it stopped.
			sse.send(map[string]any{"error": genError(ce.err)})
			return
		}
		c := choices[ce.idx]
		p := c.feed(ce.ev.Text, true)
		p.lps = ce.ev.LogProbs
		if !ce.ev.Done {
			sendPiece(c, p)
			continue
		}
		left--
		s.observe(ce.ev, start)
		addUsage(c, ce.ev.Usage)
		last, _, reason, err := c.end(ce.ev, true)
		if err != nil {
			sse.send(map[string]any{"error": &apiError{status: 500, Message: err.Error(), Type: "server_error", Code: "invalid_tool_call"}})
			return
		}
		p.reasoning += last.reasoning
		p.content += last.content
		p.deltas = append(p.deltas, last.deltas...)
		sendPiece(c, p)
		sse.send(chunk(c, piece{}, reason))
	}
	if f.StreamOptions != nil && f.StreamOptions.IncludeUsage {
		sse.send(map[string]any{"id": id, "object": chunkObj, "created": created, "model": s.idOf(b),
			"choices": []any{}, "usage": usageOf(usage)})
	}
	sse.done()
}

// deltasJSON are delta.tool_calls entries: a call's first carries its id
// (the model's, or a new one), type and name with empty arguments, the
// rest argument fragments.
func deltasJSON(c *choiceOut, ds []chat.ToolCallDelta) []toolCallJSON {
	out := make([]toolCallJSON, len(ds))
	for i, d := range ds {
		idx := d.Index
		if d.First {
			out[i] = toolCallJSON{Index: &idx, ID: callID(chat.ToolCall{ID: d.ID}), Type: "function", Function: toolCallFunction{Name: d.Name}}
		} else {
			out[i] = toolCallJSON{Index: &idx, Function: toolCallFunction{Arguments: d.Arguments}}
		}
	}
	return out
}

// jsonLogProb is a log-probability JSON can carry: -Inf (a token the model
// gives no probability) becomes the lowest float32, as llama-server writes it.
func jsonLogProb(lp float32) float64 {
	if math.IsInf(float64(lp), -1) || lp != lp {
		return -math.MaxFloat32
	}
	return float64(lp)
}

// tokenText is a token's text as llama-server reports it: the piece cut to
// its longest valid UTF-8 prefix (a byte-fallback token has none), with
// the exact bytes alongside.
func tokenText(tok *tokenizer.Tokenizer, id int32) (string, []int) {
	b := tok.PieceSpecial(id)
	bs := make([]int, len(b))
	for i, c := range b {
		bs[i] = int(c)
	}
	n := len(b)
	for n > 0 && !utf8.Valid(b[:n]) {
		n--
	}
	return string(b[:n]), bs
}

type topLogProbJSON struct {
	Token   string  `json:"token"`
	LogProb float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

type contentLogProbJSON struct {
	Token       string           `json:"token"`
	LogProb     float64          `json:"logprob"`
	Bytes       []int            `json:"bytes"`
	TopLogProbs []topLogProbJSON `json:"top_logprobs"`
}

// logprobsJSON is a choice's logprobs: chat's {"content": [...]} or the
// legacy completions shape (tokens, token_logprobs, top_logprobs as
// {token: logprob}, text_offset counted from *offset).
func logprobsJSON(tok *tokenizer.Tokenizer, lps []engine.TokenLogProb, isChat bool, offset *int) any {
	if isChat {
		content := make([]contentLogProbJSON, len(lps))
		for i, lp := range lps {
			t, bs := tokenText(tok, lp.ID)
			top := make([]topLogProbJSON, len(lp.Top))
			for j, a := range lp.Top {
				at, abs := tokenText(tok, a.ID)
				top[j] = topLogProbJSON{Token: at, LogProb: jsonLogProb(a.LogProb), Bytes: abs}
			}
			content[i] = contentLogProbJSON{Token: t, LogProb: jsonLogProb(lp.LogProb), Bytes: bs, TopLogProbs: top}
		}
		return map[string]any{"content": content, "refusal": nil}
	}
	tokens := make([]string, len(lps))
	values := make([]float64, len(lps))
	tops := make([]map[string]float64, len(lps))
	offsets := make([]int, len(lps))
	for i, lp := range lps {
		tokens[i], _ = tokenText(tok, lp.ID)
		values[i] = jsonLogProb(lp.LogProb)
		tops[i] = make(map[string]float64, len(lp.Top))
		for _, a := range lp.Top {
			t, _ := tokenText(tok, a.ID)
			if _, dup := tops[i][t]; !dup {
				tops[i][t] = jsonLogProb(a.LogProb)
			}
		}
		offsets[i] = *offset
		*offset += len(tok.PieceSpecial(lp.ID))
	}
	return map[string]any{"tokens": tokens, "token_logprobs": values, "top_logprobs": tops, "text_offset": offsets}
}
