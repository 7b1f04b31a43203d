package kernels

// Benchmarks report weight bytes per second (b.SetBytes = weight bytes read
// per op), so `go test -bench` prints MB/s directly comparable with the
// read-bandwidth ceiling measured by BenchmarkReadBandwidth with the same
// pool. Every Available() path is benchmarked, so SIMD paths show up side by
// side with scalar. Example (brief runs on a shared machine):
//
//	go test ./kernels -run '^$' -bench 'MatVec|ReadBandwidth' -benchtime 200ms

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/memvanta/memvanta/core/ggml"
)

var sink float32

// BenchmarkDot times one 4096-element row held in L1: the compute ceiling of
// each dot routine, independent of memory.
func BenchmarkDot(b *testing.B) {
	r := rand.New(rand.NewPCG(81, 82))
	const n = 4096
	for _, k := range Available() {
		for _, typ := range Executable() {
			w := randWeights(r, typ, n)
			a := encodeAct(typ, randActivations(r, n))
			f := k.Dot(typ)
			b.Run(fmt.Sprintf("%s/%s", k.Name, typ), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				var s float32
				for b.Loop() {
					s += f(n, w, a)
				}
				sink = s
			})
		}
	}
}

// coldBytes is how much distinct weight memory a matvec benchmark cycles
// through: several times any L3 (32 MiB on Zen 5), so weights stream from
// DRAM as they do in a real decode step, where each weight is read once per
// token. A 4096×4096 Q4_0 matrix alone (9 MiB) would stay cache-resident.
const coldBytes = 256 << 20

// benchMatrices returns copies of one random rows×cols matrix totalling at
// least coldBytes. Copies have distinct addresses, which is all that matters
// for cache behaviour; values only need to be valid blocks.
func benchMatrices(typ ggml.Type, rows, cols int) [][]byte {
	r := rand.New(rand.NewPCG(uint64(typ), uint64(rows)))
	ws, _ := RowSize(typ, cols)
	m := randWeights(r, typ, rows*cols)
	if len(m) != rows*ws {
		panic("bench matrix size")
	}
	out := [][]byte{m}
	for total := len(m); total < coldBytes; total += len(m) {
		out = append(out, append([]byte(nil), m...))
	}
	return out
}

// BenchmarkMatVec is the decode-time workload: one activation row against a
// weight matrix much larger than the caches. Shapes are rows×cols: 4096×4096
// (attention projections of a 7B model), 11008×4096 (FFN gate/up) and
// 4096×11008 (FFN down).
func BenchmarkMatVec(b *testing.B) {
	shapes := [][2]int{{4096, 4096}, {11008, 4096}, {4096, 11008}}
	if testing.Short() {
		shapes = shapes[:1]
	}
	r := rand.New(rand.NewPCG(83, 84))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.Q4_K, ggml.Q6_K} {
		for _, sh := range shapes {
			rows, cols := sh[0], sh[1]
			ms := benchMatrices(typ, rows, cols)
			a := encodeAct(typ, randActivations(r, cols))
			y := make([]float32, rows)
			for _, k := range Available() {
				for _, threads := range []int{1, 2} {
					b.Run(fmt.Sprintf("%s/%s/%dx%d/t%d", typ, k.Name, rows, cols, threads), func(b *testing.B) {
						p := NewPool(threads)
						defer p.Close()
						b.SetBytes(int64(len(ms[0])))
						i := 0
						for b.Loop() {
							k.MatVec(p, typ, rows, cols, ms[i%len(ms)], a, y)
							i++
						}
					})
				}
			}
		}
	}
}

// BenchmarkMatVecAll covers every executed weight type at 4096×4096 on two
// threads, streaming from DRAM like BenchmarkMatVec.
func BenchmarkMatVecAll(b *testing.B) {
	const rows, cols = 4096, 4096
	r := rand.New(rand.NewPCG(87, 88))
	for _, typ := range Executable() {
		ms := benchMatrices(typ, rows, cols)
		a := encodeAct(typ, randActivations(r, cols))
		y := make([]float32, rows)
		for _, k := range Available() {
			b.Run(fmt.Sprintf("%s/%s/t2", typ, k.Name), func(b *testing.B) {
				p := NewPool(2)
				defer p.Close()
				b.SetBytes(int64(len(ms[0])))
				i := 0
				for b.Loop() {
					k.MatVec(p, typ, rows, cols, ms[i%len(ms)], a, y)
					i++
				}
			})
		}
	}
}

