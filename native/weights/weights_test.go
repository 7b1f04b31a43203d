package weights

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/native/internal/testgguf"
)

// tinyModel writes a llama-shaped file: token_embd, `layers` layers of
// four tensors, output norm and output; returns its path, tensor table and
// the plan a graph would declare.
func tinyModel(t testing.TB, dir string, embd, ff, layers int) (string, []gguf.TensorInfo, model.Plan) {
	t.Helper()
	e, f := uint64(embd), uint64(ff)
	ts := []testgguf.Tensor{{Name: "token_embd.weight", Type: ggml.Q8_0, Dims: []uint64{e, 64}}}
	plan := model.Plan{}
	for l := range layers {
		g := model.Group{Name: fmt.Sprintf("blk.%d", l)}
		for _, tt := range []testgguf.Tensor{
			{Name: fmt.Sprintf("blk.%d.attn_norm.weight", l), Type: ggml.F32, Dims: []uint64{e}},
			{Name: fmt.Sprintf("blk.%d.attn_q.weight", l), Type: ggml.Q4_0, Dims: []uint64{e, e}},
			{Name: fmt.Sprintf("blk.%d.ffn_up.weight", l), Type: ggml.Q4_0, Dims: []uint64{e, f}},
			{Name: fmt.Sprintf("blk.%d.ffn_down.weight", l), Type: ggml.Q4_0, Dims: []uint64{f, e}},
		} {
			ts = append(ts, tt)
			g.Tensors = append(g.Tensors, tt.Name)
		}
		plan.Groups = append(plan.Groups, g)
	}
	ts = append(ts, testgguf.Tensor{Name: "output_norm.weight", Type: ggml.F32, Dims: []uint64{e}},
		testgguf.Tensor{Name: "output.weight", Type: ggml.Q8_0, Dims: []uint64{e, 64}})
	plan.Groups = append(plan.Groups, model.Group{Name: "output", Tensors: []string{"output_norm.weight", "output.weight"}})
	p := filepath.Join(dir, "tiny.gguf")
	infos, _, err := testgguf.Write(p, ts)
	if err != nil {
		t.Fatal(err)
	}
	return p, infos, plan
}

func index(infos []gguf.TensorInfo) map[string]int {
	m := map[string]int{}
	for i, ti := range infos {
		m[ti.Name] = i
	}
	return m
}

func wantBytes(k int, off, n uint64) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = testgguf.Pattern(k, off+uint64(i))
	}
	return b
}

// runPasses drives the plan like a graph and checks every byte it gets.
func runPasses(t testing.TB, w model.Weights, plan model.Plan, infos []gguf.TensorInfo, passes int) {
	t.Helper()
	idx := index(infos)
	ctx := context.Background()
	for pass := range passes {
		for g, grp := range plan.Groups {
			bufs, err := w.Acquire(ctx, g)
			if err != nil {
				t.Fatalf("pass %d Acquire(%d): %v", pass, g, err)
			}
			if len(bufs) != len(grp.Tensors) {
				t.Fatalf("Acquire(%d): %d buffers for %d tensors", g, len(bufs), len(grp.Tensors))
			}
			for i, name := range grp.Tensors {
				k := idx[name]
				if !bytes.Equal(bufs[i], wantBytes(k, 0, infos[k].Size)) {
					t.Fatalf("pass %d: tensor %s bytes differ", pass, name)
				}
			}
			w.Release(g)
		}
	}
}

