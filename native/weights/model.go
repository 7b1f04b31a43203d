// Package weights owns a model file's weights in memory: it maps a GGUF
// file and implements model.Weights over it, serving the graph's weight
// groups either straight from the mapping (resident mode, resident.go) or
// streamed within a byte budget by an adaptive prefetcher (budget mode:
// the group's file pages mapped ahead and dropped behind, budgetmap.go, or
// copied into a bounded cache, budgetcopy.go), and it measures what that
// costs (stats.go). (It was native/runtime, a name that shadowed the
// standard runtime package and forced an import alias on every user.)
//
// Faults. A file truncated under a mapping raises SIGBUS on the next touch
// of a page past the new end. Every copy out of the mapping (Row in
// resident mode, the GGUF header parse) is fault-protected and returns an
// error; budget copy mode never touches the mapping at all (pread, which
// reports a short read); budget map mode's loader only madvises and reads
// page tables, which report a truncated range as an error. Resident mode
// and budget map mode hand the graph zero-copy slices that kernels read on
// pool goroutines, where a fault cannot be recovered (SetPanicOnFault is
// per goroutine and the kernels do not run under it): there Acquire
// re-checks the file size (one fstat) and refuses to hand out slices of a
// shrunk file. A truncation that races with the compute of a group already
// acquired is not covered; the process then dies of SIGBUS, as llama.cpp's
// does.
package weights

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/memvanta/memvanta/core/gguf"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/core/policy"
	"github.com/memvanta/memvanta/native/mmap"
	"github.com/memvanta/memvanta/native/store"
	"github.com/memvanta/memvanta/native/telemetry"
)

// Modes.
const (
	Resident = "resident" // weights stay mapped; zero-copy
	Budget   = "budget"   // weights' resident working set held within Options.Budget
)

// Budget-mode streaming strategies.
const (
	StreamCopy = "copy"
	StreamMap  = "map"
)

// Options configure Open.
type Options struct {
	// Mode is Resident (default when empty) or Budget.
	Mode string
	// Budget bounds the bytes of weight data resident at once in budget
	// mode (cache buffers, including groups being prefetched and the group
	// in use). It must be at least the largest group of the declared plan.
	Budget int64
	// Stream is how budget mode brings a group in. StreamMap (default)
	// populates the file mapping's pages for the group ahead of the graph
	// (MADV_POPULATE_READ) and drops them again (MADV_DONTNEED) on
	// eviction, so the graph reads the page cache in place: no copy, and
	// the same memory traffic as resident mode. StreamCopy preads the
	// group into a cache-owned buffer: it reads and writes every weight
	// byte once more per pass, but never maps file pages, so it does not
	// depend on the page cache's folio sizes (see KeepPageCache). Both
	// hold the weights' share of RSS within Budget.
	Stream string
	// KeepPageCache (budget map stream, and resident mode's first pass) forbids re-reading parts of the
	// file that the page cache holds in small folios. By default the
	// loader re-reads each such 2 MiB chunk once, so it comes back in one
	// huge folio that maps with a single PMD entry: see native/mmap/huge.go
	// for why that decides map mode's speed. The re-read drops those pages
	// from the page cache first (never pages another process maps) and
	// stops after a few attempts that bring no huge folio.
	KeepPageCache bool
	// Threads is the compute thread count; this package itself uses one
	// loader goroutine and does not size anything by it.
	Threads int
	// Limits bound the GGUF parse; zero value means gguf.DefaultLimits().
	Limits *gguf.Limits
	// Policy tunes the adaptive look-ahead (budget mode); zero value means
	// policy.DefaultConfig().
	Policy *policy.Config
	// Window is the number of group acquisitions per policy observation
	// window; 0 means one pass over the plan.
	Window int
	// ExpertPolicy orders the eviction of cached experts in budget mode
	// (mixture-of-experts models): ExpertLRU (default) or ExpertLFU. See
	// experts.go and the policy table in the README for the measurement
	// that chose the default.
	ExpertPolicy string
	// ExpertAging is ExpertLFU's aging period: every count of use is
	// halved after this many expert acquisitions; 0 means the number of
	// experts in the plan.
	ExpertAging int
	// ExpertReads bounds the expert reads in flight at once (budget mode);
	// 0 means DefaultExpertReads.
	ExpertReads int
}

