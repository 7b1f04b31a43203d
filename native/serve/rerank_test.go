package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/core/tokenizer"
	"github.com/memvanta/memvanta/internal/golden"
	"github.com/memvanta/memvanta/internal/testmodel"
	"github.com/memvanta/memvanta/kernels"
)

// rerankGolden is llama.cpp's ranking context on a synthetic bert file
// with a classifier head (scripts/embed-golden.sh).
type rerankGolden struct {
	Synth golden.Synth `json:"synth"`
	Cases []struct {
		Query    string  `json:"query"`
		Document string  `json:"document"`
		Tokens   []int32 `json:"tokens"`
		Score    float64 `json:"score"`
	} `json:"cases"`
}

// encoderServer serves the golden's model (pooled as pool) through an
// Encoder, without an engine (the encoder endpoints need none).
func encoderServer(t testing.TB, g rerankGolden, pool arch.Pooling) (string, *model.Model, *tokenizer.Tokenizer) {
	t.Helper()
	vb, err := os.ReadFile("../../../shared/" + g.Synth.Vocab)
	if err != nil {
		t.Skipf("vocab %s not available (%v)", g.Synth.Vocab, err)
	}
	vf, err := gguf.Parse(bytes.NewReader(vb), int64(len(vb)), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := g.Synth.Config(vf, kernels.Quantize)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := synth.Write(context.Background(), &buf, sc, nil); err != nil {
		t.Fatal(err)
	}
	m, tok := testmodel.FromBytes(t, buf.Bytes(), model.Options{Threads: 2})
	s := New(Config{ModelID: modelID})
	s.Ready(&Backend{Tokenizer: tok, NCtx: m.Cfg.NCtxTrain, Encoder: NewEncoder(m, pool),
		Embeddings: pool == arch.PoolMean || pool == arch.PoolCLS})
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs.URL, m, tok
}

func loadRerankGolden(t testing.TB) rerankGolden {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/golden/rerank-bert-F16.json")
	if err != nil {
		t.Fatal(err)
	}
	var g rerankGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 2 {
		t.Fatal("rerank golden has fewer than two documents")
	}
	return g
}

func postJSON(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestRerank serves llama-server's /v1/rerank (and its other paths) from
// the rerank golden's bert model: each pair is tokenized as llama.cpp's
// ranking input was ([CLS] query [SEP] document), scores are llama.cpp's
// within the F16 bound of core/model's TestRerankGoldens (1e-3), results
// come best first and cut to top_n; TEI's texts form answers a bare
// array; the refusals.
func TestRerank(t *testing.T) {
	g := loadRerankGolden(t)
	url, _, tok := encoderServer(t, g, arch.PoolRank)
	query := g.Cases[0].Query
	var docs []string
	for i, c := range g.Cases {
		got, err := RerankTokens(tok, c.Query, c.Document)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.Tokens) {
			t.Errorf("pair %d tokenizes to %v, llama.cpp ranked %v", i, got, c.Tokens)
		}
		docs = append(docs, c.Document)
	}
	body, _ := json.Marshal(map[string]any{"query": query, "documents": docs, "top_n": len(docs) - 1})
	for _, path := range []string{"/v1/rerank", "/rerank", "/v1/reranking", "/reranking"} {
		st, raw := postJSON(t, url+path, string(body))
		if st != 200 {
			t.Fatalf("%s: status %d: %s", path, st, raw)
		}
		var res struct {
			Model   string `json:"model"`
			Object  string `json:"object"`
			Results []struct {
				Index int     `json:"index"`
				Score float64 `json:"relevance_score"`
			} `json:"results"`
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		if res.Object != "list" || res.Model != modelID || len(res.Results) != len(docs)-1 {
			t.Fatalf("%s: %s", path, raw)
		}
		ntok := 0
		for _, c := range g.Cases {
			ntok += len(c.Tokens)
		}
		if res.Usage.PromptTokens != ntok {
			t.Errorf("%s: usage %d prompt tokens, want %d", path, res.Usage.PromptTokens, ntok)
		}
		for i, r := range res.Results {
			if d := math.Abs(r.Score - g.Cases[r.Index].Score); d > 1e-3 {
				t.Errorf("%s: document %d scores %v, llama.cpp %v", path, r.Index, r.Score, g.Cases[r.Index].Score)
			}
			if i > 0 && r.Score > res.Results[i-1].Score {
				t.Errorf("%s: results not sorted best first: %s", path, raw)
			}
		}
	}
	st, raw := postJSON(t, url+"/rerank", `{"query":"q","texts":["a","b"],"return_text":true}`)
	var tei []struct {
		Index int     `json:"index"`
		Score float64 `json:"score"`
		Text  string  `json:"text"`
	}
	if st != 200 || json.Unmarshal(raw, &tei) != nil || len(tei) != 2 || tei[0].Text != []string{"a", "b"}[tei[0].Index] {
		t.Errorf("TEI form: %d %s", st, raw)
	}
	for _, bad := range []string{`{"documents":["a"]}`, `{"query":1,"documents":["a"]}`, `{"query":"q","documents":[]}`, `{"query":"q"}`,
		`{"query":"q","documents":["a"],"model":"other"}`, `{"query":"q","documents":["a"],"nonsense":1}`} {
		if st, raw := postJSON(t, url+"/v1/rerank", bad); st != 400 {
			t.Errorf("%s: status %d: %s", bad, st, raw)
		}
	}
	// The encoder's /v1/embeddings is refused under rank pooling.
	if st, raw := postJSON(t, url+"/v1/embeddings", `{"input":"a"}`); st != 400 {
		t.Errorf("embeddings under rank pooling: status %d: %s", st, raw)
	}
}

// TestEncoderEmbeddings: an encoder pooled by CLS serves /v1/embeddings
// (the normalised vectors of Model.Embed) and refuses /v1/rerank.
func TestEncoderEmbeddings(t *testing.T) {
	g := loadRerankGolden(t)
	url, m, tok := encoderServer(t, g, arch.PoolCLS)
	st, raw := postJSON(t, url+"/v1/embeddings", `{"input":["what is a panda?","hi"]}`)
	if st != 200 {
		t.Fatalf("status %d: %s", st, raw)
	}
	var res struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Data) != 2 {
		t.Fatalf("%v: %s", err, raw)
	}
	for i, text := range []string{"what is a panda?", "hi"} {
		want, err := m.Embed(context.Background(), tok.Encode(text, true, true), arch.PoolCLS)
		if err != nil {
			t.Fatal(err)
		}
		model.Normalize(want)
		if !slices.Equal(res.Data[i].Embedding, want) {
			t.Errorf("input %d: served vector differs from Model.Embed's", i)
		}
	}
	if st, raw := postJSON(t, url+"/v1/rerank", `{"query":"q","documents":["a"]}`); st != http.StatusNotImplemented {
		t.Errorf("rerank without rank pooling: status %d: %s", st, raw)
	}
	// An encoder generates nothing: generation requests are the client's
	// mistake (400 naming the model), not a server failure.
	for _, c := range []struct{ path, body string }{
		{"/v1/completions", `{"prompt":"hi","max_tokens":2}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`},
	} {
		st, raw := postJSON(t, url+c.path, c.body)
		if st != http.StatusBadRequest || !strings.Contains(string(raw), "encoder") {
			t.Errorf("%s to an encoder: status %d: %s", c.path, st, raw)
		}
	}
}
