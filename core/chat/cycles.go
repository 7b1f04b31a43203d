package chat

import (
	"fmt"
	"regexp"
	"strings"
)

// A template can mutate values: `{% set ns.attr = expr %}` stores into a
// namespace, and list.append/extend/insert and dict.update store into a
// list or dict. Storing a container into itself, directly or through
// others (`{% set ns.a = ns %}`, `{% set _ = l.append(l) %}`), makes a
// cycle, and github.com/ardanlabs/jinja prints, JSON-encodes and compares
// values by recursing into them without a depth limit: the goroutine's
// stack overflows, which is fatal to the whole process (recover cannot
// catch it), whatever the render time limit. The engine has no hook, so
// checkContainerCycles rejects, from the source, every mutation that could
// close a cycle. It is conservative, as checkMacroRecursion is:
//
//   - the value of `set X.attr = value` may not name a template-local
//     variable bare (a set/for/macro/with/import name not followed by `.`,
//     `[` or `(`) nor call namespace(); attribute reads like ns.count + 1
//     or m.content stay allowed: by induction no stored value holds a
//     namespace or a template-built container, so reading one cannot bring
//     one in;
//   - the arguments of append/extend/insert/update/setdefault may not
//     reference a template-local variable at all (bare or through
//     attributes: `ns.l.append(ns.l)` closes a cycle) nor call namespace().
//
// Chat templates in the wild set namespace flags, counters and strings
// (`set ns.system = message.content`) and rarely mutate lists; those stay
// accepted. Names inside string literals and comments are ignored.
func checkContainerCycles(src string) error {
	code := stripJinjaStrings(src)
	locals := templateLocals(code)
	for _, m := range setAttr.FindAllStringSubmatchIndex(code, -1) {
		expr := code[m[4]:m[5]]
		if name, ok := refersTo(expr, locals, true); ok {
			return fmt.Errorf("{%% set %s = … %%} stores %s: storing a template value into a namespace could make a cycle, which the engine cannot print", code[m[2]:m[3]], name)
		}
	}
	for _, m := range mutator.FindAllStringSubmatchIndex(code, -1) {
		args, ok := callArgs(code[m[1]:])
		if !ok {
			continue // unbalanced: the engine will reject the source
		}
		if name, ok := refersTo(args, locals, false); ok {
			return fmt.Errorf(".%s(%s): storing a template value into a list or dict could make a cycle, which the engine cannot print", code[m[2]:m[3]], name)
		}
	}
	return nil
}

var (
	setAttr   = regexp.MustCompile(`\{%[-+]?\s*set\s+([A-Za-z_][A-Za-z0-9_]*\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)\s*=(.*?)[-+]?%\}`)
	mutator   = regexp.MustCompile(`\.\s*(append|extend|insert|update|setdefault)\s*\(`)
	localDefs = []*regexp.Regexp{
		regexp.MustCompile(`\{%[-+]?\s*set\s+([A-Za-z_][A-Za-z0-9_,\s]*?)\s*(?:=|[-+]?%\})`),
		regexp.MustCompile(`\{%[-+]?\s*for\s+([A-Za-z_][A-Za-z0-9_,\s]*?)\s+in\b`),
		regexp.MustCompile(`\{%[-+]?\s*macro\s+[A-Za-z_][A-Za-z0-9_]*\s*\(([^)]*)\)`),
		regexp.MustCompile(`\{%[-+]?\s*with\s+([^%]*?)[-+]?%\}`),
		regexp.MustCompile(`\bimport\s+[^%]*?\bas\s+([A-Za-z_][A-Za-z0-9_]*)`),
	}
	ident = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// templateLocals is every name the template binds: set targets, loop
// variables, macro parameters, with and import names, plus caller.
func templateLocals(code string) map[string]bool {
	locals := map[string]bool{"caller": true, "varargs": true, "kwargs": true}
	for _, re := range localDefs {
		for _, m := range re.FindAllStringSubmatch(code, -1) {
			for _, part := range strings.Split(m[1], ",") {
				// macro parameters may have defaults, with may bind x = expr
				name := strings.TrimSpace(part)
				if i := strings.IndexByte(name, '='); i >= 0 {
					name = strings.TrimSpace(name[:i])
				}
				if ident.MatchString(name) && ident.FindString(name) == name {
					locals[name] = true
				}
			}
		}
	}
	return locals
}

// refersTo reports the first template-local name expr mentions (bare only,
// if bareOnly: not followed by `.`, `[` or `(`), or namespace( anywhere.
// Names after `|` or `is` (filters, tests) and attribute names (after `.`)
// are not references.
func refersTo(expr string, locals map[string]bool, bareOnly bool) (string, bool) {
	for _, m := range ident.FindAllStringIndex(expr, -1) {
		name := expr[m[0]:m[1]]
		before := strings.TrimRight(expr[:m[0]], " \t\r\n")
		if strings.HasSuffix(before, ".") || strings.HasSuffix(before, "|") || strings.HasSuffix(before, " is") || before == "is" {
			continue
		}
		after := strings.TrimLeft(expr[m[1]:], " \t\r\n")
		if name == "namespace" && strings.HasPrefix(after, "(") {
			return "namespace(…)", true
		}
		if !locals[name] {
			continue
		}
		if bareOnly && (strings.HasPrefix(after, ".") || strings.HasPrefix(after, "[") || strings.HasPrefix(after, "(")) {
			continue
		}
		return name, true
	}
	return "", false
}

// callArgs returns the text up to the parenthesis closing an open one at
// the start of s (s follows the opening parenthesis).
func callArgs(s string) (string, bool) {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return s[:i], true
			}
		}
	}
	return "", false
}

// stripJinjaStrings keeps only the code of src: text outside {{ }} and
// {% %} tags, {# comments #} and the string literals inside tags become
// spaces (the length is kept), so names in them are not taken for
// references, and quotes in plain text cannot hide code from the checks.
func stripJinjaStrings(src string) string {
	b := []byte(src)
	blank := func(from, to int) {
		for k := from; k < to && k < len(b); k++ {
			b[k] = ' '
		}
	}
	i := 0
	for i < len(src) {
		open := strings.IndexByte(src[i:], '{')
		if open < 0 || i+open+1 >= len(src) {
			blank(i, len(src))
			break
		}
		o := i + open
		switch src[o+1] {
		case '#':
			end := strings.Index(src[o+2:], "#}")
			stop := len(src)
			if end >= 0 {
				stop = o + 2 + end + 2
			}
			blank(i, stop)
			i = stop
		case '{', '%':
			blank(i, o)
			closer := byte('}')
			if src[o+1] == '%' {
				closer = '%'
			}
			k := o + 2
			for k < len(src) {
				c := src[k]
				if c == '\'' || c == '"' {
					j := k + 1
					for j < len(src) && src[j] != c {
						if src[j] == '\\' {
							j++
						}
						j++
					}
					blank(k+1, j)
					k = j + 1
					continue
				}
				if c == closer && k+1 < len(src) && src[k+1] == '}' {
					k += 2
					break
				}
				k++
			}
			i = k
		default:
			blank(i, o+1)
			i = o + 1
		}
	}
	return string(b)
}
