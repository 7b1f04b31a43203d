package serve

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/native/telemetry"
	"github.com/memvanta/memvanta/native/weights"
)

// BenchmarkDecodeStep measures one batched decoding step (one token for
// each of K sequences, each with a 64-token context) on the model file in
// MEMVANTA_BENCH_MODEL, e.g. the TinyLlama-shaped Q4_0 synth file:
//
//	memvanta synth -o /tmp/tl-q4_0.gguf --type Q4_0 --vocab-from ../shared/vocab/ggml-vocab-llama-spm.gguf
//	MEMVANTA_BENCH_MODEL=/tmp/tl-q4_0.gguf go test -run XXX -bench DecodeStep -benchtime 20x ./native/serve
//
// tok/s is K tokens per step and cpu-ms/tok the process CPU time per token;
// the K variants run side by side in one process, so their ratios are
// meaningful on a shared machine (CPU time the least disturbed).
func BenchmarkDecodeStep(b *testing.B) {
	path := os.Getenv("MEMVANTA_BENCH_MODEL")
	if path == "" {
		b.Skip("MEMVANTA_BENCH_MODEL not set")
	}
	rt, err := weights.Open(context.Background(), path, weights.Options{Mode: "resident"})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	cfg, err := model.ConfigFromGGUF(rt.File())
	if err != nil {
		b.Fatal(err)
	}
	m, err := model.New(cfg, rt.Weights(), model.Options{Threads: 2, Batch: 32, Ctx: 512, KVType: ggml.F16})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for _, k := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("seqs=%d", k), func(b *testing.B) {
			sb := make([]model.SeqBatch, k)
			for i := range sb {
				kv, _ := m.NewKV(512)
				prompt := make([]int32, 64)
				for j := range prompt {
					prompt[j] = int32(100 + i*64 + j)
				}
				if err := m.ForwardBatch(context.Background(), []model.SeqBatch{{KV: kv, Tokens: prompt}}); err != nil {
					b.Fatal(err)
				}
				sb[i] = model.SeqBatch{KV: kv, Tokens: []int32{int32(1000 + i)}, Logits: make([]float32, cfg.NVocab)}
			}
			b.ResetTimer()
			u0, _ := telemetry.Rusage()
			for it := 0; it < b.N; it++ {
				if err := m.ForwardBatch(context.Background(), sb); err != nil {
					b.Fatal(err)
				}
				for i := range sb {
					sb[i].KV.Truncate(64)
				}
			}
			u1, _ := telemetry.Rusage()
			b.ReportMetric(float64(k*b.N)/b.Elapsed().Seconds(), "tok/s")
			// Process CPU time (all threads) per generated token: on a
			// shared machine the least disturbed figure.
			b.ReportMetric(float64((u1.CPU-u0.CPU).Microseconds())/1000/float64(k*b.N), "cpu-ms/tok")
		})
	}
}
