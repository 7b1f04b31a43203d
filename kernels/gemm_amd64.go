package kernels

import (
	"fmt"
	"math"

	"github.com/memvanta/memvanta/core/ggml"
)

// asmPack and asmKernel are the packer and kernel conventions of
// gemm_amd64.s (gemmPackQ4_0, gemmKernel).
type (
	asmPack     func(nblk int, w *byte, ws int, dst *byte)
	asmKernel   func(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)
	asmKernelPF func(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int, pf *byte, pfstep int)
)

// The smallest batches the packed K-quant MatMuls take. Packing a tile (in
// Go) is paid once per MatMul, so small batches do better with the one-row
// dots; BenchmarkGemmAlt (one thread, smallest process CPU time of
// alternating calls, 2048×2048, a machine at load 30) put packed/dots at:
// Q4_K 0.56× at batch 8, 1.26× at 16, 1.64× at 32, 3.1× at 128; Q6_K 0.76×
// at 8, 1.35× at 16 (wall time). IQ4_XS's int16 kernel (gemmiq4xs_amd64.go)
// over its one-row dot: 0.80× at batch 2, 1.33× at 4, 1.95× at 8, 3.0× at
// 32 (2048×2048; the index layout it replaced: 0.79× at 16, 1.01× at 32).
const (
	gemmQ4KMinBatch   = 16
	gemmQ5KMinBatch   = 16
	gemmQ6KMinBatch   = 16
	gemmQ3KMinBatch   = 16
	gemmQ2KMinBatch   = 16
	gemmIQ4XSMinBatch = 4
)

// gemm32 is an archRow's packed MatMul in gemm.go's 32-element layout
// (off: the unsigned offset of the packed weights).
func gemm32(off int, pack asmPack, kernel asmKernel) func(ggml.Type) *gemmRoutines {
	return func(t ggml.Type) *gemmRoutines { return newGemm(t, off, pack, kernel, gemmBlockB, gemmKB) }
}

// gemm32PF is gemm32 with a prefetching kernel (gemmRoutines.kernelPF).
func gemm32PF(off int, pack asmPack, kernel asmKernelPF) func(ggml.Type) *gemmRoutines {
	return func(t ggml.Type) *gemmRoutines {
		g := newGemm(t, off, pack, func(nblk int, pw, a *byte, as int, prep *byte, pstride int, y *float32, ys, ntok, mask, first int) {
			kernel(nblk, pw, a, as, prep, pstride, y, ys, ntok, mask, first, pw, 0)
		}, gemmBlockB, gemmKB)
		plain := g.kernel
		g.kernelPF = func(n int, pw, a []byte, as int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool, next []byte) {
			step := gemmPFStep(n*((ntok+1)/2), len(next))
			if n <= 0 || ntok <= 0 || step <= 0 {
				plain(n, pw, a, as, prep, ps, y, ys, ntok, nr, first)
				return
			}
			checkKernel32(n, pw, a, as, prep, ps, y, ys, ntok, nr, g.blockB, ActType(t).TypeSize())
			f := 0
			if first {
				f = 1
			}
			kernel(n, &pw[0], &a[0], as, &prep[0], ps, &y[0], ys*4, ntok, 1<<nr-1, f, &next[0], step)
		}
		return g
	}
}

// gemmPFStep is the prefetch advance per block iteration of
// gemmKernelQ4PFAVX2 for iters iterations (blocks × token pairs) over span
// bytes, or 0 for none: the kernel prefetches three lines at each step, so
// the last address it hints, (iters-1)·step + 128, stays inside the span.
func gemmPFStep(iters, span int) int {
	if iters <= 0 || span < 256 {
		return 0
	}
	return (span - 192) / iters
}

// gemmSplit is an archRow's packed MatMul in gemmsplit.go's nibble-split layout.
func gemmSplit(off int, pack asmPack, kernel asmKernel) func(ggml.Type) *gemmRoutines {
	return func(t ggml.Type) *gemmRoutines {
		return newGemm(t, off, pack, kernel, gemmSplitBlockB, gemmSplitKB)
	}
}

// gemmK is an archRow's packed K-quant MatMul (newGemmK).
func gemmK(blockB, kb int, pack func(n int, w []byte, ws int, dst []byte), kernel asmKernel, minBatch int) func(ggml.Type) *gemmRoutines {
	return func(t ggml.Type) *gemmRoutines { return newGemmK(t, blockB, kb, pack, kernel, minBatch) }
}

