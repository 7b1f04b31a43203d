package main

import (
	"context"
	"fmt"
	"io"

	"github.com/memvanta/memvanta/core/engine"
)

// specFlags are speculative decoding's options, spelled as llama.cpp's
// (common/arg.cpp) for generate, chat, serve and bench: a draft model
// (-md), or without one llama.cpp's draftless --spec-type ngram-simple.
type specFlags struct {
	draftPath      string
	specType       string
	draftMax       int
	draftMin       int
	pMin           float32
	ngramN, ngramM int
	exact          bool
}

func (sf *specFlags) register(c *cli) {
	d := engine.DefaultSpec()
	c.group("Speculative decoding")
	c.stringVar(&sf.draftPath, "md|model-draft", "FILE", "", "draft model for speculative decoding (its vocabulary must be the model's); it runs with the model's -t, -b and --kv")
	c.stringVar(&sf.specType, "spec-type", "TYPE", "none", "speculative decoding without a draft model: none or ngram-simple (draft the tokens that followed the last earlier occurrence of the last --spec-ngram-size-n tokens)")
	c.intVar(&sf.draftMax, "draft|draft-n|draft-max", "N", d.DraftMax, "tokens to draft per step at most")
	c.intVar(&sf.draftMin, "draft-min|draft-n-min", "N", d.DraftMin, "shortest draft worth verifying")
	c.float32Var(&sf.pMin, "draft-p-min", "P", d.PMin, "draft model: end the draft at a token the draft gives less than this probability")
	c.intVar(&sf.ngramN, "spec-ngram-size-n", "N", d.NgramN, "ngram-simple: length of the n-gram looked up")
	c.intVar(&sf.ngramM, "spec-ngram-size-m", "N", d.NgramM, "ngram-simple: tokens drafted after a match at most")
	c.boolVar(&sf.exact, "spec-exact", "verify drafts with rows bit-identical to one-token generation, so the output is plain generation's token for token (slower: about one generation step per drafted token; by default the packed prompt kernels verify, whose rounding differs)")
}

// enabled reports whether speculation was asked for.
func (sf *specFlags) enabled() bool { return sf.draftPath != "" || sf.specType == "ngram-simple" }

// validate checks the values (usage errors).
func (sf *specFlags) validate() error {
	switch sf.specType {
	case "none", "ngram-simple":
	default:
		return fmt.Errorf("--spec-type %q: none or ngram-simple", sf.specType)
	}
	if sf.draftPath != "" && sf.specType != "none" {
		return fmt.Errorf("--spec-type %s and -md: choose one", sf.specType)
	}
	sp := sf.spec()
	if sf.draftPath != "" {
		sp.NgramN, sp.NgramM = 1, 1 // not used with a draft model
	}
	return sp.Validate()
}

func (sf *specFlags) spec() engine.Spec {
	return engine.Spec{DraftMax: sf.draftMax, DraftMin: sf.draftMin, PMin: sf.pMin, NgramN: sf.ngramN, NgramM: sf.ngramM, Exact: sf.exact}
}

// open loads the draft model beside the target l (the same memory mode,
// threads, batch and cache type) and checks its vocabulary; it returns the
// engine options' Spec (nil without speculation) and a closer.
func (sf *specFlags) open(ctx context.Context, mf *modelFlags, l *loaded, stderr io.Writer) (*engine.Spec, func(), int) {
	if !sf.enabled() {
		return nil, func() {}, exitOK
	}
	sp := sf.spec()
	if sf.draftPath == "" {
		return &sp, func() {}, exitOK
	}
	dmf := *mf
	dmf.path = sf.draftPath
	dmf.noTokenizer = false
	dl, status := openModel(ctx, &dmf, stderr)
	if status != exitOK {
		return nil, nil, status
	}
	if err := engine.CheckDraftVocab(l.tok, dl.tok); err != nil {
		dl.Close()
		fmt.Fprintf(stderr, "memvanta %s: -md %s: %v\n", mf.cmd, sf.draftPath, err)
		return nil, nil, exitRuntime
	}
	sp.Draft = dl.m
	return &sp, dl.Close, exitOK
}

// specLine is the statistics line's speculative part ("" without).
func specLine(st engine.Stats) string {
	if st.Spec.Verified == 0 && st.Spec.Drafted == 0 {
		return ""
	}
	return fmt.Sprintf(" | draft %d/%d accepted (%.1f%%), %.2f tok/pass", st.Spec.Accepted, st.Spec.Drafted, 100*st.Spec.AcceptRate(), tokPerPass(st))
}

// tokPerPass is generated tokens per pass over the weights per sequence.
func tokPerPass(st engine.Stats) float64 {
	if st.Spec.Passes == 0 {
		return 0
	}
	return float64(st.GenTokens) / float64(st.Spec.Passes)
}
