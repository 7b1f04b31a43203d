// Command scanbench writes the files for the batch inspect benchmark
// (scripts/batch-bench.sh): -small complete tiny Llama models with distinct
// seeds, and -big multi-GB 7B-shaped models as sparse files (the real header
// and tensor table memvanta synth writes, the tensor data left as a hole:
// inspect reads only the header, and 20 real 3.5-13 GiB files would not fit
// a shared development disk).
//
//	go run ./internal/cmd/scanbench -dir /tmp/scan -small 1000 -big 20 -vocab ../shared/vocab/ggml-vocab-llama-spm.gguf
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/kernels"
)

func main() {
	dir := flag.String("dir", "", "output directory (small/ and big/ are made in it)")
	small := flag.Int("small", 1000, "tiny complete models")
	big := flag.Int("big", 20, "multi-GB sparse models")
	vocab := flag.String("vocab", "", "vocab-only GGUF for the big models' tokenizer (default: a synthetic 32000-token vocabulary)")
	flag.Parse()
	if err := run(*dir, *small, *big, *vocab); err != nil {
		fmt.Fprintln(os.Stderr, "scanbench:", err)
		os.Exit(1)
	}
}

func run(dir string, small, big int, vocabPath string) error {
	if dir == "" {
		return fmt.Errorf("-dir is required")
	}
	for _, d := range []string{"small", "big"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for i := range small {
		var buf bytes.Buffer
		c := synth.Config{Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, Ctx: 256, Type: ggml.F32,
			VocabSize: 512, Seed: uint64(i + 1), RopeBase: 10000, Eps: 1e-5}
		if err := synth.Write(context.Background(), &buf, c, nil); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "small", fmt.Sprintf("tiny-%04d.gguf", i)), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	var vocab *gguf.File
	if vocabPath != "" {
		b, err := os.ReadFile(vocabPath)
		if err != nil {
			return err
		}
		if vocab, err = gguf.Parse(bytes.NewReader(b), int64(len(b)), gguf.DefaultLimits()); err != nil {
			return err
		}
	}
	types := []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.F16, ggml.Q4_1}
	for i := range big {
		c := synth.Config{Embd: 4096, Layers: 32 + i%8, Heads: 32, KVHeads: 32, FF: 11008, Ctx: 4096,
			Type: types[i%len(types)], Vocab: vocab, VocabSize: 32000, Seed: uint64(i + 1), RopeBase: 10000, Eps: 1e-5,
			Quantize: kernels.Quantize}
		hdr, size, err := synth.Header(c)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, "big", fmt.Sprintf("7b-%02d-%s.gguf", i, c.Type))
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		if _, err := f.Write(hdr); err != nil {
			f.Close()
			return err
		}
		if err := f.Truncate(size); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
