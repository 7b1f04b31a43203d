package chat

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestBuiltins(t *testing.T) {
	want := []string{"chatml", "gemma", "llama3", "mistral", "phi3", "qwen2.5"}
	if got := Builtins(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Builtins() = %v, want %v", got, want)
	}
	for _, n := range want {
		if _, err := Builtin(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := Builtin("nope"); !errors.Is(err, ErrTemplate) {
		t.Errorf("unknown builtin: %v", err)
	}
	tm, err := Resolve("chatml", nil, nil, Limits{})
	if err != nil || tm.Name() != "chatml" {
		t.Fatalf("Resolve(chatml): %v", err)
	}
	_, err = Resolve("/does/not/exist.jinja", nil, func(string) ([]byte, error) { return nil, errors.New("missing") }, Limits{})
	if err == nil || !strings.Contains(err.Error(), "neither a built-in") {
		t.Errorf("Resolve(missing file): %v", err)
	}
}

func TestParseMessages(t *testing.T) {
	for _, c := range []struct {
		in      string
		content string
		null    bool
		err     string
	}{
		{in: `[{"role":"user","content":"hi"}]`, content: "hi"},
		{in: `[{"role":"assistant","content":null,"tool_calls":[]}]`, null: true},
		{in: `[{"role":"assistant"}]`, null: true},
		{in: `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`, content: "a\nb"},
		{in: `[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]`, err: "not supported"},
		{in: `[{"content":"x"}]`, err: "role is missing"},
		{in: `[{"role":"user","content":5}]`, err: "content"},
		{in: `{"role":"user"}`, err: "array"},
		{in: `[1]`, err: "object"},
	} {
		ms, err := ParseMessages([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || len(ms) != 1 || ms[0].Content != c.content || ms[0].NullContent != c.null {
			t.Errorf("%s: %+v, %v", c.in, ms, err)
		}
	}
}

func TestLimits(t *testing.T) {
	msgs := []Message{{Role: "user", Content: "x"}}
	for _, c := range []struct {
		name, src, err string
		lim            Limits
	}{
		{"source", strings.Repeat("a", 100), "limit", Limits{MaxSource: 10}},
		{"output", "{% for m in messages %}{{ m.content * 100 }}{% endfor %}", "limit", Limits{MaxOutput: 50}},
		{"range", "{% for i in range(1000000000000) %}x{% endfor %}", "range", Limits{}},
		{"range budget", "{% for i in range(600) %}{% for j in range(600) %}{% endfor %}{% endfor %}", "range", Limits{MaxRange: 1000}},
		{"recursion", "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "itself", Limits{}},
		{"mutual recursion", "{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}", "itself", Limits{}},
		{"raise", "{{ raise_exception('nope: ' + messages[0].role) }}", "nope: user", Limits{}},
		{"syntax", "{% for %}", "", Limits{}},
		{"repeat literal", "{{ 'x' * 1000000000 }}", "repeat count", Limits{}},
		{"repeat literal first", "{{ 1_000_000_000 * messages[0].content }}", "repeat count", Limits{}},
		{"repeat literal parenthesised", "{{ messages[0].content * (100000) }}", "repeat count", Limits{MaxOutput: 1000}},
		{"time", "{% for a in 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz' %}{% for b in 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz' %}{% for c in 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz' %}{% for d in 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz' %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}", "longer than", Limits{RenderTime: 20 * time.Millisecond}},
	} {
		tm, err := Compile(c.name, c.src, c.lim)
		if err == nil {
			_, err = tm.Render(msgs, Options{})
		}
		if err == nil || !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err %v, want ErrTemplate containing %q", c.name, err, c.err)
		}
	}
	// Non-recursive macros calling each other are fine.
	tm, err := Compile("macros", "{% macro a(x) %}[{{ x }}]{% endmacro %}{% macro b(x) %}{{ a(x) }}{{ a(x) }}{% endmacro %}{{ b(messages[0].content) }}", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tm.Render(msgs, Options{}); err != nil || got != "[x][x]" {
		t.Errorf("macros: %q, %v", got, err)
	}
}

// A render past its time limit is abandoned: its next range() fails, so a
// loop calling range stops at once; one that does not call range keeps
// running, and meanwhile every Render of that template fails at once
// instead of starting another runaway.
func TestRunawayRender(t *testing.T) {
	long := strings.Repeat("abcdefghij", 100) // 1000 characters
	lim := Limits{RenderTime: 20 * time.Millisecond, MaxRange: 1 << 30}
	slow := []Message{{Role: "user", Content: "slow"}}
	fast := []Message{{Role: "user", Content: "fast"}}
	waitFast := func(t *testing.T, tm *Template, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			out, err := tm.Render(fast, Options{})
			if err == nil {
				if out != "ok" {
					t.Fatalf("fast render %q", out)
				}
				return time.Since(start)
			}
			if !strings.Contains(err.Error(), "still running") {
				t.Fatalf("fast render: %v", err)
			}
			if time.Since(start) > within {
				t.Fatalf("the runaway render was still running after %v", within)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Run("without range", func(t *testing.T) {
		src := "{% if messages[0].content == 'slow' %}{% for a in '" + long + "' %}{% for b in '" + long + "' %}{% endfor %}{% endfor %}{% endif %}ok"
		tm, err := Compile("runaway", src, lim)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tm.Render(slow, Options{}); err == nil || !strings.Contains(err.Error(), "longer than") {
			t.Fatalf("slow render: %v", err)
		}
		if _, err := tm.Render(fast, Options{}); err == nil || !strings.Contains(err.Error(), "still running") {
			t.Errorf("render during the runaway: %v, want the still-running error", err)
		}
		waitFast(t, tm, 2*time.Minute) // a million iterations: it ends by itself
	})
	t.Run("with range", func(t *testing.T) {
		// Ten million iterations unless range() stops it.
		src := "{% if messages[0].content == 'slow' %}{% for a in '" + strings.Repeat(long, 10) + "' %}{% for b in range(1000) %}{% endfor %}{% endfor %}{% endif %}ok"
		tm, err := Compile("runaway", src, lim)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tm.Render(slow, Options{}); err == nil || !strings.Contains(err.Error(), "longer than") {
			t.Fatalf("slow render: %v", err)
		}
		waitFast(t, tm, 5*time.Second)
	})
}

// FuzzRender compiles and renders arbitrary templates: errors are fine,
// panics, hangs and unbounded output are not.
func FuzzRender(f *testing.F) {
	for _, n := range Builtins() {
		b, _ := builtinFS.ReadFile("templates/" + n + ".jinja")
		f.Add(string(b), "hello")
	}
	f.Add("{{ 'a' * -1 }}", "x")
	f.Add("{{ messages[99].content }}{{ x.y.z() }}", "x")
	f.Add("{% set ns = namespace(a=1) %}{% set ns.a = ns.a + 1 %}{{ ns.a | tojson }}", "x")
	f.Add("{{ (messages | first).content[::-1] | trim | upper }}", " y ")
	lim := Limits{MaxSource: 4096, MaxOutput: 1 << 16, MaxRange: 1 << 12, RenderTime: time.Second}
	f.Fuzz(func(t *testing.T, src, content string) {
		tm, err := Compile("fuzz", src, lim)
		if err != nil {
			return
		}
		msgs := []Message{{Role: "system", Content: "s"}, {Role: "user", Content: content}, {Role: "assistant", NullContent: true}}
		out, err := tm.Render(msgs, Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>", Tools: []byte(`[{"type":"function"}]`)})
		if err == nil && len(out) > lim.MaxOutput {
			t.Fatalf("output of %d bytes passed the %d limit", len(out), lim.MaxOutput)
		}
		if err != nil && !errors.Is(err, ErrTemplate) {
			t.Fatalf("error does not wrap ErrTemplate: %v", err)
		}
	})
}