func TestModes(t *testing.T) {
	dir := t.TempDir()
	path, infos, plan := tinyModel(t, dir, 256, 512, 4)
	idx := index(infos)
	for _, opt := range []Options{
		{Mode: ""},
		{Mode: Resident},
		{Mode: Budget, Budget: 1 << 20},
		{Mode: Budget, Budget: 200 << 10}, // about two layers
		{Mode: Budget, Budget: 64 << 20},  // everything fits
		{Mode: Budget, Budget: 200 << 10, Stream: StreamMap},
		{Mode: Budget, Budget: 64 << 20, Stream: StreamMap},
		{Mode: Budget, Budget: 200 << 10, Stream: StreamCopy},
		{Mode: Budget, Budget: 200 << 10, Stream: StreamMap, KeepPageCache: true},
	} {
		t.Run(fmt.Sprintf("%s-%s-%d-keep%v", opt.Mode, opt.Stream, opt.Budget, opt.KeepPageCache), func(t *testing.T) {
			md, err := Open(context.Background(), path, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer md.Close()
			if len(md.File().Tensors) != len(infos) {
				t.Fatalf("parsed %d tensors, wrote %d", len(md.File().Tensors), len(infos))
			}
			w := md.Weights()
			if err := w.Declare(plan); err != nil {
				t.Fatal(err)
			}
			const passes = 3
			runPasses(t, w, plan, infos, passes)
			// Rows of the embedding table.
			k := idx["token_embd.weight"]
			rs := infos[k].Size / 64
			for _, r := range []int{0, 7, 63} {
				dst := make([]byte, rs)
				if err := w.Row(context.Background(), "token_embd.weight", r, dst); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(dst, wantBytes(k, uint64(r)*rs, rs)) {
					t.Fatalf("row %d differs", r)
				}
			}
			if err := w.Row(context.Background(), "token_embd.weight", 64, make([]byte, rs)); err == nil {
				t.Fatal("row past end: no error")
			}
			// One more Acquire closes the third pass.
			if _, err := w.Acquire(context.Background(), 0); err != nil {
				t.Fatal(err)
			}
			w.Release(0)
			s := md.Stats()
			var planBytes int64
			for _, g := range plan.Groups {
				for _, n := range g.Tensors {
					planBytes += int64(infos[idx[n]].Size)
				}
			}
			groupsPerPass := int64(len(plan.Groups))
			if s.Passes != passes || s.Acquisitions != passes*groupsPerPass+1 {
				t.Errorf("passes %d acquisitions %d", s.Passes, s.Acquisitions)
			}
			if s.CacheHits+s.CacheMisses != s.Acquisitions {
				t.Errorf("hits %d + misses %d != acquisitions %d", s.CacheHits, s.CacheMisses, s.Acquisitions)
			}
			wantTouched := passes*planBytes + int64(3*rs) + int64(s.Acquisitions-passes*groupsPerPass)*int64(planBytesOf(plan, infos, 0))
			if s.BytesTouched != wantTouched {
				t.Errorf("bytes touched %d, want %d", s.BytesTouched, wantTouched)
			}
			if len(s.PerPass) != passes {
				t.Errorf("%d per-pass records", len(s.PerPass))
			}
			if md.opt.Stream == StreamMap {
				// Every loaded byte is counted as mapped huge or small,
				// unless the kernel cannot report mappings (both zero).
				if got := s.HugeMappedBytes + s.SmallMappedBytes; got != s.BytesMoved && got != 0 {
					t.Errorf("map stream: huge %d + small %d != moved %d", s.HugeMappedBytes, s.SmallMappedBytes, s.BytesMoved)
				}
				if opt.KeepPageCache && s.RecachedBytes != 0 {
					t.Errorf("KeepPageCache: recached %d bytes", s.RecachedBytes)
				}
			} else if md.opt.Mode == Resident {
				// The first pass maps every group of the plan once and
				// counts each of its bytes once, huge or small.
				if got := s.HugeMappedBytes + s.SmallMappedBytes; got != planBytes && got != 0 {
					t.Errorf("resident first pass: huge %d + small %d != plan %d", s.HugeMappedBytes, s.SmallMappedBytes, planBytes)
				}
			} else if s.HugeMappedBytes+s.SmallMappedBytes+s.RecachedBytes != 0 {
				t.Errorf("%s: huge-mapping counters set: %+v", opt.Mode, s)
			}
			switch {
			case opt.Mode == Budget && opt.Budget < planBytes:
				if s.BytesMoved < passes*planBytes || s.Evictions == 0 {
					t.Errorf("streaming budget: moved %d (plan %d), evictions %d", s.BytesMoved, planBytes, s.Evictions)
				}
				if s.PeakWeightBytes > opt.Budget {
					t.Errorf("peak weight bytes %d over budget %d", s.PeakWeightBytes, opt.Budget)
				}
			case opt.Mode == Budget:
				if s.BytesMoved != planBytes || s.Evictions != 0 {
					t.Errorf("fitting budget: moved %d (plan %d), evictions %d", s.BytesMoved, planBytes, s.Evictions)
				}
			default:
				if s.BytesMoved != 0 || s.CacheMisses != 0 {
					t.Errorf("resident: moved %d misses %d", s.BytesMoved, s.CacheMisses)
				}
			}
		})
	}
}

func planBytesOf(plan model.Plan, infos []gguf.TensorInfo, g int) uint64 {
	idx := index(infos)
	var n uint64
	for _, name := range plan.Groups[g].Tensors {
		n += infos[idx[name]].Size
	}
	return n
}

func TestBudgetTooSmall(t *testing.T) {
	path, infos, plan := tinyModel(t, t.TempDir(), 256, 512, 2)
	layer := planBytesOf(plan, infos, 0)
	md, err := Open(context.Background(), path, Options{Mode: Budget, Budget: int64(layer) / 2})
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()
	err = md.Weights().Declare(plan)
	if err == nil {
		t.Fatal("budget below one layer: no error")
	}
	minMiB := fmt.Sprintf("%dMiB", ceilMiB(int64(layer)))
	if !strings.Contains(err.Error(), "minimum") || !strings.Contains(err.Error(), minMiB) || !strings.Contains(err.Error(), "blk.") {
		t.Fatalf("error %q does not name the group and the minimum %s", err, minMiB)
	}
}

func TestDeclareAndAcquireErrors(t *testing.T) {
	path, _, plan := tinyModel(t, t.TempDir(), 64, 64, 1)
	for _, mode := range []string{Resident, Budget} {
		md, err := Open(context.Background(), path, Options{Mode: mode, Budget: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		w := md.Weights()
		if _, err := w.Acquire(context.Background(), 0); err == nil {
			t.Errorf("%s: Acquire before Declare: no error", mode)
		}
		for name, p := range map[string]model.Plan{
			"empty":          {},
			"empty group":    {Groups: []model.Group{{Name: "x"}}},
			"missing tensor": {Groups: []model.Group{{Name: "x", Tensors: []string{"nope"}}}},
		} {
			if err := w.Declare(p); err == nil {
				t.Errorf("%s: Declare %s: no error", mode, name)
			}
		}
		if err := w.Declare(plan); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Acquire(context.Background(), len(plan.Groups)); err == nil {
			t.Errorf("%s: Acquire out of range: no error", mode)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := w.Acquire(ctx, 0); err == nil {
			t.Errorf("%s: Acquire with cancelled ctx: no error", mode)
		}
		w.Release(5) // ignored, no panic
		if _, ok := w.Info("blk.0.attn_q.weight"); !ok {
			t.Errorf("%s: Info missing", mode)
		}
		md.Close()
		if _, err := w.Acquire(context.Background(), 0); err == nil {
			t.Errorf("%s: Acquire after Close: no error", mode)
		}
		if err := md.Close(); err != nil {
			t.Errorf("%s: second Close: %v", mode, err)
		}
	}
	if _, err := Open(context.Background(), path, Options{Mode: "fast"}); err == nil {
		t.Error("unknown mode: no error")
	}
	if _, err := Open(context.Background(), path, Options{Mode: Budget, Budget: 1 << 20, Stream: "zerocopy"}); err == nil {
		t.Error("unknown stream strategy: no error")
	}
	if _, err := Open(context.Background(), path, Options{Mode: Budget}); err == nil {
		t.Error("budget mode without budget: no error")
	}
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "none.gguf"), Options{}); err == nil {
		t.Error("missing file: no error")
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"512MiB", 512 << 20, true},
		{"512mib", 512 << 20, true},
		{"512M", 512 << 20, true},
		{"1GiB", 1 << 30, true},
		{"1.5GiB", 3 << 29, true},
		{"2g", 2 << 30, true},
		{"100", 100, true},
		{"100B", 100, true},
		{"4KiB", 4096, true},
		{"1MB", 1000000, true},
		{"3 GB", 3e9, true},
		{"", 0, false},
		{"MiB", 0, false},
		{"-5MiB", 0, false},
		{"5XB", 0, false},
		{"1.5", 0, false},
		{"99999999999999999999", 0, false},
		{"9999999999TiB", 0, false},
	}
	for _, tc := range tests {
		got, err := ParseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	for n, s := range map[int64]string{100: "100B", 2048: "2.00KiB", 512 << 20: "512.00MiB", 3 << 29: "1.50GiB"} {
		if FormatSize(n) != s {
			t.Errorf("FormatSize(%d) = %q, want %q", n, FormatSize(n), s)
		}
	}
}
