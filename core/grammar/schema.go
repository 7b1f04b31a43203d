package grammar

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrSchema is wrapped by every JSON Schema conversion error.
var ErrSchema = errors.New("json schema")

// Bounds of a schema conversion (schemas come from clients).
const (
	MaxSchemaBytes = 1 << 20
	maxSchemaRules = 4096
	maxEnum        = 4096
)

// spaceRule is llama.cpp's: whitespace the model may put between tokens,
// bounded so it cannot pad forever.
const spaceRule = `| " " | "\n"{1,2} [ \t]{0,20}`

// primitives are the shared rules a schema's rules refer to (the same
// definitions llama.cpp's converter uses, so both accept the same JSON).
var primitives = map[string]struct {
	body string
	deps []string
}{
	"boolean":       {`("true" | "false") space`, nil},
	"decimal-part":  {`[0-9]{1,16}`, nil},
	"integral-part": {`[0] | [1-9] [0-9]{0,15}`, nil},
	"number":        {`("-"? integral-part) ("." decimal-part)? ([eE] [-+]? integral-part)? space`, []string{"integral-part", "decimal-part"}},
	"integer":       {`("-"? integral-part) space`, []string{"integral-part"}},
	"value":         {`object | array | string | number | boolean | null`, []string{"object", "array", "string", "number", "boolean", "null"}},
	"object":        {`"{" space ( string ":" space value ("," space string ":" space value)* )? "}" space`, []string{"string", "value"}},
	"array":         {`"[" space ( value ("," space value)* )? "]" space`, []string{"value"}},
	"uuid":          {`"\"" [0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12} "\"" space`, nil},
	"char":          {`[^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})`, nil},
	"string":        {`"\"" char* "\"" space`, []string{"char"}},
	"null":          {`"null" space`, nil},
	// String formats (the quotes around them are added by the caller).
	"date":       {`[0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [1-2] [0-9] | "3" [0-1] )`, nil},
	"time":       {`([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{3} )? ( "Z" | ( "+" | "-" ) ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )`, nil},
	"date-time":  {`date "T" time`, []string{"date", "time"}},
	"ipv4":       {`ipv4-octet "." ipv4-octet "." ipv4-octet "." ipv4-octet`, []string{"ipv4-octet"}},
	"ipv4-octet": {`"25" [0-5] | "2" [0-4] [0-9] | "1" [0-9] [0-9] | [1-9] [0-9] | [0-9]`, nil},
	// A practical email: a dot-atom local part and a domain with a dot.
	"email":          {`[a-zA-Z0-9!#$%&'*+/=?^_` + "`" + `{|}~-]+ ("." [a-zA-Z0-9!#$%&'*+/=?^_` + "`" + `{|}~-]+)* "@" hostname`, []string{"hostname"}},
	"hostname":       {`hostname-label ("." hostname-label)*`, []string{"hostname-label"}},
	"hostname-label": {`[a-zA-Z0-9] ([a-zA-Z0-9-]{0,61} [a-zA-Z0-9])?`, nil},
}

// stringFormats maps a JSON Schema "format" to the rule its contents match.
var stringFormats = map[string]string{
	"date": "date", "time": "time", "date-time": "date-time", "uuid": "uuid",
	"ipv4": "ipv4", "email": "email", "hostname": "hostname",
}

// SchemaOptions adjust a conversion.
type SchemaOptions struct {
	// Strict is OpenAI's strict mode: an object schema without
	// additionalProperties allows no other properties (in JSON Schema
	// proper, and without Strict, they are allowed).
	Strict bool
}

