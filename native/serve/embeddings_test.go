package serve

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/engine"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/internal/testmodel"
)

// TestEmbeddingFieldsHaveAFate: every field openai-go sends to
// /v1/embeddings is in embeddingsRules.
func TestEmbeddingFieldsHaveAFate(t *testing.T) {
	rt := reflect.TypeOf(openai.EmbeddingNewParams{})
	n := 0
	for i := 0; i < rt.NumField(); i++ {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		n++
		if _, ok := embeddingsRules[name]; !ok {
			t.Errorf("field %q sent by openai-go has no fate in embeddingsRules", name)
		}
	}
	if n < 4 {
		t.Fatalf("only %d JSON fields found; the reflection walk is broken", n)
	}
}

// TestEmbeddings serves /v1/embeddings from the synthetic model (pooled at
// its last token) through the official client and raw requests: vectors
// equal Model.Embed's, normalised; string, array, token-id inputs; base64;
// dimensions; usage; and the refusals.
func TestEmbeddings(t *testing.T) {
	f := newFixture(t, Config{}, engine.Options{Slots: 2})
	setEmbeddings := func(on bool) {
		b := *f.srv.be.Load()
		b.Embeddings = on
		f.srv.Ready(&b)
	}
	setEmbeddings(true)

	m, tok := testmodel.New(t, 0)
	ref := func(text string) []float32 {
		v, err := m.Embed(context.Background(), tok.Encode(text, true, true), arch.PoolLast)
		if err != nil {
			t.Fatal(err)
		}
		model.Normalize(v)
		return v
	}
	near := func(what string, got []float64, want []float32) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
		}
		var dot float64
		for i := range got {
			dot += got[i] * float64(want[i])
		}
		if dot < 1-1e-5 {
			t.Errorf("%s: cosine with Model.Embed %.7f", what, dot)
		}
	}

	res, err := f.client.Embeddings.New(context.Background(), openai.EmbeddingNewParams{
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"Once upon a time", "The sun"}},
		Model: modelID,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 2 || res.Data[1].Index != 1 || res.Usage.PromptTokens == 0 || res.Usage.TotalTokens != res.Usage.PromptTokens {
		t.Fatalf("response %+v", res)
	}
	near("string 0", res.Data[0].Embedding, ref("Once upon a time"))
	near("string 1", res.Data[1].Embedding, ref("The sun"))

	post := func(body string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Post(f.url+"/v1/embeddings", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	vec := func(out map[string]any, i int) any {
		return out["data"].([]any)[i].(map[string]any)["embedding"]
	}
	floats := func(v any) []float64 {
		var r []float64
		for _, x := range v.([]any) {
			r = append(r, x.(float64))
		}
		return r
	}

	ids, _ := json.Marshal(tok.Encode("The sun", true, true))
	code, out := post(`{"input":` + string(ids) + `}`)
	if code != 200 {
		t.Fatalf("token ids: %d %v", code, out)
	}
	near("token ids", floats(vec(out, 0)), ref("The sun"))

	code, out = post(`{"input":"The sun","encoding_format":"base64"}`)
	if code != 200 {
		t.Fatalf("base64: %d %v", code, out)
	}
	raw, err := base64.StdEncoding.DecodeString(vec(out, 0).(string))
	if err != nil {
		t.Fatal(err)
	}
	var b64 []float64
	for i := 0; i+4 <= len(raw); i += 4 {
		b64 = append(b64, float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))))
	}
	near("base64", b64, ref("The sun"))

	code, out = post(`{"input":"The sun","dimensions":16}`)
	if code != 200 {
		t.Fatalf("dimensions: %d %v", code, out)
	}
	want := ref("The sun")[:16]
	model.Normalize(want)
	near("dimensions", floats(vec(out, 0)), want)

	for _, c := range []struct{ body, param string }{
		{`{}`, "input"},
		{`{"input":[]}`, "input"},
		{`{"input":[999999999]}`, "input"},
		{`{"input":{"a":1}}`, "input"},
		{`{"input":"x","encoding_format":"int8"}`, "encoding_format"},
		{`{"input":"x","dimensions":0}`, "dimensions"},
		{`{"input":"x","model":"other"}`, "model"},
		{`{"input":"x","pooling":"mean"}`, "pooling"},
	} {
		code, out := post(c.body)
		if code != 400 || paramOf(out) != c.param {
			t.Errorf("%s: %d param %q, want 400 naming %q (%v)", c.body, code, paramOf(out), c.param, out)
		}
	}

	setEmbeddings(false)
	if code, out := post(`{"input":"x"}`); code != 400 || !bytes.Contains([]byte(out["error"].(map[string]any)["message"].(string)), []byte("pooling")) {
		t.Errorf("model without pooling: %d %v", code, out)
	}
}
