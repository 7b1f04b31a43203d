package chat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/tokenizer"
)

type casesFile struct {
	Templates map[string]struct {
		File string `json:"file"`
		BOS  string `json:"bos_token"`
		EOS  string `json:"eos_token"`
	}
	Conversations map[string]struct {
		Messages json.RawMessage `json:"messages"`
		Tools    json.RawMessage `json:"tools"`
	}
	// Now is the time strftime_now formats in every case (gpt-oss's
	// template prints the date).
	Now time.Time `json:"now"`
}

type goldenCase struct {
	Template     string  `json:"template"`
	Conversation string  `json:"conversation"`
	AGP          bool    `json:"add_generation_prompt"`
	Output       *string `json:"output"`
	Error        *string `json:"error"`
}

func loadCases(t *testing.T) (casesFile, []goldenCase) {
	t.Helper()
	var cf casesFile
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cf); err != nil {
		t.Fatal(err)
	}
	var g struct{ Cases []goldenCase }
	if b, err = os.ReadFile("testdata/golden.json"); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return cf, g.Cases
}

// divergent are the (template, conversation) pairs where the reference JS
// engine and this package are expected to differ, because Message
// normalises content before rendering: a list of content parts becomes one
// string (the JS engine prints it with JavaScript's Array join, or fails on
// | trim), and null content is none (the JS engine fails on none + string
// where ardanlabs/jinja concatenates ""); features.jinja iterates the parts
// itself, which the normalised string no longer has. See the package doc.
var divergent = map[[2]string]bool{
	{"chatml", "content_parts"}: true, {"qwen2.5", "content_parts"}: true, {"llama3", "content_parts"}: true,
	{"gemma", "content_parts"}: true, {"mistral", "content_parts"}: true, {"phi-3", "content_parts"}: true, {"features", "content_parts"}: true,
	{"chatml", "tools"}: true, {"llama3", "tools"}: true, {"phi-3", "tools"}: true,
	{"gpt-oss", "content_parts"}: true, {"gpt-oss", "tools"}: true,
}

// TestGoldenHFJinja renders every case of testdata/cases.json and compares
// with @huggingface/jinja's rendering (scripts/chat-goldens.mjs).
func TestGoldenHFJinja(t *testing.T) {
	cf, cases := loadCases(t)
	if len(cases) != 160 {
		t.Fatalf("%d golden cases, want 160 (regenerate with scripts/chat-goldens.mjs)", len(cases))
	}
	compiled := map[string]*Template{}
	matched, diverged := 0, 0
	for _, c := range cases {
		td := cf.Templates[c.Template]
		tm := compiled[c.Template]
		if tm == nil {
			src, err := os.ReadFile(filepath.Join("testdata", td.File))
			if err != nil {
				t.Fatal(err)
			}
			if tm, err = Compile(c.Template, string(src), Limits{}); err != nil {
				t.Fatalf("%s: %v", c.Template, err)
			}
			compiled[c.Template] = tm
		}
		conv := cf.Conversations[c.Conversation]
		msgs, err := ParseMessages(conv.Messages)
		if err != nil {
			t.Fatalf("%s: %v", c.Conversation, err)
		}
		got, err := tm.Render(msgs, Options{AddGenerationPrompt: c.AGP, BOS: td.BOS, EOS: td.EOS, Tools: conv.Tools, Now: cf.Now})
		name := c.Template + "/" + c.Conversation
		if c.AGP {
			name += "/gen"
		}
		if divergent[[2]string{c.Template, c.Conversation}] {
			diverged++
			if c.Error == nil && err == nil && got == *c.Output {
				t.Errorf("%s: listed as divergent but matches the reference; remove it from the list", name)
			}
			continue
		}
		switch {
		case c.Error != nil:
			if err == nil {
				t.Errorf("%s: reference raised %q, got output %q", name, *c.Error, got)
			} else if !errors.Is(err, ErrTemplate) {
				t.Errorf("%s: error %v does not wrap ErrTemplate", name, err)
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case got != *c.Output:
			t.Errorf("%s:\n got  %q\n want %q", name, got, *c.Output)
		default:
			matched++
		}
	}
	t.Logf("%d cases match the reference, %d expected divergences", matched, diverged)
}

func openVocab(t *testing.T, name string) *gguf.File {
	t.Helper()
	path := filepath.Join("..", "..", "..", "shared", "vocab", name)
	fh, err := os.Open(path)
	if err != nil {
		t.Skipf("%s not available: %v", path, err)
	}
	t.Cleanup(func() { fh.Close() })
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(fh, st.Size(), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPhi3FromGGUF checks that the committed phi3 built-in is the template
// in llama.cpp's phi-3 vocab file, and that FromGGUF reads it.
func TestPhi3FromGGUF(t *testing.T) {
	f := openVocab(t, "ggml-vocab-phi-3.gguf")
	tm, fromFile, err := FromGGUF(f, Limits{})
	if err != nil || !fromFile {
		t.Fatalf("FromGGUF: %v (fromFile %v)", err, fromFile)
	}
	b, err := builtinFS.ReadFile("templates/phi3.jinja")
	if err != nil {
		t.Fatal(err)
	}
	if tm.Source() != string(b) {
		t.Errorf("templates/phi3.jinja differs from the GGUF's %s", KeyTemplate)
	}
	// A file without a template gets the documented fallback.
	tm, fromFile, err = FromGGUF(openVocab(t, "ggml-vocab-llama-spm.gguf"), Limits{})
	if err != nil || fromFile || tm.Name() != Fallback {
		t.Errorf("no template: got %v, fromFile %v, err %v; want the %s fallback", tm.Name(), fromFile, err, Fallback)
	}
}

// TestSpecialTokens tokenizes template renderings with parse-special on and
// compares with llama.cpp's ids (scripts/chat-token-goldens.mjs): the
// special-token text a template writes must become the special tokens.
func TestSpecialTokens(t *testing.T) {
	var g struct {
		Cases []struct {
			Vocab, Template, Conversation, Text string
			Tokens                              []int32
		}
	}
	b, err := os.ReadFile("testdata/tokens.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Cases {
		tok, err := tokenizer.FromGGUF(openVocab(t, c.Vocab))
		if err != nil {
			t.Fatal(err)
		}
		got := tok.Encode(c.Text, false, true)
		if !slices.Equal(got, c.Tokens) {
			t.Errorf("%s %s/%s:\n got  %v\n want %v", c.Vocab, c.Template, c.Conversation, got, c.Tokens)
		}
	}
}