// FromJSONSchema converts a JSON Schema to GBNF whose root rule matches
// exactly the JSON documents the schema describes (within the supported
// keywords: a keyword that would constrain the output and is not
// supported is an error, never silently dropped).
func FromJSONSchema(schema []byte, opt SchemaOptions) (string, error) {
	if len(schema) > MaxSchemaBytes {
		return "", fmt.Errorf("%w: %d bytes, at most %d", ErrSchema, len(schema), MaxSchemaBytes)
	}
	root, err := decodeOrdered(schema)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrSchema, err)
	}
	c := &converter{root: root, opt: opt, rules: map[string]string{}, refRule: map[string]string{}}
	body, err := c.visit(root, "root", "#")
	if err != nil {
		return "", err
	}
	c.add("root", body)
	return c.render(), nil
}

// FromJSONSchemas converts several schemas into one grammar in which
// schema i's documents are matched by the rule roots[i] (prefix followed by
// i), for grammars that pick a schema by context: a tool call's arguments
// after its name, in formats that write the name outside the JSON. The
// schemas share the primitive rules; each one's local $refs ("#/...")
// resolve within it. The bounds of FromJSONSchema apply to the schemas
// together.
func FromJSONSchemas(schemas [][]byte, prefix string, opt SchemaOptions) (src string, roots []string, err error) {
	total := 0
	for _, s := range schemas {
		total += len(s)
	}
	if total > MaxSchemaBytes {
		return "", nil, fmt.Errorf("%w: %d bytes, at most %d", ErrSchema, total, MaxSchemaBytes)
	}
	c := &converter{opt: opt, rules: map[string]string{}}
	for i, s := range schemas {
		root, err := decodeOrdered(s)
		if err != nil {
			return "", nil, fmt.Errorf("%w: schema %d: %v", ErrSchema, i, err)
		}
		name := sanitize(prefix + strconv.Itoa(i))
		if _, taken := c.rules[name]; taken {
			return "", nil, fmt.Errorf("%w: schema %d: rule name %q is taken (prefix %q)", ErrSchema, i, name, prefix)
		}
		c.root, c.refRule = root, map[string]string{"#": name}
		c.order = append(c.order, name)
		c.rules[name] = "" // reserved while its body is converted
		body, err := c.visit(root, name, "#")
		if err != nil {
			return "", nil, err
		}
		c.rules[name] = body
		roots = append(roots, name)
	}
	return c.render(), roots, nil
}

// Literal is GBNF for the exact text s (a quoted string literal).
func Literal(s string) string { return literal(s) }

type converter struct {
	root    any
	opt     SchemaOptions
	rules   map[string]string
	order   []string
	refRule map[string]string // $ref -> rule name
	visits  int
}

func (c *converter) errf(path, format string, a ...any) error {
	return fmt.Errorf("%w: at %s: %s", ErrSchema, path, fmt.Sprintf(format, a...))
}

func (c *converter) render() string {
	var b strings.Builder
	for _, n := range c.order {
		fmt.Fprintf(&b, "%s ::= %s\n", n, c.rules[n])
	}
	return b.String()
}

// add names a rule body, reusing a rule with the same body (or a numbered
// name when the name is taken by another body).
func (c *converter) add(name, body string) string {
	name = sanitize(name)
	if old, ok := c.rules[name]; !ok || old == body {
		if !ok {
			c.order = append(c.order, name)
		}
		c.rules[name] = body
		return name
	}
	for i := 0; ; i++ {
		n := name + strconv.Itoa(i)
		if old, ok := c.rules[n]; !ok || old == body {
			if !ok {
				c.order = append(c.order, n)
			}
			c.rules[n] = body
			return n
		}
	}
}

