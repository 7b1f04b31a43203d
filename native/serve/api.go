package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
)

// apiError is an OpenAI-style error body.
type apiError struct {
	status  int
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    any     `json:"code"`
}

func (e *apiError) Error() string { return e.Message }

func invalid(param, format string, a ...any) *apiError {
	var p *string
	if param != "" {
		p = &param
	}
	return &apiError{status: http.StatusBadRequest, Message: fmt.Sprintf(format, a...), Type: "invalid_request_error", Param: p}
}

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// samplingFields are the generation parameters both endpoints take.
type samplingFields struct {
	Model            *string            `json:"model"`
	MaxTokens        *int               `json:"max_tokens"`
	MaxCompletion    *int               `json:"max_completion_tokens"`
	Temperature      *float64           `json:"temperature"`
	TopP             *float64           `json:"top_p"`
	TopK             *int               `json:"top_k"`
	MinP             *float64           `json:"min_p"`
	Seed             *int64             `json:"seed"`
	Stop             json.RawMessage    `json:"stop"`
	FrequencyPenalty *float64           `json:"frequency_penalty"`
	PresencePenalty  *float64           `json:"presence_penalty"`
	RepeatPenalty    *float64           `json:"repeat_penalty"`
	RepeatLastN      *int               `json:"repeat_last_n"`
	LogitBias        map[string]float64 `json:"logit_bias"`
	Stream           bool               `json:"stream"`
	StreamOptions    *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N         *int `json:"n"`
	IgnoreEOS bool `json:"ignore_eos"`
	// NKeep is llama-server's n_keep: prompt tokens (after BOS) a context
	// shift keeps; -1 the whole prompt.
	NKeep *int `json:"n_keep"`
}

type completionRequest struct {
	samplingFields
	constraintFields
	Prompt   json.RawMessage `json:"prompt"`
	LogProbs *int            `json:"logprobs"` // legacy: the number of alternatives, 0 = the chosen token's only
}

type chatRequest struct {
	samplingFields
	constraintFields
	Messages   json.RawMessage `json:"messages"`
	Tools      json.RawMessage `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`

	LogProbs    *bool `json:"logprobs"`
	TopLogProbs *int  `json:"top_logprobs"`

	ReasoningFormat    *string                    `json:"reasoning_format"`
	ReasoningEffort    json.RawMessage            `json:"reasoning_effort"`
	EnableThinking     json.RawMessage            `json:"enable_thinking"`
	ChatTemplateKwargs map[string]json.RawMessage `json:"chat_template_kwargs"`
}

// decodeBody reads a JSON object into dst, mapping a too-large body and
// malformed JSON to 400s, and gives every field its fate under rules
// (fields.go) before anything else looks at the request.
func decodeBody(r *http.Request, w http.ResponseWriter, limit int64, dst any, rules map[string]fieldRule) *apiError {
	body := http.MaxBytesReader(w, r.Body, limit)
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return invalid("", "request body exceeds the %d-byte limit", limit)
		}
		return invalid("", "reading request body: %v", err)
	}
	b := bytes.TrimSpace(buf.Bytes())
	if len(b) == 0 || b[0] != '{' {
		return invalid("", "request body must be a JSON object")
	}
	if err := json.Unmarshal(b, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalid(te.Field, "field %q: expected %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return invalid("", "malformed JSON: %v", err)
	}
	return checkFields(b, rules)
}

// parseStop accepts a string, an array of strings, or null.
func parseStop(raw json.RawMessage) ([]string, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, invalid("stop", "stop must be a string or an array of strings")
	}
	return many, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// parseLogitBias turns {"token id": bias} into a map.
func parseLogitBias(m map[string]float64) (map[int32]float32, *apiError) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[int32]float32, len(m))
	for k, v := range m {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			return nil, invalid("logit_bias", "logit_bias key %q is not a token id", k)
		}
		if !finite(v) {
			return nil, invalid("logit_bias", "logit_bias for %q is not finite", k)
		}
		if v < -100 || v > 100 { // OpenAI's range; the engine takes any bias
			return nil, invalid("logit_bias", "logit_bias for %q is %v, must be in [-100, 100]", k, v)
		}
		out[int32(id)] = float32(v)
	}
	return out, nil
}
