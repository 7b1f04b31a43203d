package chat

import (
	"fmt"
	"strings"
	"unicode"
)

// ReasoningFormat says what happens to a reply's thinking (the text of
// reasoning models such as Qwen3 and DeepSeek-R1 between <think> and
// </think>), with llama-server's names for its --reasoning-format.
type ReasoningFormat int

const (
	// ReasoningAuto: split thinking out when the chat template is a
	// reasoning model's (it writes <think>, or it is gpt-oss's harmony,
	// whose analysis channel is the thinking), leave replies alone
	// otherwise. llama-server's default.
	ReasoningAuto ReasoningFormat = iota
	// ReasoningNone: thinking stays in the content, tags included.
	ReasoningNone
	// ReasoningDeepSeek: a reply that opens with <think> has its
	// thinking split out, whatever the template.
	ReasoningDeepSeek
)

// Thinking markers, DeepSeek-R1's and Qwen3's.
const (
	ThinkOpen  = "<think>"
	ThinkClose = "</think>"
)

// ParseReasoningFormat reads llama-server's names: none, deepseek, auto.
func ParseReasoningFormat(s string) (ReasoningFormat, error) {
	switch s {
	case "auto", "":
		return ReasoningAuto, nil
	case "none":
		return ReasoningNone, nil
	case "deepseek":
		return ReasoningDeepSeek, nil
	}
	return ReasoningAuto, fmt.Errorf("reasoning format %q: must be none, deepseek or auto", s)
}

func (f ReasoningFormat) String() string {
	switch f {
	case ReasoningNone:
		return "none"
	case ReasoningDeepSeek:
		return "deepseek"
	}
	return "auto"
}

// Splits says whether replies of template t are split under f.
func (f ReasoningFormat) Splits(t *Template) bool {
	switch f {
	case ReasoningNone:
		return false
	case ReasoningDeepSeek:
		return true
	}
	return t != nil && (strings.Contains(t.src, ThinkOpen) || t.Harmony())
}

// ThinkingForcedOpen says whether a rendered prompt leaves the model inside
// its thinking: the generation prompt ends with <think> (DeepSeek-R1's
// template does, as Qwen3's can), so the reply starts with thoughts and no
// opening tag. llama.cpp calls this thinking_forced_open.
func ThinkingForcedOpen(prompt string) bool {
	return strings.HasSuffix(strings.TrimRightFunc(prompt, unicode.IsSpace), ThinkOpen)
}

type reasoningState int

const (
	rsStart   reasoningState = iota // before the reply's first non-space text
	rsInside                        // inside <think>…</think>
	rsAfter                         // just after </think>: leading space is dropped
	rsContent                       // the answer
)

// ReasoningStream splits a reply being generated into reasoning and
// content, as llama.cpp's try_parse_reasoning does: thinking is recognised
// only at the very start of the reply (after whitespace), or from the start
// when the prompt left it open; it runs to </think> (or to the end of a
// reply cut short); whitespace around the thoughts and before the answer is
// dropped. A <think> later in the answer is content. Text that could be the
// start of a tag is held back until it is known, so tags never leak into
// either side even when split across tokens.
type ReasoningStream struct {
	st   reasoningState
	buf  string // held text
	sent bool   // reasoning text was returned (leading space is then kept)
}

// NewReasoningStream starts a stream; forcedOpen when the prompt ended
// inside the thinking (ThinkingForcedOpen).
func NewReasoningStream(forcedOpen bool) *ReasoningStream {
	if forcedOpen {
		return &ReasoningStream{st: rsInside}
	}
	return &ReasoningStream{}
}

// Push adds generated text and returns what is known to be reasoning and
// content.
func (r *ReasoningStream) Push(text string) (reasoning, content string) {
	r.buf += text
	var rb, cb strings.Builder
	for {
		switch r.st {
		case rsStart:
			t := strings.TrimLeftFunc(r.buf, unicode.IsSpace)
			if t == "" || strings.HasPrefix(ThinkOpen, t) {
				return rb.String(), cb.String() // could still open
			}
			if rest, ok := strings.CutPrefix(t, ThinkOpen); ok {
				r.buf, r.st = rest, rsInside
				continue
			}
			r.st = rsContent
		case rsInside:
			if !r.sent {
				r.buf = strings.TrimLeftFunc(r.buf, unicode.IsSpace)
			}
			if i := strings.Index(r.buf, ThinkClose); i >= 0 {
				rb.WriteString(strings.TrimRightFunc(r.buf[:i], unicode.IsSpace))
				r.buf, r.st = r.buf[i+len(ThinkClose):], rsAfter
				continue
			}
			// Hold a possible partial tag and trailing space (dropped if
			// the thoughts end there).
			keep := partialSuffix(r.buf, ThinkClose)
			body := r.buf[:len(r.buf)-keep]
			trimmed := strings.TrimRightFunc(body, unicode.IsSpace)
			if trimmed != "" {
				r.sent = true
			}
			rb.WriteString(trimmed)
			r.buf = r.buf[len(trimmed):]
			return rb.String(), cb.String()
		case rsAfter:
			r.buf = strings.TrimLeftFunc(r.buf, unicode.IsSpace)
			if r.buf == "" {
				return rb.String(), cb.String()
			}
			r.st = rsContent
		case rsContent:
			cb.WriteString(r.buf)
			r.buf = ""
			return rb.String(), cb.String()
		}
	}
}

// Finish returns the text still held at the end of the reply. Thoughts
// cut short (no </think>) stay reasoning; a reply that was only the start
// of a tag is content.
func (r *ReasoningStream) Finish() (reasoning, content string) {
	b := r.buf
	r.buf = ""
	switch r.st {
	case rsInside:
		return strings.TrimRightFunc(b, unicode.IsSpace), ""
	case rsStart, rsContent:
		return "", b
	}
	return "", ""
}

// partialSuffix is the length of the longest suffix of s that is a proper
// prefix of tag.
func partialSuffix(s, tag string) int {
	for k := min(len(tag)-1, len(s)); k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return k
		}
	}
	return 0
}
