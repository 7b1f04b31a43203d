package grammar

import (
	"strings"
	"testing"
)

func schemaGrammar(t *testing.T, schema string, opt SchemaOptions) *Grammar {
	t.Helper()
	src, err := FromJSONSchema([]byte(schema), opt)
	if err != nil {
		t.Fatalf("FromJSONSchema(%s): %v", schema, err)
	}
	g, err := Parse(src, "root")
	if err != nil {
		t.Fatalf("schema %s gave a grammar that does not parse: %v\n%s", schema, err, src)
	}
	return g
}

func TestSchemaTables(t *testing.T) {
	for _, c := range []struct {
		name, schema   string
		strict         bool
		accept, reject []string
	}{
		{"object required/optional", `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["name"],"additionalProperties":false}`, false,
			[]string{`{"name":"a"}`, `{"name": "a", "age": 3}`, `{"name":"a","tags":["x","y"]}`, `{"name":"a","age":-1,"tags":[]}`},
			[]string{`{}`, `{"age":3}`, `{"age":3,"name":"a"}`, `{"name":"a","extra":1}`, `{"name":1}`, `{"name":"a","age":1.5}`}},
		{"no required", `{"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"null"}},"additionalProperties":false}`, false,
			[]string{`{}`, `{"a":true}`, `{"b":null}`, `{"a":false,"b":null}`},
			[]string{`{"b":null,"a":true}`, `{,}`, `{"a":true,}`}},
		{"additional allowed (JSON Schema default)", `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`, false,
			[]string{`{"a":1}`, `{"a":1,"zz":[1,{"q":null}]}`},
			[]string{`{"zz":1}`}},
		{"strict: no additional", `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`, true,
			[]string{`{"a":1}`},
			[]string{`{"a":1,"zz":2}`}},
		{"enum and const", `{"type":"object","properties":{"c":{"enum":["red","<b>",3,null]},"k":{"const":{"x":[1]}}},"required":["c","k"],"additionalProperties":false}`, false,
			[]string{`{"c":"red","k":{"x":[1]}}`, `{"c":"<b>","k":{"x":[1]}}`, `{"c":3,"k":{"x":[1]}}`, `{"c":null,"k":{"x":[1]}}`},
			[]string{`{"c":"blue","k":{"x":[1]}}`, `{"c":"red","k":{"x":[2]}}`}},
		{"anyOf and nullable", `{"anyOf":[{"type":"integer"},{"type":"string","maxLength":2}]}`, false,
			[]string{`1`, `"ab"`}, []string{`"abc"`, `null`, `1.5`}},
		{"type list (nullable)", `{"type":["string","null"]}`, false,
			[]string{`"x"`, `null`}, []string{`1`}},
		{"openapi nullable", `{"type":"integer","nullable":true}`, false,
			[]string{`7`, `null`}, []string{`"7"`}},
		{"array limits", `{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3}`, false,
			[]string{`[1]`, `[1,2,3]`, `[ 1 , 2 ]`}, []string{`[]`, `[1,2,3,4]`, `[1,]`}},
		{"string length", `{"type":"string","minLength":2,"maxLength":3}`, false,
			[]string{`"ab"`, `"a\nc"`, `"日本語"`}, []string{`"a"`, `"abcd"`}},
		{"formats", `{"type":"object","properties":{"d":{"type":"string","format":"date"},"t":{"type":"string","format":"date-time"},"u":{"type":"string","format":"uuid"}},"required":["d","t","u"],"additionalProperties":false}`, false,
			[]string{`{"d":"2024-02-29","t":"2024-01-01T12:30:00Z","u":"123e4567-e89b-12d3-a456-426614174000"}`, `{"d":"1999-12-31","t":"2024-01-01T23:59:59.123+05:30","u":"00000000-0000-0000-0000-000000000000"}`},
			[]string{`{"d":"2024-13-01","t":"2024-01-01T12:30:00Z","u":"123e4567-e89b-12d3-a456-426614174000"}`, `{"d":"2024-01-01","t":"2024-01-01 12:30:00","u":"123e4567-e89b-12d3-a456-426614174000"}`, `{"d":"2024-01-01","t":"2024-01-01T12:30:00Z","u":"123e4567"}`}},
		{"integer bounds", `{"type":"integer","minimum":-5,"maximum":130}`, false,
			[]string{`-5`, `-1`, `0`, `9`, `10`, `99`, `100`, `129`, `130`},
			[]string{`-6`, `131`, `200`, `1000`, `-10`, `01`, `-0`}},
		{"integer exclusive bounds", `{"type":"integer","exclusiveMinimum":7,"exclusiveMaximum":1000}`, false,
			[]string{`8`, `9`, `10`, `999`}, []string{`7`, `1000`, `0`}},
		{"integer lower bound only", `{"type":"integer","minimum":25}`, false,
			[]string{`25`, `26`, `99`, `100`, `123456789`}, []string{`24`, `3`, `-1`}},
		{"integer upper bound only", `{"type":"integer","maximum":-3}`, false,
			[]string{`-3`, `-4`, `-100000`}, []string{`-2`, `0`, `5`}},
		{"refs and recursion", `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},"required":["v","next"],"additionalProperties":false}},"$ref":"#/$defs/node"}`, false,
			[]string{`{"v":1,"next":null}`, `{"v":1,"next":{"v":2,"next":null}}`}, []string{`{"v":1}`, `{"v":1,"next":{"v":2}}`}},
		{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}],"additionalProperties":false}`, false,
			[]string{`{"a":1,"b":"x"}`}, []string{`{"a":1}`}},
		{"tuple", `{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}]}`, false,
			[]string{`[1,"a"]`}, []string{`[1]`, `["a",1]`}},
		{"any", `{}`, false, []string{`1`, `{"a":[true]}`, `"s"`}, []string{`tru`}},
	} {
		g := schemaGrammar(t, c.schema, SchemaOptions{Strict: c.strict})
		for _, s := range c.accept {
			if !full(t, g, s) {
				t.Errorf("%s: %s refused", c.name, s)
			}
		}
		for _, s := range c.reject {
			if full(t, g, s) {
				t.Errorf("%s: %s accepted", c.name, s)
			}
		}
	}
}

func TestIntRangeExhaustive(t *testing.T) {
	for _, b := range [][2]int64{{0, 0}, {0, 9}, {3, 47}, {10, 1000}, {17, 17}, {99, 101}, {-120, 35}, {-9, -1}, {1, 1999}} {
		src, err := FromJSONSchema([]byte(`{"type":"integer","minimum":`+itoa(b[0])+`,"maximum":`+itoa(b[1])+`}`), SchemaOptions{})
		if err != nil {
			t.Fatal(err)
		}
		g, err := Parse(src, "")
		if err != nil {
			t.Fatalf("%v: %v\n%s", b, err, src)
		}
		for n := int64(-3000); n <= 3000; n++ {
			want := n >= b[0] && n <= b[1]
			if got := full(t, g, itoa(n)); got != want {
				t.Fatalf("range %v: %d accepted=%v\n%s", b, n, got, src)
			}
		}
	}
}

func itoa(n int64) string { return fmtInt(n) }

func fmtInt(n int64) string {
	if n < 0 {
		return "-" + fmtInt(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return fmtInt(n/10) + string(rune('0'+n%10))
}

func TestSchemaErrors(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"type":"string","pattern":"^(a)\\1$"}`, `escape \1 is not supported`},
		{`{"type":"string","pattern":"a+"}`, `must start with ^ and end with $`},
		{`{"type":"string","pattern":"^a+$","maxLength":3}`, `maxLength with pattern is not supported`},
		{`{"type":"number","minimum":1}`, "minimum on a number"},
		{`{"$ref":"http://x/y"}`, "only local references"},
		{`{"$ref":"#/$defs/nope"}`, `"$defs" not found`},
		{`{"type":"frog"}`, "unknown type"},
		{`{"type":"object","properties":{"a":{}},"required":["b"]}`, `required property "b"`},
		{`{"type":"array","maxItems":100000}`, "maxItems must be an integer"},
		{`{"enum":[]}`, "enum must be"},
		{`{"type":`, "json schema"},
		{`false`, "matches nothing"},
		{strings.Repeat(`{"items":`, 100) + `{}` + strings.Repeat(`}`, 100), "nested deeper"},
	} {
		_, err := FromJSONSchema([]byte(c.schema), SchemaOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FromJSONSchema(%.60s) = %v, want error containing %q", c.schema, err, c.want)
		}
	}
}

