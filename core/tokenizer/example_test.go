package tokenizer_test

import (
	"fmt"

	"github.com/memvanta/memvanta/core/tokenizer"
)

// A generation loop encodes the prompt with BOS as the metadata says, then
// streams generated ids through a Decoder until an end-of-generation token.
func ExampleTokenizer() {
	v := &tokenizer.Vocab{
		Model: tokenizer.ModelSPM,
		// SentencePiece merges pairs whose concatenation is a token, best
		// score first: ▁ H i -> ▁H i -> ▁Hi.
		Tokens: []string{"<unk>", "<s>", "</s>", "\u2581", "H", "i", "\u2581H", "\u2581Hi", "!"},
		Scores: []float32{0, 0, 0, -5, -5, -5, -2, -1, -5},
		Types: []tokenizer.TokenType{tokenizer.TypeUnknown, tokenizer.TypeControl, tokenizer.TypeControl,
			tokenizer.TypeNormal, tokenizer.TypeNormal, tokenizer.TypeNormal, tokenizer.TypeNormal,
			tokenizer.TypeNormal, tokenizer.TypeNormal},
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		panic(err)
	}
	fmt.Println(tok.Encode("Hi!", true, false))
	dec := tok.NewDecoder()
	for _, id := range []int32{7, 8, 2} { // as if generated

		if tok.IsEOG(id) {
			break
		}
		fmt.Printf("%q\n", dec.Add(id))
	}
	fmt.Printf("%q\n", dec.Flush())
	// Output:
	// [1 7 8]
	// " Hi"
	// "!"
	// ""
}
