package realfiles

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/internal/golden"
	"github.com/memvanta/memvanta/kernels"
)

const (
	goldenDir = "../../testdata/golden"
	sharedDir = "../../../shared"
)

// loaded is one model file opened the way the CLI opens it.
type loaded struct {
	cfg model.Config
	w   *model.MemWeights
	tok *tokenizer.Tokenizer
	f   *gguf.File
}

func open(t *testing.T, path string) loaded {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(bytes.NewReader(b), int64(len(b)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := model.ConfigFromGGUF(f)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	w, err := model.MemWeightsFromBytes(f, b)
	if err != nil {
		t.Fatal(err)
	}
	return loaded{cfg, w, tok, f}
}

func (l loaded) model(t *testing.T, k *kernels.Impl) *model.Model {
	t.Helper()
	m, err := model.New(l.cfg, l.w, model.Options{Threads: 2, Batch: 32, KVType: ggml.F16, Kernels: k})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// replayResult is what one teacher-forced run measured.
type replayResult struct {
	worst   float64     // largest |gap - llama.cpp's gap| over the top-5 candidates of every step
	flips   int         // steps where our argmax is not llama.cpp's token
	logits  [][]float32 // per step
	firstAt int         // first flipped step, -1 if none
	ties    int         // deviating steps excused by a router near-tie (routerTie)
}

// routerTie is the router-logit margin below which a mixture-of-experts
// step that deviates (token or gaps) is excused (model.RouterMargin); steps
// that agree are compared whatever their margin. Two engines computing the
// same function may pick different experts there, and one swapped expert
// moves the output logits by more than any kernel bound. Measured on the
// gpt-oss Q4_K_M golden (4 layers, 93 steps): memvanta's own avx2 and
// scalar paths differ by up to 0.0019 in a router margin; llama.cpp
// quantizes the activations the same way but sums in another order, so
// the bound is that difference with a factor of 2.5. The one step that
// deviated there (0.32 logits against a bound of 0.153) had a layer whose
// 4th and 5th experts were 0.00058 apart.
const routerTie = 0.005

// maxTieShare caps the steps a case may skip as router ties, so a router
// that is wrong everywhere still fails.
const maxTieShare = 0.1

// replay feeds llama.cpp's prompt and greedy tokens (teacher forcing) and
// compares each step's top-5 logit gaps (logit_i - logit_top1) with
// llama.cpp's. The argmax must be llama.cpp's token wherever llama.cpp's
// own top-2 gap is at least minMargin (every step when minMargin is 0);
// where it is closer a flip is counted, not failed.
func replay(t *testing.T, m *model.Model, c golden.Case, tol, minMargin float64, label string) replayResult {
	t.Helper()
	ctx := context.Background()
	logits, err := m.Forward(ctx, c.PromptTokens)
	if err != nil {
		t.Fatal(err)
	}
	r := replayResult{firstAt: -1}
	for i, want := range c.Tokens {
		r.logits = append(r.logits, append([]float32(nil), logits...))
		margin := m.RouterMargin()
		got := int32(kernels.Argmax(logits))
		top := c.Steps[i].Top
		dev := 0.0 // this step's largest gap deviation
		for _, e := range top {
			dev = math.Max(dev, math.Abs(float64(logits[e.ID]-logits[top[0].ID])-e.DLogit))
		}
		excused := (got != want || dev > tol) && margin < routerTie
		if excused {
			r.ties++
			t.Logf("%s %q step %d: router near-tie (margin %.5f < %g) and a deviation of %.4f (token %d, llama.cpp %d): not compared",
				label, c.Prompt, i, margin, routerTie, dev, got, want)
			if float64(r.ties) > maxTieShare*float64(len(c.Tokens)) {
				t.Errorf("%s %q: %d of %d steps deviate at router near-ties, more than %.0f%%", label, c.Prompt, r.ties, len(c.Tokens), 100*maxTieShare)
			}
		} else if got != want {
			gap := math.Inf(1)
			if len(top) > 1 {
				gap = -top[1].DLogit
			}
			if gap >= minMargin {
				t.Fatalf("%s %q step %d: greedy token %d, llama.cpp %d (llama.cpp top: %+v; our gap %.4f)",
					label, c.Prompt, i, got, want, top, logits[got]-logits[want])
			}
			r.flips++
			if r.firstAt < 0 {
				r.firstAt = i
			}
		}
		for _, e := range top {
			if excused {
				break
			}
			d := math.Abs(float64(logits[e.ID]-logits[top[0].ID]) - e.DLogit)
			r.worst = math.Max(r.worst, d)
			if d > tol {
				t.Errorf("%s %q step %d: gap of token %d is %.4f, llama.cpp %.4f (tolerance %.3g)",
					label, c.Prompt, i, e.ID, logits[e.ID]-logits[top[0].ID], e.DLogit, tol)
			}
		}
		if i == len(c.Tokens)-1 {
			break
		}
		if logits, err = m.Forward(ctx, []int32{want}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// maxSpread is the largest fa_off_spread of a golden's cases.
func maxSpread(g *golden.File) float64 {
	s := 0.0
	for _, c := range g.Cases {
		if c.Spread != nil {
			s = math.Max(s, *c.Spread)
		}
	}
	return s
}

// relDiff is max|a-b| over max|b|.
func relDiff(a, b []float32) float64 {
	d, m := 0.0, 0.0
	for i := range b {
		d = math.Max(d, math.Abs(float64(a[i]-b[i])))
		m = math.Max(m, math.Abs(float64(b[i])))
	}
	return d / m
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
