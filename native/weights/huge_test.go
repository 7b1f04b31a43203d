//go:build linux

package weights

import (
	"os"
	"testing"

	"github.com/memvanta/memvanta/native/mmap"
)

func TestMappedSpan(t *testing.T) {
	ps := int64(os.Getpagesize())
	const C = mmap.ChunkSize
	tests := []struct {
		name           string
		off, n, file   int64
		wantLo, wantHi int64
	}{
		{"inside full chunks widens to chunks", C + 100, 10, 4 * C, C, 2 * C},
		{"spanning chunks", C - 1, 2, 4 * C, 0, 2 * C},
		{"tail chunk cut by EOF stays page-rounded", 3*C + 5, 10, 3*C + 3*ps, 3 * C, 3*C + ps},
		{"start chunk cut by EOF, small file", 100, 10, C / 2, 0, ps},
		{"exact chunk", C, C, 2 * C, C, 2 * C},
	}
	for _, tc := range tests {
		got := mappedSpan(tc.off, tc.n, tc.file)
		if got.lo != tc.wantLo || got.hi != tc.wantHi {
			t.Errorf("%s: mappedSpan(%d,%d,%d) = [%d,%d), want [%d,%d)", tc.name, tc.off, tc.n, tc.file, got.lo, got.hi, tc.wantLo, tc.wantHi)
		}
		if got.lo > tc.off || got.hi < tc.off+tc.n {
			t.Errorf("%s: span [%d,%d) does not cover [%d,+%d)", tc.name, got.lo, got.hi, tc.off, tc.n)
		}
	}
}

func TestUnionSize(t *testing.T) {
	tests := []struct {
		spans []span
		want  int64
	}{
		{[]span{{0, 10}}, 10},
		{[]span{{0, 10}, {10, 20}}, 20},             // touching
		{[]span{{0, 10}, {5, 20}}, 20},              // overlapping
		{[]span{{30, 40}, {0, 10}}, 20},             // unsorted, disjoint
		{[]span{{0, 100}, {10, 20}, {50, 60}}, 100}, // nested
	}
	for _, tc := range tests {
		if got := unionSize(append([]span(nil), tc.spans...)); got != tc.want {
			t.Errorf("unionSize(%v) = %d, want %d", tc.spans, got, tc.want)
		}
	}
}
