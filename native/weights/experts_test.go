package weights

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/native/cache"
	"github.com/memvanta/memvanta/native/internal/testgguf"
)

// moeShape is a synthetic mixture-of-experts file: each layer has dense
// attention tensors and a router, and three 3-D expert tensors of nExpert
// experts, of which a token uses used.
type moeShape struct {
	embd, ff, layers, nExpert, used int
}

// moeModel writes a qwen3moe-shaped file (as a "llama" file with experts)
// and returns its path, tensor table and the plan an ExpertWeights-aware
// graph declares (expert tensors in Group.Experts, not in Tensors).
func moeModel(t testing.TB, dir string, s moeShape) (string, []gguf.TensorInfo, model.Plan) {
	t.Helper()
	e, f, n := uint64(s.embd), uint64(s.ff), uint64(s.nExpert)
	ts := []testgguf.Tensor{{Name: "token_embd.weight", Type: ggml.Q8_0, Dims: []uint64{e, 64}}}
	plan := model.Plan{Groups: []model.Group{{Name: "input", Tensors: []string{"token_embd.weight"}}}}
	for l := range s.layers {
		g := model.Group{Name: fmt.Sprintf("blk.%d", l), NExpert: s.nExpert}
		for _, tt := range []testgguf.Tensor{
			{Name: fmt.Sprintf("blk.%d.attn_norm.weight", l), Type: ggml.F32, Dims: []uint64{e}},
			{Name: fmt.Sprintf("blk.%d.attn_q.weight", l), Type: ggml.Q4_0, Dims: []uint64{e, e}},
			{Name: fmt.Sprintf("blk.%d.ffn_gate_inp.weight", l), Type: ggml.F32, Dims: []uint64{e, n}},
		} {
			ts = append(ts, tt)
			g.Tensors = append(g.Tensors, tt.Name)
		}
		for _, tt := range []testgguf.Tensor{
			{Name: fmt.Sprintf("blk.%d.ffn_gate_exps.weight", l), Type: ggml.Q4_0, Dims: []uint64{e, f, n}},
			{Name: fmt.Sprintf("blk.%d.ffn_up_exps.weight", l), Type: ggml.Q4_0, Dims: []uint64{e, f, n}},
			{Name: fmt.Sprintf("blk.%d.ffn_down_exps.weight", l), Type: ggml.Q8_0, Dims: []uint64{f, e, n}},
		} {
			ts = append(ts, tt)
			g.Experts = append(g.Experts, tt.Name)
		}
		plan.Groups = append(plan.Groups, g)
	}
	ts = append(ts, testgguf.Tensor{Name: "output_norm.weight", Type: ggml.F32, Dims: []uint64{e}},
		testgguf.Tensor{Name: "output.weight", Type: ggml.Q8_0, Dims: []uint64{e, 64}})
	plan.Groups = append(plan.Groups, model.Group{Name: "output", Tensors: []string{"output_norm.weight", "output.weight"}})
	p := filepath.Join(dir, "moe.gguf")
	infos, _, err := testgguf.WriteMeta(p, ts, map[string]uint32{"llama.expert_count": uint32(s.nExpert), "llama.expert_used_count": uint32(s.used)})
	if err != nil {
		t.Fatal(err)
	}
	return p, infos, plan
}

// routes is a deterministic stand-in for a router with locality: each
// token keeps about half of the previous token's experts of a layer and
// draws the rest from a skewed distribution (low ids more popular).
type routes struct {
	s    uint64
	prev [][]int
}

func (r *routes) rand() uint64 {
	r.s ^= r.s << 13
	r.s ^= r.s >> 7
	r.s ^= r.s << 17
	return r.s
}

func (r *routes) pick(layer, nExpert, used int) []int {
	for len(r.prev) <= layer {
		r.prev = append(r.prev, nil)
	}
	var ids []int
	has := func(e int) bool {
		for _, x := range ids {
			if x == e {
				return true
			}
		}
		return false
	}
	for _, e := range r.prev[layer] {
		if len(ids) < used/2 && r.rand()%2 == 0 {
			ids = append(ids, e)
		}
	}
	for len(ids) < used {
		a, b := int(r.rand()%uint64(nExpert)), int(r.rand()%uint64(nExpert))
		if e := min(a, b); !has(e) {
			ids = append(ids, e)
		}
	}
	r.prev[layer] = ids
	return ids
}

