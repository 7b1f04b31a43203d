package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

func section(id byte, body []byte) []byte {
	return append(binary.AppendUvarint([]byte{id}, uint64(len(body))), body...)
}

type seg struct {
	off  int32
	data []byte
}

// module is a wasm module with one exported memory of pages pages and the
// given active data segments, plus extra sections placed before the data.
func module(pages int, segs []seg, extra ...[]byte) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	for _, e := range extra {
		m = append(m, e...)
	}
	m = append(m, section(5, append([]byte{1, 0}, binary.AppendUvarint(nil, uint64(pages))...))...) // memory: min pages
	m = append(m, section(7, []byte{1, 3, 'm', 'e', 'm', 2, 0})...)                                 // export "mem"
	d := binary.AppendUvarint(nil, uint64(len(segs)))
	for _, s := range segs {
		d = append(d, 0, 0x41)
		d = appendS32(d, s.off)
		d = append(d, 0x0b)
		d = binary.AppendUvarint(d, uint64(len(s.data)))
		d = append(d, s.data...)
	}
	m = append(m, section(11, d)...)
	return append(m, section(0, []byte{4, 't', 'a', 'i', 'l', 'x'})...) // a custom section after the data
}

// memoryOf instantiates wasm in wazero and returns its memory.
func memoryOf(t *testing.T, wasm []byte) []byte {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	mem := mod.ExportedMemory("mem")
	b, ok := mem.Read(0, mem.Size())
	if !ok {
		t.Fatal("reading memory")
	}
	return bytes.Clone(b)
}

// Packed modules instantiate to byte-identical memory, whatever the
// segments: out of order, overlapping (the later one wins), adjacent, with
// zero bytes inside and gaps below and above MinGap.
func TestPackKeepsMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	rnd := func(n int, zeros bool) []byte {
		b := make([]byte, n)
		for i := range b {
			if !zeros || r.IntN(3) != 0 {
				b[i] = byte(1 + r.IntN(255))
			}
		}
		return b
	}
	tests := map[string][]seg{
		"one":          {{100, rnd(10, false)}},
		"adjacent":     {{0, rnd(8, false)}, {8, rnd(8, false)}},
		"small gap":    {{16, rnd(5, true)}, {40, rnd(7, true)}},
		"big gap":      {{16, rnd(5, false)}, {16 + 5 + MinGap + 3, rnd(7, false)}},
		"out of order": {{5000, rnd(20, true)}, {10, rnd(30, true)}, {3000, []byte{1}}},
		"overlap":      {{100, rnd(50, false)}, {120, rnd(50, false)}, {90, rnd(5, false)}},
		"zero segment": {{200, make([]byte, 40)}, {300, rnd(3, false)}},
		"high offset":  {{1<<17 - 9, rnd(9, false)}},
		"empty":        {{50, nil}, {60, rnd(2, false)}},
	}
	var many []seg
	for i := 0; i < 500; i++ {
		many = append(many, seg{int32(r.IntN(1<<17 - 64)), rnd(1+r.IntN(60), true)})
	}
	tests["random"] = many
	for name, segs := range tests {
		t.Run(name, func(t *testing.T) {
			in := module(2, segs)
			out, before, after, err := Pack(in)
			if err != nil {
				t.Fatal(err)
			}
			if before != len(segs) || after > before {
				t.Errorf("segments %d -> %d (had %d)", before, after, len(segs))
			}
			if !bytes.Equal(memoryOf(t, in), memoryOf(t, out)) {
				t.Fatal("packed module's memory differs")
			}
			if !bytes.HasSuffix(out, section(0, []byte{4, 't', 'a', 'i', 'l', 'x'})) {
				t.Error("sections after the data section were not kept")
			}
		})
	}
	out, _, after, _ := Pack(module(1, []seg{{0, []byte{1}}, {2, []byte{2}}, {int32(3 + MinGap), []byte{3}}}))
	if after != 2 {
		t.Errorf("got %d segments, want 2 (split at the %d-byte gap only): %x", after, MinGap, out)
	}
}

func TestPackRefuses(t *testing.T) {
	memImport := section(2, []byte{1, 1, 'e', 1, 'm', 2, 0, 1})
	funcImport := section(2, []byte{1, 1, 'e', 1, 'f', 0, 0})
	typeSec := section(1, []byte{1, 0x60, 0, 0})
	good := module(1, []seg{{0, []byte{1}}})
	tests := []struct {
		name, want string
		wasm       []byte
	}{
		{"not wasm", "not a version-1", []byte("hello, world")},
		{"memory import", "imports its memory", module(1, []seg{{0, []byte{1}}}, memImport)},
		{"data count", "data count", module(1, []seg{{0, []byte{1}}}, section(12, []byte{1}))},
		{"passive segment", "flags 1", bytes.Replace(good, []byte{11, 7, 1, 0, 0x41}, []byte{11, 7, 1, 1, 0x41}, 1)},
		{"global offset", "not an i32.const", bytes.Replace(good, []byte{11, 7, 1, 0, 0x41}, []byte{11, 7, 1, 0, 0x23}, 1)},
		{"truncated", "runs past the end", good[:len(good)-3]},
		{"no data", "no data section", []byte("\x00asm\x01\x00\x00\x00")},
	}
	for _, tc := range tests {
		_, _, _, err := Pack(tc.wasm)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// A function import is fine.
	if _, _, _, err := Pack(module(1, []seg{{0, []byte{1}}}, typeSec, funcImport)); err != nil {
		t.Errorf("function import: %v", err)
	}
}