func sanitize(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		if r < 128 && isWord(byte(r)) {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	if b.Len() == 0 {
		return "r"
	}
	return b.String()
}

// prim adds a primitive rule and its dependencies, returning its name.
func (c *converter) prim(name string) string {
	if _, ok := c.rules[name]; ok {
		return name
	}
	p := primitives[name]
	c.space()
	c.order = append(c.order, name)
	c.rules[name] = p.body
	for _, d := range p.deps {
		c.prim(d)
	}
	return name
}

func (c *converter) space() {
	if _, ok := c.rules["space"]; !ok {
		c.order = append(c.order, "space")
		c.rules["space"] = spaceRule
	}
}

// literal is GBNF for the exact text s.
func literal(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// constant is GBNF for one JSON value written compactly.
func (c *converter) constant(v any) string {
	c.space()
	return literal(encodeJSON(v)) + " space"
}

func (c *converter) visit(s any, name, path string) (string, error) {
	c.visits++
	if c.visits > maxSchemaRules*4 || len(c.rules) > maxSchemaRules {
		return "", c.errf(path, "the schema needs more than %d rules", maxSchemaRules)
	}
	switch s := s.(type) {
	case bool:
		if s {
			return c.prim("value"), nil
		}
		return "", c.errf(path, "the schema false matches nothing")
	case *object:
		return c.visitObject(s, name, path)
	}
	return "", c.errf(path, "a schema must be an object or a boolean, not %s", encodeJSON(s))
}

// known lists the keywords the converter reads; any other keyword that
// constrains values is refused instead of dropped.
var annotations = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "title": true, "description": true,
	"default": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"$defs": true, "definitions": true, "strict": true, "name": true, "contentMediaType": true,
	"contentEncoding": true,
}

func (c *converter) visitObject(s *object, name, path string) (string, error) {
	for _, k := range s.keys {
		if annotations[k] {
			continue
		}
		switch k {
		case "type", "properties", "required", "additionalProperties", "items", "prefixItems",
			"minItems", "maxItems", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "format",
			"minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
			"nullable", "pattern":
		case "patternProperties", "propertyNames", "minProperties", "maxProperties",
			"uniqueItems", "contains", "minContains", "maxContains", "multipleOf", "not", "if",
			"then", "else", "dependentRequired", "dependentSchemas", "unevaluatedProperties",
			"unevaluatedItems":
			return "", c.errf(path, "keyword %q is not supported (the output could not be guaranteed to satisfy it)", k)
		default:
			// Unknown keywords are annotations in JSON Schema.
		}
	}
	if nb, ok := s.get("nullable"); ok && nb == true {
		inner := &object{vals: map[string]any{}}
		for _, k := range s.keys {
			if k != "nullable" {
				inner.keys = append(inner.keys, k)
				inner.vals[k] = s.vals[k]
			}
		}
		r, err := c.visitObject(inner, name+"-nonnull", path)
		if err != nil {
			return "", err
		}
		return c.add(name+"-nonnull", r) + " | " + c.prim("null"), nil
	}
	if ref, ok := s.get("$ref"); ok {
		rs, ok := ref.(string)
		if !ok {
			return "", c.errf(path, "$ref must be a string")
		}
		return c.ref(rs, path)
	}
	if v, ok := s.get("const"); ok {
		return c.constant(v), nil
	}
	if v, ok := s.get("enum"); ok {
		a, ok := v.([]any)
		if !ok || len(a) == 0 || len(a) > maxEnum {
			return "", c.errf(path, "enum must be an array of 1 to %d values", maxEnum)
		}
		alts := make([]string, len(a))
		for i, e := range a {
			alts[i] = c.constant(e)
		}
		return "(" + strings.Join(alts, " | ") + ")", nil
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if v, ok := s.get(k); ok {
			a, ok := v.([]any)
			if !ok || len(a) == 0 {
				return "", c.errf(path, "%s must be a non-empty array", k)
			}
			alts := make([]string, len(a))
			for i, e := range a {
				r, err := c.visit(e, fmt.Sprintf("%s-%d", name, i), fmt.Sprintf("%s/%s/%d", path, k, i))
				if err != nil {
					return "", err
				}
				alts[i] = c.add(fmt.Sprintf("%s-%d", name, i), r)
			}
			return strings.Join(alts, " | "), nil
		}
	}
	if v, ok := s.get("allOf"); ok {
		merged, err := c.mergeAllOf(v, path)
		if err != nil {
			return "", err
		}
		return c.visitObject(merged, name, path+"/allOf")
	}
	t, hasType := s.get("type")
	if ts, ok := t.([]any); ok {
		alts := make([]string, 0, len(ts))
		for i, tv := range ts {
			one := &object{keys: append([]string(nil), s.keys...), vals: map[string]any{}}
			for k, v := range s.vals {
				one.vals[k] = v
			}
			one.vals["type"] = tv
			r, err := c.visitObject(one, fmt.Sprintf("%s-%d", name, i), path)
			if err != nil {
				return "", err
			}
			alts = append(alts, c.add(fmt.Sprintf("%s-%d", name, i), r))
		}
		if len(alts) == 0 {
			return "", c.errf(path, "type is an empty array")
		}
		return strings.Join(alts, " | "), nil
	}
	if !hasType {
		// Infer the type from the keywords present, as validators do.
		_, props := s.get("properties")
		_, addl := s.get("additionalProperties")
		_, items := s.get("items")
		_, prefix := s.get("prefixItems")
		_, pattern := s.get("pattern")
		switch {
		case pattern:
			t = "string" // as llama.cpp's converter reads an untyped pattern
		case props || addl:
			t = "object"
		case items || prefix:
			t = "array"
		default:
			return c.prim("value"), nil
		}
	}
	switch t {
	case "object":
		return c.object(s, name, path)
	case "array":
		return c.array(s, name, path)
	case "string":
		return c.str(s, name, path)
	case "integer":
		return c.integer(s, path)
	case "number":
		for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
			if _, ok := s.get(k); ok {
				return "", c.errf(path, "%s on a number is not supported (only on integers)", k)
			}
		}
		return c.prim("number"), nil
	case "boolean":
		return c.prim("boolean"), nil
	case "null":
		return c.prim("null"), nil
	}
	return "", c.errf(path, "unknown type %s", encodeJSON(t))
}