// expertWant is expert e of the named expert tensors' bytes as written.
func expertWant(infos []gguf.TensorInfo, names []string, nExpert, e int) [][]byte {
	idx := index(infos)
	var out [][]byte
	for _, name := range names {
		k := idx[name]
		s := infos[k].Size / uint64(nExpert)
		out = append(out, wantBytes(k, uint64(e)*s, s))
	}
	return out
}

// runMoE drives the plan like an MoE graph for passes tokens: per layer
// Acquire, WillNeedExperts, then each expert acquired (the next one before
// the previous is released, as the contract allows), checked and
// released. It returns the number of expert acquisitions.
func runMoE(t testing.TB, w model.ExpertWeights, plan model.Plan, infos []gguf.TensorInfo, s moeShape, passes int, r *routes) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for pass := range passes {
		for g, grp := range plan.Groups {
			if grp.Name == "input" {
				continue
			}
			if _, err := w.Acquire(ctx, g); err != nil {
				t.Fatalf("pass %d Acquire(%d): %v", pass, g, err)
			}
			if len(grp.Experts) > 0 {
				ids := r.pick(g, s.nExpert, s.used)
				w.WillNeedExperts(g, ids)
				prev := -1
				for _, e := range ids {
					bufs, err := w.AcquireExpert(ctx, g, e)
					if err != nil {
						t.Fatalf("pass %d AcquireExpert(%d, %d): %v", pass, g, e, err)
					}
					n++
					want := expertWant(infos, grp.Experts, s.nExpert, e)
					if len(bufs) != len(want) {
						t.Fatalf("AcquireExpert(%d, %d): %d slices, want %d", g, e, len(bufs), len(want))
					}
					for i := range want {
						if !bytes.Equal(bufs[i], want[i]) {
							t.Fatalf("pass %d: expert %d of %s: bytes differ", pass, e, grp.Experts[i])
						}
					}
					if prev >= 0 {
						w.ReleaseExpert(g, prev)
					}
					prev = e
				}
				if prev >= 0 {
					w.ReleaseExpert(g, prev)
				}
			}
			w.Release(g)
		}
	}
	return n
}

// moeMin is the smallest budget Declare accepts for s: a layer's dense
// group and the experts one token uses there.
func moeMin(t testing.TB, infos []gguf.TensorInfo, plan model.Plan, s moeShape) int64 {
	idx := index(infos)
	grp := plan.Groups[1]
	var dense, expert int64
	for _, name := range grp.Tensors {
		dense += int64(infos[idx[name]].Size)
	}
	for _, name := range grp.Experts {
		expert = (expert + tensorAlign - 1) / tensorAlign * tensorAlign
		expert += int64(infos[idx[name]].Size) / int64(s.nExpert)
	}
	return cache.BufferSize(dense) + int64(s.used)*cache.BufferSize(expert)
}