// DefaultExpertReads is how many experts budget mode reads at once: enough
// to keep a solid-state disk's queue busy while the graph multiplies the
// expert before, few enough that the reads of one layer arrive in order.
const DefaultExpertReads = 4

// Model is an opened model file.
type Model struct {
	opt  Options
	m    *mmap.Map
	file *gguf.File
	st   *store.Store
	w    *fileWeights

	closeOnce sync.Once
	closeErr  error
}

// Open maps path and parses its header and tensor table over the mapping.
// Nothing of the tensor data is read here.
func Open(ctx context.Context, path string, opt Options) (*Model, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch opt.Mode {
	case "":
		opt.Mode = Resident
	case Resident:
	case Budget:
		if opt.Budget <= 0 {
			return nil, fmt.Errorf("weights: budget mode needs a positive budget, got %d", opt.Budget)
		}
		switch opt.Stream {
		case "":
			opt.Stream = StreamMap
		case StreamCopy, StreamMap:
		default:
			return nil, fmt.Errorf("weights: unknown budget stream strategy %q (want %q or %q)", opt.Stream, StreamCopy, StreamMap)
		}
	default:
		return nil, fmt.Errorf("weights: unknown memory mode %q (want %q or %q)", opt.Mode, Resident, Budget)
	}
	switch opt.ExpertPolicy {
	case "":
		opt.ExpertPolicy = ExpertLRU
	case ExpertLRU, ExpertLFU:
	default:
		return nil, fmt.Errorf("weights: unknown expert cache policy %q (want %q or %q)", opt.ExpertPolicy, ExpertLRU, ExpertLFU)
	}
	if opt.ExpertReads <= 0 {
		opt.ExpertReads = DefaultExpertReads
	}
	lim := gguf.DefaultLimits()
	if opt.Limits != nil {
		lim = *opt.Limits
	}
	pcfg := policy.DefaultConfig()
	if opt.Policy != nil {
		pcfg = *opt.Policy
	}
	if err := pcfg.Validate(); err != nil {
		return nil, fmt.Errorf("weights: %w", err)
	}
	mp, err := mmap.Open(path)
	if err != nil {
		return nil, fmt.Errorf("weights: %w", err)
	}
	f, err := gguf.Parse(mp, mp.Size(), lim)
	if err != nil {
		mp.Close()
		return nil, fmt.Errorf("weights: %s: %w", path, err)
	}
	st, err := store.New(mp, f.DataOffset, f.Tensors)
	if err != nil {
		mp.Close()
		return nil, fmt.Errorf("weights: %s: %w", path, err)
	}
	md := &Model{opt: opt, m: mp, file: f, st: st}
	md.w, err = newWeights(st, opt, pcfg, expertsUsed(f))
	if err != nil {
		mp.Close()
		return nil, err
	}
	return md, nil
}

// File is the parsed header and tensor table.
func (md *Model) File() *gguf.File { return md.file }

// Weights is the model's weight interface for the graph; one per Model.
func (md *Model) Weights() model.Weights { return md.w }

// Stats is a snapshot of the telemetry so far.
func (md *Model) Stats() Stats { return md.w.stats() }

// Close stops the prefetcher and unmaps the file. Slices handed out by
// Acquire are invalid afterwards.
func (md *Model) Close() error {
	md.closeOnce.Do(func() {
		md.closeErr = errors.Join(md.w.close(), md.m.Close())
	})
	return md.closeErr
}

// expertsUsed is how many experts a token uses per layer, from the file's
// metadata ("<arch>.expert_used_count"); 1 if the file does not say (the
// graph needs at least one expert at a time).
func expertsUsed(f *gguf.File) int {
	arch, err := f.String("general.architecture")
	if err != nil {
		return 1
	}
	k, err := f.Uint32(arch + ".expert_used_count")
	if err != nil || k == 0 || k > 1<<16 {
		return 1
	}
	return int(k)
}

// baseline is the process usage at Open, so Stats can report faults caused
// since then.
func baseline() telemetry.Usage {
	u, _ := telemetry.Rusage()
	return u
}
