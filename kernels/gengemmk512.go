//go:build ignore

// gengemmk512 writes gemmk512_amd64.s: the AVX-512 VNNI packed K-quant
// kernels (gemmk512_amd64.go). Run with go generate ./kernels/ (amd64).
package main

import (
	"bytes"
	"fmt"
	"os"
)

var out bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, "\t"+format+"\n", args...) }

func label(l string) { fmt.Fprintf(&out, "%s:\n", l) }

// tok is token t's activation address at byte offset off within the current
// super-block: DI, DI+as, DI+2as, DI+3as, R8 = DI+4as, ... (R10 = 3·as).
func tok(t, off int) string {
	base := "DI"
	if t >= 4 {
		base, t = "R8", t-4
	}
	switch t {
	case 0:
		return fmt.Sprintf("%d(%s)", off, base)
	case 1:
		return fmt.Sprintf("%d(%s)(R9*1)", off, base)
	case 2:
		return fmt.Sprintf("%d(%s)(R9*2)", off, base)
	}
	return fmt.Sprintf("%d(%s)(R10*1)", off, base)
}

// Registers for T ≤ 8 tokens: acc Z8+t (a sub-block's or group's int32
// sums, later the min / offset sums), isum Z16+t, f Z24+t.
func acc(t int) string  { return fmt.Sprintf("Z%d", 8+t) }
func isum(t int) string { return fmt.Sprintf("Z%d", 16+t) }
func facc(t int) string { return fmt.Sprintf("Z%d", 24+t) }

// yaddr sets DX as needed and returns token t's output address (R14 + t·BX).
func yaddr(t int) string {
	switch t {
	case 0:
		return "(R14)"
	case 1:
		return "(R14)(BX*1)"
	case 2:
		return "(R14)(BX*2)"
	case 3:
		p("LEAQ (R14)(BX*2), DX")
		return "(DX)(BX*1)"
	case 4:
		return "(R14)(BX*4)"
	case 5:
		p("LEAQ (R14)(BX*4), DX")
		return "(DX)(BX*1)"
	case 6:
		p("LEAQ (R14)(BX*4), DX")
		return "(DX)(BX*2)"
	}
	p("LEAQ (R14)(BX*4), DX")
	p("LEAQ (DX)(BX*2), DX")
	return "(DX)(BX*1)"
}

// dots accumulates the weight vectors v0..v0+nv-1 against activation bytes
// at aoff.. into acc(t) for every token, zeroing the accumulators first.
func dots(T, v0, nv, aoff int) {
	for t := 0; t < T; t++ {
		p("VPXORD %s, %s, %s", acc(t), acc(t), acc(t))
	}
	for j := 0; j < nv; j++ {
		w := []string{"Z1", "Z2"}[j%2]
		p("VMOVDQU64 %d(SI), %s", 64*(v0+j), w)
		for t := 0; t < T; t++ {
			p("VPDPBUSD.BCST %s, %s, %s", tok(t, aoff+4*j), w, acc(t))
		}
	}
}

// scale multiplies acc(t) by the int32 scale of the (sc, sc) int16 pairs at
// off(SI) (sign-extended) and adds it to isum(t) (sets it when first).
func scale(T, off int, first bool) {
	p("VPSRAD $16, %d(SI), Z0", off)
	for t := 0; t < T; t++ {
		if first {
			p("VPMULLD Z0, %s, %s", acc(t), isum(t))
		} else {
			p("VPMULLD Z0, %s, %s", acc(t), acc(t))
			p("VPADDD %s, %s, %s", acc(t), isum(t), isum(t))
		}
	}
}

// pairs sets acc(t) = Σ_k VPDPWSSD(int16 pairs at off+64k(SI), the token's
// bsums 2k, 2k+1), k < 8.
func pairs(T, off int) {
	for t := 0; t < T; t++ {
		p("VPXORD %s, %s, %s", acc(t), acc(t), acc(t))
	}
	for k := 0; k < 8; k++ {
		m := []string{"Z1", "Z2"}[k%2]
		p("VMOVDQU64 %d(SI), %s", off+64*k, m)
		for t := 0; t < T; t++ {
			p("VPDPWSSD.BCST %s, %s, %s", tok(t, 260+4*k), m, acc(t))
		}
	}
}

