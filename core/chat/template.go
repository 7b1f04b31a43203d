package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ardanlabs/jinja"
)

// Limits bound what a template may cost. Zero fields take the defaults.
type Limits struct {
	MaxSource  int           // template bytes (default 1 MiB)
	MaxOutput  int           // rendered bytes (default 8 MiB)
	MaxRange   int           // elements all range() calls of one render may make together (default 1<<20)
	RenderTime time.Duration // wall-clock limit of one render (default 2 s)
}

func (l Limits) withDefaults() Limits {
	if l.MaxSource <= 0 {
		l.MaxSource = 1 << 20
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = 8 << 20
	}
	if l.MaxRange <= 0 {
		l.MaxRange = 1 << 20
	}
	if l.RenderTime <= 0 {
		l.RenderTime = 2 * time.Second
	}
	return l
}

// ErrTemplate wraps every compile and render failure, including a template's
// own raise_exception.
var ErrTemplate = errors.New("chat template")

// Template is a compiled chat template, safe for concurrent Render calls.
//
// Bounds. github.com/ardanlabs/jinja (v1.8.0; later releases need Go 1.27)
// has no context, step or output limit: Render runs to completion in the
// calling goroutine, building its output in memory, and `str * n` is
// strings.Repeat. So what this package bounds, it bounds from outside:
// the source size; recursion (rejected at Compile); a container stored into
// itself (the engine prints and compares values recursively, so a cycle
// overflows the goroutine stack, which kills the process: the mutations
// that could close one are rejected at Compile, see checkContainerCycles);
// `*` with an integer
// literal above MaxOutput (rejected at Compile: the literal "repeat a string
// 1e9 times"); range() (a budget per render); the output (checked after the
// render); and time: a render still running at RenderTime returns an error
// to its caller and is abandoned, its next range() call fails so it stops
// there, and until it has stopped every further Render of the template
// fails at once, so one bad template costs at most one runaway render at a
// time however many requests use it. What cannot be bounded from outside is
// a render that grows a value without calling range() or a literal `*`
// (a loop over a string literal doubling a namespace string): that one
// runaway render runs until it ends or exhausts memory. Templates come from
// the model file or the operator (--chat-template), never from a request.
type Template struct {
	name string
	src  string
	t    *jinja.Template
	lim  Limits

	mu      sync.Mutex
	runaway int // abandoned renders still running

	argsOnce sync.Once
	objArgs  bool // see objectArgs
	unrolled bool // recursive macros were unrolled (recursion.go)
}

// Name says where the template came from ("gguf", a built-in name or a path).
func (t *Template) Name() string { return t.name }

// Source is the template text.
func (t *Template) Source() string { return t.src }

// Compile parses a template. name is only used in errors.
func Compile(name, src string, lim Limits) (tt *Template, err error) {
	lim = lim.withDefaults()
	if len(src) > lim.MaxSource {
		return nil, fmt.Errorf("%w %s: %d bytes exceeds the %d-byte limit", ErrTemplate, name, len(src), lim.MaxSource)
	}
	exec, unrolled, err := unrollRecursion(src)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrTemplate, name, err)
	}
	if err := checkMacroRecursion(exec); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrTemplate, name, err)
	}
	if err := checkRepeatLiterals(src, lim.MaxOutput); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrTemplate, name, err)
	}
	if err := checkContainerCycles(src); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrTemplate, name, err)
	}
	defer func() {
		if r := recover(); r != nil {
			tt, err = nil, fmt.Errorf("%w %s: engine panic while compiling: %v", ErrTemplate, name, r)
		}
	}()
	t, err := jinja.Compile(exec)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrTemplate, name, err)
	}
	return &Template{name: name, src: src, t: t, lim: lim, unrolled: unrolled}, nil
}

// Options are the variables a template reads besides the messages.
type Options struct {
	AddGenerationPrompt bool
	BOS, EOS            string          // bos_token, eos_token texts
	Tools               []byte          // JSON array of tool definitions, or nil
	Extra               map[string]bool // extra boolean switches (e.g. enable_thinking)
	// Now is the time strftime_now formats (llama.cpp's template helper,
	// which gpt-oss's template calls for its "Current date"); zero means
	// the current time.
	Now time.Time
	// Vars are further variables as JSON values (a request's
	// chat_template_kwargs, reasoning_effort); they override Extra and the
	// variables above but not messages, tools or range.
	Vars map[string]json.RawMessage
}

// Reads says whether the template's source names variable name, so a
// caller can refuse a variable the template cannot use instead of passing
// it to no effect.
func (t *Template) Reads(name string) bool {
	re, err := regexp.Compile(`\b` + regexp.QuoteMeta(name) + `\b`)
	return err == nil && re.MatchString(t.src)
}

// Render produces the prompt text for msgs.
func (t *Template) Render(msgs []Message, o Options) (string, error) {
	return t.render(msgs, o, hasToolCalls(msgs) && t.objectArgs())
}

