package kernels

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// poolSpin is how long an idle worker polls for the next job, and the
// caller for its helpers to finish, before parking. Generation dispatches a
// few hundred Runs per token with a few microseconds of serial work between
// them; a parked goroutine takes ~15 µs to wake on a 2-vCPU VM (futex wake
// of its thread), which at ~25 ms per token was several percent of it. The
// poll yields between checks twice: to this process's goroutines
// (runtime.Gosched), so one the spinner's P holds up (the budget
// prefetcher, the output writer) runs at once, and to other processes'
// threads (sched_yield, osYield), so a spinner never keeps a CPU from a
// thread that has work: with two 2-thread processes on two CPUs, polling
// without sched_yield cost each process 15-40% of its tok/s against
// parking at once, with it each did 5-10% better than parking
// (scripts/contend.sh). After poolSpin of nothing the worker parks as
// before: an idle pool costs no CPU.
const poolSpin = 200 * time.Microsecond

// Pool is a fixed set of worker goroutines reused across calls, so a matvec
// (hundreds per token) costs a channel send per worker instead of goroutine
// creation. The caller's goroutine works too: a pool of n threads starts n-1
// goroutines. Each Run's chunks are split into one contiguous run per
// participant, each with its own atomic counter: a participant takes its
// own run's chunks in order, then what is left of the others' runs, so a
// worker descheduled by a busy machine does not stall the others on a
// fixed share, while on a quiet machine each thread works through one
// contiguous part of the range (one stream of a weight matrix per core
// instead of chunks interleaved between cores; prefill was 3-5% faster
// than with one shared counter, generation the same within noise).
// A nil *Pool runs everything on the caller.
//
// Weights are often slices of a file mapping, which raise SIGBUS when the
// file is truncated under them. Workers run with debug.SetPanicOnFault, so
// such a fault (or any panic) in a worker is caught and re-raised on the
// goroutine that called Run, once every helper has finished the job: the
// caller (core/model.Forward) can then recover it into an error.
type Pool struct {
	threads int
	jobs    chan *job
	mu      sync.RWMutex // Close waits for in-flight Run dispatches
	closed  bool
	exited  sync.WaitGroup
	gemm    gemmBuffers // packed MatMul scratch (gemm.go)
}

// gemmBuffers returns p's packed-MatMul scratch; a nil pool gets a fresh,
// call-local set.
func (p *Pool) gemmBuffers() *gemmBuffers {
	if p == nil {
		return new(gemmBuffers)
	}
	return &p.gemm
}

type job struct {
	f      func(lo, hi int)
	n      int
	grain  int
	parts  []part       // one contiguous run of chunks per participant
	joined atomic.Int32 // helpers that have started: helper k owns parts[k]
	left   atomic.Int32 // helpers still running; polled before done.Wait parks
	done   sync.WaitGroup
	failed atomic.Pointer[any] // first panic value of a helper
}

// NewPool starts a pool of threads workers (counting the caller). threads <= 0
// means GOMAXPROCS. Under wasm (no threads) the pool always has one worker.
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if runtime.GOARCH == "wasm" {
		threads = 1
	}
	p := &Pool{threads: threads}
	if threads > 1 {
		p.jobs = make(chan *job, threads-1)
		p.exited.Add(threads - 1)
		for i := 0; i < threads-1; i++ {
			go p.worker()
		}
	}
	return p
}

// Threads is the number of goroutines (including the caller) that Run uses.
func (p *Pool) Threads() int {
	if p == nil {
		return 1
	}
	return p.threads
}

func (p *Pool) worker() {
	defer p.exited.Done()
	debug.SetPanicOnFault(true)
	for {
		j, ok := p.nextJob()
		if !ok {
			return
		}
		j.helpSafely()
	}
}

// nextJob polls the queue for up to poolSpin, then blocks on it; false once
// Close has closed it.
func (p *Pool) nextJob() (j *job, ok bool) {
	if pollFor(func() bool {
		select {
		case j, ok = <-p.jobs:
			return true
		default:
			return false
		}
	}) {
		return j, ok
	}
	j, ok = <-p.jobs
	return j, ok
}

