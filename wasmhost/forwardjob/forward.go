// Package forwardjob is the whole-model differential's guest work: a greedy
// run of a model held in memory, with its command line and binary output
// codec. It lives apart from package job so that the inspect-only guest,
// which links job, carries no model or kernel code.
package forwardjob

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/wasmhost/job"
)

// ForwardOptions drive a greedy run for the whole-model differential test.
type ForwardOptions struct {
	Tokens []int32   // prompt token ids (at least one)
	Steps  int       // greedy tokens to generate after the prompt
	KV     ggml.Type // KV cache type: F32 (default) or F16
	Batch  int       // prefill batch; <= 0 means the model default
}

// Forward loads the model in r (size bytes) into memory, runs the prompt and
// then Steps greedy tokens on kernels k, and writes, for each of the 1+Steps
// evaluations, the argmax token (i32) and the logits (nvocab × f32 bits),
// after a u32 nvocab header; all little-endian.
func Forward(ctx context.Context, w io.Writer, r io.ReaderAt, size int64, o ForwardOptions, k *kernels.Impl) error {
	if len(o.Tokens) == 0 {
		return errors.New("forward: no prompt tokens")
	}
	f, err := gguf.Parse(r, size, gguf.Limits{})
	if err != nil {
		return err
	}
	cfg, err := model.ConfigFromGGUF(f)
	if err != nil {
		return err
	}
	wts, err := model.NewMemWeights(f, r)
	if err != nil {
		return err
	}
	kv := o.KV // the zero value is F32
	m, err := model.New(cfg, wts, model.Options{Threads: 1, Batch: o.Batch, Ctx: len(o.Tokens) + o.Steps + 1, KVType: kv, Kernels: k})
	if err != nil {
		return err
	}
	defer m.Close()
	out := binary.LittleEndian.AppendUint32(nil, uint32(cfg.NVocab))
	toks := o.Tokens
	for step := 0; step <= o.Steps; step++ {
		logits, err := m.Forward(ctx, toks)
		if err != nil {
			return err
		}
		next := int32(kernels.Argmax(logits))
		out = binary.LittleEndian.AppendUint32(out, uint32(next))
		for _, v := range logits {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
		toks = []int32{next}
	}
	if _, err := w.Write(out); err != nil {
		return &job.OutputError{Err: err}
	}
	return nil
}

// Step is one evaluation of a greedy run.
type Step struct {
	Argmax int32
	Logits []float32
}

// DecodeForward parses what Forward wrote.
func DecodeForward(b []byte) ([]Step, error) {
	if len(b) < 4 {
		return nil, errors.New("forward output: truncated header")
	}
	nv := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	rec := 4 + 4*nv
	if nv == 0 || len(b)%rec != 0 {
		return nil, fmt.Errorf("forward output: %d bytes are not whole steps of %d logits", len(b), nv)
	}
	var steps []Step
	for ; len(b) > 0; b = b[rec:] {
		s := Step{Argmax: int32(binary.LittleEndian.Uint32(b)), Logits: make([]float32, nv)}
		for i := range s.Logits {
			s.Logits[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4+4*i:]))
		}
		steps = append(steps, s)
	}
	return steps, nil
}

// Args encodes o and the guest-side path as the guest's forward command line.
func (o ForwardOptions) Args(path string) []string {
	ts := make([]string, len(o.Tokens))
	for i, t := range o.Tokens {
		ts[i] = strconv.Itoa(int(t))
	}
	return []string{"forward", "--tokens=" + strings.Join(ts, ","), "--steps=" + strconv.Itoa(o.Steps),
		"--kv=" + strconv.Itoa(int(o.KV)), "--batch=" + strconv.Itoa(o.Batch), "--", path}
}

// ParseForwardArgs decodes what Args encoded (without the leading "forward").
func ParseForwardArgs(args []string) (o ForwardOptions, path string, err error) {
	for len(args) > 0 {
		a := args[0]
		args = args[1:]
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "--":
			if len(args) != 1 {
				return o, "", fmt.Errorf("forward: want exactly one file after --, got %q", args)
			}
			return o, args[0], nil
		case "--tokens":
			for _, s := range strings.Split(v, ",") {
				n, err := strconv.ParseInt(s, 10, 32)
				if err != nil {
					return o, "", fmt.Errorf("forward: token %q: %w", s, err)
				}
				o.Tokens = append(o.Tokens, int32(n))
			}
		case "--steps", "--kv", "--batch":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return o, "", fmt.Errorf("forward: %s=%q: want a non-negative integer", k, v)
			}
			switch k {
			case "--steps":
				o.Steps = n
			case "--kv":
				o.KV = ggml.Type(n)
			default:
				o.Batch = n
			}
		default:
			return o, "", fmt.Errorf("forward: unknown argument %q", a)
		}
	}
	return o, "", errors.New("forward: missing -- FILE")
}