func (c *converter) mergeAllOf(v any, path string) (*object, error) {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return nil, c.errf(path, "allOf must be a non-empty array")
	}
	out := &object{vals: map[string]any{}}
	props := &object{vals: map[string]any{}}
	var req []any
	for i, e := range a {
		o, ok := e.(*object)
		if ok {
			if r, isRef := o.get("$ref"); isRef {
				rs, _ := r.(string)
				t, err := c.resolve(rs, path)
				if err != nil {
					return nil, err
				}
				o, ok = t.(*object)
			}
		}
		if !ok {
			return nil, c.errf(fmt.Sprintf("%s/allOf/%d", path, i), "allOf is supported for object schemas only")
		}
		for _, k := range o.keys {
			switch k {
			case "properties":
				po, _ := o.vals[k].(*object)
				for _, pk := range po.keysOrNil() {
					if _, dup := props.vals[pk]; !dup {
						props.keys = append(props.keys, pk)
					}
					props.vals[pk] = po.vals[pk]
				}
			case "required":
				r, _ := o.vals[k].([]any)
				req = append(req, r...)
			case "type", "additionalProperties":
				if _, dup := out.vals[k]; !dup {
					out.keys = append(out.keys, k)
				}
				out.vals[k] = o.vals[k]
			default:
				if !annotations[k] {
					return nil, c.errf(fmt.Sprintf("%s/allOf/%d", path, i), "keyword %q inside allOf is not supported", k)
				}
			}
		}
	}
	out.keys = append(out.keys, "properties", "required")
	out.vals["properties"] = props
	out.vals["required"] = req
	if _, ok := out.vals["type"]; !ok {
		out.keys = append(out.keys, "type")
		out.vals["type"] = "object"
	}
	return out, nil
}

