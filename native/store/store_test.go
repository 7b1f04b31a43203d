package store

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/native/internal/testgguf"
	"github.com/memvanta/memvanta/native/mmap"
)

func open(t *testing.T) (*Store, []gguf.TensorInfo, int64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.gguf")
	infos, dataOff, err := testgguf.Write(p, []testgguf.Tensor{
		{Name: "a", Type: ggml.Q4_0, Dims: []uint64{64, 5}},
		{Name: "b", Type: ggml.F32, Dims: []uint64{3, 2, 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mmap.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	s, err := New(m, dataOff, infos)
	if err != nil {
		t.Fatal(err)
	}
	return s, infos, dataOff
}

func expect(k int, off, n uint64) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = testgguf.Pattern(k, off+uint64(i))
	}
	return b
}

func TestRows(t *testing.T) {
	s, _, _ := open(t)
	a, _ := s.Tensor("a")
	if a.Rows != 5 || a.RowSize != 36 { // Q4_0: 64 elems = 2 blocks of 18 bytes
		t.Fatalf("a: rows %d rowsize %d", a.Rows, a.RowSize)
	}
	b, _ := s.Tensor("b")
	if b.Rows != 4 || b.RowSize != 12 {
		t.Fatalf("b: rows %d rowsize %d", b.Rows, b.RowSize)
	}
	tests := []struct {
		name   string
		k      int
		r0, r1 int64
		rs     uint64
		ok     bool
	}{
		{"a", 0, 0, 5, 36, true},
		{"a", 0, 2, 3, 36, true},
		{"a", 0, 4, 4, 36, true},
		{"b", 1, 1, 4, 12, true},
		{"a", 0, 4, 6, 36, false},
		{"a", 0, -1, 1, 36, false},
		{"a", 0, 3, 2, 36, false},
		{"zz", 0, 0, 1, 1, false},
	}
	for _, tc := range tests {
		got, err := s.Rows(tc.name, tc.r0, tc.r1)
		if (err == nil) != tc.ok {
			t.Errorf("Rows(%s,%d,%d) err = %v", tc.name, tc.r0, tc.r1, err)
			continue
		}
		if !tc.ok {
			if err := s.ReadRows(tc.name, tc.r0, tc.r1, nil); err == nil {
				t.Errorf("ReadRows(%s,%d,%d): no error", tc.name, tc.r0, tc.r1)
			}
			continue
		}
		want := expect(tc.k, uint64(tc.r0)*tc.rs, uint64(tc.r1-tc.r0)*tc.rs)
		if !bytes.Equal(got, want) || cap(got) != len(got) {
			t.Errorf("Rows(%s,%d,%d) wrong bytes or unbounded cap", tc.name, tc.r0, tc.r1)
		}
		for _, f := range []func(string, int64, int64, []byte) error{s.CopyRows, s.ReadRows} {
			dst := make([]byte, len(want))
			if err := f(tc.name, tc.r0, tc.r1, dst); err != nil || !bytes.Equal(dst, want) {
				t.Errorf("copy rows(%s,%d,%d): %v", tc.name, tc.r0, tc.r1, err)
			}
			if err := f(tc.name, tc.r0, tc.r1, make([]byte, len(want)+1)); err == nil {
				t.Errorf("copy rows with wrong dst size: no error")
			}
		}
	}
	whole, err := s.Bytes("b")
	if err != nil || !bytes.Equal(whole, expect(1, 0, 48)) {
		t.Errorf("Bytes(b): %v", err)
	}
}

func TestNewRejects(t *testing.T) {
	s, infos, dataOff := open(t)
	m := s.Map()
	bad := func(mut func(ti *gguf.TensorInfo)) []gguf.TensorInfo {
		c := append([]gguf.TensorInfo(nil), infos...)
		mut(&c[1])
		return c
	}
	cases := map[string][]gguf.TensorInfo{
		"past end":      bad(func(ti *gguf.TensorInfo) { ti.Offset = uint64(m.Size()) }),
		"size mismatch": bad(func(ti *gguf.TensorInfo) { ti.Size++ }),
		"bad row":       bad(func(ti *gguf.TensorInfo) { ti.Type = ggml.Q4_0 }),
		"no dims":       bad(func(ti *gguf.TensorInfo) { ti.Dims = nil }),
		"duplicate":     bad(func(ti *gguf.TensorInfo) { ti.Name = "a" }),
		"huge offset":   bad(func(ti *gguf.TensorInfo) { ti.Offset = ^uint64(0) - 3 }),
	}
	for name, c := range cases {
		if _, err := New(m, dataOff, c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
