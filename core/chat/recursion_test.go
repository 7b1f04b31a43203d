package chat

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Recursive macros run to the unrolled depth and fail past it with the
// reason; a macro fanning out at every level hits the call budget instead
// of running for an exponential time; non-recursive templates compile as
// written.
func TestRecursiveMacros(t *testing.T) {
	msgs := []Message{{Role: "user", Content: "x"}}
	render := func(src string) (string, error) {
		tm, err := Compile("t", src, Limits{})
		if err != nil {
			return "", err
		}
		return tm.Render(msgs, Options{})
	}
	// Depth n nests n brackets: fine up to the unrolled depth.
	nest := "{%- macro n(k) -%}{%- if k > 0 -%}[{{ n(k - 1) }}]{%- endif -%}{%- endmacro -%}"
	got, err := render(nest + "{{ n(5) }}")
	if err != nil || got != "[[[[[]]]]]" {
		t.Errorf("depth 5: %q, %v", got, err)
	}
	// n(15) runs 16 levels of n (k = 15 .. 0), the most there are.
	if got, err := render(nest + "{{ n(15) }}"); err != nil || got != strings.Repeat("[", 15)+strings.Repeat("]", 15) {
		t.Errorf("16 levels: %q, %v", got, err)
	}
	if _, err := render(nest + "{{ n(16) }}"); err == nil || !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), "macro n calls itself more than 16 levels deep") {
		t.Errorf("17 levels: %v", err)
	}
	// Mutual recursion through two macros.
	mutual := "{% macro a(k) %}a{% if k > 0 %}{{ b(k - 1) }}{% endif %}{% endmacro %}{% macro b(k) %}b{% if k > 0 %}{{ a(k - 1) }}{% endif %}{% endmacro %}"
	if got, err := render(mutual + "{{ a(3) }}"); err != nil || got != "abab" {
		t.Errorf("mutual: %q, %v", got, err)
	}
	// Three calls per level, 15 levels: 3^15 calls without the budget.
	fan := "{% macro f(k) %}{% if k > 0 %}{{ f(k - 1) }}{{ f(k - 1) }}{{ f(k - 1) }}{% endif %}{% endmacro %}{{ f(15) }}"
	start := time.Now()
	if _, err := render(fan); err == nil || !strings.Contains(err.Error(), "calls of recursive macros") {
		t.Errorf("fan-out: %v", err)
	}
	t.Logf("fan-out stopped after %v", time.Since(start))
	// A reserved name is refused.
	if _, err := render("{% macro x__r1() %}{{ x__r1() }}{% endmacro %}"); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("reserved name: %v", err)
	}
	// Whitespace control of the macro's tags is kept.
	ws := "{%- macro w(k) -%}\n  <{{ k }}>{% if k > 0 %}{{ w(k - 1) }}{% endif %}\n{%- endmacro -%}\n{{ w(2) }}"
	if got, err := render(ws); err != nil || got != "<2><1><0>" {
		t.Errorf("whitespace: %q, %v", got, err)
	}
}

// strftime_now formats Options.Now with C strftime's directives.
func TestStrftimeNow(t *testing.T) {
	now := time.Date(2025, 8, 5, 14, 7, 9, 0, time.UTC)
	for _, c := range []struct{ f, want string }{
		{"%Y-%m-%d", "2025-08-05"},
		{"%d %B %Y", "05 August 2025"},
		{"%a %b %e %H:%M:%S %y", "Tue Aug  5 14:07:09 25"},
		{"%I%p %j %F %T %%", "02PM 217 2025-08-05 14:07:09 %"},
	} {
		tm, err := Compile("t", `{{ strftime_now("`+c.f+`") }}`, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tm.Render(nil, Options{Now: now}); err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.f, got, err, c.want)
		}
	}
	tm, _ := Compile("t", `{{ strftime_now("%Q") }}`, Limits{})
	if _, err := tm.Render(nil, Options{Now: now}); err == nil || !strings.Contains(err.Error(), "unsupported directive %Q") {
		t.Errorf("%%Q: %v", err)
	}
}
