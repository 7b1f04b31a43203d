package chat

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/ardanlabs/jinja"
)

// Recursive macros. The engine has no call-depth limit, and a Go stack
// overflow cannot be recovered, so a macro that calls itself (directly or
// through other macros) is never compiled as written. Templates that
// recurse on purpose (gpt-oss's harmony template renders a tool's JSON
// schema with render_typescript_type, which calls itself for nested
// types) are compiled with each recursive macro unrolled instead: copies
// NAME__r0 .. NAME__r{N-1}, the copy at depth d calling the depth-d+1
// copies, and a last copy NAME__rN that raises "calls itself more than N
// levels deep". Every copy first calls a counter that fails the render
// after maxMacroCalls calls (or once the render is abandoned), so a macro
// that calls itself several times per level cannot make exponential work
// either. Calls outside the macros reach the depth-0 copies.

// macroDepth is how deep a recursive macro may nest: JSON schemas in tool
// definitions are a few levels deep.
const macroDepth = 16

// maxMacroCalls bounds the calls of unrolled macros in one render.
const maxMacroCalls = 100000

// macroCounter is the name of the counting function unrolled macros call.
const macroCounter = "__memvanta_macro_call"

// macroSpan is one macro definition in the source.
type macroSpan struct {
	name       string
	start, end int    // the whole {% macro %} ... {% endmacro %}
	open       string // the opening tag from "{%" to "%}" inclusive
	body       string
	close      string // the endmacro tag
	trimAfter  bool   // the opening tag ends with "-%}"
	afterName  int    // offset in open just after the name
	bodyOffset int
}

var macroTagEnd = regexp.MustCompile(`[-+]?%\}`)

func findMacros(src string) ([]macroSpan, error) {
	defs := macroDef.FindAllStringSubmatchIndex(src, -1)
	var out []macroSpan
	for _, d := range defs {
		m := macroSpan{name: src[d[2]:d[3]], start: d[0]}
		e := macroTagEnd.FindStringIndex(src[d[1]:])
		if e == nil {
			return nil, fmt.Errorf("macro %s: unterminated tag", m.name)
		}
		openEnd := d[1] + e[1]
		m.open, m.afterName = src[d[0]:openEnd], d[3]-d[0]
		m.trimAfter = strings.HasSuffix(m.open, "-%}")
		ce := macroEnd.FindStringIndex(src[openEnd:])
		if ce == nil {
			return nil, fmt.Errorf("macro %s: no endmacro", m.name)
		}
		closeStart := openEnd + ce[0]
		te := macroTagEnd.FindStringIndex(src[openEnd+ce[1]:])
		if te == nil {
			return nil, fmt.Errorf("macro %s: unterminated endmacro", m.name)
		}
		m.end = openEnd + ce[1] + te[1]
		m.body, m.close, m.bodyOffset = src[openEnd:closeStart], src[closeStart:m.end], openEnd
		out = append(out, m)
	}
	for i := 1; i < len(out); i++ {
		if out[i].start < out[i-1].end {
			return nil, fmt.Errorf("macro %s is defined inside macro %s", out[i].name, out[i-1].name)
		}
	}
	return out, nil
}

// callRe matches a call of macro name.
func callRe(name string) *regexp.Regexp {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `(\s*\()`)
}

// recursiveMacros returns which macros can call themselves: the call graph
// takes each macro's body text and looks for calls of any macro name
// (conservatively: a name in a string literal counts as a call).
func recursiveMacros(ms []macroSpan) []bool {
	n := len(ms)
	calls := make([][]bool, n)
	for i, m := range ms {
		calls[i] = make([]bool, n)
		for j, o := range ms {
			calls[i][j] = callRe(o.name).MatchString(m.body)
		}
	}
	// Transitive closure (templates have a handful of macros).
	for k := 0; k < n; k++ {
		for i := 0; i < n; i++ {
			if calls[i][k] {
				for j := 0; j < n; j++ {
					calls[i][j] = calls[i][j] || calls[k][j]
				}
			}
		}
	}
	rec := make([]bool, n)
	for i := range rec {
		rec[i] = calls[i][i]
	}
	return rec
}

// unrollRecursion returns src with its recursive macros unrolled to
// macroDepth levels (src itself when none recurses), and whether it did.
func unrollRecursion(src string) (string, bool, error) {
	ms, err := findMacros(src)
	if err != nil || len(ms) == 0 {
		return src, false, err
	}
	rec := recursiveMacros(ms)
	any := false
	for _, r := range rec {
		any = any || r
	}
	if !any {
		return src, false, nil
	}
	for _, m := range ms {
		if strings.Contains(m.name, "__r") {
			return "", false, fmt.Errorf("macro %s: the name is reserved", m.name)
		}
	}
	// rename rewrites calls of the recursive macros in text to depth d.
	rename := func(text string, d int) string {
		for i, m := range ms {
			if rec[i] {
				text = callRe(m.name).ReplaceAllString(text, fmt.Sprintf("%s__r%d$1", m.name, d))
			}
		}
		return text
	}
	var b strings.Builder
	last := 0
	for i, m := range ms {
		// Text between macros (and inside non-recursive ones) calls depth 0.
		b.WriteString(rename(src[last:m.start], 0))
		last = m.end
		if !rec[i] {
			b.WriteString(rename(src[m.start:m.end], 0))
			continue
		}
		sig := m.open[m.afterName:]
		count := "{% if " + macroCounter + "() %}{% endif %}"
		if m.trimAfter {
			count = "{%- if " + macroCounter + "() -%}{%- endif -%}"
		}
		for d := 0; d < macroDepth; d++ {
			b.WriteString(m.open[:m.afterName] + fmt.Sprintf("__r%d", d) + sig)
			b.WriteString(count)
			b.WriteString(rename(m.body, d+1))
			b.WriteString(m.close)
		}
		b.WriteString(m.open[:m.afterName] + fmt.Sprintf("__r%d", macroDepth) + sig)
		b.WriteString(fmt.Sprintf("{{ raise_exception('macro %s calls itself more than %d levels deep') }}", m.name, macroDepth))
		b.WriteString(m.close)
	}
	b.WriteString(rename(src[last:], 0))
	return b.String(), true, nil
}

// macroCalls is the counter unrolled macros call: it fails the render after
// maxMacroCalls calls, or once the render has been abandoned.
func macroCalls(abandoned *atomic.Bool) jinja.Value {
	left := maxMacroCalls
	return jinja.NewCallable(macroCounter, func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
		if abandoned.Load() {
			return jinja.Undefined(), errors.New("macro call after the render was abandoned")
		}
		if left--; left < 0 {
			return jinja.Undefined(), fmt.Errorf("more than %d calls of recursive macros in one render", maxMacroCalls)
		}
		return jinja.NewBool(false), nil
	})
}