func (o *object) keysOrNil() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// resolve finds the schema a local $ref points to.
func (c *converter) resolve(ref, path string) (any, error) {
	if ref == "#" {
		return c.root, nil
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, c.errf(path, "$ref %q: only local references (#/...) are supported", ref)
	}
	cur := c.root
	for _, part := range strings.Split(ref[2:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case *object:
			next, ok := v.get(part)
			if !ok {
				return nil, c.errf(path, "$ref %q: %q not found", ref, part)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v) {
				return nil, c.errf(path, "$ref %q: index %q out of range", ref, part)
			}
			cur = v[i]
		default:
			return nil, c.errf(path, "$ref %q: cannot descend into %q", ref, part)
		}
	}
	return cur, nil
}

// ref returns the rule for a $ref, converting its target once; a recursive
// schema refers to the rule while it is being defined.
func (c *converter) ref(ref, path string) (string, error) {
	if n, ok := c.refRule[ref]; ok {
		return n, nil
	}
	target, err := c.resolve(ref, path)
	if err != nil {
		return "", err
	}
	base := "ref"
	if i := strings.LastIndexByte(ref, '/'); i >= 0 && i+1 < len(ref) {
		base = ref[i+1:]
	} else if ref == "#" {
		base = "root"
	}
	if ref == "#" {
		c.refRule[ref] = "root"
		return "root", nil
	}
	name := sanitize(base)
	if _, taken := c.rules[name]; taken || name == "root" || primitives[name].body != "" || name == "space" {
		for i := 0; ; i++ {
			if _, taken := c.rules[name+"-ref"+strconv.Itoa(i)]; !taken {
				name = name + "-ref" + strconv.Itoa(i)
				break
			}
		}
	}
	c.refRule[ref] = name
	c.order = append(c.order, name)
	c.rules[name] = "" // reserved while its body is converted
	body, err := c.visit(target, name, ref)
	if err != nil {
		return "", err
	}
	c.rules[name] = body
	return name, nil
}

func (c *converter) intKeyword(s *object, k, path string, lo, hi int) (int, bool, error) {
	v, ok := s.get(k)
	if !ok {
		return 0, false, nil
	}
	n, isNum := v.(json.Number)
	i, err := strconv.Atoi(string(n))
	if !isNum || err != nil || i < lo || i > hi {
		return 0, false, c.errf(path, "%s must be an integer in [%d, %d], not %s", k, lo, hi, encodeJSON(v))
	}
	return i, true, nil
}

// repetition is item repeated min..max times (max < 0: unbounded),
// separated by sep when sep is not empty.
func repetition(item string, lo, hi int, sep string) string {
	if hi == 0 {
		return ""
	}
	if lo == 0 && hi == 1 {
		return "(" + item + ")?"
	}
	if sep == "" {
		switch {
		case lo == 1 && hi < 0:
			return "(" + item + ")+"
		case lo == 0 && hi < 0:
			return "(" + item + ")*"
		case hi < 0:
			return fmt.Sprintf("(%s){%d,}", item, lo)
		}
		return fmt.Sprintf("(%s){%d,%d}", item, lo, hi)
	}
	restHi := hi - 1
	if hi < 0 {
		restHi = -1
	}
	r := item + " " + repetition(sep+" "+item, max(lo-1, 0), restHi, "")
	if lo == 0 {
		r = "(" + r + ")?"
	}
	return r
}

