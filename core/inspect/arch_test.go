package inspect

import (
	"bytes"
	"testing"

	"github.com/memvanta/memvanta/core/arch"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/synth"
	"github.com/memvanta/memvanta/internal/archfixtures"
)

// TestArchTable: inspect knows an architecture exactly when core/arch's
// table has it (the table the runtime executes), and shows its own keys;
// each architecture is written as its shared test fixture
// (internal/archfixtures, which core/arch's tests keep covering every
// registered architecture).
func TestArchTable(t *testing.T) {
	fixtures := map[string]synth.Arch{"mamba": {}} // written as llama, renamed below
	for _, fx := range archfixtures.All() {
		if _, ok := fixtures[fx.Name()]; !ok {
			fixtures[fx.Name()] = fx.Arch
		}
	}
	for _, name := range append(arch.Names(), "mamba") {
		a, ok := fixtures[name]
		if !ok {
			t.Fatalf("%s has no fixture in internal/archfixtures", name)
		}
		h, size, err := synth.Header(synth.Config{Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 64, Ctx: 128,
			RopeBase: 10000, Eps: 1e-6, VocabSize: 300, Arch: a})
		if err != nil {
			t.Fatal(err)
		}
		h = append(h, make([]byte, size-int64(len(h)))...) // tensor data: zeros are enough here
		if name == "mamba" {
			h = bytes.Replace(h, []byte("\x05\x00\x00\x00\x00\x00\x00\x00llama"), []byte("\x05\x00\x00\x00\x00\x00\x00\x00mamba"), 1)
		}
		f, err := gguf.Parse(bytes.NewReader(h), int64(len(h)), gguf.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		r := Build(f, Options{})
		if r.Architecture != name || r.KnownArchitecture != (name != "mamba") {
			t.Errorf("%s: architecture %q known %v", name, r.Architecture, r.KnownArchitecture)
		}
		if name == "gemma2" {
			got := map[string]bool{}
			for _, h := range r.Hyperparameters {
				got[h.Key] = true
			}
			for _, k := range []string{"attn_logit_softcapping", "final_logit_softcapping", "attention.sliding_window"} {
				if !got[k] {
					t.Errorf("gemma2: hyperparameter %s not shown (%v)", k, r.Hyperparameters)
				}
			}
		}
	}
}
