package grammar

import (
	"testing"
)

// FuzzParse: any grammar text parses or fails with an error, and a parsed
// grammar's matcher and mask run within their bounds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{jsonGBNF, `root ::= "a"{2,3} [^x-z]* . ("b" | "")+`, "root ::= x\nx ::= \"\\u00e9\" x?", `root ::= ("a"? "b"?)*`, "root ::= [\\x00-\\U0010FFFF]"} {
		f.Add(s, "abc")
	}
	pieces := [][]byte{[]byte("a"), []byte("b"), []byte("{\""), []byte("é"), {0xc3}, {0xa9}, []byte(" "), []byte("\n"), []byte("1")}
	v, err := NewVocab(len(pieces)+1, func(id int32) []byte {
		if int(id) < len(pieces) {
			return pieces[id]
		}
		return nil
	}, func(id int32) bool { return int(id) == len(pieces) })
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src, input string) {
		g, err := Parse(src, "")
		if err != nil {
			return
		}
		m, err := NewMatcher(g)
		if err != nil {
			return
		}
		for i := 0; i < len(input) && i < 64; i++ {
			if _, err := m.Mask(v); err != nil {
				return
			}
			_ = m.Accept([]byte{input[i]})
		}
		_ = m.Accepting()
	})
}

// FuzzFromJSONSchema: any schema converts or fails with an error, and a
// converted schema is a grammar that parses.
func FuzzFromJSONSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"integer","minimum":-3,"maximum":77},"b":{"type":"array","items":{"type":"string","format":"date"},"maxItems":3}},"required":["a"]}`,
		`{"$defs":{"n":{"anyOf":[{"$ref":"#/$defs/n"},{"type":"null"}]}},"$ref":"#/$defs/n"}`,
		`{"enum":["a",1,null,{"x":[]}]}`,
		`{"type":["string","null"],"maxLength":5}`,
		`{"allOf":[{"properties":{"a":{}}},{"required":["a"]}]}`,
		`{"type":"string","pattern":"^(?:[a-c\\d]{1,3}|x.y*)+[^\"\\\\\\s]?$"}`,
	} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, schema string, strict bool) {
		src, err := FromJSONSchema([]byte(schema), SchemaOptions{Strict: strict})
		if err != nil {
			return
		}
		g, err := Parse(src, "")
		if err != nil {
			// A $ref cycle without progress (a schema that refers to itself
			// directly) is left-recursive: refused, not a converter bug.
			if isLeftRecursion(err) {
				return
			}
			t.Fatalf("schema %s converted to a grammar that does not parse: %v\n%s", schema, err, src)
		}
		if _, err := NewMatcher(g); err != nil && err != ErrTooComplex {
			t.Fatal(err)
		}
	})
}