func (c *converter) array(s *object, name, path string) (string, error) {
	lo, _, err := c.intKeyword(s, "minItems", path, 0, MaxRepetition-1)
	if err != nil {
		return "", err
	}
	hi, hasHi, err := c.intKeyword(s, "maxItems", path, 0, MaxRepetition-1)
	if err != nil {
		return "", err
	}
	if !hasHi {
		hi = -1
	} else if hi < lo {
		return "", c.errf(path, "maxItems %d is below minItems %d", hi, lo)
	}
	c.space()
	if pv, ok := s.get("prefixItems"); ok {
		a, ok := pv.([]any)
		if !ok {
			return "", c.errf(path, "prefixItems must be an array")
		}
		if it, ok := s.get("items"); ok && it != false {
			return "", c.errf(path, "items after prefixItems is not supported (only items: false)")
		}
		if hasHi || lo > 0 {
			return "", c.errf(path, "minItems/maxItems with prefixItems is not supported")
		}
		parts := make([]string, len(a))
		for i, e := range a {
			r, err := c.visit(e, fmt.Sprintf("%s-tuple-%d", name, i), fmt.Sprintf("%s/prefixItems/%d", path, i))
			if err != nil {
				return "", err
			}
			parts[i] = c.add(fmt.Sprintf("%s-tuple-%d", name, i), r)
		}
		return `"[" space ` + strings.Join(parts, ` "," space `) + ` "]" space`, nil
	}
	item := c.prim("value")
	if it, ok := s.get("items"); ok {
		r, err := c.visit(it, name+"-item", path+"/items")
		if err != nil {
			return "", err
		}
		item = c.add(name+"-item", r)
	}
	return `"[" space ` + repetition(item, lo, hi, `"," space`) + ` "]" space`, nil
}

func (c *converter) str(s *object, name, path string) (string, error) {
	c.space()
	if pv, ok := s.get("pattern"); ok {
		pat, ok := pv.(string)
		if !ok {
			return "", c.errf(path, "pattern must be a string")
		}
		for _, k := range []string{"format", "minLength", "maxLength"} {
			if _, ok := s.get(k); ok {
				return "", c.errf(path, "%s with pattern is not supported (the grammar could not enforce both)", k)
			}
		}
		body, err := patternRule(pat)
		if err != nil {
			return "", c.errf(path, "%v", err)
		}
		return `"\"" ` + c.add(name+"-pattern", body) + ` "\"" space`, nil
	}
	if f, ok := s.get("format"); ok {
		fs, _ := f.(string)
		if rule, known := stringFormats[fs]; known {
			for _, k := range []string{"minLength", "maxLength"} {
				if _, ok := s.get(k); ok {
					return "", c.errf(path, "%s with format %q is not supported", k, fs)
				}
			}
			if rule == "uuid" {
				return c.prim("uuid"), nil
			}
			return `"\"" ` + c.prim(rule) + ` "\"" space`, nil
		}
		// Other formats are annotations (JSON Schema's default).
	}
	lo, _, err := c.intKeyword(s, "minLength", path, 0, MaxRepetition-1)
	if err != nil {
		return "", err
	}
	hi, hasHi, err := c.intKeyword(s, "maxLength", path, 0, MaxRepetition-1)
	if err != nil {
		return "", err
	}
	if !hasHi && lo == 0 {
		return c.prim("string"), nil
	}
	if !hasHi {
		hi = -1
	} else if hi < lo {
		return "", c.errf(path, "maxLength %d is below minLength %d", hi, lo)
	}
	ch := c.prim("char")
	return `"\"" ` + repetition(ch, lo, hi, "") + ` "\"" space`, nil
}

