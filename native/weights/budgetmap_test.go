//go:build linux

package weights

import (
	"os"
	"slices"
	"testing"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/native/mmap"
	"github.com/memvanta/memvanta/native/store"
)

func TestFileRanges(t *testing.T) {
	ps := int64(os.Getpagesize())
	r := func(off, end int64) mmap.Range { return mmap.Range{Off: off, End: end} }
	for _, tc := range []struct {
		name string
		ext  []mmap.Range // tensor extents, in group order
		want []fileRange
	}{
		{"one tensor", []mmap.Range{r(100, 5000)}, []fileRange{{r(100, 5000), []mmap.Range{r(100, 5000)}}}},
		{"padding inside a page merges", []mmap.Range{r(0, 1000), r(1024, 3000)},
			[]fileRange{{r(0, 3000), []mmap.Range{r(0, 1000), r(1024, 3000)}}}},
		{"group order is not file order", []mmap.Range{r(1024, 3000), r(0, 1000)},
			[]fileRange{{r(0, 3000), []mmap.Range{r(0, 1000), r(1024, 3000)}}}},
		{"next starts on the page after the end", []mmap.Range{r(0, ps-10), r(ps, 2*ps)},
			[]fileRange{{r(0, 2*ps), []mmap.Range{r(0, ps-10), r(ps, 2*ps)}}}},
		{"a whole page between stays apart", []mmap.Range{r(0, ps-10), r(2*ps, 3*ps)},
			[]fileRange{{r(0, ps-10), []mmap.Range{r(0, ps-10)}}, {r(2*ps, 3*ps), []mmap.Range{r(2*ps, 3*ps)}}}},
		{"empty tensor ignored", []mmap.Range{r(0, 10), r(5*ps, 5*ps)}, []fileRange{{r(0, 10), []mmap.Range{r(0, 10)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ts []*store.Tensor
			for _, e := range tc.ext {
				ts = append(ts, &store.Tensor{Info: gguf.TensorInfo{Size: uint64(e.End - e.Off)}, Off: e.Off})
			}
			got := fileRanges(ts)
			if !slices.EqualFunc(got, tc.want, func(a, b fileRange) bool { return a.Range == b.Range && slices.Equal(a.parts, b.parts) }) {
				t.Errorf("fileRanges = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHugeCount(t *testing.T) {
	r := func(off, end int64) mmap.Range { return mmap.Range{Off: off, End: end} }
	for _, tc := range []struct {
		name        string
		huge, parts []mmap.Range
		wantHuge    int64
		wantSmall   int64
	}{
		{"all huge", []mmap.Range{r(0, 100)}, []mmap.Range{r(0, 40), r(50, 100)}, 90, 0},
		{"padding not counted", []mmap.Range{r(40, 50)}, []mmap.Range{r(0, 40), r(50, 100)}, 0, 90},
		{"split across parts", []mmap.Range{r(30, 60), r(90, 200)}, []mmap.Range{r(0, 40), r(50, 100)}, 30, 60},
		{"none huge", nil, []mmap.Range{r(0, 40)}, 0, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHugeState(1<<30, false)
			h.count(tc.huge, tc.parts)
			if huge, small, _ := h.counters(); huge != tc.wantHuge || small != tc.wantSmall {
				t.Errorf("huge %d small %d, want %d %d", huge, small, tc.wantHuge, tc.wantSmall)
			}
		})
	}
}
