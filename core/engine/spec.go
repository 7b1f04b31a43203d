package engine

import (
	"context"
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/tokenizer"
)

// Speculative decoding: a generating slot drafts a few tokens cheaply (a
// small draft model, or a lookup of the context's own n-grams), and the
// target model verifies the token it would run anyway plus the draft in
// one pass (Work.Rows: the logits after every one of them,
// model.ForwardRows). The slot then
// picks its tokens from those rows in order, exactly as it would have from
// one-token steps, through the same sampler, penalties and grammar: a
// drafted token is accepted when the pick equals it, and the first pick
// that differs is emitted as the correction; the cache positions after it
// are dropped. When every draft is accepted, the last row gives one more
// token. So a step emits 1 to len(draft)+1 tokens for one pass over the
// weights.
//
// This is the standard acceptance rule (accept d with probability
// min(1, p(d)/q(d)), else draw from max(0, p−q) normalised) for a
// deterministic draft, q = δ_d: the pick x ~ p equals d with probability
// p(d), and when it differs x is distributed as p without d, renormalised,
// which is max(0, p−δ_d)/(1−p(d)). The drafts are deterministic (the draft
// model's most likely token, llama.cpp's draft sampling; an n-gram
// lookup), and because the picks consume the sampler's random stream in
// the same order as one-token steps do, with Spec.Exact (rows
// bit-identical to one-token steps) the output is not only distributed as
// without speculation: with the same seed it is the same tokens. Without
// Exact the rows come from the packed kernels, as a prompt's do, and
// differ from one-token steps by rounding: the tokens are the same
// wherever the target's choice is not decided by that rounding (a near
// tie under greedy decoding, a draw on the boundary between two tokens
// when sampling).

// Spec configures speculative decoding (llama.cpp's flags and defaults).
type Spec struct {
	// DraftMax bounds the tokens drafted per step (--draft-max, 16);
	// DraftMin is the shortest draft worth verifying (--draft-min, 0): a
	// shorter one is dropped and the step generates one token.
	DraftMax, DraftMin int
	// PMin ends a draft model's draft at a token whose probability under
	// the draft (among its 40 most likely tokens, as llama.cpp's draft
	// sampler measures it) is below it (--draft-p-min, 0.75).
	PMin float32
	// Draft is the draft model (--model-draft; its vocabulary checked with
	// CheckDraftVocab). Nil: n-gram lookup in the slot's own tokens
	// (llama.cpp's --spec-type ngram-simple).
	Draft *model.Model
	// NgramN is the length of the n-gram looked up (--spec-ngram-size-n,
	// 12), NgramM how many tokens after its last earlier occurrence are
	// drafted (--spec-ngram-size-m, 48; DraftMax bounds it too).
	NgramN, NgramM int
	// Exact verifies with rows bit-identical to one-token generation
	// (--spec-exact): the output is then plain generation's, token for
	// token, but the pass costs about one one-token step per row
	// (model.ForwardRows). Without it the pass takes the packed kernels,
	// whose rows differ from one-token steps by rounding (see
	// docs/cli.md#speculative-decoding for the measured difference).
	Exact bool
}

// DefaultSpec has llama.cpp's defaults.
func DefaultSpec() Spec { return Spec{DraftMax: 16, PMin: 0.75, NgramN: 12, NgramM: 48} }

// Validate checks the settings, naming the bad one by its flag.
func (sp *Spec) Validate() error {
	switch {
	case sp.DraftMax < 1 || sp.DraftMax > 256:
		return fmt.Errorf("engine: draft-max %d: must be in [1, 256]", sp.DraftMax)
	case sp.DraftMin < 0 || sp.DraftMin > sp.DraftMax:
		return fmt.Errorf("engine: draft-min %d: must be in [0, draft-max %d]", sp.DraftMin, sp.DraftMax)
	case math.IsNaN(float64(sp.PMin)) || sp.PMin < 0 || sp.PMin > 1:
		return fmt.Errorf("engine: draft-p-min %v: must be in [0, 1]", sp.PMin)
	case sp.Draft == nil && (sp.NgramN < 1 || sp.NgramN > 1024):
		return fmt.Errorf("engine: spec-ngram-size-n %d: must be in [1, 1024]", sp.NgramN)
	case sp.Draft == nil && (sp.NgramM < 1 || sp.NgramM > 1024):
		return fmt.Errorf("engine: spec-ngram-size-m %d: must be in [1, 1024]", sp.NgramM)
	}
	return nil
}

// Checks of llama.cpp's common_speculative_are_compatible.
const (
	specVocabMaxDiff    = 128 // SPEC_VOCAB_MAX_SIZE_DIFFERENCE
	specVocabCheckStart = 5   // SPEC_VOCAB_CHECK_START_TOKEN_ID
)

