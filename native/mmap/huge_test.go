//go:build linux

package mmap

import (
	"bytes"
	"errors"
	"testing"
)

// The kernel decides whether a populated range ends up PMD-mapped, so the
// tests check what must hold either way: ranges inside the query, ordered
// and disjoint; nothing reported for unmapped memory; Recache leaves the
// data intact; bad ranges are errors.
func TestHugeRanges(t *testing.T) {
	data := pattern(3*ChunkSize + 12345)
	m, err := Open(writeTemp(t, data))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rs, err := m.HugeRanges(0, m.Size())
	if errors.Is(err, ErrNoScan) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 0 {
		t.Fatalf("nothing mapped yet, got huge ranges %v", rs)
	}
	check := func(off, n int64) {
		t.Helper()
		rs, err := m.HugeRanges(off, n)
		if err != nil {
			t.Fatal(err)
		}
		prev := off
		for _, r := range rs {
			if r.Off < prev || r.End <= r.Off || r.End > off+n {
				t.Fatalf("HugeRanges(%d,%d) = %v: not ordered, disjoint and inside the query", off, n, rs)
			}
			prev = r.End
		}
	}
	if err := m.Advise(0, m.Size(), Populate); err != nil {
		t.Fatal(err)
	}
	check(0, m.Size())
	check(ChunkSize/2, ChunkSize)
	check(m.Size()-7, 7)
	if err := m.Recache(ChunkSize, 2*ChunkSize); err != nil {
		t.Fatal(err)
	}
	check(0, m.Size())
	if !bytes.Equal(m.Bytes(), data) {
		t.Fatal("data differs after Recache")
	}
	if err := m.Advise(0, m.Size(), DontNeed); err != nil {
		t.Fatal(err)
	}
	if rs, _ := m.HugeRanges(0, m.Size()); len(rs) != 0 {
		t.Fatalf("after DontNeed, huge ranges %v", rs)
	}
	for _, bad := range [][2]int64{{-1, 10}, {0, m.Size() + 1}, {m.Size(), 1}} {
		if _, err := m.HugeRanges(bad[0], bad[1]); err == nil {
			t.Errorf("HugeRanges(%d,%d): no error", bad[0], bad[1])
		}
	}
	if err := m.Recache(m.Size(), 1); err == nil {
		t.Error("Recache past the end: no error")
	}
}
