// Command gencorpus writes the malformed-GGUF corpus (internal/cmd/gencorpus/corpus)
// to testdata/gguf/malformed with a manifest of the expected error category
// per file, plus the valid seed files in testdata/gguf/valid.
//
//	go run ./internal/cmd/gencorpus            # from the repo root
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memvanta/memvanta/internal/cmd/gencorpus/corpus"
)

func main() {
	dir := flag.String("dir", "testdata/gguf", "output directory")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	mal := filepath.Join(dir, "malformed")
	if err := os.RemoveAll(mal); err != nil {
		return err
	}
	if err := os.MkdirAll(mal, 0o755); err != nil {
		return err
	}
	cases := corpus.Cases()
	manifest := corpus.Manifest(cases)
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(mal, c.Name+".gguf"), c.Data, 0o644); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(mal, "manifest.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	valid := filepath.Join(dir, "valid")
	if err := os.MkdirAll(valid, 0o755); err != nil {
		return err
	}
	for name, data := range corpus.ValidFiles() {
		if err := os.WriteFile(filepath.Join(valid, name), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %d malformed files to %s\n", len(cases), mal)
	return nil
}
