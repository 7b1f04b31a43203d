// Package realfiles makes the GGUF files users actually download, with
// llama.cpp's own quantizer, so tests can check every llama.cpp file type
// (Q4_K_M and the other mixes, the legacy types, IQ4, F16/BF16/F32) without
// committing model files. A file is a core/synth F16 model converted by
// `quantize` (../shared/quantize, which drives llama_model_quantize from the
// prebuilt libllama of ../shared/ref); both steps are deterministic, so the
// golden files (testdata/golden/quant-*.json) record the synth parameters
// and the quantized file's SHA-256, and the files are rebuilt on demand into
// a cache directory.
//
// The tools are found through MEMVANTA_QUANTIZE (the quantize binary) and
// MEMVANTA_LIBLLAMA (libllama.so); without them the tests skip. .ci/run
// builds and sets both.
package realfiles

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/internal/golden"
	"github.com/memvanta/memvanta/kernels"
)

// Environment variables naming the tools and the cache.
const (
	EnvQuantize = "MEMVANTA_QUANTIZE" // path of the quantize binary (../shared/quantize/build.sh)
	EnvLib      = "MEMVANTA_LIBLLAMA" // path of libllama.so (inside an installed ../shared/ref)
	EnvCache    = "MEMVANTA_CACHE"    // directory for generated files (default: user cache dir)
)

// Tools locate llama.cpp's quantizer.
type Tools struct {
	Bin, Lib string
}

// ToolsFromEnv reads EnvQuantize and EnvLib; the error says what is
// missing (tests skip with it).
func ToolsFromEnv() (Tools, error) {
	t := Tools{Bin: os.Getenv(EnvQuantize), Lib: os.Getenv(EnvLib)}
	if t.Bin == "" || t.Lib == "" {
		return t, fmt.Errorf("realfiles: %s and %s must name llama.cpp's quantizer and libllama (see .ci/run)", EnvQuantize, EnvLib)
	}
	for _, p := range []string{t.Bin, t.Lib} {
		if _, err := os.Stat(p); err != nil {
			return t, fmt.Errorf("realfiles: %w", err)
		}
	}
	return t, nil
}

// CacheDir is EnvCache, else <user cache>/memvanta/realfiles, created.
func CacheDir() (string, error) {
	d := os.Getenv(EnvCache)
	if d == "" {
		u, err := os.UserCacheDir()
		if err != nil {
			u = os.TempDir()
		}
		d = filepath.Join(u, "memvanta", "realfiles")
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("realfiles: cache: %w", err)
	}
	return d, nil
}

// ReadVocab parses a vocab-only GGUF (../shared/vocab/NAME).
func ReadVocab(path string) (*gguf.File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := gguf.Parse(bytes.NewReader(b), int64(len(b)), gguf.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("realfiles: %s: %w", path, err)
	}
	return f, nil
}

