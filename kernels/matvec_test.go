package kernels

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memvanta/memvanta/core/ggml"
)

func TestPoolCoversEveryIndexOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := NewPool(threads)
		for _, c := range []struct{ n, grain int }{{0, 1}, {1, 1}, {7, 3}, {1000, 1}, {1000, 64}, {5, 100}} {
			hits := make([]int32, c.n)
			p.Run(c.n, c.grain, func(lo, hi int) {
				if lo < 0 || hi > c.n || lo >= hi || (hi-lo > c.grain && p.Threads() > 1) {
					t.Errorf("bad chunk [%d,%d) for n=%d grain=%d", lo, hi, c.n, c.grain)
				}
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&hits[i], 1)
				}
			})
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("threads=%d n=%d: index %d run %d times", threads, c.n, i, h)
				}
			}
		}
		p.Close()
		p.Close() // idempotent
	}
}

func TestPoolConcurrentRunsAndClose(t *testing.T) {
	before := runtime.NumGoroutine()
	p := NewPool(4)
	var wg sync.WaitGroup
	var total atomic.Int64
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				p.Run(100, 7, func(lo, hi int) { total.Add(int64(hi - lo)) })
			}
		}()
	}
	wg.Wait()
	if total.Load() != 8*50*100 {
		t.Fatalf("total %d, want %d", total.Load(), 8*50*100)
	}
	p.Close()
	// Run after Close still works (serially).
	n := 0
	p.Run(10, 1, func(lo, hi int) { n += hi - lo })
	if n != 10 {
		t.Fatalf("Run after Close covered %d of 10", n)
	}
	// Workers have exited: goroutine count returns to where it was. Exit is
	// asynchronous only up to the scheduler, so poll briefly (this is a leak
	// check, not a timing assertion).
	for i := 0; i < 100 && runtime.NumGoroutine() > before; i++ {
		time.Sleep(time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("goroutines: %d before NewPool, %d after Close", before, g)
	}
	var nilPool *Pool
	nilPool.Run(3, 1, func(lo, hi int) { n += hi - lo })
	nilPool.Close()
	if n != 13 || nilPool.Threads() != 1 {
		t.Error("nil pool did not run serially")
	}
}

// MatVec and MatMul must equal the row-by-row dot exactly: they only
// schedule dots, so any difference is an indexing bug. (MatMul's packed
// routines are not dots and are removed here; gemm_test.go bounds them.)
func TestMatVecMatMulExact(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	p := NewPool(3)
	defer p.Close()
	for _, k := range Available() {
		k = withoutGemm(k)
		for _, typ := range Executable() {
			cols := 2 * ggml.QK_K
			if !typ.Quantized() {
				cols = 77
			}
			rows := 37
			ws, _ := RowSize(typ, cols)
			w := make([]byte, 0, rows*ws)
			for i := 0; i < rows; i++ {
				w = append(w, randWeights(r, typ, cols)...)
			}
			// nb = 70 spans more than one activation tile (chunkBytes of
			// activation rows is 56..60 rows at these widths).
			nb := 3 + 67*int(typ%2)
			var a []byte
			for b := 0; b < nb; b++ {
				a = append(a, encodeAct(typ, randActivations(r, cols))...)
			}
			as, _ := RowSize(ActType(typ), cols)
			y := make([]float32, rows)
			k.MatVec(p, typ, rows, cols, w, a[:as], y)
			ym := make([]float32, nb*rows)
			k.MatMul(p, typ, rows, cols, w, a, nb, ym)
			dot := k.Dot(typ)
			for row := 0; row < rows; row++ {
				want := dot(cols, w[row*ws:(row+1)*ws], a[:as])
				if math.Float32bits(y[row]) != math.Float32bits(want) {
					t.Fatalf("%s %s MatVec row %d = %g, dot %g", k.Name, typ, row, y[row], want)
				}
				for b := 0; b < nb; b++ {
					want := dot(cols, w[row*ws:(row+1)*ws], a[b*as:(b+1)*as])
					if math.Float32bits(ym[b*rows+row]) != math.Float32bits(want) {
						t.Fatalf("%s %s MatMul b=%d row %d = %g, dot %g", k.Name, typ, b, row, ym[b*rows+row], want)
					}
				}
			}
		}
	}
}

func TestMatVecShapeMismatchPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("short weight buffer did not panic")
		} else if s, ok := r.(string); !ok || !contains(s, "need w") {
			t.Errorf("panic %v lacks the sizes", r)
		}
	}()
	Scalar().MatVec(nil, ggml.Q4_0, 2, 32, make([]byte, 18), make([]byte, 34), make([]float32, 2))
}

func TestDispatch(t *testing.T) {
	all := Available()
	if len(all) == 0 || all[len(all)-1] != Scalar() || Scalar().Name != "scalar" {
		t.Fatalf("Available() = %v, want scalar last", all)
	}
	for _, k := range all {
		got, err := ByName(k.Name)
		if err != nil || got != k {
			t.Errorf("ByName(%q) = %v, %v", k.Name, got, err)
		}
	}
	if _, err := ByName("sse9"); err == nil || !contains(err.Error(), "unknown path") {
		t.Errorf("ByName(sse9): %v", err)
	}
	var missing string
	for _, n := range knownNames {
		if _, err := ByName(n); err != nil {
			missing = n
		}
	}
	if missing != "" {
		if _, err := ByName(missing); !contains(err.Error(), "not supported") {
			t.Errorf("ByName(%q): %v", missing, err)
		}
	}
	if k, err := choose(""); err != nil || k != all[0] {
		t.Errorf("choose(\"\") = %v, %v; want best %v", k, err, all[0])
	}
	if k, err := choose(" SCALAR "); err != nil || k != Scalar() {
		t.Errorf("choose(SCALAR) = %v, %v", k, err)
	}
	if k, err := choose("bogus"); err == nil || k != all[0] || !contains(err.Error(), EnvVar) {
		t.Errorf("choose(bogus) = %v, %v; want best plus an error naming %s", k, err, EnvVar)
	}
	if Select() == nil {
		t.Error("Select() = nil")
	}
	c := Scalar().clone("test")
	c.types[ggml.Q4_0].dots = dotSet{}
	if c.Dot(ggml.Q4_0) != nil || Scalar().Dot(ggml.Q4_0) == nil || c.Dot(ggml.Type(200)) != nil {
		t.Error("clone shares or mishandles the dot table")
	}
}

// MatVecGrain's chunks are whole groups of four rows, about
// matVecChunkBytes each (never more than that plus four rows), every thread
// gets one when the matrix has a group for each.
func TestMatVecGrain(t *testing.T) {
	for _, c := range []struct{ rows, ws, threads int }{
		{1, 18, 2}, {4, 18, 2}, {7, 1152, 1}, {256, 1152, 2}, {2048, 1152, 2},
		{5632, 1152, 2}, {4096, 6192, 2}, {11008, 2304, 2}, {32000, 2304, 2},
		{4096, 6192, 1}, {4096, 6192, 3}, {4096, 6192, 8}, {100, 0, 2},
	} {
		g := MatVecGrain(c.rows, c.ws, c.threads)
		chunks := (c.rows + g - 1) / g
		if g%4 != 0 || g < 4 {
			t.Errorf("%+v: grain %d is not a positive multiple of 4", c, g)
		}
		if g*c.ws > matVecChunkBytes+4*c.ws && g > 4 {
			t.Errorf("%+v: grain %d rows = %d bytes, over %d", c, g, g*c.ws, matVecChunkBytes)
		}
		if c.rows >= 4*c.threads && chunks < c.threads {
			t.Errorf("%+v: %d chunks for %d threads", c, chunks, c.threads)
		}
	}
}
