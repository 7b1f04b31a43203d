package tokenizer

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/memvanta/memvanta/core/gguf"
)

func ptr[T any](x T) *T { return &x }

// spmVocab is a tiny SentencePiece vocabulary: control tokens, the 256 byte
// tokens, and a few pieces whose scores decide the merge order.
func spmVocab() *Vocab {
	v := &Vocab{Model: ModelSPM}
	add := func(s string, score float32, tt TokenType) {
		v.Tokens = append(v.Tokens, s)
		v.Scores = append(v.Scores, score)
		v.Types = append(v.Types, tt)
	}
	add("<unk>", 0, TypeUnknown)
	add("<s>", 0, TypeControl)
	add("</s>", 0, TypeControl)
	for b := 0; b < 256; b++ {
		add(fmt.Sprintf("<0x%02X>", b), 0, TypeByte)
	}
	add("\u2581", -1, TypeNormal)       // 259
	add("a", -2, TypeNormal)            // 260
	add("b", -2, TypeNormal)            // 261
	add("c", -2, TypeNormal)            // 262
	add("ab", -3, TypeNormal)           // 263
	add("\u2581ab", -4, TypeNormal)     // 264
	add("bc", -1, TypeNormal)           // 265: beats "ab" when both apply
	add("<tool>", 0, TypeUserDefined)   // 266
	add("\u2581\u2581", -5, TypeNormal) // 267
	return v
}

func mustNew(t testing.TB, v *Vocab) *Tokenizer {
	t.Helper()
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestSPMSynthetic(t *testing.T) {
	tok := mustNew(t, spmVocab())
	byteTok := func(b byte) int32 { return 3 + int32(b) }
	cases := []struct {
		text string
		want []int32
	}{
		// "▁ab▁c": ab merges first, then ▁+ab; ▁c is no token.
		{"ab c", []int32{264, 259, 262}},
		// "▁abc": bc (-1) beats ab (-3); ▁a is no token, so ▁ a bc.
		{"abc", []int32{259, 260, 265}},
		// characters without a piece fall back to their UTF-8 bytes
		{"é", []int32{259, byteTok(0xC3), byteTok(0xA9)}},
		// two spaces: ▁▁ is a piece
		{" a", []int32{267, 260}},
		// user-defined tokens split the text even without parse_special,
		// and the text after a special token gets a space prefix again
		{"a<tool>b", []int32{259, 260, 266, 259, 261}},
		// control text is plain text without parse_special: < s > as bytes
		{"<s>", []int32{259, byteTok('<'), byteTok('s'), byteTok('>')}},
		{"", nil},
	}
	for _, c := range cases {
		got := tok.Encode(c.text, false, false)
		if !equalIDs(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	if got := tok.Encode("<s>a", false, true); !equalIDs(got, []int32{1, 259, 260}) {
		t.Errorf("Encode(<s>a, parseSpecial) = %v, want [1 259 260]", got)
	}
	if got := tok.Encode("a", true, false); !equalIDs(got, []int32{1, 259, 260}) {
		t.Errorf("Encode(a, addSpecial) = %v, want BOS first", got)
	}
	if got := tok.Encode("", true, false); !equalIDs(got, []int32{1}) {
		t.Errorf("Encode(\"\", addSpecial) = %v, want [1]", got)
	}
	if tok.BOS() != 1 || tok.EOS() != 2 || !tok.IsEOG(2) || tok.IsEOG(1) || tok.NVocab() != 268 {
		t.Errorf("special ids: bos %d eos %d eog(2) %v n %d", tok.BOS(), tok.EOS(), tok.IsEOG(2), tok.NVocab())
	}
}

func TestSPMPieces(t *testing.T) {
	tok := mustNew(t, spmVocab())
	cases := []struct {
		id      int32
		piece   string
		special string
	}{
		{1, "", "<s>"},
		{0, "", "<unk>"},
		{3 + 0x41, "A", "A"},
		{264, " ab", " ab"},
		{266, "<tool>", "<tool>"},
		{-1, "", ""},
		{100000, "", ""},
	}
	for _, c := range cases {
		if got := string(tok.Piece(c.id)); got != c.piece {
			t.Errorf("Piece(%d) = %q, want %q", c.id, got, c.piece)
		}
		if got := string(tok.PieceSpecial(c.id)); got != c.special {
			t.Errorf("PieceSpecial(%d) = %q, want %q", c.id, got, c.special)
		}
	}
	for _, s := range []string{"ab c", "abc", " a", "é€🦙", "a<tool>b", "  x  "} {
		if got := tok.Decode(tok.Encode(s, true, false)); got != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, got)
		}
	}
}

// bpeVocab is a byte-level BPE vocabulary: the 256 byte-alphabet characters
// and two merges.
func bpeVocab() *Vocab {
	bl := newByteLevel()
	v := &Vocab{Model: ModelBPE, Pre: "gpt-2"}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, bl.enc[b])
	}
	v.Tokens = append(v.Tokens, "ab", "\u0120ab", "<|endoftext|>") // 256, 257, 258
	v.Merges = []string{"a b", "\u0120 ab"}
	v.Types = make([]TokenType, len(v.Tokens))
	for i := range v.Types {
		v.Types[i] = TypeNormal
	}
	v.Types[258] = TypeControl
	v.BOS, v.EOS = ptr(int32(258)), ptr(int32(258))
	return v
}

