package serve

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// Every field of a request body has one fate, decided here before anything
// is generated: the server honours it, refuses it with a 400 naming it, or
// accepts it on a short documented list of fields that have no effect by
// design. encoding/json drops unknown fields silently, which is how a client
// asking for JSON used to get prose and a 200; a field missing from these
// tables is now refused, so a field can never be dropped by omission.

// fieldRule is the fate of one request field. check is nil for a field that
// is honoured (or, with noEffect, accepted and ignored) whatever its value;
// otherwise it returns an error for the values this server does not honour.
type fieldRule struct {
	noEffect bool
	check    func(raw json.RawMessage) *apiError
}

// honoured: the field is read by the request structs and changes the reply.
var honoured = fieldRule{}

// ignored: accepted by design with no effect. Each use says why.
var ignored = fieldRule{noEffect: true}

// refuse is a field this server does not implement.
func refuse(field, why string) fieldRule {
	return fieldRule{check: func(json.RawMessage) *apiError {
		return invalid(field, "%s is not supported: %s", field, why)
	}}
}

// onlyValues honours the listed JSON values (compared after compaction) and
// refuses any other, saying why.
func onlyValues(field, why string, allowed ...string) fieldRule {
	return fieldRule{check: func(raw json.RawMessage) *apiError {
		var c bytes.Buffer
		if json.Compact(&c, raw) == nil {
			for _, a := range allowed {
				if c.String() == a {
					return nil
				}
			}
		}
		return invalid(field, "%s %s is not supported: %s (accepted: %s)", field, clip(raw), why, strings.Join(allowed, ", "))
	}}
}

// clip shortens a raw value for an error message.
func clip(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// samplingRules are the fields samplingFields reads, shared by both
// generation endpoints.
var samplingRules = map[string]fieldRule{
	"model":                 honoured,
	"max_tokens":            honoured,
	"max_completion_tokens": honoured,
	"temperature":           honoured,
	"top_p":                 honoured,
	"top_k":                 honoured,
	"min_p":                 honoured,
	"seed":                  honoured,
	"stop":                  honoured,
	"frequency_penalty":     honoured,
	"presence_penalty":      honoured,
	"repeat_penalty":        honoured,
	"repeat_last_n":         honoured,
	"logit_bias":            honoured,
	"stream":                honoured,
	"stream_options":        honoured,
	"n":                     honoured, // choices sharing the prompt's prefill; buildRequest and SubmitN bound it (<= MaxChoices, <= slots)
	"ignore_eos":            honoured,
	"n_keep":                honoured,      // with serve --context-shift; otherwise only 0 (buildRequest)
	"keep_alive":            keepAliveRule, // ollama's: how long the model stays loaded after this request (router.go; single-model mode never unloads)

	// No effect by design: bookkeeping for a hosted service.
	"user":              ignored, // an end-user id for abuse monitoring; nothing is logged per user
	"safety_identifier": ignored, // the same, under its newer name
	"store":             ignored, // OpenAI-side storage of completions; nothing is stored
	"metadata":          ignored, // tags for stored completions
	"service_tier":      ignored, // a hosted latency tier; one local tier serves every request
	"prompt_cache_key":  ignored, // a routing hint for a hosted prefix cache
	// Retention and options of a hosted prompt cache: hints about cost, not
	// about the reply.
	"prompt_cache_retention": ignored,
	"prompt_cache_options":   ignored,
}

// chatRules are the fields of POST /v1/chat/completions.
var chatRules = merged(samplingRules, map[string]fieldRule{
	"messages":    honoured,
	"tools":       honoured,
	"tool_choice": honoured, // "required" and a named function are enforced by a grammar (toolGrammar)

	"response_format":     honoured, // text, json_object, json_schema (grammarOf)
	"grammar":             honoured, // llama-server's GBNF
	"json_schema":         honoured, // llama-server's schema field
	"logprobs":            honoured, // the raw model distribution, as llama-server (see engine.TokenLogProb)
	"top_logprobs":        honoured, // [0, 20], only with logprobs
	"parallel_tool_calls": onlyValues("parallel_tool_calls", "the number of tool calls in a reply is not constrained", `true`),
	// Template variables: passed to the chat template; a name the template
	// never reads is refused (templateVars), since it could change nothing.
	"reasoning_effort":       honoured,
	"chat_template_kwargs":   honoured,
	"enable_thinking":        honoured,
	"reasoning_format":       honoured, // llama-server's: none | deepseek | auto
	"functions":              refuse("functions", "the deprecated functions API is not served; use tools"),
	"function_call":          refuse("function_call", "the deprecated functions API is not served; use tool_choice"),
	"modalities":             onlyValues("modalities", "only text is generated", `["text"]`),
	"audio":                  refuse("audio", "only text is generated"),
	"prediction":             refuse("prediction", "predicted outputs are not used"),
	"web_search_options":     refuse("web_search_options", "there is no web search"),
	"moderation":             refuse("moderation", "replies are not screened by a moderation model"),
	"verbosity":              refuse("verbosity", "the reply length is not steered by a verbosity setting"),
	"continue_final_message": refuse("continue_final_message", "the template always opens a new assistant turn"),
})

// completionRules are the fields of POST /v1/completions.
var completionRules = merged(samplingRules, map[string]fieldRule{
	"prompt":          honoured,
	"logprobs":        honoured, // legacy: the number of alternatives per token, [0, 20]
	"echo":            onlyValues("echo", "the prompt is not echoed", `false`),
	"best_of":         onlyValues("best_of", "one completion is generated per request", `1`),
	"suffix":          refuse("suffix", "insertion (fill-in-the-middle) is not supported"),
	"grammar":         honoured,
	"json_schema":     honoured,
	"response_format": honoured,
})

func merged(a, b map[string]fieldRule) map[string]fieldRule {
	m := make(map[string]fieldRule, len(a)+len(b))
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// checkFields gives every top-level field of body its fate: a field not in
// rules, or a value its rule refuses, is a 400 naming the field. A null
// value is the same as an absent field. Fields are checked in sorted order
// so the error for a body with several refused fields is deterministic.
func checkFields(body []byte, rules map[string]fieldRule) *apiError {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return invalid("", "malformed JSON: %v", err)
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw := bytes.TrimSpace(top[k])
		if string(raw) == "null" {
			continue
		}
		r, ok := rules[k]
		if !ok {
			return invalid(k, "unknown field %q: this server does not implement it, so it refuses the request rather than ignore it", k)
		}
		if r.check != nil {
			if e := r.check(raw); e != nil {
				return e
			}
		}
	}
	return nil
}

// The llama-server utility endpoints' fields.
var (
	tokenizeRules = map[string]fieldRule{
		"content": honoured, "add_special": honoured, "parse_special": honoured, "with_pieces": honoured,
	}
	detokenizeRules    = map[string]fieldRule{"tokens": honoured}
	applyTemplateRules = map[string]fieldRule{"messages": honoured, "tools": honoured}
)