// finish adds fl(d_w·d_a)·isum(t) to f(t), with d_w at doff(SI), and when
// dminoff ≥ 0 subtracts fl(dmin·d_a)·acc(t) (the min sums).
func finish(T, doff, dminoff int) {
	p("VMOVUPS %d(SI), Z1", doff)
	if dminoff >= 0 {
		p("VMOVUPS %d(SI), Z2", dminoff)
	}
	for t := 0; t < T; t++ {
		tmp := fmt.Sprintf("Z%d", 3+t%5)
		p("VMULPS.BCST %s, Z1, %s", tok(t, 0), tmp)
		p("VCVTDQ2PS %s, %s", isum(t), isum(t))
		p("VFMADD231PS %s, %s, %s", tmp, isum(t), facc(t))
		if dminoff >= 0 {
			p("VMULPS.BCST %s, Z2, %s", tok(t, 0), tmp)
			p("VCVTDQ2PS %s, %s", acc(t), acc(t))
			p("VFNMADD231PS %s, %s, %s", tmp, acc(t), facc(t))
		}
	}
}

type kind struct {
	name   string
	blockB int
	body   func(T int)
}

// q4k: Q4_K/Q5_K layout (gemmk.go): 8 sub-blocks of 8 vectors, scales at
// 4096, mins at 4608, d at 5120, dmin at 5184.
func q4k(T int) {
	for s := 0; s < 8; s++ {
		dots(T, 8*s, 8, 4+32*s)
		scale(T, 4096+64*s, s == 0)
	}
	pairs(T, 4608)
	finish(T, 5120, 5184)
}

// q6k: Q6_K layout: 16 groups of 4 vectors, scales at 4096, offset pairs at
// 5120, d at 5632.
func q6k(T int) {
	for g := 0; g < 16; g++ {
		dots(T, 4*g, 4, 4+16*g)
		scale(T, 4096+64*g, g == 0)
	}
	pairs(T, 5120)
	for t := 0; t < T; t++ {
		p("VPSLLD $5, %s, %s", acc(t), acc(t))
		p("VPSUBD %s, %s, %s", acc(t), isum(t), isum(t))
	}
	finish(T, 5632, -1)
}

func kernel(k kind) {
	n := k.name
	fmt.Fprintf(&out, "\n// func %s(nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int)\n", n)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-88\n", n)
	p("MOVQ a+16(FP), R12")
	p("MOVQ as+24(FP), R9")
	p("MOVQ y+48(FP), R14")
	p("MOVQ ys+56(FP), BX")
	p("MOVQ ntok+64(FP), AX")
	p("MOVQ mask+72(FP), DX")
	p("KMOVW DX, K1")
	p("LEAQ (R9)(R9*2), R10")
	groups := []int{8, 4, 2, 1}
	for i, T := range groups {
		pre := fmt.Sprintf("%s_%d", n, T)
		next := n + "_done"
		if i+1 < len(groups) {
			next = fmt.Sprintf("%s_%d", n, groups[i+1])
		}
		label(pre)
		p("CMPQ AX, $%d", T)
		p("JLT %s", next)
		p("MOVQ first+80(FP), DX")
		p("TESTQ DX, DX")
		p("JNZ %s_zero", pre)
		for t := 0; t < T; t++ {
			a := yaddr(t)
			p("VMOVUPS.Z %s, K1, %s", a, facc(t))
		}
		p("JMP %s_start", pre)
		label(pre + "_zero")
		for t := 0; t < T; t++ {
			p("VPXORD %s, %s, %s", facc(t), facc(t), facc(t))
		}
		label(pre + "_start")
		p("MOVQ nblk+0(FP), CX")
		p("MOVQ pw+8(FP), SI")
		p("MOVQ R12, DI")
		p("LEAQ (R12)(R9*4), R8")
		p("TESTQ CX, CX")
		p("JZ %s_store", pre)
		label(pre + "_loop")
		k.body(T)
		p("ADDQ $%d, SI", k.blockB)
		p("ADDQ $292, DI")
		p("ADDQ $292, R8")
		p("DECQ CX")
		p("JNZ %s_loop", pre)
		label(pre + "_store")
		for t := 0; t < T; t++ {
			a := yaddr(t)
			p("VMOVUPS %s, K1, %s", facc(t), a)
		}
		for t := 0; t < T; t++ {
			p("ADDQ R9, R12")
			p("ADDQ BX, R14")
		}
		p("SUBQ $%d, AX", T)
		p("JMP %s", pre)
	}
	label(n + "_done")
	p("VZEROUPPER")
	p("RET")
}

