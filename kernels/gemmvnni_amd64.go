package kernels

import (
	"encoding/binary"
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
)

// The avxvnni path is the avx2 path with its packed MatMuls (prefill)
// replaced by kernels that multiply bytes with the VEX-encoded VPDPBUSD of
// AVX-VNNI (Intel Alder Lake and later, AMD Zen 4 and 5): one instruction
// for the four products and their sum into int32 that AVX2 forms with
// VPMADDUBSW, VPMADDWD and VPADDD. The kernels are the AVX-512 VNNI
// kernels' arithmetic on YMM registers (gengemmvnni.go writes them), run on
// layouts AVX2 code packs:
//
//   - Q4_0: gemm.go's 32-element layout from gemmPackQ4_0AVX2 (off 8), the
//     outputs bit-identical to avx2's gemmKernelQ4PFAVX2;
//   - Q8_0: the same layout with the quants + 128 (gemmPackQ8_0AVX2's
//     signed quants with the top bit flipped, off 128), the outputs
//     bit-identical to avx512's gemmKernel on gemmPackQ8_0's bytes;
//   - the K-quants: gemmk.go's layouts from its Go packers, bit-identical
//     to the avx2 and avx512 packed K-quant MatMuls;
//   - IQ4_XS: gemmiq4xs8_amd64.go's byte layout (gemmPackIQ4XS8AVX2) with
//     a Go prep, bit-identical to avx512's byte kernel and avx2's int16 one.
//
// The one-row dots, four-row routines and encoders stay AVX2's: generation
// streams weights from memory, where the integer instruction count does not
// set the speed.
var avxvnniRows = []archRow{
	{t: ggml.Q4_0, gemm: gemm32VNNI(8, gemmPackQ4_0AVX2, false)},
	{t: ggml.Q8_0, gemm: gemm32VNNI(128, gemmPackQ8_0AVX2, true)},
	{t: ggml.Q2_K, gemm: gemmK(gemmQ2KBlockB, gemmQ2KKB, packQ2K, gemmKernelQ2KVNNI, gemmQ2KMinBatch)},
	{t: ggml.Q3_K, gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packQ3K, gemmKernelQ6KVNNI, gemmQ3KMinBatch)},
	{t: ggml.Q4_K, gemm: gemmK(gemmQ4KBlockB, gemmQ4KKB, packQ4K, gemmKernelQ4KVNNI, gemmQ4KMinBatch)},
	{t: ggml.Q5_K, gemm: gemmK(gemmQ4KBlockB, gemmQ4KKB, packQ5K, gemmKernelQ4KVNNI, gemmQ5KMinBatch)},
	{t: ggml.Q6_K, gemm: gemmK(gemmQ6KBlockB, gemmQ6KKB, packQ6K, gemmKernelQ6KVNNI, gemmQ6KMinBatch)},
	{t: ggml.IQ4_XS, gemm: newGemmIQ4XS8VNNI},
}

// vnniGroups is how many token groups the VNNI kernels make of ntok tokens
// (six at a time, then at most one each of three, two, one): each walks all
// blocks, so n blocks take n·vnniGroups(ntok) block iterations, the
// prefetch count.
func vnniGroups(ntok int) int {
	g, rest := ntok/6, ntok%6
	for _, t := range []int{3, 2, 1} {
		if rest >= t {
			g, rest = g+1, rest-t
		}
	}
	return g
}

// gemm32VNNI is the packed MatMul in gemm.go's 32-element layout with
// gemmKernelQ40VNNI; flip turns the packer's signed Q8_0 quants into the
// unsigned w+128 the kernel multiplies (off must then be 128).
func gemm32VNNI(off int, pack asmPack, flip bool) func(ggml.Type) *gemmRoutines {
	return func(t ggml.Type) *gemmRoutines {
		g := newGemm(t, off, pack, func(nblk int, pw, a *byte, as int, prep *byte, pstride int, y *float32, ys, ntok, mask, first int) {
			gemmKernelQ40VNNI(nblk, pw, a, as, prep, pstride, y, ys, ntok, mask, first, pw, 0)
		}, gemmBlockB, gemmKB)
		if flip {
			signed := g.pack
			g.pack = func(n int, w []byte, ws int, dst []byte) {
				signed(n, w, ws, dst)
				for b := 0; b < n; b++ {
					flipTop(dst[b*gemmBlockB : b*gemmBlockB+512])
				}
			}
		}
		plain := g.kernel
		g.kernelPF = func(n int, pw, a []byte, as int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool, next []byte) {
			step := gemmPFStep(n*vnniGroups(ntok), len(next))
			if n <= 0 || ntok <= 0 || step <= 0 {
				plain(n, pw, a, as, prep, ps, y, ys, ntok, nr, first)
				return
			}
			checkKernel32(n, pw, a, as, prep, ps, y, ys, ntok, nr, g.blockB, ActType(t).TypeSize())
			f := 0
			if first {
				f = 1
			}
			gemmKernelQ40VNNI(n, &pw[0], &a[0], as, &prep[0], ps, &y[0], ys*4, ntok, 1<<nr-1, f, &next[0], step)
		}
		return g
	}
}