// CheckDraftVocab refuses a draft model whose vocabulary is not the
// target's, as llama.cpp's compatibility check does: the same tokenizer
// type, BOS/EOS and whether they are added, sizes within 128 of each
// other, and the same text for every token id from 5 up to the smaller
// size. The error names the first difference.
func CheckDraftVocab(target, draft *tokenizer.Tokenizer) error {
	bad := func(what string, t, d any) error {
		return fmt.Errorf("engine: the draft model's vocabulary differs from the target's: %s %v, target %v", what, d, t)
	}
	switch {
	case target.Model() != draft.Model():
		return bad("tokenizer type", target.Model(), draft.Model())
	case target.AddBOS() != draft.AddBOS():
		return bad("add BOS", target.AddBOS(), draft.AddBOS())
	case target.AddEOS() != draft.AddEOS():
		return bad("add EOS", target.AddEOS(), draft.AddEOS())
	case target.BOS() != draft.BOS():
		return bad("BOS token", target.BOS(), draft.BOS())
	case target.EOS() != draft.EOS():
		return bad("EOS token", target.EOS(), draft.EOS())
	}
	nt, nd := target.NVocab(), draft.NVocab()
	if d := nt - nd; d > specVocabMaxDiff || d < -specVocabMaxDiff {
		return fmt.Errorf("engine: the draft model's vocabulary differs from the target's: %d tokens, target %d (at most %d apart)", nd, nt, specVocabMaxDiff)
	}
	for i := int32(specVocabCheckStart); i < int32(min(nt, nd)); i++ {
		if a, b := target.TokenText(i), draft.TokenText(i); a != b {
			return fmt.Errorf("engine: the draft model's vocabulary differs from the target's: token %d is %q, target %q", i, b, a)
		}
	}
	return nil
}

// SpecStats are speculative decoding's counts (Stats.Spec).
type SpecStats struct {
	Drafted  int64 // tokens drafted and verified
	Accepted int64 // of them, accepted
	// Passes are the passes that produced a sequence's generated tokens
	// (a one-token step or a verification, per sequence); Verified are
	// the verification passes among them. Tokens per pass is
	// Stats.GenTokens / Passes.
	Passes, Verified int64
}

// AcceptRate is Accepted / Drafted (0 without drafts).
func (s SpecStats) AcceptRate() float64 {
	if s.Drafted == 0 {
		return 0
	}
	return float64(s.Accepted) / float64(s.Drafted)
}

// specSlot is a slot's speculative state.
type specSlot struct {
	toks  []int32   // the step's tokens: next, then the draft
	rows  []float32 // their logits rows
	hist  []int32   // s.tokens + next, the context a draft continues
	draft []int32
	// With a draft model: its cache for this slot and the tokens it holds.
	dkv   *model.KVCache
	dtoks []int32
}

func (e *Engine) newSpecSlot() (*specSlot, error) {
	sp := e.opt.Spec
	ss := &specSlot{rows: make([]float32, (sp.DraftMax+1)*e.st.NVocab())}
	if sp.Draft != nil {
		kv, err := sp.Draft.NewKV(e.slots[0].seq.Cap())
		if err != nil {
			return nil, fmt.Errorf("engine: draft model cache: %w", err)
		}
		ss.dkv = kv
	}
	return ss, nil
}

// specWork turns slot s's one-token work into a verification of a draft,
// if a draft of at least DraftMin tokens is made.
func (e *Engine) specWork(ctx context.Context, s *slot, w *Work) error {
	sp := e.opt.Spec
	ss := s.spec
	// Rows past the context or past max_tokens could never be used.
	n := min(sp.DraftMax, s.seq.Cap()-len(s.tokens)-2)
	if r := s.j.req.MaxTokens; r > 0 {
		n = min(n, r-len(s.gen)-1)
	}
	if n < max(1, sp.DraftMin) {
		return nil
	}
	ss.hist = append(append(ss.hist[:0], s.tokens...), s.next)
	var err error
	if sp.Draft != nil {
		ss.draft, err = e.draftModel(ctx, ss, n)
	} else {
		ss.draft = ngramDraft(ss.draft[:0], ss.hist, sp.NgramN, min(n, sp.NgramM))
	}
	if err != nil {
		return err
	}
	if len(ss.draft) == 0 || len(ss.draft) < sp.DraftMin {
		return nil
	}
	ss.toks = append(append(ss.toks[:0], s.next), ss.draft...)
	w.Tokens = ss.toks
	w.Logits = nil
	w.Rows = ss.rows[:len(ss.toks)*len(s.logits)]
	w.Exact = sp.Exact
	return nil
}

