package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/memvanta/memvanta/core/chat"
	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/native/serve"
	"github.com/memvanta/memvanta/native/telemetry"
)

// chatIO is where chat reads from and whether it is a person at a terminal.
type chatIO struct {
	in          io.Reader
	interactive bool
	// interrupts delivers Ctrl-C: it stops the reply being generated (not
	// the program). nil: none.
	interrupts <-chan os.Signal
}

func runChat(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	st, err := os.Stdin.Stat()
	interactive := err == nil && st.Mode()&os.ModeCharDevice != 0
	// Ctrl-C belongs to the current reply, so the command-wide context
	// (cancelled by SIGINT and SIGTERM) is replaced by one that only
	// SIGTERM ends.
	intr := make(chan os.Signal, 1)
	signal.Notify(intr, os.Interrupt)
	defer signal.Stop(intr)
	term, stop := signal.NotifyContext(context.WithoutCancel(ctx), syscall.SIGTERM)
	defer stop()
	return chatMain(term, args, chatIO{in: os.Stdin, interactive: interactive, interrupts: intr}, stdout, stderr)
}

// conversation is the chat state: the messages so far and the exact tokens
// the model has seen, so a new turn only computes its new tokens.
type conversation struct {
	tok      *tokenizer.Tokenizer
	tmpl     *chat.Template
	system   string
	tools    json.RawMessage // --json input's tools, rendered into every prompt
	msgs     []chat.Message
	lastText string  // the rendered prompt of the last turn
	history  []int32 // its tokens followed by the reply's
}

func (cv *conversation) reset() {
	cv.msgs = cv.msgs[:0]
	if cv.system != "" {
		cv.msgs = append(cv.msgs, chat.Message{Role: "system", Content: cv.system})
	}
	cv.lastText, cv.history = "", nil
}

// dropOldest forgets the oldest turn after the system message: its first
// message and those up to the next user message. It reports whether there
// was one.
func (cv *conversation) dropOldest() bool {
	i := 0
	if len(cv.msgs) > 0 && cv.msgs[0].Role == "system" {
		i = 1
	}
	if i >= len(cv.msgs) {
		return false
	}
	j := i + 1
	for j < len(cv.msgs) && cv.msgs[j].Role != "user" {
		j++
	}
	cv.msgs = append(cv.msgs[:i], cv.msgs[j:]...)
	cv.lastText, cv.history = "", nil
	return true
}

func (cv *conversation) render(msgs []chat.Message, gen bool) (string, error) {
	if cv.tmpl.Harmony() {
		msgs = chat.HarmonyHistory(msgs)
	}
	return cv.tmpl.Render(msgs, chat.Options{AddGenerationPrompt: gen,
		BOS: cv.tok.TokenText(cv.tok.BOS()), EOS: cv.tok.TokenText(cv.tok.EOS()), Tools: cv.tools})
}

// prompt returns the tokens for the conversation plus msg, reusing the
// tokens of earlier turns as they were processed when the template renders
// the earlier conversation as a prefix of the new one (the usual case);
// otherwise the whole conversation is re-tokenized (the engine still
// reuses the longest matching prefix).
func (cv *conversation) prompt(msg chat.Message) ([]int32, error) {
	msgs := append(cv.msgs, msg)
	full, err := cv.render(msgs, true)
	if err != nil {
		return nil, err
	}
	if cv.history != nil {
		if past, err := cv.render(cv.msgs, false); err == nil && strings.HasPrefix(full, past) && strings.HasPrefix(past, cv.lastText) {
			// past = last prompt + reply + the template's end of turn.
			reply := cv.msgs[len(cv.msgs)-1].Content
			rest := past[len(cv.lastText):]
			if strings.HasPrefix(rest, reply) {
				tail := rest[len(reply):] + full[len(past):]
				ids, err := cv.tok.EncodeChecked(tail, false, true)
				if err != nil {
					return nil, err
				}
				cv.lastText = full
				return append(append([]int32{}, cv.history...), ids...), nil
			}
		}
	}
	ids, err := encodeChat(cv.tok, full)
	if err != nil {
		return nil, err
	}
	cv.lastText = full
	return ids, nil
}

