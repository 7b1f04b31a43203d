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

func main() {
	out.WriteString(`// Code generated by gengemmk512.go; DO NOT EDIT.

// AVX-512 VNNI packed K-quant kernels (gemmk512_amd64.go describes them).

#include "textflag.h"
`)
	kernel(kind{"gemmKernelQ4KAVX512", 5248, q4k})
	kernel(kind{"gemmKernelQ6KAVX512", 5696, q6k})
	if err := os.WriteFile("gemmk512_amd64.s", out.Bytes(), 0o644); err != nil {
		panic(err)
	}
}