// hasToolCalls says whether a message may carry tool calls.
func hasToolCalls(msgs []Message) bool {
	for _, m := range msgs {
		if bytes.Contains(m.Fields, []byte(`"tool_calls"`)) {
			return true
		}
	}
	return false
}

// objectArgs says whether the template writes a tool call's arguments
// with tojson (Qwen 2.5's, Llama 3.1's and Mistral's do), so it needs them
// as an object: OpenAI clients send them back as a JSON string, which such
// a template would write as an escaped string the model never produced.
// It is probed once, as llama.cpp's minja does, by rendering a call whose
// arguments are a string and looking for the escaped form.
func (t *Template) objectArgs() bool {
	t.argsOnce.Do(func() {
		probe := []Message{{Role: "user", Content: "x"}, {Role: "assistant", NullContent: true,
			Fields: json.RawMessage(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"probe_fn","arguments":"{\"probe_arg\": 1}"}}]}`)}}
		out, err := t.render(probe, Options{}, false)
		t.objArgs = err == nil && strings.Contains(out, `\"probe_arg\"`)
	})
	return t.objArgs
}

func (t *Template) render(msgs []Message, o Options, objArgs bool) (string, error) {
	data := map[string]jinja.Value{
		"add_generation_prompt": jinja.NewBool(o.AddGenerationPrompt),
		"bos_token":             jinja.NewString(o.BOS),
		"eos_token":             jinja.NewString(o.EOS),
	}
	for k, v := range o.Extra {
		data[k] = jinja.NewBool(v)
	}
	for k, raw := range o.Vars {
		if k == "messages" || k == "tools" || k == "range" {
			continue
		}
		v, err := jsonValue(raw)
		if err != nil {
			return "", fmt.Errorf("%w %s: variable %s: %w", ErrTemplate, t.name, k, err)
		}
		data[k] = v
	}
	list := make([]jinja.Value, 0, len(msgs))
	for i, m := range msgs {
		v, err := messageValue(m, objArgs)
		if err != nil {
			return "", fmt.Errorf("%w %s: messages[%d]: %w", ErrTemplate, t.name, i, err)
		}
		list = append(list, v)
	}
	data["messages"] = jinja.NewList(list)
	if len(o.Tools) > 0 {
		tv, err := jsonValue(o.Tools)
		if err != nil {
			return "", fmt.Errorf("%w %s: tools: %w", ErrTemplate, t.name, err)
		}
		if !tv.IsList() {
			return "", fmt.Errorf("%w %s: tools must be a JSON array", ErrTemplate, t.name)
		}
		data["tools"] = tv
	}
	abandoned := new(atomic.Bool)
	data["range"] = budgetRange(t.lim.MaxRange, abandoned)
	if t.unrolled {
		data[macroCounter] = macroCalls(abandoned)
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	data["strftime_now"] = strftimeNow(now)

	t.mu.Lock()
	if t.runaway > 0 {
		t.mu.Unlock()
		return "", fmt.Errorf("%w %s: an earlier render exceeded the %v limit and is still running; no new render starts until it stops", ErrTemplate, t.name, t.lim.RenderTime)
	}
	t.mu.Unlock()
	type result struct {
		s   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: fmt.Errorf("engine panic: %v", p)}
			}
			// Under mu, so the timeout below sees either the result or
			// a goroutine that will still decrement runaway.
			t.mu.Lock()
			if abandoned.Load() {
				t.runaway--
			}
			done <- r // buffered
			t.mu.Unlock()
		}()
		r.s, r.err = t.t.RenderValues(data)
	}()
	timer := time.NewTimer(t.lim.RenderTime)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return "", fmt.Errorf("%w %s: %w", ErrTemplate, t.name, r.err)
		}
		if len(r.s) > t.lim.MaxOutput {
			return "", fmt.Errorf("%w %s: rendered %d bytes, over the %d-byte limit", ErrTemplate, t.name, len(r.s), t.lim.MaxOutput)
		}
		return r.s, nil
	case <-timer.C:
		t.mu.Lock()
		if len(done) == 0 { // still running: abandon it
			abandoned.Store(true)
			t.runaway++
		}
		t.mu.Unlock()
		return "", fmt.Errorf("%w %s: rendering took longer than %v", ErrTemplate, t.name, t.lim.RenderTime)
	}
}

// messageValue is the dict a template sees for m: the client's fields in
// their order, with role and the normalised content set, and with
// objArgs, tool-call arguments given as a JSON string holding an object
// replaced by that object.
func messageValue(m Message, objArgs bool) (jinja.Value, error) {
	d := jinja.NewDict()
	if len(m.Fields) > 0 {
		v, err := jsonValue(m.Fields)
		if err != nil {
			return d, err
		}
		if !v.IsDict() {
			return d, errors.New("not a JSON object")
		}
		d = v
	}
	if objArgs {
		argsToObjects(d)
	}
	d.AsDict().Set("role", jinja.NewString(m.Role))
	if m.NullContent {
		d.AsDict().Set("content", jinja.None())
	} else {
		d.AsDict().Set("content", jinja.NewString(m.Content))
	}
	return d, nil
}