// encodeChat tokenizes a rendered conversation: special-token text becomes
// special tokens, and BOS is added as the metadata says unless the template
// wrote it.
func encodeChat(tok *tokenizer.Tokenizer, text string) ([]int32, error) {
	ids, err := tok.EncodeChecked(text, false, true)
	if err != nil {
		return nil, err
	}
	if tok.AddBOS() && (len(ids) == 0 || ids[0] != tok.BOS()) {
		ids = append([]int32{tok.BOS()}, ids...)
	}
	return ids, nil
}

func chatMain(ctx context.Context, args []string, cio chatIO, stdout, stderr io.Writer) int {
	c := newCLI("chat", "chat -m MODEL [--system TEXT] [--chat-template NAME|FILE] [flags]",
		"Chat with the model. At a terminal: type a message, the reply streams back; /reset starts\n"+
			"over, /exit or Ctrl-D quits, Ctrl-C stops the reply. The conversation's KV cache is kept\n"+
			"between turns, so each turn computes only its new tokens. From a pipe: each input line is\n"+
			"one user message. --json: standard input is a JSON array of messages (OpenAI format, or\n"+
			"{\"messages\": [...], \"tools\": [...]}) and one JSON document with the reply is printed\n"+
			"(with tool_calls when the reply calls a tool).")
	var mf modelFlags
	var sf samplingFlags
	var gf grammarFlags
	var spf specFlags
	var shf shiftFlags
	var system, template string
	var n int
	var jsonIn bool
	c.group("Chat")
	c.stringVar(&system, "sys|system", "TEXT", "", "system message")
	c.stringVar(&template, "chat-template", "NAME|FILE", "", "chat template: a built-in name ("+strings.Join(chat.Builtins(), ", ")+") or a Jinja file (default: the model's own, else "+chat.Fallback+")")
	c.intVar(&n, "n|predict|n-predict", "N", -1, "tokens per reply at most (-1 = until end of turn or the context is full)")
	c.boolVar(&jsonIn, "json", "read a JSON messages array from standard input, print one JSON reply")
	sf.register(c)
	gf.register(c)
	mf.register(c, "context size in tokens (0 = the model's training context)")
	spf.register(c)
	shf.register(c, true)
	if done, st := c.parse(args, stdout, stderr, false); done {
		return st
	}
	if err := mf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if err := spf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if err := shf.validate(); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	if n < -1 || n == 0 {
		return c.usageErr(stderr, "-n %d: must be -1 or >= 1", n)
	}
	if _, err := sf.build(0, nil); err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	// Every reply is constrained by the grammar (llama-cli's behaviour).
	gram, err := gf.build()
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memvanta chat: "+format+"\n", a...)
		return exitRuntime
	}
	l, status := openModel(ctx, &mf, stderr)
	if status != exitOK {
		return status
	}
	defer l.Close()
	spec, closeDraft, status := spf.open(ctx, &mf, l, stderr)
	if status != exitOK {
		return status
	}
	defer closeDraft()
	tok := l.tok
	smp, err := sf.build(l.cfg.NVocab, tok.IsEOG)
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	tmpl, err := chat.Resolve(template, l.rt.File(), os.ReadFile, chat.Limits{})
	if err != nil {
		return fail("%v", err)
	}
	// gpt-oss replies in harmony: the analysis channel is its thinking,
	// shown on stderr (dimmed at a terminal), the final channel the
	// answer; a grammar holds for the final message only.
	harmony := tmpl.Harmony()
	if harmony && gram != nil {
		if gram, err = gf.buildWith(chat.HarmonyFinalGrammar); err != nil {
			return c.usageErr(stderr, "%v", err)
		}
	}
	eng, err := engine.New(engine.PerSeq{M: l.m}, tok, engine.Options{Slots: 1, Queue: 1, Spec: spec})
	if err != nil {
		return fail("%v", err)
	}
	engCtx, stopEngine := context.WithCancel(ctx)
	engDone := make(chan struct{})
	go func() { _ = eng.Run(engCtx); close(engDone) }()
	defer func() { stopEngine(); <-engDone }()

	bias, err := smp.biasMap()
	if err != nil {
		return c.usageErr(stderr, "%v", err)
	}
	seed := smp.params.Seed
	var keep []int32        // marker tokens replies keep (tool calls with --json, harmony's)
	format := chat.ToolNone // the tool-call format replies are parsed in
	if harmony {
		keep = serve.MarkerTokens(tok, chat.HarmonyMarkers())
	}
	request := func(ids []int32) engine.Request {
		p := smp.params
		p.Seed = seed
		seed++ // each reply draws a fresh stream, reproducible from --seed
		r := engine.Request{Prompt: ids, Sample: p, MaxTokens: max(n, 0), LogitBias: bias, IgnoreEOS: sf.ignoreEOS, Keep: keep, Grammar: gram}
		shf.apply(&r)
		return r
	}
	cv := &conversation{tok: tok, tmpl: tmpl, system: system}
	cv.reset()
	out := bufio.NewWriter(stdout)

	// reply generates the assistant's answer to the conversation plus msg,
	// streaming it through emit (harmony's thinking apart); Ctrl-C stops
	// it (the partial reply is kept). The text returned is the answer: a
	// harmony reply's final channel.
	var hr harmonyReply
	reply := func(msg chat.Message, emit func(reasoning, content string)) (string, engine.Event, error) {
		ids, err := cv.prompt(msg)
		// With context shift a reply may run past the context, and the
		// next turn's conversation not fit: the oldest turns go (the
		// system message stays), as node-llama-cpp's chat does.
		for err == nil && shf.enabled() && len(ids) >= eng.SlotCtx() && cv.dropOldest() {
			ids, err = cv.prompt(msg)
		}
		if err != nil {
			return "", engine.Event{}, err
		}
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		h, err := eng.Submit(rctx, request(ids))
		if err != nil {
			return "", engine.Event{}, err
		}
		var text strings.Builder
		var gen []int32
		var hs *chat.HarmonyStream
		if harmony {
			hr = harmonyReply{}
			hs = chat.NewHarmonyStream(chat.HarmonyOptions{Reasoning: true, Tools: format == chat.ToolHarmony})
		}
		// add routes generated text: through the harmony split, or as is.
		add := func(p chat.HarmonyPiece) {
			hr.reasoning += p.Reasoning
			text.WriteString(p.Content)
			if emit != nil && (p.Reasoning != "" || p.Content != "") {
				emit(p.Reasoning, p.Content)
			}
		}
		t0 := time.Now()
		watched := make(chan struct{})
		defer close(watched)
		go func() {
			select {
			case <-cio.interrupts:
				cancel() // the final event follows, with the partial reply
			case <-watched:
			}
		}()
		for {
			ev, err := h.Next(context.Background())
			if err != nil {
				return text.String(), ev, err
			}
			if hs != nil {
				add(hs.Push(ev.Text))
			} else {
				add(chat.HarmonyPiece{Content: ev.Text})
			}
			gen = append(gen, ev.Tokens...)
			if ev.Done {
				if hs != nil {
					p, calls, _ := hs.Finish()
					add(p)
					hr.calls = calls
				}
				cv.msgs = append(cv.msgs, msg, chat.Message{Role: "assistant", Content: text.String()})
				cv.history = append(ids, gen...)
				if ev.Err != nil && !errors.Is(ev.Err, context.Canceled) {
					return text.String(), ev, ev.Err
				}
				u := ev.Usage
				fmt.Fprintf(stderr, "[prompt %d tok, %d reused, %d computed | reply %d tok, %.2f tok/s | peak RSS %.1f MiB | stop %s]\n",
					u.PromptTokens, u.CachedTokens, u.PromptTokens-u.CachedTokens, u.CompletionTokens,
					float64(u.CompletionTokens)/max(time.Since(t0).Seconds()-u.FirstToken.Seconds()+1e-9, 1e-9),
					mib(telemetry.PeakRSS()), stopName(ev))
				return text.String(), ev, nil
			}
		}
	}

	if jsonIn {
		b, err := io.ReadAll(io.LimitReader(cio.in, 64<<20))
		if err != nil {
			return fail("reading standard input: %v", err)
		}
		raw := b
		var obj struct {
			Messages json.RawMessage `json:"messages"`
			Tools    json.RawMessage `json:"tools"`
		}
		if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "{") {
			if err := json.Unmarshal(b, &obj); err != nil {
				return fail("standard input: %v", err)
			}
			raw = obj.Messages
			var tools []json.RawMessage
			if err := json.Unmarshal(obj.Tools, &tools); len(obj.Tools) > 0 && string(obj.Tools) != "null" && err != nil {
				return fail("standard input: tools must be an array: %v", err)
			}
			if len(tools) > 0 {
				cv.tools, format = obj.Tools, tmpl.ToolFormat()
				keep = serve.MarkerTokens(tok, format.Markers())
			}
		}
		msgs, err := chat.ParseMessages(raw)
		if err != nil || len(msgs) == 0 {
			return fail("standard input must be a JSON array of messages (or {\"messages\": [...]}): %v", err)
		}
		cv.msgs = msgs[:len(msgs)-1]
		text, ev, err := reply(msgs[len(msgs)-1], nil)
		if err != nil {
			return fail("%v", err)
		}
		msg := map[string]any{"role": "assistant", "content": text}
		finish := stopName(ev)
		if hr.reasoning != "" {
			msg["reasoning_content"] = hr.reasoning
		}
		content, calls := text, hr.calls
		if !harmony {
			content, calls = chat.ParseToolCalls(format, text)
		}
		if len(calls) > 0 {
			msg["content"], msg["tool_calls"], finish = content, openAIToolCalls(calls), "tool_calls"
			if content == "" {
				msg["content"] = nil
			}
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{
			"message":       msg,
			"finish_reason": finish,
			"usage": map[string]int{"prompt_tokens": ev.Usage.PromptTokens, "cached_tokens": ev.Usage.CachedTokens,
				"completion_tokens": ev.Usage.CompletionTokens},
		})
		if err := out.Flush(); err != nil {
			return fail("writing the output: %v", err)
		}
		return exitOK
	}

	if cio.interactive {
		fmt.Fprintf(stderr, "memvanta chat: %s, template %s. /reset starts over, /exit or Ctrl-D quits, Ctrl-C stops a reply.\n",
			mf.path, tmpl.Name())
	}
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(cio.in)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		readErr <- sc.Err()
		close(lines)
	}()
	for {
		if cio.interactive {
			fmt.Fprint(stderr, "> ")
		}
		var line string
		var ok bool
		select {
		case line, ok = <-lines:
		case <-cio.interrupts:
			fmt.Fprintln(stderr, "\n(/exit or Ctrl-D to quit)")
			continue
		case <-ctx.Done():
			return exitInterrupted
		}
		if !ok {
			if err := <-readErr; err != nil {
				return fail("reading standard input: %v", err)
			}
			if cio.interactive {
				fmt.Fprintln(stderr)
			}
			return exitOK
		}
		switch strings.TrimSpace(line) {
		case "":
			continue
		case "/exit", "/quit":
			return exitOK
		case "/reset":
			cv.reset()
			fmt.Fprintln(stderr, "(conversation reset)")
			continue
		}
		thinking := false
		_, ev, err := reply(chat.Message{Role: "user", Content: line}, func(reasoning, content string) {
			if reasoning != "" {
				if cio.interactive {
					reasoning = "\x1b[2m" + reasoning + "\x1b[0m"
				}
				fmt.Fprint(stderr, reasoning)
				thinking = true
			}
			if content != "" {
				if thinking {
					fmt.Fprintln(stderr)
					thinking = false
				}
				out.WriteString(content)
				_ = out.Flush()
			}
		})
		out.WriteString("\n")
		if err := out.Flush(); err != nil {
			if closedPipe(err) {
				return exitPipe
			}
			return fail("writing the output: %v", err)
		}
		if err != nil {
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return exitInterrupted
			}
			return fail("%v", err)
		}
		if ev.Finish == "length" && n < 0 {
			fmt.Fprintln(stderr, "memvanta chat: the context is full; /reset to start over (or raise -c)")
		}
	}
}

func stopName(ev engine.Event) string {
	switch {
	case ev.Err != nil && errors.Is(ev.Err, context.Canceled):
		return "interrupted"
	case ev.Err != nil:
		return "error"
	}
	return ev.Finish
}

// openAIToolCalls is OpenAI's message.tool_calls for calls.
func openAIToolCalls(calls []chat.ToolCall) []map[string]any {
	out := make([]map[string]any, len(calls))
	for i, c := range calls {
		id := c.ID
		if id == "" {
			var b [12]byte
			_, _ = rand.Read(b[:])
			id = "call_" + hex.EncodeToString(b[:])
		}
		out[i] = map[string]any{"id": id, "type": "function", "function": map[string]string{"name": c.Name, "arguments": c.Arguments}}
	}
	return out
}

// harmonyReply is what a harmony reply holds besides its answer.
type harmonyReply struct {
	reasoning string
	calls     []chat.ToolCall
}
