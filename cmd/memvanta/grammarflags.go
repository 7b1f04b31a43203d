package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/memvanta/memvanta/core/grammar"
)

// grammarFlags are llama.cpp's options that constrain the output to a
// grammar, shared by generate and chat.
type grammarFlags struct {
	grammar, grammarFile, schema, schemaFile string
}

func (gf *grammarFlags) register(c *cli) {
	c.group("Constrained output (llama.cpp's grammar options; at most one)")
	c.stringVar(&gf.grammar, "grammar", "GRAMMAR", "", "constrain the output to a GBNF grammar (llama.cpp's format, start rule root)")
	c.stringVar(&gf.grammarFile, "grammar-file", "FILE", "", "read the GBNF grammar from FILE")
	c.stringVar(&gf.schema, "j|json-schema", "SCHEMA", "", "constrain the output to JSON valid under a JSON Schema, e.g. '{}' for any JSON value")
	c.stringVar(&gf.schemaFile, "jf|json-schema-file", "FILE", "", "read the JSON Schema from FILE")
}

// build parses the grammar the flags give, nil when none. Errors say which
// flag and where.
func (gf *grammarFlags) build() (*grammar.Grammar, error) {
	return gf.buildWith(nil)
}

// buildWith is build with the grammar's source passed through wrap first
// (chat's harmony replies: the grammar holds for the final message).
func (gf *grammarFlags) buildWith(wrap func(src, root string) (string, string)) (*grammar.Grammar, error) {
	set := 0
	for _, v := range []string{gf.grammar, gf.grammarFile, gf.schema, gf.schemaFile} {
		if v != "" {
			set++
		}
	}
	if set == 0 {
		return nil, nil
	}
	if set > 1 {
		return nil, errors.New("--grammar, --grammar-file, --json-schema and --json-schema-file are exclusive: give one")
	}
	read := func(flag, path string) (string, error) {
		fi, err := os.Stat(path)
		if err != nil {
			return "", fmt.Errorf("--%s: %w", flag, err)
		}
		if fi.Size() > grammar.MaxSourceBytes {
			return "", fmt.Errorf("--%s %s: %d bytes, at most %d", flag, path, fi.Size(), grammar.MaxSourceBytes)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("--%s: %w", flag, err)
		}
		return string(b), nil
	}
	src, flag := gf.grammar, "grammar"
	switch {
	case gf.grammarFile != "":
		var err error
		if src, err = read("grammar-file", gf.grammarFile); err != nil {
			return nil, err
		}
		flag = "grammar-file"
	case gf.schema != "" || gf.schemaFile != "":
		schema, flag := gf.schema, "json-schema"
		if gf.schemaFile != "" {
			var err error
			if schema, err = read("json-schema-file", gf.schemaFile); err != nil {
				return nil, err
			}
			flag = "json-schema-file"
		}
		var err error
		if src, err = grammar.FromJSONSchema([]byte(schema), grammar.SchemaOptions{}); err != nil {
			return nil, fmt.Errorf("--%s: %w", flag, err)
		}
	}
	root := "root"
	if wrap != nil {
		src, root = wrap(src, root)
	}
	g, err := grammar.Parse(src, root)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	return g, nil
}
