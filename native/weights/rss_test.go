package weights

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/native/telemetry"
)

// The RSS test runs its measured part in a child process (this test binary
// re-executed), so the parent's own allocation history — other tests, the
// fixture writer — cannot inflate the peak it reads.
const rssChildEnv = "MEMVANTA_RSS_CHILD"

// rssSlack allows for what the runtime itself allocates beside the weight
// buffers (tensor table, plan, per-pass stats, loader stack) and for page
// rounding; it is small against the model (about 90 MiB) the test streams.
const rssSlack = 12 << 20

func TestBudgetBoundsRSS(t *testing.T) {
	if spec := os.Getenv(rssChildEnv); spec != "" {
		rssChild(t, spec)
		return
	}
	if testing.Short() {
		t.Skip("writes a 90 MiB model")
	}
	if raceEnabled {
		// Seen twice on a loaded machine: both budget modes peaked at the
		// same 59 MiB (baseline 20 MiB), a spike of the instrumented
		// runtime, not of the weights. .ci/run runs this test without -race.
		t.Skip("peak RSS under the race detector does not measure the weights")
	}
	dir := t.TempDir()
	dense, _, _ := tinyModel(t, dir, 1024, 2816, 24)
	// A mixture-of-experts file of about the same size: 6 layers of 16
	// experts, 4 used per token; experts are read one at a time into cache
	// buffers charged to the same budget.
	moe, _, _ := moeModel(t, dir, moeShape{embd: 1024, ff: 512, layers: 6, nExpert: 16, used: 4})
	const budget = 16 << 20
	for _, mode := range []string{Budget, Budget + "/" + StreamCopy, Resident, "moe-" + Budget, "moe-" + Budget + "/" + StreamCopy, "moe-" + Resident} {
		path := dense
		if strings.HasPrefix(mode, "moe-") {
			path = moe
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestBudgetBoundsRSS$", "-test.v")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%s,%d", rssChildEnv, mode, path, budget))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s child: %v\n%s", mode, err, out)
		}
		var base, peak int64
		for _, line := range strings.Split(string(out), "\n") {
			if _, rest, ok := strings.Cut(line, "RSSCHILD "); ok {
				f := strings.Fields(rest)
				base, _ = strconv.ParseInt(f[0], 10, 64)
				peak, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "stats: ") {
				t.Logf("%s: %s", mode, line)
			}
		}
		if peak == 0 {
			t.Fatalf("%s child printed no measurement:\n%s", mode, out)
		}
		t.Logf("%s: model %s, baseline RSS %s, peak RSS %s (peak-baseline %s)", mode, FormatSize(st.Size()),
			FormatSize(base), FormatSize(peak), FormatSize(peak-base))
		switch strings.TrimPrefix(mode, "moe-") {
		case Budget, Budget + "/" + StreamCopy:
			if limit := base + budget + rssSlack; peak > limit {
				t.Errorf("budget %s: peak RSS %s exceeds baseline + budget + slack = %s", FormatSize(budget), FormatSize(peak), FormatSize(limit))
			}
		case Resident:
			// The contrast that shows the measurement can see the weights:
			// resident mode maps the whole file, so its peak holds it.
			if peak-base < st.Size()*9/10 {
				t.Errorf("resident: peak RSS grew by %s only, model is %s", FormatSize(peak-base), FormatSize(st.Size()))
			}
			if limit := base + st.Size() + rssSlack; peak > limit {
				t.Errorf("resident: peak RSS %s exceeds baseline + file + slack = %s", FormatSize(peak), FormatSize(limit))
			}
		}
	}
}

// rssChild streams three passes over the model, reading every weight byte
// as a graph would, and prints baseline (before Open) and peak RSS.
func rssChild(t *testing.T, spec string) {
	parts := strings.SplitN(spec, ",", 3)
	budget, _ := strconv.ParseInt(parts[2], 10, 64)
	base, err := telemetry.CurrentRSS()
	if err != nil {
		t.Fatal(err)
	}
	spec, moe := strings.CutPrefix(parts[0], "moe-")
	mode, stream, _ := strings.Cut(spec, "/")
	md, err := Open(context.Background(), parts[1], Options{Mode: mode, Stream: stream, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer md.Close()
	_, _, plan := planFor(md)
	w := md.Weights()
	if err := w.Declare(plan); err != nil {
		t.Fatal(err)
	}
	var sum byte
	r := &routes{s: 3}
	passes := 3
	if moe {
		passes = 12 // tokens: each reads a few experts per layer
	}
	for range passes {
		for g, grp := range plan.Groups {
			bufs, err := w.Acquire(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bufs {
				for _, x := range b {
					sum ^= x
				}
			}
			if moe && len(grp.Experts) > 0 {
				xw := w.(model.ExpertWeights)
				ids := r.pick(g, grp.NExpert, expertsUsed(md.File()))
				xw.WillNeedExperts(g, ids)
				for _, e := range ids {
					xb, err := xw.AcquireExpert(context.Background(), g, e)
					if err != nil {
						t.Fatal(err)
					}
					for _, b := range xb {
						for _, x := range b {
							sum ^= x
						}
					}
					xw.ReleaseExpert(g, e)
				}
			}
			w.Release(g)
		}
	}
	s := md.Stats()
	if s.Stream == StreamMap {
		// Here (a 90 MiB file, so whole 2 MiB chunks) the re-read path runs;
		// every loaded byte must still be counted once, huge or small.
		if got := s.HugeMappedBytes + s.SmallMappedBytes; got != s.BytesMoved && got != 0 {
			t.Errorf("map stream: huge %d + small %d != moved %d", s.HugeMappedBytes, s.SmallMappedBytes, s.BytesMoved)
		}
	}
	fmt.Printf("RSSCHILD %d %d %d\n", base, telemetry.PeakRSS(), sum)
	fmt.Printf("stats: moved %d evictions %d peak weights %d huge-mapped %d small-mapped %d recached %d experts acquired %d read %d\n",
		s.BytesMoved, s.Evictions, s.PeakWeightBytes, s.HugeMappedBytes, s.SmallMappedBytes, s.RecachedBytes, s.ExpertAcquisitions, s.ExpertBytesRead)
}

// planFor groups a file's tensors the way the llama graph does: one group
// per "blk.N." prefix (3-D "*_exps" tensors as the group's experts), then
// the output tensors; the embedding table is read by rows only.
func planFor(md *Model) (int, int, model.Plan) {
	var plan model.Plan
	byName := map[string]int{}
	var out model.Group
	out.Name = "output"
	for _, ti := range md.File().Tensors {
		name := ti.Name
		if name == "token_embd.weight" {
			continue
		}
		if strings.HasPrefix(name, "blk.") {
			i := strings.IndexByte(name[4:], '.')
			gname := name[:4+i]
			gi, ok := byName[gname]
			if !ok {
				gi = len(plan.Groups)
				byName[gname] = gi
				plan.Groups = append(plan.Groups, model.Group{Name: gname})
			}
			if strings.HasSuffix(name, "_exps.weight") && len(ti.Dims) == 3 {
				plan.Groups[gi].Experts = append(plan.Groups[gi].Experts, name)
				plan.Groups[gi].NExpert = int(ti.Dims[2])
				continue
			}
			plan.Groups[gi].Tensors = append(plan.Groups[gi].Tensors, name)
			continue
		}
		out.Tensors = append(out.Tensors, name)
	}
	plan.Groups = append(plan.Groups, out)
	return len(byName), len(out.Tensors), plan
}
