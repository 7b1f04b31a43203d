// Command genvocab writes a copy of a vocab-only GGUF with some tokenizer
// metadata overridden (e.g. tokenizer.ggml.pre), so llama.cpp can be asked
// how it tokenizes with pre-tokenizers no shipped vocab uses. Used by
// gen.sh; not part of the build.
//
//	go run ./testdata/tokenizer/genvocab BASE.gguf OUT.gguf key=value...
//
// "true"/"false" values are written as bools, anything else as a string.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/memvanta/memvanta/core/gguf"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "genvocab:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: genvocab BASE.gguf OUT.gguf key=value...")
	}
	in, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	f, err := gguf.Parse(in, st.Size(), gguf.DefaultLimits())
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	over := map[string]gguf.Value{}
	var order []string
	for _, kv := range args[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("override %q is not key=value", kv)
		}
		var x any = v
		if v == "true" || v == "false" {
			x = v == "true"
		}
		val, err := gguf.ValueOf(x)
		if err != nil {
			return err
		}
		over[k] = val
		order = append(order, k)
	}
	out, err := os.Create(args[1])
	if err != nil {
		return err
	}
	w := gguf.NewWriter(out)
	for _, kv := range f.KV {
		v := kv.Value
		if o, ok := over[kv.Key]; ok {
			v = o
			delete(over, kv.Key)
		}
		if err := w.AddKV(kv.Key, v); err != nil {
			return err
		}
	}
	for _, k := range order {
		if v, ok := over[k]; ok {
			if err := w.AddKV(k, v); err != nil {
				return err
			}
		}
	}
	if len(f.Tensors) != 0 {
		return fmt.Errorf("%s has tensors; only vocab-only files are supported", args[0])
	}
	if err := w.WriteHeader(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return out.Close()
}