func TestBPESynthetic(t *testing.T) {
	tok := mustNew(t, bpeVocab())
	cases := []struct {
		text string
		want []int32
	}{
		{"a ab", []int32{'a', 257}},
		{"ab", []int32{256}},
		{"b a", []int32{'b', ' ', 'a'}}, // token id of byte b is b (its text is Ġ for ' ')
		{"é", []int32{0xC3, 0xA9}},
		{"<|endoftext|>", []int32{'<', '|', 'e', 'n', 'd', 'o', 'f', 't', 'e', 'x', 't', '|', '>'}},
	}
	for _, c := range cases {
		got := tok.Encode(c.text, false, false)
		if !equalIDs(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
		if d := tok.Decode(got); d != c.text {
			t.Errorf("Decode(Encode(%q)) = %q", c.text, d)
		}
	}
	if got := tok.Encode("x<|endoftext|>", true, true); !equalIDs(got, []int32{'x', 258}) {
		t.Errorf("parseSpecial: %v", got)
	}
	if tok.AddBOS() || tok.AddEOS() {
		t.Error("gpt-2 pre-tokenizer must not add BOS/EOS by default")
	}
}

func TestPartitionStrip(t *testing.T) {
	v := spmVocab()
	v.Name = "Phi3 mini" // llama.cpp gives phi-3 special tokens rstrip
	tok := mustNew(t, v)
	got := tok.partition("a<tool>  \tb<tool>", false)
	want := []fragment{{text: "a", tok: NoToken}, {tok: 266}, {text: "b", tok: NoToken}, {tok: 266}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rstrip partition = %+v, want %+v", got, want)
	}
	b := bpeVocab()
	b.Pre = "jina-v2-es"
	b.Tokens = append(b.Tokens, "<mask>")
	b.Types = append(b.Types, TypeUserDefined)
	btok := mustNew(t, b)
	got = btok.partition("x  <mask> y", false)
	want = []fragment{{text: "x", tok: NoToken}, {tok: 259}, {text: " y", tok: NoToken}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lstrip partition = %+v, want %+v", got, want)
	}
}

func TestCleanSpaces(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"Hello , world !", "Hello, world!"},
		{"a ? b .", "a? b."},
		{"a ' b", "a'b"},
		{"it 's we 're you 've I 'm", "it's we're you've I'm"},
		{"do 't I 'd we 'll", "do 't I 'd we 'll"},
		// llama.cpp overwrites the skipped space, so the second quote keeps its spaces
		{"a ' ' b", "a'' b"},
		{" ,", ","}, // the first slot is kept but pass one overwrites it
	}
	for _, c := range cases {
		if got := string(cleanSpaces([]byte(c.in))); got != c.want {
			t.Errorf("cleanSpaces(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDecoderStreaming(t *testing.T) {
	tok := mustNew(t, spmVocab())
	byteTok := func(b byte) int32 { return 3 + int32(b) }
	d := tok.NewDecoder()
	var out []string
	for _, b := range []byte("🦙") {
		out = append(out, d.Add(byteTok(b)))
	}
	if !reflect.DeepEqual(out, []string{"", "", "", "🦙"}) {
		t.Errorf("streamed %q", out)
	}
	if s := d.Add(264); s != " ab" {
		t.Errorf("Add(▁ab) = %q", s)
	}
	if s := d.Add(byteTok(0xFF)); s != "\xff" {
		t.Errorf("invalid byte must pass through, got %q", s)
	}
	if s := d.Add(byteTok(0xE2)); s != "" {
		t.Errorf("lead byte must be held, got %q", s)
	}
	if s := d.Flush(); s != "\xe2" {
		t.Errorf("Flush = %q", s)
	}
	if s := d.Flush(); s != "" {
		t.Errorf("second Flush = %q", s)
	}
}

func TestCompletePrefix(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 3}, {"a\xe2", 1}, {"a\xe2\x82", 1}, {"a\xe2\x82\xac", 4},
		{"\xf0\x9f\xa6", 0}, {"\xf0\x9f\xa6\x99", 4}, {"a\x80", 2}, {"a\xff", 2}, {"\xc3", 0}, {"\xe2A", 2},
	}
	for _, c := range cases {
		if got := completePrefix([]byte(c.in)); got != c.want {
			t.Errorf("completePrefix(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name string
		edit func(v *Vocab)
		is   error
	}{
		{"no tokens", func(v *Vocab) { v.Tokens = nil }, nil},
		{"scores length", func(v *Vocab) { v.Scores = v.Scores[:3] }, nil},
		{"types length", func(v *Vocab) { v.Types = v.Types[:3] }, nil},
		{"model", func(v *Vocab) { v.Model = "t5" }, ErrUnsupported},
		{"pre", func(v *Vocab) { v.Model, v.Pre, v.Merges = ModelBPE, "chameleon", []string{"a b"} }, ErrUnsupported},
		{"merges", func(v *Vocab) { v.Model, v.Pre = ModelBPE, "gpt-2" }, nil},
	}
	for _, c := range cases {
		v := spmVocab()
		c.edit(v)
		_, err := New(v)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: %v does not wrap %v", c.name, err, c.is)
		}
	}
}

// writeGGUF builds an in-memory GGUF with the given metadata.
func writeGGUF(t *testing.T, kv map[string]any, order []string) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf)
	for _, k := range order {
		v, err := gguf.ValueOf(kv[k])
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddKV(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()), gguf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFromGGUF(t *testing.T) {
	v := spmVocab()
	types := make([]int32, len(v.Types))
	for i, x := range v.Types {
		types[i] = int32(x)
	}
	kv := map[string]any{
		keyModel: "llama", keyTokens: v.Tokens, keyScores: v.Scores, keyTypes: types,
		keyBOS: uint32(1), keyEOS: uint32(2), keyAddBOS: false, keyAddEOS: true,
	}
	order := []string{keyModel, keyTokens, keyScores, keyTypes, keyBOS, keyEOS, keyAddBOS, keyAddEOS}
	tok, err := FromGGUF(writeGGUF(t, kv, order))
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Encode("ab", true, false); !equalIDs(got, []int32{264, 2}) {
		t.Errorf("Encode with add_bos=false add_eos=true = %v, want [264 2]", got)
	}

	// integer scores (accepted by llama.cpp) give the same merges
	iscores := make([]int32, len(v.Scores))
	for i, x := range v.Scores {
		iscores[i] = int32(x)
	}
	kv[keyScores] = iscores
	itok, err := FromGGUF(writeGGUF(t, kv, order))
	if err != nil {
		t.Fatal(err)
	}
	if got := itok.Encode("ab c", false, false); !equalIDs(got, []int32{264, 259, 262}) {
		t.Errorf("integer scores: Encode = %v", got)
	}
	kv[keyScores] = v.Scores[:10]
	if _, err := FromGGUF(writeGGUF(t, kv, order)); err == nil {
		t.Error("too few scores: no error")
	}
	kv[keyScores] = v.Scores

	_, err = FromGGUF(writeGGUF(t, kv, order[1:]))
	if !errors.Is(err, gguf.ErrNotFound) {
		t.Errorf("missing model key: %v, want ErrNotFound", err)
	}
	kv[keyTokens] = "not an array"
	_, err = FromGGUF(writeGGUF(t, kv, order))
	if !errors.Is(err, gguf.ErrType) {
		t.Errorf("tokens of wrong type: %v, want ErrType", err)
	}
}

// TestConcurrentEncode: a Tokenizer is shared by goroutines without locking.
func TestConcurrentEncode(t *testing.T) {
	tok := mustNew(t, spmVocab())
	btok := mustNew(t, bpeVocab())
	want, bwant := tok.Encode("ab c é", true, false), btok.Encode("a ab é", true, false)
	done := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				if got := tok.Encode("ab c é", true, false); !equalIDs(got, want) {
					done <- fmt.Errorf("SPM: %v != %v", got, want)
					return
				}
				if got := btok.Encode("a ab é", true, false); !equalIDs(got, bwant) {
					done <- fmt.Errorf("BPE: %v != %v", got, bwant)
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestEncodeTooLong(t *testing.T) {
	tok := mustNew(t, spmVocab())
	tok.maxInput = 8
	if _, err := tok.EncodeChecked("123456789", false, false); !errors.Is(err, ErrTooLong) {
		t.Errorf("EncodeChecked over the limit: %v, want ErrTooLong", err)
	}
	if ids := tok.Encode("123456789", true, false); ids != nil {
		t.Errorf("Encode over the limit = %v, want nil", ids)
	}
	if ids, err := tok.EncodeChecked("12345678", false, false); err != nil || len(ids) == 0 {
		t.Errorf("EncodeChecked at the limit: %v %v", ids, err)
	}
}