// pollFor calls ready until it reports true or poolSpin has passed,
// yielding between calls; it reports whether ready did. The pool's two
// waits (a worker's for its next job, Run's caller's for its helpers) poll
// this way before they park.
func pollFor(ready func() bool) bool {
	if ready() {
		return true
	}
	start := time.Now()
	for time.Since(start) < poolSpin {
		runtime.Gosched()
		osYield()
		if ready() {
			return true
		}
	}
	return false
}

// helpSafely runs the job on a helper and records a panic (a memory fault
// on a truncated mapping included) for Run to re-raise on its caller.
func (j *job) helpSafely() {
	defer func() {
		if r := recover(); r != nil {
			j.failed.CompareAndSwap(nil, &r)
			for i := range j.parts { // the other goroutines stop taking chunks
				j.parts[i].next.Store(j.parts[i].end)
			}
		}
		j.left.Add(-1)
		j.done.Done()
	}()
	j.work(int(j.joined.Add(1)))
}

// part is a run of chunk indices [next, end) one participant starts on.
// Padded to a cache line so the participants' counters do not share one.
type part struct {
	next atomic.Int64
	end  int64
	_    [48]byte
}

// split divides chunks chunk indices into len(parts) contiguous runs of
// nearly equal length.
func split(parts []part, chunks int) {
	k := int64(len(parts))
	for i := range parts {
		parts[i].next.Store(int64(i) * int64(chunks) / k)
		parts[i].end = int64(i+1) * int64(chunks) / k
	}
}

// work runs participant id's own run of chunks, then whatever is left of
// the others' (the next participant's first).
func (j *job) work(id int) {
	g := int64(j.grain)
	n := int64(j.n)
	for k := range j.parts {
		p := &j.parts[(id+k)%len(j.parts)]
		for {
			c := p.next.Add(1) - 1
			if c >= p.end {
				break
			}
			j.f(int(c*g), int(min((c+1)*g, n)))
		}
	}
}

// Run calls f over [0, n) split into chunks of grain (the last may be
// shorter; a one-thread pool makes one call for the whole range), in parallel, and returns when all chunks are done. Chunks are
// disjoint, so f may write to per-index outputs without locking. Run may be
// called from several goroutines at once; after Close it runs on the caller.
// f must not call Run on the same pool (its workers could all be waiting).
func (p *Pool) Run(n, grain int, f func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	if p == nil || p.threads == 1 || n <= grain {
		f(0, n)
		return
	}
	p.mu.RLock()
	if p.closed {
		p.mu.RUnlock()
		f(0, n)
		return
	}
	chunks := (n + grain - 1) / grain
	helpers := min(p.threads-1, chunks-1)
	j := &job{f: f, n: n, grain: grain, parts: make([]part, helpers+1)}
	split(j.parts, chunks)
	j.done.Add(helpers)
	j.left.Store(int32(helpers))
	for i := 0; i < helpers; i++ {
		p.jobs <- j
	}
	p.mu.RUnlock()
	j.workCaller()
	if r := j.failed.Load(); r != nil {
		panic(*r)
	}
}

// workCaller runs the caller's share and waits for the helpers even if it
// panics, so no helper is still writing into the caller's buffers when the
// panic unwinds past Run.
func (j *job) workCaller() {
	defer j.wait()
	j.work(0)
}

// wait polls for the helpers for up to poolSpin (whoever finishes its own
// run first takes chunks from the others', so they usually finish within
// microseconds of the caller),
// then parks in done.Wait, which also orders their writes before ours.
func (j *job) wait() {
	pollFor(func() bool { return j.left.Load() == 0 })
	j.done.Wait()
}

// Close stops the workers and waits for them to exit. It is idempotent; Run
// calls after Close run serially on the caller.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		if p.jobs != nil {
			close(p.jobs)
		}
	}
	p.mu.Unlock()
	p.exited.Wait()
}