func (c *converter) object(s *object, name, path string) (string, error) {
	c.space()
	var props *object
	if pv, ok := s.get("properties"); ok {
		if props, ok = pv.(*object); !ok {
			return "", c.errf(path, "properties must be an object")
		}
	}
	required := map[string]bool{}
	if rv, ok := s.get("required"); ok {
		a, ok := rv.([]any)
		if !ok {
			return "", c.errf(path, "required must be an array of names")
		}
		for _, r := range a {
			rs, ok := r.(string)
			if !ok {
				return "", c.errf(path, "required must be an array of names")
			}
			if _, declared := props.get(rs); !declared {
				return "", c.errf(path, "required property %q is not in properties", rs)
			}
			required[rs] = true
		}
	}
	addl, hasAddl := s.get("additionalProperties")
	additional := ""
	switch {
	case hasAddl && addl == false:
	case !hasAddl && c.opt.Strict:
	case !hasAddl || addl == true:
		if props == nil {
			return c.prim("object"), nil
		}
		additional = c.add(name+"-additional-kv", c.prim("string")+` ":" space `+c.prim("value"))
	default:
		r, err := c.visit(addl, name+"-additional-value", path+"/additionalProperties")
		if err != nil {
			return "", err
		}
		v := c.add(name+"-additional-value", r)
		additional = c.add(name+"-additional-kv", c.prim("string")+` ":" space `+v)
	}
	var req, opt []string
	for _, k := range props.keysOrNil() {
		r, err := c.visit(props.vals[k], name+"-"+k, path+"/properties/"+k)
		if err != nil {
			return "", err
		}
		v := c.add(name+"-"+k, r)
		kv := c.add(name+"-"+k+"-kv", literal(jsonString(k))+` space ":" space `+v)
		if required[k] {
			req = append(req, kv)
		} else {
			opt = append(opt, kv)
		}
	}
	var b strings.Builder
	b.WriteString(`"{" space `)
	if len(req) > 0 {
		b.WriteString(strings.Join(req, ` "," space `))
		for _, o := range opt {
			fmt.Fprintf(&b, ` ( "," space %s )?`, o)
		}
		if additional != "" {
			fmt.Fprintf(&b, ` ( "," space %s )*`, additional)
		}
	} else if len(opt) > 0 || additional != "" {
		// Optional properties in order, any of them first: rest-i is what
		// may follow property i.
		items := append([]string(nil), opt...)
		rest := make([]string, len(items)+1)
		tail := ""
		if additional != "" {
			tail = fmt.Sprintf(`( "," space %s )*`, additional)
		}
		rest[len(items)] = tail
		for i := len(items) - 1; i >= 0; i-- {
			body := fmt.Sprintf(`( "," space %s )?`, items[i])
			if rest[i+1] != "" {
				body += " " + rest[i+1]
			}
			rest[i] = c.add(fmt.Sprintf("%s-rest-%d", name, i), body)
		}
		var alts []string
		for i, it := range items {
			a := it
			if i+1 < len(rest) && rest[i+1] != "" {
				a += " " + rest[i+1]
			}
			alts = append(alts, a)
		}
		if additional != "" {
			alts = append(alts, additional+" "+tail)
		}
		fmt.Fprintf(&b, "( %s )?", strings.Join(alts, " | "))
	}
	b.WriteString(` "}" space`)
	return b.String(), nil
}

func (c *converter) integer(s *object, path string) (string, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	get := func(k string) (int64, bool, error) {
		v, ok := s.get(k)
		if !ok {
			return 0, false, nil
		}
		n, _ := v.(json.Number)
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || math.IsInf(f, 0) || math.Abs(f) > 1e15 {
			return 0, false, c.errf(path, "%s must be a number within ±1e15, not %s", k, encodeJSON(v))
		}
		return int64(f), true, nil
	}
	if v, ok, err := get("minimum"); err != nil {
		return "", err
	} else if ok {
		lo = v
		if f, _ := strconv.ParseFloat(string(s.vals["minimum"].(json.Number)), 64); float64(v) < f {
			lo++ // minimum 1.5 allows 2 and up
		}
	}
	if v, ok, err := get("exclusiveMinimum"); err != nil {
		return "", err
	} else if ok {
		lo = max(lo, v+1)
	}
	if v, ok, err := get("maximum"); err != nil {
		return "", err
	} else if ok {
		hi = v
		if f, _ := strconv.ParseFloat(string(s.vals["maximum"].(json.Number)), 64); float64(v) > f {
			hi--
		}
	}
	if v, ok, err := get("exclusiveMaximum"); err != nil {
		return "", err
	} else if ok {
		hi = min(hi, v-1)
	}
	if lo == math.MinInt64 && hi == math.MaxInt64 {
		return c.prim("integer"), nil
	}
	if lo > hi {
		return "", c.errf(path, "no integer satisfies the bounds [%d, %d]", lo, hi)
	}
	c.space()
	return "(" + intRange(lo, hi) + ") space", nil
}