// minBudget is the smallest budget Declare accepts for the stream, as
// Stats reports it.
func minBudget(t testing.TB, path string, plan model.Plan, stream string) int64 {
	md, err := Open(context.Background(), path, Options{Mode: Budget, Stream: stream, Budget: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()
	if err := md.Weights().Declare(plan); err != nil {
		t.Fatal(err)
	}
	return md.Stats().MinBudget
}

func TestExperts(t *testing.T) {
	s := moeShape{embd: 256, ff: 128, layers: 4, nExpert: 16, used: 4}
	path, infos, plan := moeModel(t, t.TempDir(), s)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	minCopy := moeMin(t, infos, plan, s)
	if m := minBudget(t, path, plan, StreamCopy); m != minCopy {
		t.Fatalf("copy stream: minimum budget %d, want %d", m, minCopy)
	}
	minMap := minBudget(t, path, plan, StreamMap)
	const fits = 256 << 20
	for _, opt := range []Options{
		{Mode: Resident},
		{Mode: Budget, Budget: fits}, // everything fits
		{Mode: Budget, Budget: fits, Stream: StreamCopy},
		{Mode: Budget, Budget: minMap},                                      // the minimum: one layer and one token's experts
		{Mode: Budget, Budget: minCopy, Stream: StreamCopy, ExpertReads: 1}, // one reader
		{Mode: Budget, Budget: minMap + fi.Size()/3, ExpertPolicy: ExpertLFU},
		{Mode: Budget, Budget: minCopy + fi.Size()/3, Stream: StreamCopy, ExpertReads: 8}, // more readers than experts per layer
	} {
		t.Run(fmt.Sprintf("%s-%s-%d-%s-%d", opt.Mode, opt.Stream, opt.Budget, opt.ExpertPolicy, opt.ExpertReads), func(t *testing.T) {
			md, err := Open(context.Background(), path, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer md.Close()
			w, ok := md.Weights().(model.ExpertWeights)
			if !ok {
				t.Fatal("weights do not implement model.ExpertWeights")
			}
			if err := w.Declare(plan); err != nil {
				t.Fatal(err)
			}
			const passes = 6
			n := runMoE(t, w, plan, infos, s, passes, &routes{s: 1})
			st := md.Stats()
			if st.ExpertAcquisitions != int64(n) || st.ExpertHits+st.ExpertMisses != st.ExpertAcquisitions {
				t.Fatalf("acquisitions %d (made %d), hits %d + misses %d", st.ExpertAcquisitions, n, st.ExpertHits, st.ExpertMisses)
			}
			xbytes := int64(0)
			for _, b := range expertWant(infos, plan.Groups[1].Experts, s.nExpert, 0) {
				xbytes += int64(len(b))
			}
			distinct := map[[2]int]bool{}
			r := &routes{s: 1}
			for range passes {
				for g, grp := range plan.Groups {
					if len(grp.Experts) > 0 {
						for _, e := range r.pick(g, s.nExpert, s.used) {
							distinct[[2]int{g, e}] = true
						}
					}
				}
			}
			t.Logf("%d acquisitions, %d distinct experts, hits %d, read %d bytes (%d experts), stalls %d (%v), peak weights %d of budget %d",
				n, len(distinct), st.ExpertHits, st.ExpertBytesRead, st.ExpertBytesRead/xbytes, st.ExpertStalls, st.ExpertStallTime, st.PeakWeightBytes, opt.Budget)
			switch {
			case opt.Mode == Resident:
				if st.ExpertHits != st.ExpertAcquisitions || st.ExpertBytesRead != 0 {
					t.Errorf("resident: hits %d of %d, read %d", st.ExpertHits, st.ExpertAcquisitions, st.ExpertBytesRead)
				}
			case opt.Budget == fits:
				// Each expert is read once, on first use, and hit after.
				if st.ExpertMisses != int64(len(distinct)) || st.ExpertBytesRead != int64(len(distinct))*xbytes {
					t.Errorf("fitting budget: misses %d, read %d bytes; want %d experts read once (%d bytes)",
						st.ExpertMisses, st.ExpertBytesRead, len(distinct), int64(len(distinct))*xbytes)
				}
			default:
				if st.ExpertBytesRead < st.ExpertMisses*xbytes {
					t.Errorf("read %d bytes for %d misses of %d bytes", st.ExpertBytesRead, st.ExpertMisses, xbytes)
				}
				if st.PeakWeightBytes > opt.Budget {
					t.Errorf("peak weight bytes %d over budget %d", st.PeakWeightBytes, opt.Budget)
				}
			}
			if opt.Mode == Budget && st.ExpertPolicy != md.opt.ExpertPolicy {
				t.Errorf("stats policy %q, options %q", st.ExpertPolicy, md.opt.ExpertPolicy)
			}
		})
	}
}

// TestExpertPins: the same expert acquired twice stays valid until both
// holds end; a later expert cannot evict it meanwhile, even at the minimum
// budget; releases of what is not held are ignored.
func TestExpertPins(t *testing.T) {
	s := moeShape{embd: 256, ff: 128, layers: 2, nExpert: 8, used: 2}
	path, infos, plan := moeModel(t, t.TempDir(), s)
	for _, stream := range []string{StreamMap, StreamCopy} {
		md, err := Open(context.Background(), path, Options{Mode: Budget, Stream: stream, Budget: minBudget(t, path, plan, stream)})
		if err != nil {
			t.Fatal(err)
		}
		w := md.Weights().(model.ExpertWeights)
		if err := w.Declare(plan); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := w.Acquire(ctx, 1); err != nil {
			t.Fatal(err)
		}
		a, err := w.AcquireExpert(ctx, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		b, err := w.AcquireExpert(ctx, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		if &a[0][0] != &b[0][0] {
			t.Error("second acquisition of a held expert gave another buffer")
		}
		w.ReleaseExpert(1, 3)
		for _, e := range []int{5, 6, 7} { // each needs room: only the other slot can go
			if _, err := w.AcquireExpert(ctx, 1, e); err != nil {
				t.Fatal(err)
			}
			w.ReleaseExpert(1, e)
		}
		want := expertWant(infos, plan.Groups[1].Experts, s.nExpert, 3)
		for i := range want {
			if !bytes.Equal(a[i], want[i]) {
				t.Fatalf("%s: held expert changed under a pin", stream)
			}
		}
		w.ReleaseExpert(1, 3)
		w.ReleaseExpert(1, 3) // not held: ignored
		w.ReleaseExpert(1, 99)
		w.ReleaseExpert(7, 0)
		w.Release(1)
		md.Close()
	}
}

func TestExpertErrors(t *testing.T) {
	s := moeShape{embd: 64, ff: 64, layers: 1, nExpert: 4, used: 2}
	path, infos, plan := moeModel(t, t.TempDir(), s)
	ctx := context.Background()
	for _, mode := range []string{Resident, Budget} {
		md, err := Open(ctx, path, Options{Mode: mode, Budget: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		w := md.Weights().(model.ExpertWeights)
		if _, err := w.AcquireExpert(ctx, 1, 0); err == nil {
			t.Errorf("%s: AcquireExpert before Declare: no error", mode)
		}
		bad := func(mut func(g *model.Group)) model.Plan {
			p := model.Plan{Groups: append([]model.Group(nil), plan.Groups...)}
			g := p.Groups[1]
			g.Experts = append([]string(nil), g.Experts...)
			mut(&g)
			p.Groups[1] = g
			return p
		}
		for name, p := range map[string]model.Plan{
			"missing expert tensor": bad(func(g *model.Group) { g.Experts[1] = "nope" }),
			"no expert count":       bad(func(g *model.Group) { g.NExpert = 0 }),
			"wrong expert count":    bad(func(g *model.Group) { g.NExpert = 3 }),
			"2-D expert tensor":     bad(func(g *model.Group) { g.Experts[0] = "blk.0.attn_q.weight" }),
		} {
			if err := w.Declare(p); err == nil {
				t.Errorf("%s: Declare with %s: no error", mode, name)
			}
		}
		if err := w.Declare(plan); err != nil {
			t.Fatal(err)
		}
		for _, c := range [][2]int{{1, -1}, {1, 4}, {2, 0}, {0, 0}, {9, 0}} {
			if _, err := w.AcquireExpert(ctx, c[0], c[1]); err == nil {
				t.Errorf("%s: AcquireExpert(%d, %d): no error", mode, c[0], c[1])
			}
		}
		w.WillNeedExperts(9, []int{0})     // ignored
		w.WillNeedExperts(1, []int{-1, 7}) // out of range ids ignored
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := w.AcquireExpert(cctx, 1, 0); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: AcquireExpert with a cancelled ctx: %v", mode, err)
		}
		md.Close()
		if _, err := w.AcquireExpert(ctx, 1, 0); err == nil {
			t.Errorf("%s: AcquireExpert after Close: no error", mode)
		}
	}
	_ = infos
	if _, err := Open(ctx, path, Options{Mode: Budget, Budget: 1 << 20, ExpertPolicy: "mru"}); err == nil {
		t.Error("unknown expert policy: no error")
	}
}

// TestExpertBudgetTooSmall: a budget that holds the dense group but not
// the experts a token uses beside it is refused at Declare, naming the
// minimum; the minimum itself runs.
func TestExpertBudgetTooSmall(t *testing.T) {
	s := moeShape{embd: 256, ff: 128, layers: 2, nExpert: 8, used: 4}
	path, infos, plan := moeModel(t, t.TempDir(), s)
	minB := moeMin(t, infos, plan, s)
	md, err := Open(context.Background(), path, Options{Mode: Budget, Budget: minB - 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()
	err = md.Weights().Declare(plan)
	if err == nil {
		t.Fatal("budget below a layer plus its experts: no error")
	}
	want := fmt.Sprintf("%dMiB", ceilMiB(minB))
	if !strings.Contains(err.Error(), "minimum") || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "4 experts") {
		t.Fatalf("error %q does not name the experts and the minimum %s", err, want)
	}
}

// TestExpertCancel: a read that does not finish (the hook blocks until
// its context ends) leaves AcquireExpert waiting; cancelling the graph's
// context returns at once and cancels the read; Close does not hang.
func TestExpertCancel(t *testing.T) {
	s := moeShape{embd: 256, ff: 128, layers: 2, nExpert: 8, used: 2}
	path, _, plan := moeModel(t, t.TempDir(), s)
	md, err := Open(context.Background(), path, Options{Mode: Budget, Stream: StreamCopy, Budget: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()
	var started, stopped atomic.Int32
	md.w.readHook = func(ctx context.Context, dst []byte, off int64, what string) error {
		started.Add(1)
		<-ctx.Done()
		stopped.Add(1)
		return ctx.Err()
	}
	w := md.Weights().(model.ExpertWeights)
	if err := w.Declare(plan); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Acquire(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	w.WillNeedExperts(1, []int{2, 5})
	for i := 0; started.Load() == 0; i++ {
		if i > 3000 {
			t.Fatal("no read started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := w.AcquireExpert(ctx, 1, 2)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("AcquireExpert: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("AcquireExpert did not return after cancellation") // a hang, not a timing check
	}
	w.Release(1)
	for i := 0; stopped.Load() != started.Load(); i++ {
		if i > 3000 {
			t.Fatalf("reads started %d, stopped %d", started.Load(), stopped.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestExpertTruncated: a file truncated under the run ends expert
// acquisitions with an error, never a crash, in every mode.
func TestExpertTruncated(t *testing.T) {
	s := moeShape{embd: 256, ff: 128, layers: 2, nExpert: 8, used: 2}
	for _, ms := range []string{Resident, Budget + "/" + StreamCopy, Budget + "/" + StreamMap} {
		mode, stream, _ := strings.Cut(ms, "/")
		t.Run(ms, func(t *testing.T) {
			path, infos, plan := moeModel(t, t.TempDir(), s)
			md, err := Open(context.Background(), path, Options{Mode: mode, Stream: stream, Budget: 64 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer md.Close()
			w := md.Weights().(model.ExpertWeights)
			if err := w.Declare(plan); err != nil {
				t.Fatal(err)
			}
			if truncationRefused(t, path) {
				t.Skip("Windows refuses to truncate a mapped file: no truncation faults to recover from")
			}
			if err := os.Truncate(path, md.File().DataOffset+int64(infos[0].Offset+infos[0].Size)); err != nil {
				t.Fatal(err)
			}
			// Resident: the group is not held, so AcquireExpert checks the
			// file itself. Budget: expert 3 is not cached, so it is read.
			_, err = w.AcquireExpert(context.Background(), 2, 3)
			if err == nil || !strings.Contains(err.Error(), "truncated") {
				t.Fatalf("AcquireExpert over a truncated file: %v", err)
			}
		})
	}
}

func TestExpertPolicyLFU(t *testing.T) {
	p := &expertPolicy{lfu: true, aging: 4, count: make([]atomic.Int64, 3)}
	p.use(0)
	p.use(0)
	p.use(1)
	if p.rank(0) != 2 || p.rank(1) != 1 || p.rank(2) != 0 {
		t.Fatalf("ranks %d %d %d", p.rank(0), p.rank(1), p.rank(2))
	}
	p.use(0) // the fourth use halves every count
	if p.rank(0) != 1 || p.rank(1) != 0 {
		t.Fatalf("after aging: ranks %d %d", p.rank(0), p.rank(1))
	}
	lru := &expertPolicy{count: make([]atomic.Int64, 3)}
	lru.use(1)
	if lru.rank(1) != 0 || p.rank(-1) != 0 || p.rank(3) != 0 {
		t.Fatal("LRU ranks every expert the same; out-of-range ranks 0")
	}
}
