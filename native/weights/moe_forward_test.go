package weights

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/kernels"
)

// synthMoE writes a small qwen3moe file with synth's router locality model.
func synthMoE(t testing.TB, dir string, experts, used, ffExp int) string {
	t.Helper()
	return synthMoEArch(t, dir, ggml.Q8_0, synth.Arch{Name: "qwen3moe", HeadDim: 64, Experts: experts, ExpertsUsed: used, FFExp: ffExp})
}

// synthGPTOSS writes a small gpt-oss file with MXFP4 weights (its
// published expert type), sinks, biases, a sliding window and YaRN.
func synthGPTOSS(t testing.TB, dir string, experts, used, ffExp int) string {
	t.Helper()
	return synthMoEArch(t, dir, ggml.MXFP4, synth.Arch{Name: synth.GPTOSS, HeadDim: 64, Window: 8, Bias: true, RopeScale: 4,
		YaRN: true, OrigCtx: 64, Experts: experts, ExpertsUsed: used, FFExp: ffExp})
}

func synthMoEArch(t testing.TB, dir string, typ ggml.Type, a synth.Arch) string {
	t.Helper()
	p := filepath.Join(dir, "moe.gguf")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := synth.Config{Embd: 256, Layers: 4, Heads: 4, KVHeads: 2, FF: 256, Ctx: 256, RopeBase: 1e6, Eps: 1e-6,
		Type: typ, VocabSize: 2000, Seed: 9, Quantize: kernels.Quantize, Arch: a}
	if err := synth.Write(context.Background(), f, c, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// generateMoE prefills a prompt in batches and generates n tokens greedily,
// returning the tokens and every step's logits.
func generateMoE(t testing.TB, path string, opt Options, n int) ([]int32, [][]float32, Stats) {
	t.Helper()
	md, err := Open(context.Background(), path, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()
	c, err := model.ConfigFromGGUF(md.File())
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(c, md.Weights(), model.Options{Threads: 2, Ctx: 256, Batch: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	prompt := make([]int32, 40)
	for i := range prompt {
		prompt[i] = int32(1 + i*37%1999)
	}
	logits, err := m.Forward(ctx, prompt)
	if err != nil {
		t.Fatal(err)
	}
	var toks []int32
	var all [][]float32
	for range n {
		all = append(all, append([]float32(nil), logits...))
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		toks = append(toks, int32(best))
		if logits, err = m.Forward(ctx, []int32{int32(best)}); err != nil {
			t.Fatal(err)
		}
	}
	return toks, all, md.Stats()
}

// TestMoEBudgetIdentical: budget mode (both streams, several budgets down
// to the minimum, both expert policies) gives the tokens and logits of
// resident mode bit for bit on a qwen3moe file and a gpt-oss one (MXFP4
// experts with biases), through the real graph (prefill batches touch many
// experts, generation a few per layer).
func TestMoEBudgetIdentical(t *testing.T) {
	for _, a := range []struct {
		name  string
		synth func(testing.TB, string, int, int, int) string
	}{{"qwen3moe", synthMoE}, {"gpt-oss", synthGPTOSS}} {
		t.Run(a.name, func(t *testing.T) { moeBudgetIdentical(t, a.synth(t, t.TempDir(), 32, 4, 64)) })
	}
}

func moeBudgetIdentical(t *testing.T, path string) {
	const n = 24
	want, wantLogits, rst := generateMoE(t, path, Options{Mode: Resident}, n)
	if rst.ExpertAcquisitions == 0 {
		t.Fatal("resident run acquired no experts: the graph does not use ExpertWeights")
	}
	plan := func(stream string) int64 {
		md, err := Open(context.Background(), path, Options{Mode: Budget, Stream: stream, Budget: 1 << 40})
		if err != nil {
			t.Fatal(err)
		}
		defer md.Close()
		c, err := model.ConfigFromGGUF(md.File())
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.New(c, md.Weights(), model.Options{Threads: 1, Ctx: 64})
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		return md.Stats().MinBudget
	}
	fi, _ := os.Stat(path)
	for _, stream := range []string{StreamMap, StreamCopy} {
		minB := plan(stream)
		for _, opt := range []Options{
			{Budget: minB},
			{Budget: minB + fi.Size()/4},
			{Budget: minB + fi.Size()/4, ExpertPolicy: ExpertLFU},
			{Budget: 2 * fi.Size()},
		} {
			opt.Mode, opt.Stream = Budget, stream
			t.Run(fmt.Sprintf("%s-%d-%s", stream, opt.Budget, opt.ExpertPolicy), func(t *testing.T) {
				got, logits, st := generateMoE(t, path, opt, n)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("token %d: %d, resident %d", i, got[i], want[i])
					}
					for j := range logits[i] {
						if math.Float32bits(logits[i][j]) != math.Float32bits(wantLogits[i][j]) {
							t.Fatalf("step %d logit %d: %v, resident %v", i, j, logits[i][j], wantLogits[i][j])
						}
					}
				}
				if st.ExpertAcquisitions != rst.ExpertAcquisitions {
					t.Errorf("expert acquisitions %d, resident %d", st.ExpertAcquisitions, rst.ExpertAcquisitions)
				}
				if st.PeakWeightBytes > opt.Budget {
					t.Errorf("peak weight bytes %d over budget %d", st.PeakWeightBytes, opt.Budget)
				}
				t.Logf("hit rate %.1f%%, read %d bytes, stalls %d (%v)", 100*float64(st.ExpertHits)/float64(st.ExpertAcquisitions),
					st.ExpertBytesRead, st.ExpertStalls, st.ExpertStallTime)
			})
		}
	}
}