// intRange is GBNF for the decimal integers in [lo, hi] (either bound may
// be the int64 extreme, meaning none), written without leading zeros and
// with at most 16 digits, as llama.cpp's integers are.
func intRange(lo, hi int64) string {
	const maxDigits = 16
	var alts []string
	if lo < 0 {
		// Negative part: "-" then magnitudes [max(1,-hi), -lo].
		mlo := int64(1)
		if hi < 0 {
			mlo = -hi
		}
		if lo == math.MinInt64 {
			alts = append(alts, `"-" (`+atLeast(mlo, maxDigits)+`)`)
		} else {
			alts = append(alts, `"-" (`+natRange(mlo, -lo)+`)`)
		}
		if hi < 0 {
			return strings.Join(alts, " | ")
		}
		lo = 0
	}
	if hi == math.MaxInt64 {
		alts = append(alts, atLeast(lo, maxDigits))
	} else {
		alts = append(alts, natRange(lo, hi))
	}
	return strings.Join(alts, " | ")
}

// atLeast: naturals >= lo with at most maxDigits digits.
func atLeast(lo int64, maxDigits int) string {
	d := len(strconv.FormatInt(lo, 10))
	top := int64(1)
	for i := 0; i < d; i++ {
		top *= 10
	}
	out := natRange(lo, top-1)
	if d < maxDigits {
		out += fmt.Sprintf(` | [1-9] [0-9]{%d,%d}`, d, maxDigits-1)
	}
	return out
}

// natRange: naturals in [lo, hi], 0 <= lo <= hi, split into runs of equal
// digit count and then into prefix + full-range digits (the classic
// range-to-pattern construction).
func natRange(lo, hi int64) string {
	var alts []string
	for lo <= hi {
		d := len(strconv.FormatInt(lo, 10))
		top := int64(1)
		for i := 0; i < d; i++ {
			top *= 10
		}
		end := min(hi, top-1)
		alts = append(alts, sameLen(strconv.FormatInt(lo, 10), strconv.FormatInt(end, 10))...)
		if end == hi {
			break
		}
		lo = end + 1
	}
	return strings.Join(alts, " | ")
}

// sameLen covers [a, b] for decimal strings of equal length.
func sameLen(a, b string) []string {
	if a == b {
		return []string{literal(a)}
	}
	// Common prefix.
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	pre := ""
	if i > 0 {
		pre = literal(a[:i]) + " "
	}
	a, b = a[i:], b[i:]
	n := len(a) - 1 // digits after the first differing one
	full := func(k int) string {
		if k == 0 {
			return ""
		}
		return fmt.Sprintf(" [0-9]{%d}", k)
	}
	if n == 0 {
		return []string{fmt.Sprintf("%s[%c-%c]", pre, a[0], b[0])}
	}
	zeros, nines := strings.Repeat("0", n), strings.Repeat("9", n)
	var alts []string
	loFirst, hiFirst := a[0], b[0]
	if a[1:] != zeros {
		for _, s := range sameLen(a[1:], nines) {
			alts = append(alts, fmt.Sprintf("%s%s (%s)", pre, literal(a[:1]), s))
		}
		loFirst++
	}
	hiPart := b[1:] != nines
	if hiPart {
		hiFirst--
	}
	if loFirst <= hiFirst {
		alts = append(alts, fmt.Sprintf("%s[%c-%c]%s", pre, loFirst, hiFirst, full(n)))
	}
	if hiPart {
		for _, s := range sameLen(zeros, b[1:]) {
			alts = append(alts, fmt.Sprintf("%s%s (%s)", pre, literal(b[:1]), s))
		}
	}
	return alts
}

// JSONObject is the grammar of response_format json_object: any JSON
// object (llama.cpp's converter output for {"type": "object"}).
func JSONObject() string {
	g, err := FromJSONSchema([]byte(`{"type":"object"}`), SchemaOptions{})
	if err != nil {
		panic(err) // a constant schema: cannot fail
	}
	return g
}