// packQ4K writes gemmPackQ4KAVX512: packQ4K's layout (gemmk.go) by dword
// gathers across the 16 rows (Z31 = row offsets r·ws).
func packQ4K() {
	out.WriteString(`
// Byte-shuffle controls for the Q4_K scale / min pairs: dword lane k of a
// 128-bit lane gets (byte 4k+s, 0, byte 4k+s, 0), the int16 pair (v, v).
DATA q4kPair<>+0(SB)/8, $0x8004800480008000
DATA q4kPair<>+8(SB)/8, $0x800c800c80088008
DATA q4kPair<>+16(SB)/8, $0x8005800580018001
DATA q4kPair<>+24(SB)/8, $0x800d800d80098009
DATA q4kPair<>+32(SB)/8, $0x8006800680028002
DATA q4kPair<>+40(SB)/8, $0x800e800e800a800a
DATA q4kPair<>+48(SB)/8, $0x8007800780038003
DATA q4kPair<>+56(SB)/8, $0x800f800f800b800b
GLOBL q4kPair<>(SB), RODATA|NOPTR, $64

DATA q4kIota<>+0(SB)/8, $0x0000000100000000
DATA q4kIota<>+8(SB)/8, $0x0000000300000002
DATA q4kIota<>+16(SB)/8, $0x0000000500000004
DATA q4kIota<>+24(SB)/8, $0x0000000700000006
DATA q4kIota<>+32(SB)/8, $0x0000000900000008
DATA q4kIota<>+40(SB)/8, $0x0000000b0000000a
DATA q4kIota<>+48(SB)/8, $0x0000000d0000000c
DATA q4kIota<>+56(SB)/8, $0x0000000f0000000e
GLOBL q4kIota<>(SB), RODATA|NOPTR, $64

DATA q4k0f<>+0(SB)/4, $0x0f0f0f0f
GLOBL q4k0f<>(SB), RODATA|NOPTR, $4
DATA q4k3f<>+0(SB)/4, $0x3f3f3f3f
GLOBL q4k3f<>(SB), RODATA|NOPTR, $4
DATA q4k03<>+0(SB)/4, $0x03030303
GLOBL q4k03<>(SB), RODATA|NOPTR, $4

// func gemmPackQ4KAVX512(nblk int, w *byte, ws int, dst *byte)
TEXT ·gemmPackQ4KAVX512(SB), NOSPLIT, $0-32
`)
	p("MOVQ nblk+0(FP), CX")
	p("MOVQ w+8(FP), SI")
	p("MOVQ ws+16(FP), R9")
	p("MOVQ dst+24(FP), DI")
	p("LEAQ (R9)(R9*2), R10")
	p("LEAQ (SI)(R9*4), R8")
	p("LEAQ (R8)(R9*4), R11")
	p("LEAQ (R11)(R9*4), R12")
	p("VMOVDQU64 q4kIota<>(SB), Z31")
	p("VPBROADCASTD R9, Z30")
	p("VPMULLD Z30, Z31, Z31")
	p("VPBROADCASTD q4k0f<>(SB), Z30")
	p("VPBROADCASTD q4k3f<>(SB), Z29")
	p("VPBROADCASTD q4k03<>(SB), Z28")
	for s := 0; s < 4; s++ {
		p("VBROADCASTI32X4 q4kPair<>+%d(SB), Z%d", 16*s, 24+s)
	}
	p("TESTQ CX, CX")
	p("JZ q4kpdone")
	label("q4kploop")
	for _, d := range []int{576, 640, 704} {
		for _, b := range []string{"SI", "R8", "R11", "R12"} {
			p("PREFETCHT0 %d(%s)", d, b)
			p("PREFETCHT0 %d(%s)(R9*1)", d, b)
			p("PREFETCHT0 %d(%s)(R9*2)", d, b)
			p("PREFETCHT0 %d(%s)(R10*1)", d, b)
		}
	}
	gather := func(off int, z string) {
		p("KXNORW K1, K1, K1")
		p("VPXORD %s, %s, %s", z, z, z)
		p("VPGATHERDD %d(SI)(Z31*1), K1, %s", off, z)
	}
	// d, dmin.
	gather(0, "Z0")
	p("VPMOVDW Z0, Y1")
	p("VCVTPH2PS Y1, Z1")
	p("VMOVDQU64 Z1, %d(DI)", 5120)
	p("VPSRLD $16, Z0, Z0")
	p("VPMOVDW Z0, Y1")
	p("VCVTPH2PS Y1, Z1")
	p("VMOVDQU64 Z1, %d(DI)", 5184)
	// Scales and mins (q4kScalesMins): Z4 = sc 0..3, Z5 = sc 4..7, Z6 =
	// min 0..3, Z7 = min 4..7, one byte per (lane, sub-block).
	gather(4, "Z0")
	gather(8, "Z1")
	gather(12, "Z2")
	p("VPANDD Z29, Z0, Z4")
	p("VPANDD Z29, Z1, Z6")
	p("VPSRLD $6, Z0, Z0")
	p("VPANDD Z28, Z0, Z0")
	p("VPSLLD $4, Z0, Z0")
	p("VPANDD Z30, Z2, Z5")
	p("VPORD Z0, Z5, Z5")
	p("VPSRLD $6, Z1, Z1")
	p("VPANDD Z28, Z1, Z1")
	p("VPSLLD $4, Z1, Z1")
	p("VPSRLD $4, Z2, Z2")
	p("VPANDD Z30, Z2, Z7")
	p("VPORD Z1, Z7, Z7")
	for s := 0; s < 8; s++ {
		sc, mn := "Z4", "Z6"
		if s >= 4 {
			sc, mn = "Z5", "Z7"
		}
		p("VPSHUFB Z%d, %s, Z8", 24+s%4, sc)
		p("VMOVDQU64 Z8, %d(DI)", 4096+64*s)
		p("VPSHUFB Z%d, %s, Z9", 24+s%4, mn)
		p("VMOVDQU64 Z9, %d(DI)", 4608+64*s)
	}
	// Quants: dword j of chunk c (32 bytes at 16+32c) holds elements
	// 32·2c+4j.. (low nibbles) and 32·(2c+1)+4j.. (high).
	for c := 0; c < 4; c++ {
		for j := 0; j < 8; j++ {
			z := fmt.Sprintf("Z%d", 10+j%4)
			gather(16+32*c+4*j, z)
			p("VPANDD Z30, %s, Z%d", z, 14+j%4)
			p("VMOVDQU64 Z%d, %d(DI)", 14+j%4, 64*(8*(2*c)+j))
			p("VPSRLD $4, %s, %s", z, z)
			p("VPANDD Z30, %s, %s", z, z)
			p("VMOVDQU64 %s, %d(DI)", z, 64*(8*(2*c+1)+j))
		}
	}
	for _, r := range []string{"SI", "R8", "R11", "R12"} {
		p("ADDQ $144, %s", r)
	}
	p("ADDQ $%d, DI", 5248)
	p("DECQ CX")
	p("JNZ q4kploop")
	label("q4kpdone")
	p("VZEROUPPER")
	p("RET")
}

func main() {
	out.WriteString(`// Code generated by gengemmk512.go; DO NOT EDIT.

// AVX-512 VNNI packed K-quant kernels (gemmk512_amd64.go describes them).

#include "textflag.h"
`)
	kernel(kind{"gemmKernelQ4KAVX512", 5248, q4k})
	kernel(kind{"gemmKernelQ6KAVX512", 5696, q6k})
	packQ4K()
	if err := os.WriteFile("gemmk512_amd64.s", out.Bytes(), 0o644); err != nil {
		panic(err)
	}
}