// flipTop adds 128 (mod 256) to every byte of b, whose length is a
// multiple of 8: a signed byte w becomes the unsigned w+128.
func flipTop(b []byte) {
	le := binary.LittleEndian
	for i := 0; i+8 <= len(b); i += 8 {
		le.PutUint64(b[i:], le.Uint64(b[i:])^0x8080808080808080)
	}
}

// prepQ8KI8 is the byte layout's prep (gemmiq4xs8_amd64.go) of the n Q8_K
// blocks of a into dst[i·stride:]: the quants copied per sub-block and
// −128·Σa from the blocks' bsums (Σ of each 16 quants, quantQ8_K), so equal
// to prepQ8KI8Go's, which sums the quants.
func prepQ8KI8(n int, a, dst []byte, stride int) {
	const abs = len(q8kBlock{})
	le := binary.LittleEndian
	for i := 0; i < n; i++ {
		x := (*q8kBlock)(a[i*abs:])
		o := (*[gemmIQ4XS8PrepB]byte)(dst[i*stride:])
		copy(o[288:292], x[0:4])
		le.PutUint32(o[292:], 0)
		for s := 0; s < 8; s++ {
			copy(o[36*s:36*s+32], x[4+32*s:4+32*s+32])
			sum := q8kSum16(x, 2*s) + q8kSum16(x, 2*s+1)
			le.PutUint32(o[36*s+32:], uint32(-128*sum))
		}
	}
}

// newGemmIQ4XS8VNNI is newGemmIQ4XS8AVX512 with the VNNI kernel and the Go
// prep.
func newGemmIQ4XS8VNNI(ggml.Type) *gemmRoutines {
	const abs = len(q8kBlock{})
	kernel := func(n int, pw []byte, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool, next []byte, step int) {
		f, run := gemmKCall(ggml.IQ4_XS, gemmIQ4XS8BlockB, gemmIQ4XS8PrepB, n, pw, prep, ps, y, ys, ntok, nr, first)
		if !run {
			return
		}
		pf := &pw[0]
		if step > 0 {
			pf = &next[0]
		}
		gemmKernelIQ4XS8VNNI(n, &pw[0], nil, 0, &prep[0], ps, &y[0], ys*4, ntok, 1<<nr-1, f, pf, step)
	}
	return &gemmRoutines{
		blockB: gemmIQ4XS8BlockB, prepB: gemmIQ4XS8PrepB, kb: gemmIQ4XS8KB, minBatch: gemmIQ4XSMinBatch, prepByToken: true,
		pack: packIQ4XS8,
		prep: func(n int, a []byte, dst []byte, stride int) {
			if n <= 0 {
				return
			}
			if stride < gemmIQ4XS8PrepB {
				panic(fmt.Sprintf("kernels: gemm prep IQ4_XS: stride %d", stride))
			}
			_ = a[n*abs-1]
			_ = dst[(n-1)*stride+gemmIQ4XS8PrepB-1]
			prepQ8KI8(n, a, dst, stride)
		},
		kernel: func(n int, pw, _ []byte, _ int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool) {
			kernel(n, pw, prep, ps, y, ys, ntok, nr, first, nil, 0)
		},
		kernelPF: func(n int, pw, _ []byte, _ int, prep []byte, ps int, y []float32, ys, ntok, nr int, first bool, next []byte) {
			kernel(n, pw, prep, ps, y, ys, ntok, nr, first, next, gemmPFStep(n*vnniGroups(ntok), len(next)))
		},
	}
}

//go:noescape
func gemmKernelQ40VNNI(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int, pf *byte, pfstep int)

//go:noescape
func gemmKernelQ4KVNNI(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)

//go:noescape
func gemmKernelQ6KVNNI(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)

//go:noescape
func gemmKernelQ2KVNNI(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)

//go:noescape
func gemmKernelIQ4XS8VNNI(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int, pf *byte, pfstep int)