// budgetRange is Python's range() with a budget shared by every call of one
// render, so range(10**12) is an error instead of an endless allocation.
// Once the render is abandoned (past its time limit) every call fails, so
// the render stops at its next range().
func budgetRange(budget int, abandoned *atomic.Bool) jinja.Value {
	left := int64(budget)
	return jinja.NewCallable("range", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		if abandoned.Load() {
			return jinja.Undefined(), errors.New("range: render abandoned after its time limit")
		}
		var a [3]int64
		for i, v := range args {
			if i >= 3 || !v.IsInt() {
				return jinja.Undefined(), errors.New("range: expects 1 to 3 integer arguments")
			}
			a[i] = v.AsInt()
		}
		var start, stop, step int64
		switch len(args) {
		case 1:
			start, stop, step = 0, a[0], 1
		case 2:
			start, stop, step = a[0], a[1], 1
		case 3:
			start, stop, step = a[0], a[1], a[2]
		default:
			return jinja.Undefined(), errors.New("range: expects 1 to 3 integer arguments")
		}
		if step == 0 {
			return jinja.Undefined(), errors.New("range: step must not be zero")
		}
		var n int64
		switch {
		case step > 0 && stop > start:
			n = (stop-start-1)/step + 1
		case step < 0 && stop < start:
			n = (start-stop-1)/(-step) + 1
		}
		if n < 0 || n > left {
			return jinja.Undefined(), fmt.Errorf("range: more than %d elements in one render", budget)
		}
		left -= n
		items := make([]jinja.Value, n)
		for i := range items {
			items[i] = jinja.NewInt(start + int64(i)*step)
		}
		return jinja.NewList(items), nil
	})
}

// repeatLiteral finds an integer literal on either side of a `*` (not `**`).
var repeatLiteral = regexp.MustCompile(`(?:[^*]\*\s*\(?\s*([0-9][0-9_]*))|(?:([0-9][0-9_]*)\s*\)?\s*\*(?:[^*]|$))`)

// checkRepeatLiterals rejects `*` with an integer literal above maxOut: a
// string repeated that often is over the output limit anyway, and the
// engine would allocate it whole first. Counts computed at render time are
// not seen (see Template).
func checkRepeatLiterals(src string, maxOut int) error {
	for _, m := range repeatLiteral.FindAllStringSubmatch(src, -1) {
		lit := m[1] + m[2]
		n, err := strconv.ParseInt(strings.ReplaceAll(lit, "_", ""), 10, 64)
		if err != nil || n > int64(maxOut) {
			return fmt.Errorf("multiplication by %s: a repeat count above the %d-byte output limit", lit, maxOut)
		}
	}
	return nil
}

var (
	macroDef = regexp.MustCompile(`\{%[-+]?\s*macro\s+([A-Za-z_][A-Za-z0-9_]*)`)
	macroEnd = regexp.MustCompile(`\{%[-+]?\s*endmacro`)
)

// checkMacroRecursion rejects templates whose macros can call themselves:
// it takes each macro's body text (definition to the next endmacro) and
// looks for calls of any macro name, then for a cycle in that graph. It is
// conservative (a name in a string literal counts as a call).
func checkMacroRecursion(src string) error {
	defs := macroDef.FindAllStringSubmatchIndex(src, -1)
	if len(defs) == 0 {
		return nil
	}
	names := make([]string, len(defs))
	bodies := make([]string, len(defs))
	for i, d := range defs {
		names[i] = src[d[2]:d[3]]
		rest := src[d[1]:]
		if e := macroEnd.FindStringIndex(rest); e != nil {
			rest = rest[:e[0]]
		}
		bodies[i] = rest
	}
	calls := make([][]int, len(defs))
	for i, b := range bodies {
		for j, n := range names {
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + `\s*\(`).MatchString(b) {
				calls[i] = append(calls[i], j)
			}
		}
	}
	state := make([]int, len(defs)) // 0 new, 1 on stack, 2 done
	var visit func(i int) error
	visit = func(i int) error {
		state[i] = 1
		for _, j := range calls[i] {
			if state[j] == 1 {
				return fmt.Errorf("macro %s can call itself (recursion is not allowed)", names[j])
			}
			if state[j] == 0 {
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		state[i] = 2
		return nil
	}
	for i := range defs {
		if state[i] == 0 {
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// trimName shortens a path for messages.
func trimName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// argsToObjects replaces, in a message dict, each tool_calls[i].function
// .arguments that is a string holding a JSON object by the object.
func argsToObjects(d jinja.Value) {
	tcs, ok := d.AsDict().Get("tool_calls")
	if !ok || !tcs.IsList() {
		return
	}
	for _, tc := range tcs.AsList().Items {
		if !tc.IsDict() {
			continue
		}
		fn, ok := tc.AsDict().Get("function")
		if !ok || !fn.IsDict() {
			continue
		}
		args, ok := fn.AsDict().Get("arguments")
		if !ok || !args.IsString() {
			continue
		}
		if v, err := jsonValue([]byte(args.AsString())); err == nil && v.IsDict() {
			fn.AsDict().Set("arguments", v)
		}
	}
}
