package chat

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Every mutation that could store a container into itself is rejected at
// Compile; the ways templates in the wild use namespaces and lists stay
// accepted. The rejected ones would otherwise kill the process: the engine
// prints cyclic values by unbounded recursion (a stack overflow), which the
// fuzzer found (testdata/fuzz/FuzzRender/d346728ff041db60).
func TestContainerCycles(t *testing.T) {
	lim := Limits{MaxSource: 4096, MaxOutput: 1 << 16, MaxRange: 1 << 12, RenderTime: time.Second}
	rejected := []string{
		"{% set ns = namespace(a=1) %}{% set ns.a = ns %}{{ ns.a }}",
		"{% set ns = namespace(a=1) %}{%set ns.a = ns\x94\x94 %}{{ ns.a | tojson }}",
		"{% set a = namespace(x=1) %}{% set b = namespace(y=a) %}{% set a.x = b %}{{ a }}",
		"{% set ns = namespace(a=1) %}{% set ns.a = namespace(b=ns) %}{{ ns }}",
		"{% set ns = namespace(a=1) %}{% set ns.a = [ns] %}{{ ns }}",
		"{% set ns = namespace(a=1) %}{% set l = [ns] %}{% set ns.a = l %}{{ ns }}",
		"{% set ns = namespace(a=1) %}{% for x in [ns] %}{% set ns.a = x %}{% endfor %}{{ ns }}",
		"{% set ns = namespace(a=1) %}{% macro f(v) %}{% set ns.a = v %}{% endmacro %}{{ f(ns) }}{{ ns }}",
		"{% set l = [1] %}{% set _ = l.append(l) %}{{ l }}",
		"{% set l = [1] %}{% set _ = l.insert(0, l) %}{{ l }}",
		"{% set d = {'a': 1} %}{% set _ = d.update({'x': d}) %}{{ d }}",
		"{% set ns = namespace(l=[]) %}{% set _ = ns.l.append(ns.l) %}{{ ns }}",
		"{% set ns = namespace(l=[]) %}{% set _ = ns.l.append(ns) %}{{ ns }}",
		"{% for m in messages %}{% set _ = m.update({'self': m}) %}{% endfor %}{{ messages }}",
		"text with a quote ' {% set ns = namespace(a=1) %}{% set ns.a = ns %}{{ ns }} '",
	}
	for _, src := range rejected {
		_, err := Compile("t", src, lim)
		if err == nil || !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), "cycle") {
			t.Errorf("%q: Compile = %v, want a cycle rejection", src, err)
		}
	}
	accepted := []string{
		"{% set ns = namespace(system='', turns=0, last=none) %}{% for m in messages %}{% set ns.system = m.content | trim %}{% set ns.turns = ns.turns + 1 %}{% set ns.last = m['role'] %}{% endfor %}{{ ns.turns }}",
		"{% set ns = namespace(found=false) %}{% for message in messages %}{% if message.role == 'system' %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }}",
		"{% set ns = namespace(l=[]) %}{% for m in messages %}{% set _ = ns.l.append(1) %}{% endfor %}{{ ns.l | length }}",
		"{% set ns = namespace(x='') %}{% set ns.x = 'ns is ' ~ (ns.x is string) %}{# set ns.x = ns #}{{ ns.x }}",
		"{{ 'set ns.a = ns' }}{% set ns = namespace(a='{% set ns.a = ns %}') %}{{ ns.a }}",
	}
	for _, src := range accepted {
		tm, err := Compile("t", src, lim)
		if err != nil {
			t.Errorf("%q: Compile = %v, want accepted", src, err)
			continue
		}
		if _, err := tm.Render([]Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}, Options{}); err != nil {
			t.Errorf("%q: Render = %v", src, err)
		}
	}
}
