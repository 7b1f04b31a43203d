package serve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/engine"
)

// TestSpecMetrics: with speculative decoding (n-gram lookup) /metrics
// reports the engine's draft counts, passes, acceptance rate and tokens
// per pass, and a completion's text is the one without speculation.
func TestSpecMetrics(t *testing.T) {
	plain := newFixture(t, Config{}, engine.Options{Slots: 1})
	f := newFixture(t, Config{}, engine.Options{Slots: 1, Spec: &engine.Spec{DraftMax: 8, NgramN: 1, NgramM: 8}})
	prompt := "a b c a b c a b c a b c a b c"
	want, err := plain.client.Completions.New(context.Background(), greedyCompletion(prompt, 40))
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.client.Completions.New(context.Background(), greedyCompletion(prompt, 40))
	if err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].Text != want.Choices[0].Text {
		t.Errorf("speculative text %q, plain %q", got.Choices[0].Text, want.Choices[0].Text)
	}
	resp, err := http.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	val := func(name string) float64 {
		for _, l := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(l, name+" "); ok {
				x, _ := strconv.ParseFloat(v, 64)
				return x
			}
		}
		t.Fatalf("metrics lack %s", name)
		return 0
	}
	st := f.eng.Stats()
	if st.Spec.Drafted == 0 {
		t.Fatal("nothing drafted: the test would not see the metrics move")
	}
	for name, v := range map[string]float64{
		"memvanta:spec_draft_tokens_total":          float64(st.Spec.Drafted),
		"memvanta:spec_draft_tokens_accepted_total": float64(st.Spec.Accepted),
		"memvanta:generation_passes_total":          float64(st.Spec.Passes),
		"memvanta:spec_accept_rate":                 st.Spec.AcceptRate(),
		"memvanta:generation_tokens_per_pass":       float64(st.GenTokens) / float64(st.Spec.Passes),
	} {
		if g := val(name); fmt.Sprint(float32(g)) != fmt.Sprint(float32(v)) {
			t.Errorf("%s %v, engine %v", name, g, v)
		}
	}
	if tpp := val("memvanta:generation_tokens_per_pass"); tpp <= 1 {
		t.Errorf("tokens per pass %v with %d of %d drafts accepted", tpp, st.Spec.Accepted, st.Spec.Drafted)
	}
}