func TestJSONObject(t *testing.T) {
	g, err := Parse(JSONObject(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !full(t, g, `{"a": [1, "b", {"c": null}]}`) || full(t, g, `[1]`) || full(t, g, `"x"`) {
		t.Error("json_object grammar is not 'any JSON object'")
	}
}

// TestFromJSONSchemas: several schemas in one grammar, each behind its
// own rule; same-named $defs and "#" recursion stay within their schema.
func TestFromJSONSchemas(t *testing.T) {
	schemas := [][]byte{
		[]byte(`{"$defs":{"item":{"type":"integer"}},"type":"object","properties":{"x":{"$ref":"#/$defs/item"}},"required":["x"],"additionalProperties":false}`),
		[]byte(`{"$defs":{"item":{"type":"string"}},"type":"object","properties":{"x":{"$ref":"#/$defs/item"},"sub":{"$ref":"#"}},"required":["x"],"additionalProperties":false}`),
	}
	src, roots, err := FromJSONSchemas(schemas, "args-", SchemaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(roots) != 2 || roots[0] != "args-0" || roots[1] != "args-1" {
		t.Fatalf("roots %v", roots)
	}
	g, err := Parse(`start ::= "a" args-0 | "b" args-1`+"\n"+src, "start")
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	for s, want := range map[string]bool{
		`a{"x":1}`: true, `a{"x":"1"}`: false, `b{"x":"1"}`: true, `b{"x":1}`: false,
		`b{"x":"1","sub":{"x":"2"}}`: true, `b{"x":"1","sub":{"x":2}}`: false, `a{"x":1,"sub":{"x":1}}`: false,
	} {
		if got := full(t, g, s); got != want {
			t.Errorf("%s: accepted %v, want %v\n%s", s, got, want, src)
		}
	}
	if _, _, err := FromJSONSchemas([][]byte{[]byte(`{"pattern": 1}`)}, "p", SchemaOptions{}); err == nil {
		t.Error("an unsupported keyword was accepted")
	}
}