// BenchmarkMatMul is prefill: a batch of 8 activation rows per weight pass.
// Bytes are weight bytes, so GB/s above the read ceiling shows reuse.
func BenchmarkMatMul(b *testing.B) {
	const rows, cols, nb = 4096, 4096, 8
	r := rand.New(rand.NewPCG(85, 86))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q8_0, ggml.Q4_K, ggml.Q6_K} {
		ms := benchMatrices(typ, rows, cols)
		var a []byte
		for i := 0; i < nb; i++ {
			a = append(a, encodeAct(typ, randActivations(r, cols))...)
		}
		y := make([]float32, rows*nb)
		for _, k := range Available() {
			b.Run(fmt.Sprintf("%s/%s/b%d/t2", typ, k.Name, nb), func(b *testing.B) {
				p := NewPool(2)
				defer p.Close()
				b.SetBytes(int64(len(ms[0])))
				i := 0
				for b.Loop() {
					k.MatMul(p, typ, rows, cols, ms[i%len(ms)], a, nb, y)
					i++
				}
			})
		}
	}
}

// BenchmarkReadBandwidth is the ceiling: reading a coldBytes buffer (far
// beyond L3) through the same pool and chunking as MatVec. "sum" is a plain
// Go loop over uint64 words (scalar loads; what the portable path could
// reach); "cmp" runs bytes.Equal over the two identical halves, which the Go
// runtime implements with AVX2/NEON loads and no stores: the closest a pure Go
// program gets to the machine's read bandwidth. Take the larger as ceiling.
func BenchmarkReadBandwidth(b *testing.B) {
	buf := make([]uint64, coldBytes/8)
	for i := range buf[:len(buf)/2] {
		buf[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	copy(buf[len(buf)/2:], buf)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), coldBytes)
	lo, hi := raw[:coldBytes/2], raw[coldBytes/2:]
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("sum/t%d", threads), func(b *testing.B) {
			p := NewPool(threads)
			defer p.Close()
			const grain = chunkBytes / 8
			parts := make([]uint64, (len(buf)+grain-1)/grain)
			b.SetBytes(coldBytes)
			for b.Loop() {
				p.Run(len(buf), grain, func(lo, hi int) {
					parts[lo/grain] = sumWords(buf[lo:hi])
				})
			}
			var s uint64
			for _, v := range parts {
				s += v
			}
			sink = float32(s)
		})
		b.Run(fmt.Sprintf("cmp/t%d", threads), func(b *testing.B) {
			p := NewPool(threads)
			defer p.Close()
			var bad atomic.Bool
			b.SetBytes(coldBytes)
			for b.Loop() {
				p.Run(len(lo), chunkBytes, func(i, j int) {
					if !bytes.Equal(lo[i:j], hi[i:j]) {
						bad.Store(true)
					}
				})
			}
			if bad.Load() {
				b.Fatal("halves differ")
			}
		})
	}
}

func sumWords(w []uint64) uint64 {
	var s0, s1, s2, s3 uint64
	i := 0
	for ; i+4 <= len(w); i += 4 {
		s0 += w[i]
		s1 += w[i+1]
		s2 += w[i+2]
		s3 += w[i+3]
	}
	for ; i < len(w); i++ {
		s0 += w[i]
	}
	return s0 + s1 + s2 + s3
}

// BenchmarkQuantizeAct is the per-matvec cost of encoding one 4096-wide
// activation row; bytes are input f32 bytes.
func BenchmarkQuantizeAct(b *testing.B) {
	r := rand.New(rand.NewPCG(89, 90))
	x := randActivations(r, 4096)
	for _, at := range []ggml.Type{ggml.Q8_0, ggml.Q8_1, ggml.Q8_K, ggml.F16} {
		sz, _ := RowSize(at, len(x))
		dst := make([]byte, sz)
		b.Run(at.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				_ = QuantizeAct(at, x, dst)
			}
		})
	}
}