// SynthBytes builds the core/synth model s describes over vocab.
func SynthBytes(ctx context.Context, s golden.Synth, vocab *gguf.File) ([]byte, error) {
	cfg, err := s.Config(vocab, kernels.Quantize)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := synth.Write(ctx, &buf, cfg, nil); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PureSuffix marks a file type quantized with llama.cpp's --pure: every
// matrix of the requested type, no per-tensor mix. MXFP4_MOE needs it for a
// dense model (without it llama.cpp writes Q8_0 everywhere but in expert
// tensors).
const PureSuffix = "+pure"

// Quantize runs llama.cpp's quantizer: in (F16/F32 GGUF) to out as file
// type ftype (Q4_K_M, IQ4_XS, F16 ...), with its default per-tensor mix,
// or with --pure for a ftype ending in PureSuffix (MXFP4_MOE+pure).
func (t Tools) Quantize(ctx context.Context, in, out, ftype string) error {
	args := []string{"--lib", t.Lib, "--threads", "2"}
	if base, ok := strings.CutSuffix(ftype, PureSuffix); ok {
		args, ftype = append(args, "--pure"), base
	}
	if NeedsImatrix(ftype) {
		im := out + ".imatrix"
		if err := writeUniformImatrix(in, im); err != nil {
			return err
		}
		defer os.Remove(im)
		args = append(args, "--imatrix", im)
	}
	cmd := exec.CommandContext(ctx, t.Bin, append(args, in, out, ftype)...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		tail := log.Bytes()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return fmt.Errorf("realfiles: quantize %s -> %s (%s): %w\n%s", in, out, ftype, err, tail)
	}
	return nil
}

// NeedsImatrix reports whether llama.cpp refuses file type ftype without an
// importance matrix (its IQ1 and IQ2 types, Q2_K_S); Quantize gives those
// a uniform one, as ../shared/quantize/imatrix-list.py prints: every
// weight of every matrix equally important, so the file is what llama.cpp
// makes without calibration data and is deterministic.
func NeedsImatrix(ftype string) bool {
	return strings.HasPrefix(ftype, "IQ1_") || strings.HasPrefix(ftype, "IQ2_") || ftype == "Q2_K_S"
}

// writeUniformImatrix writes imatrix-list.py's list for the GGUF file in:
// one "NAME N" line per 2-D or 3-D weight matrix (not norms), N its row
// length times its expert count.
func writeUniformImatrix(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("realfiles: imatrix: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("realfiles: imatrix: %w", err)
	}
	g, err := gguf.Parse(f, st.Size(), gguf.DefaultLimits())
	if err != nil {
		return fmt.Errorf("realfiles: imatrix of %s: %w", in, err)
	}
	var b strings.Builder
	for _, ti := range g.Tensors {
		if len(ti.Dims) < 2 || !strings.HasSuffix(ti.Name, ".weight") || strings.Contains(ti.Name, "norm") {
			continue
		}
		n := ti.Dims[0]
		if len(ti.Dims) >= 3 {
			n *= ti.Dims[2]
		}
		fmt.Fprintf(&b, "%s %d\n", ti.Name, n)
	}
	return writeAtomic(out, strings.NewReader(b.String()))
}

// File returns the path of s's synthetic model quantized by llama.cpp to
// ftype; see FileFrom.
func (t Tools) File(ctx context.Context, dir string, s golden.Synth, vocab *gguf.File, ftype string) (string, error) {
	b, err := SynthBytes(ctx, s, vocab)
	if err != nil {
		return "", err
	}
	return t.FileFrom(ctx, dir, b, ftype)
}

// FileFrom returns the path of the source model src (F16/F32 GGUF bytes)
// quantized by llama.cpp to ftype, making it (and src's file) in dir
// unless a previous run did. Names carry a hash of src's bytes, not of the
// parameters that made them: a change to synth or to a golden's parameters
// never reuses a stale file from a cache that outlives the code (CI's
// machine keeps its temporary directory between runs). Files are written
// under a temporary name and renamed, so concurrent test processes at
// worst repeat the work.
func (t Tools) FileFrom(ctx context.Context, dir string, src []byte, ftype string) (string, error) {
	h := sha256.Sum256(src)
	base := fmt.Sprintf("synth-%s", hex.EncodeToString(h[:8]))
	srcPath := filepath.Join(dir, base+"-src.gguf")
	if _, err := os.Stat(srcPath); err != nil {
		if err := writeAtomic(srcPath, bytes.NewReader(src)); err != nil {
			return "", err
		}
	}
	out := filepath.Join(dir, base+"-"+ftype+".gguf")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tmp := fmt.Sprintf("%s.tmp%d", out, os.Getpid())
	if err := t.Quantize(ctx, srcPath, tmp, ftype); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("realfiles: %w", err)
	}
	return out, nil
}

func writeAtomic(path string, r io.Reader) error {
	tmp := fmt.Sprintf("%s.tmp%d", path, os.Getpid())
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("realfiles: %w", err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("realfiles: writing %s: %w", path, err)
	}
	return nil
}

// FileSHA256 hashes a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// TypeCounts tallies a GGUF file's tensors by type: the quantizer's mix.
func TypeCounts(f *gguf.File) map[string]int {
	m := map[string]int{}
	for _, ti := range f.Tensors {
		m[ti.Type.String()]++
	}
	return m
}
