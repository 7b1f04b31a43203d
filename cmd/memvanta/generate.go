package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/sample"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/native/telemetry"
)

// genStats is what the stats line (and --json) reports.
type genStats struct {
	PromptTokens int     `json:"prompt_tokens"`
	PromptSec    float64 `json:"prompt_seconds"`
	GenTokens    int     `json:"generated_tokens"`
	GenSec       float64 `json:"generation_seconds"`
	PeakRSS      int64   `json:"peak_rss_bytes"`
	KVBytes      int64   `json:"kv_cache_bytes"`
	Kernels      string  `json:"kernels"`
	Seed         uint64  `json:"seed"`
	Stop         string  `json:"stop"` // "length", "eog", "context", "interrupted"
}

func tps(n int, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(n) / s
}

func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs, 4096)
	prompt := fs.String("p", "", "prompt `text` (required)")
	n := fs.Int("n", 128, "`tokens` to generate")
	def := sample.DefaultParams()
	temp := fs.Float64("temp", float64(def.Temp), "sampling `temperature` (0 = greedy)")
	topK := fs.Int("top-k", def.TopK, "keep the `k` most likely tokens (0 = off)")
	topP := fs.Float64("top-p", float64(def.TopP), "keep the smallest set with probability mass `p` (1 = off)")
	minP := fs.Float64("min-p", float64(def.MinP), "drop tokens below `p` times the best one's probability (0 = off)")
	rp := fs.Float64("repeat-penalty", float64(def.RepeatPenalty), "penalty for tokens in the last --repeat-last-n (1 = off)")
	rlast := fs.Int("repeat-last-n", def.RepeatLastN, "`tokens` the repeat penalty looks back over")
	seed := fs.Int64("seed", -1, "RNG `seed` (-1 = random, printed in the stats)")
	jsonOut := fs.Bool("json", false, "print a JSON document (tokens, text, stats) on stdout instead of streaming text")
	noBOS := fs.Bool("no-bos", false, "do not add the BOS token the model's metadata asks for")
	if done, st := parseFlags(fs, args, stderr); done {
		return st
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "memvanta generate: "+format+"\n", a...)
		return 1
	}
	if err := mf.validate(); err != nil {
		return fail("%v", err)
	}
	if *prompt == "" {
		return fail("-p PROMPT is required")
	}
	if *n < 0 {
		return fail("-n %d: must be >= 0", *n)
	}
	sp := sample.Params{Temp: float32(*temp), TopK: *topK, TopP: float32(*topP), MinP: float32(*minP),
		RepeatPenalty: float32(*rp), RepeatLastN: *rlast}
	if *seed < 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		sp.Seed = binary.LittleEndian.Uint64(b[:]) >> 1
	} else {
		sp.Seed = uint64(*seed)
	}
	smp, err := sample.New(sp)
	if err != nil {
		return fail("%v", err)
	}

	l, err := openModel(ctx, &mf)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "memvanta generate: interrupted while loading the model")
			return 130
		}
		return fail("%v", err)
	}
	defer l.Close()
	tok, err := tokenizer.FromGGUF(l.rt.File())
	if err != nil {
		return fail("%s: %v", mf.path, err)
	}
	ids := tok.Encode(*prompt, !*noBOS, false)
	if len(ids) == 0 {
		return fail("prompt encodes to no tokens")
	}
	if len(ids) >= l.m.KV().Cap() {
		return fail("prompt has %d tokens but the context holds %d (raise -c)", len(ids), l.m.KV().Cap())
	}

	st := genStats{PromptTokens: len(ids), Kernels: l.m.Kernels().Name, Seed: sp.Seed, Stop: "length"}
	out := bufio.NewWriter(stdout)
	var genIDs []int32
	var text []byte
	dec := tok.NewDecoder()
	emit := func(s string) {
		if *jsonOut {
			text = append(text, s...)
			return
		}
		out.WriteString(s)
		out.Flush()
	}
	status := 0
	t0 := time.Now()
	err = generate(ctx, l.m, smp, ids, *n, func(id int32) bool {
		if tok.IsEOG(id) {
			st.Stop = "eog"
			return false
		}
		genIDs = append(genIDs, id)
		emit(dec.Add(id))
		return true
	}, &st)
	emit(dec.Flush())
	total := time.Since(t0).Seconds()
	st.GenSec = total - st.PromptSec
	st.GenTokens = len(genIDs)
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		st.Stop = "interrupted"
		status = 130 // the shell's convention for SIGINT; the output so far is complete
	case errors.Is(err, model.ErrContextFull):
		st.Stop = "context"
	default:
		if !*jsonOut {
			out.WriteString("\n")
			out.Flush()
		}
		fmt.Fprintf(stderr, "memvanta generate: %v\n", err)
		status = 1
	}
	st.PeakRSS = telemetry.PeakRSS()
	st.KVBytes = l.m.KV().Bytes()
	if *jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(struct {
			PromptTokens []int32 `json:"prompt_token_ids"`
			Tokens       []int32 `json:"tokens"`
			Text         string  `json:"text"`
			Stats        genStats
		}{ids, genIDs, string(text), st})
	} else {
		out.WriteString("\n")
	}
	out.Flush()
	if st.Stop == "context" {
		fmt.Fprintf(stderr, "memvanta generate: context limit of %d tokens reached; stopped (raise -c)\n", l.m.KV().Cap())
	}
	fmt.Fprintf(stderr, "prompt %d tok, %.2f tok/s | generated %d tok, %.2f tok/s | peak RSS %.1f MiB | kv %s %.1f MiB | kernels %s | seed %d | stop %s\n",
		st.PromptTokens, tps(st.PromptTokens, st.PromptSec), st.GenTokens, tps(st.GenTokens, st.GenSec),
		mib(st.PeakRSS), l.m.KV().Type(), mib(st.KVBytes), st.Kernels, st.Seed, st.Stop)
	return status
}

// generate runs the prompt, then samples up to n tokens, handing each to
// yield (which returns false to stop). The prompt time lands in st.PromptSec.
func generate(ctx context.Context, m *model.Model, s *sample.Sampler, prompt []int32, n int,
	yield func(int32) bool, st *genStats) error {
	for _, t := range prompt {
		s.Accept(t)
	}
	if n == 0 {
		return nil
	}
	t0 := time.Now()
	logits, err := m.Forward(ctx, prompt)
	st.PromptSec = time.Since(t0).Seconds()
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		next := s.Sample(logits)
		s.Accept(next)
		if !yield(next) || i == n-1 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if logits, err = m.Forward(ctx, []int32{next}); err != nil {
			return err
		}
	}
	return nil
}