// ngramDraft appends to dst the tokens that followed the last earlier
// occurrence of h's final n tokens (at most m of them); llama.cpp's
// ngram-simple.
func ngramDraft(dst, h []int32, n, m int) []int32 {
	if len(h) <= n {
		return dst
	}
	key := h[len(h)-n:]
	for j := len(h) - n - 1; j >= 0; j-- {
		if h[j] != key[0] || !equal(h[j:j+n], key) {
			continue
		}
		end := min(j+n+m, len(h))
		return append(dst, h[j+n:end]...)
	}
	return dst
}

func equal(a, b []int32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// draftModel drafts up to n tokens with the draft model: its cache is
// brought to ss.hist (only what differs from the tokens it holds is
// computed), then its most likely token is drafted while its probability
// is at least PMin.
func (e *Engine) draftModel(ctx context.Context, ss *specSlot, n int) ([]int32, error) {
	sp := e.opt.Spec
	dm := sp.Draft
	keep := min(commonPrefix(ss.dtoks, ss.hist), len(ss.hist)-1)
	ss.dkv.Truncate(keep)
	ss.dtoks = ss.dtoks[:keep]
	old, err := dm.SwapKV(ss.dkv)
	if err != nil {
		return nil, err
	}
	defer func() { _, _ = dm.SwapKV(old) }()
	logits, err := dm.Forward(ctx, ss.hist[keep:])
	if err != nil {
		ss.dkv.Truncate(keep)
		return nil, fmt.Errorf("engine: draft model: %w", err)
	}
	ss.dtoks = append(ss.dtoks, ss.hist[keep:]...)
	d := ss.draft[:0]
	nv := int32(e.st.NVocab())
	for len(d) < n {
		t, p := argmaxProb(logits)
		if p < sp.PMin || t >= nv {
			break
		}
		d = append(d, t)
		if len(d) == n {
			break
		}
		if logits, err = dm.Forward(ctx, []int32{t}); err != nil {
			return nil, fmt.Errorf("engine: draft model: %w", err)
		}
		ss.dtoks = append(ss.dtoks, t)
	}
	return d, nil
}

// draftTopK is how many of the draft's most likely tokens its probability
// is measured among: llama.cpp's draft sampler keeps the top 40 (then top-p
// 0.9, which only drops candidates and does not renormalise) and compares
// the first one's softmax probability over them with --draft-p-min.
const draftTopK = 40

// argmaxProb returns the most likely token (lowest id on a tie, NaN never)
// and its softmax probability among the draftTopK most likely.
func argmaxProb(lg []float32) (int32, float32) {
	var top [draftTopK]float32
	n, lo := 0, 0 // top[:n] hold the largest seen; top[lo] is their least
	best, bv := int32(0), float32(math.Inf(-1))
	for i, v := range lg {
		if v > bv {
			best, bv = int32(i), v
		}
		if v != v {
			continue
		}
		if n < draftTopK {
			top[n] = v
			n++
			if n == draftTopK {
				lo = minIndex(top[:])
			}
			continue
		}
		if v > top[lo] {
			top[lo] = v
			lo = minIndex(top[:])
		}
	}
	if math.IsInf(float64(bv), -1) {
		return best, 0
	}
	var z float64
	for _, v := range top[:n] {
		z += math.Exp(float64(v - bv))
	}
	return best, float32(1 / z)
}

func minIndex(a []float32) int {
	m := 0
	for i, v := range a {
		if v < a[m] {
			m = i
		}
	}
	return m
}

// acceptDraft picks slot s's tokens from a verification's rows in order,
// emitting each, until a pick differs from the draft (that pick is the
// correction), every draft is accepted (the last row gives one more
// token) or the request ends; the cache keeps the accepted positions. It
// returns the tokens picked.
func (e *Engine) acceptDraft(s *slot, w *Work) int {
	V := len(s.logits)
	d := w.Tokens[1:]
	s.tokens = append(s.tokens, w.Tokens[0])
	picked, acc := 0, 0
	for i := 0; ; i++ {
		copy(s.logits, w.Rows[i*V:(i+1)*V])
		s.pick()
		picked++
		e.emitNext(s)
		if s.j == nil || i == len(d) || s.picked != d[i] {
			break
		}
		s.tokens = append(s.tokens, d[i])
		acc++
	}
	if s.j != nil { // finish has truncated the cache itself
		s.seq.Truncate(len(s.tokens))
	}
	e.mu.Lock()
	e.stats.Spec.Drafted += int64(len(d))
	e.stats.Spec.Accepted += int64(acc)
	e.stats.Spec.Verified++
	e.mu.Unlock()
	return picked
}
