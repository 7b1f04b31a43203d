package serve

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/engine"
)

// choicesOf is the request's n (default 1; buildRequest checked its range).
func choicesOf(f *samplingFields) int {
	if f.N == nil {
		return 1
	}
	return *f.N
}

// chatLogProbs reads logprobs and top_logprobs (OpenAI: top_logprobs in
// [0, 20], and only with logprobs true).
func chatLogProbs(req *chatRequest) (bool, int, *apiError) {
	on := req.LogProbs != nil && *req.LogProbs
	top := 0
	if req.TopLogProbs != nil {
		top = *req.TopLogProbs
		if top < 0 || top > engine.MaxTopLogProbs {
			return false, 0, invalid("top_logprobs", "top_logprobs must be in [0, %d], got %d", engine.MaxTopLogProbs, top)
		}
		if top > 0 && !on {
			return false, 0, invalid("top_logprobs", "top_logprobs needs logprobs: true")
		}
	}
	return on, top, nil
}

// templateVars are the variables a request passes to the chat template:
// chat_template_kwargs (llama-server's and vLLM's field), with
// enable_thinking and reasoning_effort as shorthands for the keys of the
// same name. A variable the template never names could have no effect, so
// it is refused with a 400 naming it rather than passed in silence (Qwen3's
// template reads enable_thinking; gpt-oss's reads reasoning_effort).
func templateVars(t *chat.Template, req *chatRequest) (map[string]json.RawMessage, *apiError) {
	vars := map[string]json.RawMessage{}
	keys := make([]string, 0, len(req.ChatTemplateKwargs))
	for k := range req.ChatTemplateKwargs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := bytes.TrimSpace(req.ChatTemplateKwargs[k])
		if !t.Reads(k) {
			return nil, invalid("chat_template_kwargs", "chat_template_kwargs key %q: the chat template (%s) never reads it, so it would have no effect", k, t.Name())
		}
		switch k {
		case "messages", "tools", "add_generation_prompt", "bos_token", "eos_token", "range":
			return nil, invalid("chat_template_kwargs", "chat_template_kwargs key %q is set by the server", k)
		}
		vars[k] = v
	}
	for _, sh := range []struct {
		field string
		raw   json.RawMessage
		kind  byte // the JSON type it must have: 'b'ool or 's'tring
	}{{"enable_thinking", req.EnableThinking, 'b'}, {"reasoning_effort", req.ReasoningEffort, 's'}} {
		raw := bytes.TrimSpace(sh.raw)
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var ok bool
		if sh.kind == 'b' {
			var b bool
			ok = json.Unmarshal(raw, &b) == nil
		} else {
			var s string
			ok = json.Unmarshal(raw, &s) == nil
		}
		if !ok {
			want := map[byte]string{'b': "a boolean", 's': "a string"}[sh.kind]
			return nil, invalid(sh.field, "%s must be %s", sh.field, want)
		}
		if !t.Reads(sh.field) {
			return nil, invalid(sh.field, "%s: the chat template (%s) never reads it, so it would have no effect", sh.field, t.Name())
		}
		if _, dup := vars[sh.field]; !dup {
			vars[sh.field] = raw
		}
	}
	if len(vars) == 0 {
		return nil, nil
	}
	return vars, nil
}