// newGemm wraps the assembly with the bounds checks the contracts in
// gemm.go promise: every byte the assembly touches is inside the slices it
// was given (the kernel's masked loads and stores do not touch lanes >= nr).
func newGemm(t ggml.Type, off int, pack asmPack, kernel asmKernel, blockB, kb int) *gemmRoutines {
	bs := t.TypeSize()
	abs := ActType(t).TypeSize()
	g := &gemmRoutines{
		off: off, blockB: blockB, prepB: gemmPrepBytes, kb: kb, minBatch: gemmMinBatch,
		pack: func(n int, w []byte, ws int, dst []byte) {
			if n <= 0 {
				return
			}
			if ws < n*bs || int64(ws)*(gemmTileRows-1) > math.MaxInt32 {
				panic(fmt.Sprintf("kernels: gemm pack %s: row stride %d for %d blocks", t, ws, n))
			}
			_ = w[(gemmTileRows-1)*ws+n*bs-1]
			_ = dst[n*blockB-1]
			pack(n, &w[0], ws, &dst[0])
		},
		prep: func(n int, a []byte, dst []byte, stride int) {
			if n <= 0 {
				return
			}
			if stride < gemmPrepBytes {
				panic(fmt.Sprintf("kernels: gemm prep: stride %d", stride))
			}
			_ = a[n*abs-1]
			_ = dst[(n-1)*stride+gemmPrepBytes-1]
			gemmPrepQ8_0(n, &a[0], off, &dst[0], stride)
		},
		kernel: func(n int, pw, a []byte, as int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool) {
			if ntok <= 0 || nr <= 0 {
				return
			}
			if n <= 0 {
				if nr > gemmTileRows || ps < ntok*gemmPrepBytes || ys < nr {
					panic(fmt.Sprintf("kernels: gemm kernel: %d rows, strides prep %d y %d for %d tokens", nr, ps, ys, ntok))
				}
				_ = y[(ntok-1)*ys+nr-1]
				if first {
					for i := 0; i < ntok; i++ {
						clear(y[i*ys : i*ys+nr])
					}
				}
				return
			}
			checkKernel32(n, pw, a, as, prep, ps, y, ys, ntok, nr, blockB, abs)
			f := 0
			if first {
				f = 1
			}
			kernel(n, &pw[0], &a[0], as, &prep[0], ps, &y[0], ys*4, ntok, 1<<nr-1, f)
		},
	}
	return g
}

// checkKernel32 panics unless every byte the 32-element kernel reads or
// writes for n > 0 blocks, ntok > 0 tokens and nr > 0 rows is inside pw,
// a, prep and y (newGemm's contract; blockB packed and abs activation bytes
// per block).
func checkKernel32(n int, pw, a []byte, as int, prep []byte, ps int, y []float32, ys, ntok, nr, blockB, abs int) {
	if nr > gemmTileRows || as < n*abs || ps < ntok*gemmPrepBytes || ys < nr {
		panic(fmt.Sprintf("kernels: gemm kernel: %d rows, strides a %d prep %d y %d for %d blocks × %d tokens", nr, as, ps, ys, n, ntok))
	}
	_ = y[(ntok-1)*ys+nr-1]
	_ = pw[n*blockB-1]
	_ = a[(ntok-1)*as+n*abs-1]
	_ = prep[(n-1)*ps+ntok*gemmPrepBytes-1]
}

// newGemmK is a packed K-quant MatMul: the Go packer of gemmk.go for the
// type's layout (blockB bytes per super-block, kb super-blocks per K-range)
// and the kernel for it (which reads the Q8_K activations' scale and sums in
// place, so there is no prep), with gemmKCall's bounds discipline.
func newGemmK(t ggml.Type, blockB, kb int, pack func(n int, w []byte, ws int, dst []byte), kernel asmKernel, minBatch int) *gemmRoutines {
	return &gemmRoutines{
		blockB: blockB, kb: kb, minBatch: minBatch,
		pack: pack,
		kernel: func(n int, pw, a []byte, as int, _ []byte, _ int, y []float32, ys, ntok, nr int, first bool) {
			f, run := gemmKCall(t, blockB, len(q8kBlock{}), n, pw, a, as, y, ys, ntok, nr, first)
			if !run {
				return
			}
			kernel(n, &pw[0], &a[0], as, nil, 0, &y[0], ys*4, ntok, 1<<nr-1, f)
		},
	}
}

//go:noescape
func gemmPackIQ4_NLSplitAVX2(nblk int, w *byte, ws int, dst *byte)

//go:noescape
func gemmKernelSplitAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)

//go:noescape
func gemmKernelQ5KAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)

//go:noescape
func gemmKernelIQ4XSAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)

//go:noescape
func gemmKernelQ2KAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)

//go:noescape
func gemmKernelQ6KAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)

//go:noescape
func gemmKernelQ4KAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)

//go:noescape
func gemmPackQ4_0(nblk int, w *byte, ws int, dst *byte)

//go:noescape
func gemmPackQ8_0(nblk int, w *byte, ws int, dst *byte)

//go:noescape
func gemmPackIQ4_NL(nblk int, w *byte, ws int, dst *byte)

//go:noescape
func gemmPrepQ8_0(nblk int, a *byte, off int, dst *byte, stride int)

//go:noescape
func gemmKernel(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)

//go:noescape
func gemmPackQ4_0AVX2(nblk int, w *byte, ws int, dst *byte)

//go:noescape
func gemmPackQ8_0AVX2(nblk int, w *byte, ws int, dst *byte)

//go:noescape
func gemmKernelQ8PFAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int, pf *byte, pfstep int)

//go:noescape
func gemmKernelQ4PFAVX2(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int, pf *byte, pfstep int)
