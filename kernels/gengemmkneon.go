//go:build ignore

// gengemmkneon writes gemmk_arm64.s: the NEON (ASIMDDP) packed K-quant
// MatMul kernels over gemmk.go's and gemmkq2q3.go's 16-row layouts. The four
// kernels share one frame (per token: load or zero the 16 row sums, walk the
// super-blocks, store) and one inner step (four vectors of four rows' quads
// against one activation dword each, SDOT by element); they differ in how
// many elements a sub-block has and how scales and mins reach the integer
// sums. The kernels are fully unrolled over a super-block, which is why they
// are generated. Run with go generate ./kernels/.
package main

import (
	"bytes"
	"fmt"
	"os"
)

var out bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, "\t"+format+"\n", args...) }

func label(l string) { fmt.Fprintf(&out, "%s:\n", l) }

// text writes s as it stands (comments, #defines, DATA).
func text(s string) { out.WriteString(s) }

// zero clears V(first)..V(first+n-1).
func zero(first, n int) {
	for r := first; r < first+n; r++ {
		p("VEOR V%d.B16, V%d.B16, V%d.B16", r, r, r)
	}
}

// quads loads the next four weight vectors (16 rows × four consecutive
// elements each) and adds their products with activation dword lane of
// V(act) into the per-sub-block sums V8..V11. With tbl the vectors hold
// IQ4 codebook indices, looked up in V30 first.
func quads(act, lane int, tbl bool) {
	p("VLD1.P 64(R6), [V4.B16, V5.B16, V6.B16, V7.B16]")
	if tbl {
		for r := 4; r < 8; r++ {
			p("VTBL V%d.B16, [V30.B16], V%d.B16", r, r)
		}
	}
	for i := 0; i < 4; i++ {
		p("SDOTE(%d, %d, %d, %d)", 8+i, 4+i, act, lane)
	}
}

// subBlock clears V8..V11 and accumulates one sub-block of n dwords
// (4n elements, n = 4 or 8) of activation read from R12.
func subBlock(n int, tbl bool) {
	if n == 8 {
		p("VLD1.P 32(R12), [V0.B16, V1.B16]")
	} else {
		p("VLD1.P 16(R12), [V0.B16]")
	}
	zero(8, 4)
	for j := 0; j < n; j++ {
		quads(j/4, j%4, tbl)
	}
}

// each4 writes format once per register quadruple i = 0..3, with args
// computed from i.
func each4(format string, args func(i int) []any) {
	for i := 0; i < 4; i++ {
		p(format, args(i)...)
	}
}

// ld4 loads V(first)..V(first+3) as .S4 from (reg), post-incrementing by 64
// when post.
func ld4(reg string, first int, post bool) {
	op := "VLD1"
	addr := "(" + reg + ")"
	if post {
		op, addr = "VLD1.P", "64("+reg+")"
	}
	p("%s %s, [V%d.S4, V%d.S4, V%d.S4, V%d.S4]", op, addr, first, first+1, first+2, first+3)
}

// kernelSpec is one routine: pre names its labels, acc is the first of its
// four row-sum registers, setup runs once before the token loop, blk writes
// the super-block body.
type kernelSpec struct {
	name, pre string
	acc       int
	setup     func()
	blk       func(acc int)
	blockB    int // what R6 advances per super-block after blk's post-increments
}

// kernel writes k's frame around its super-block body.
func kernel(k kernelSpec) {
	fmt.Fprintf(&out, "// func %s(nblk int, pw, a *byte, as int, y *float32, ys, ntok, first int)\n", k.name)
	fmt.Fprintf(&out, "TEXT ·%s(SB), NOSPLIT, $0-64\n", k.name)
	p("MOVD nblk+0(FP), R0")
	p("MOVD a+16(FP), R2")
	p("MOVD as+24(FP), R3")
	p("MOVD y+32(FP), R7")
	p("MOVD ys+40(FP), R8")
	p("LSL $2, R8, R8")
	p("MOVD ntok+48(FP), R9")
	p("MOVD first+56(FP), R10")
	if k.setup != nil {
		k.setup()
	}
	acc := fmt.Sprintf("[V%d.S4, V%d.S4, V%d.S4, V%d.S4]", k.acc, k.acc+1, k.acc+2, k.acc+3)
	label(k.pre + "tok")
	p("CBZ R10, %sload", k.pre)
	zero(k.acc, 4)
	p("B %sblocks", k.pre)
	label(k.pre + "load")
	p("VLD1 (R7), %s", acc)
	label(k.pre + "blocks")
	p("MOVD pw+8(FP), R6")
	p("MOVD R2, R11")
	p("MOVD R0, R13")
	label(k.pre + "blk")
	k.blk(k.acc)
	p("ADD $%d, R6, R6", k.blockB)
	p("ADD $292, R11, R11") // a Q8_K block: d, 256 quants, 16 int16 sums
	p("SUBS $1, R13, R13")
	p("BNE %sblk", k.pre)
	p("VST1 %s, (R7)", acc)
	p("ADD R3, R2, R2")
	p("ADD R8, R7, R7")
	p("SUBS $1, R9, R9")
	p("BNE %stok", k.pre)
	p("RET")
}

// scale4 converts the integer sums V(sum)..+3 to f32 and adds (sub when
// neg) each times the per-row factor V12..V15 · V(da).S[0] (d·d_a, the f32
// d of the rows loaded into V12..V15 just before) into the row sums.
func scale4(sum, da, acc int, neg bool) {
	each4("FMULE0(%d, %d, %d)", func(i int) []any { return []any{12 + i, 12 + i, da} })
	each4("SCVTF4S(%d, %d)", func(i int) []any { return []any{sum + i, sum + i} })
	op := "VFMLA"
	if neg {
		op = "VFMLS"
	}
	each4(op+" V%d.S4, V%d.S4, V%d.S4", func(i int) []any { return []any{sum + i, 12 + i, acc + i} })
}

// bsums16 loads the activation's 16 sums of 16 quants (int16 at a+260) and
// widens them to int32 in V24..V27 (sums 4k..4k+3 in V(24+k)).
func bsums16() {
	p("ADD $260, R11, R14")
	p("VLD1 (R14), [V24.H8, V25.H8]")
	p("SXTL2_4S(27, 25)")
	p("SXTL4S(26, 25)")
	p("SXTL2_4S(25, 24)")
	p("SXTL4S(24, 24)")
}

// q4k: 8 sub-blocks of 32; scales (sc, sc) pairs at +4096 + 64s, mins at
// +4608 + 64s, the unsigned high half taken; d at +5120, dmin at +5184.
// V24/V25 hold the activation's sums of 32 (pairwise sums of the 16 int16
// sums of 16), V30 its d.
func q4k(acc int) {
	p("FMOVS (R11), F30")
	p("ADD $260, R11, R14")
	p("VLD1 (R14), [V24.H8, V25.H8]")
	p("SADDLP4S(24, 24)")
	p("SADDLP4S(25, 25)")
	zero(16, 8)
	p("ADD $4, R11, R12")
	p("ADD $4096, R6, R14")
	p("ADD $4608, R6, R15")
	for s := 0; s < 8; s++ {
		subBlock(8, false)
		ld4("R14", 4, true)
		each4("VUSHR $16, V%d.S4, V%d.S4", func(i int) []any { return []any{4 + i, 4 + i} })
		each4("MLA4S(%d, %d, %d)", func(i int) []any { return []any{16 + i, 8 + i, 4 + i} })
		ld4("R15", 4, true)
		each4("VUSHR $16, V%d.S4, V%d.S4", func(i int) []any { return []any{4 + i, 4 + i} })
		each4("MLAS(%d, %d, %d, %d)", func(i int) []any { return []any{20 + i, 4 + i, 24 + s/4, s % 4} })
	}
	p("ADD $1024, R6, R14")
	ld4("R14", 12, true)
	scale4(16, 30, acc, false)
	ld4("R14", 12, false)
	scale4(20, 30, acc, true)
}

// q6k: 16 groups of 16; scales as (sc, sc) pairs at +4096 + 64g (signed);
// d at +5632. isum − 32·Σ sc·bsum is the integer with quants offset by −32.
func q6k(acc int) {
	bsums16()
	zero(16, 8)
	p("ADD $4, R11, R12")
	p("ADD $4096, R6, R14")
	for g := 0; g < 16; g++ {
		subBlock(4, false)
		ld4("R14", 12, true)
		each4("SSHR16(%d, %d)", func(i int) []any { return []any{12 + i, 12 + i} })
		each4("MLA4S(%d, %d, %d)", func(i int) []any { return []any{16 + i, 8 + i, 12 + i} })
		each4("MLAS(%d, %d, %d, %d)", func(i int) []any { return []any{20 + i, 12 + i, 24 + g/4, g % 4} })
	}
	each4("SHL5(%d, %d)", func(i int) []any { return []any{20 + i, 20 + i} })
	each4("SUB4S(%d, %d, %d)", func(i int) []any { return []any{16 + i, 16 + i, 20 + i} })
	p("FMOVS (R11), F0")
	p("ADD $1536, R6, R14")
	ld4("R14", 12, false)
	scale4(16, 0, acc, false)
}

// q2k: 16 groups of 16 with scales as (sc, sc) pairs at +4096 + 64g
// (unsigned); then the mins of groups 2k, 2k+1 as one int16 pair per row at
// +5120 + 64k, split into V12..V15 (low) and V8..V11 (high); d and dmin at
// +5632 and +5696.
func q2k(acc int) {
	bsums16()
	zero(16, 8)
	p("ADD $4, R11, R12")
	p("ADD $4096, R6, R14")
	for g := 0; g < 16; g++ {
		subBlock(4, false)
		ld4("R14", 12, true)
		each4("VUSHR $16, V%d.S4, V%d.S4", func(i int) []any { return []any{12 + i, 12 + i} })
		each4("MLA4S(%d, %d, %d)", func(i int) []any { return []any{16 + i, 8 + i, 12 + i} })
	}
	for k := 0; k < 8; k++ {
		ld4("R14", 12, true)
		for i := 0; i < 4; i++ {
			p("VUSHR $16, V%d.S4, V%d.S4", 12+i, 8+i)
			p("SHL16(%d, %d)", 12+i, 12+i)
			p("VUSHR $16, V%d.S4, V%d.S4", 12+i, 12+i)
		}
		g := 2 * k
		each4("MLAS(%d, %d, %d, %d)", func(i int) []any { return []any{20 + i, 12 + i, 24 + g/4, g % 4} })
		each4("MLAS(%d, %d, %d, %d)", func(i int) []any { return []any{20 + i, 8 + i, 24 + (g+1)/4, (g + 1) % 4} })
	}
	p("FMOVS (R11), F0")
	p("ADD $1536, R6, R14")
	ld4("R14", 12, true)
	scale4(16, 0, acc, false)
	ld4("R14", 12, false)
	scale4(20, 0, acc, true)
}

// iq4xs: 8 sub-blocks of 32 looked up through the codebook in V30; scale
// pairs at +4160 + 128s; d at +5632.
func iq4xs(acc int) {
	zero(16, 4)
	p("ADD $4, R11, R12")
	p("ADD $4160, R6, R14")
	for s := 0; s < 8; s++ {
		subBlock(8, true)
		ld4("R14", 12, false)
		p("ADD $128, R14, R14")
		each4("SSHR16(%d, %d)", func(i int) []any { return []any{12 + i, 12 + i} })
		each4("MLA4S(%d, %d, %d)", func(i int) []any { return []any{16 + i, 8 + i, 12 + i} })
	}
	p("FMOVS (R11), F0")
	p("ADD $1536, R6, R14")
	ld4("R14", 12, false)
	scale4(16, 0, acc, false)
}

func main() {
	text(`// Code generated by gengemmkneon.go; DO NOT EDIT.

// Packed K-quant MatMul for NEON with ASIMDDP over gemmk.go's Q4_K layout
// (Q5_K packs into the same layout with quants 0..31): per super-block,
// vector 8s+j holds elements 32s+4j..32s+4j+3 of the 16 rows (a dword
// each, row r at byte 4r), then per sub-block s the scales and the mins as
// int16 pairs (v, v) per row, then d and dmin as f32. SDOT by element gives
// each sub-block's 16 row sums against the activation's four bytes; per
// row the kernel forms dotQ4_K's exact integers isum = Σ sc·Σq·a and
// summs = Σ m·(bsum 2s + bsum 2s+1), and adds fl(d·d_a)·isum and then
// -fl(dmin·d_a)·summs with one fused multiply-add each (gemmk_test.go's
// bound).

#include "textflag.h"
#include "neon_arm64.h"

// Vd.4S += Σ of each 4 consecutive Vn.16B × Vm.4B[i] (signed, exact).
#define SDOTE(d, n, m, i) WORD $(0x4F80E000 | (((i)&1)<<21) | ((((i)>>1)&1)<<11) | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S += Vn.4S × Vm.4S (int32).
#define MLA4S(d, n, m) WORD $(0x4EA09400 | ((m)<<16) | ((n)<<5) | (d))
// Vd.4S = Vn.4S × Vm.S[0] (f32).
#define FMULE0(d, n, m) WORD $(0x4F809000 | ((m)<<16) | ((n)<<5) | (d))

`)
	kernel(kernelSpec{name: "gemmKernelQ4KNEONDot", pre: "gk", acc: 26, blk: q4k, blockB: 1152})
	text(`
// Vd.4S = Vn.4S >> 16 (arithmetic): the int16 scale of an (sc, sc) pair.
#define SSHR16(d, n) WORD $(0x4F300400 | ((n)<<5) | (d))
// Vd.4S = Vn.4S << 5; Vd.4S = Vn.4S - Vm.4S (int32).
#define SHL5(d, n) WORD $(0x4F255400 | ((n)<<5) | (d))
#define SUB4S(d, n, m) WORD $(0x6EA08400 | ((m)<<16) | ((n)<<5) | (d))

// Q6_K in gemmk.go's Q6_K layout: vector e/4 holds element e's 6-bit quant
// 0..63 of the 16 rows, then per group g of 16 elements its int8 scale as
// the int16 pair (sc, sc), the offset pairs (not read here) and d as f32.
// Per row the kernel forms Σ_g sc_g·Σ q·a − 32·Σ_g sc_g·bsum_g (dotQ6_K's
// integer when the activation's sums of 16 are its quants' sums, as
// QuantizeAct writes them) and adds fl(d·d_a)·isum with one fused
// multiply-add per super-block.
`)
	kernel(kernelSpec{name: "gemmKernelQ6KNEONDot", pre: "g6", acc: 28, blk: q6k, blockB: 1600})
	text(`
// Vd.4S = Vn.4S << 16.
#define SHL16(d, n) WORD $(0x4F305400 | ((n)<<5) | (d))

// Q2_K in gemmkq2q3.go's layout (Q6_K's with values 0..3, 4-bit scales as
// (sc, sc) pairs, the mins of groups 2k, 2k+1 as an int16 pair at gemmQ6KOff
// + 64k, d and dmin as f32): per row isum = Σ_g sc_g·Σ q·a and summs =
// Σ_g m_g·bsum_g, dotQ2_K's integers, then fl(d·d_a)·isum and
// -fl(dmin·d_a)·summs with one fused multiply-add each, as for Q4_K.
`)
	kernel(kernelSpec{name: "gemmKernelQ2KNEONDot", pre: "g2", acc: 28, blk: q2k, blockB: 1664})
	text(`
// The IQ4_NL/IQ4_XS codebook (ggml-common.h kvalues_iq4nl) as bytes.
DATA iq4kvk<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA iq4kvk<>+8(SB)/8, $0x7159453526190d01
GLOBL iq4kvk<>(SB), RODATA|NOPTR, $16

// IQ4_XS in gemmk.go's IQ4_XS layout: vector 8s+j holds the codebook
// indices of elements 32s+4j..+3 of the 16 rows, looked up here with TBL
// into the signed values (so SDOT sums value·a directly and the layout's
// +128 offset pairs are not read); sub-block s's scale sc is the (sc, sc)
// pair at gemmIQ4XSSc + 64(2s+1). Per row isum = Σ_s sc·Σ value·a,
// dotIQ4_XS's integer, then fl(d·d_a)·isum with one fused multiply-add.
`)
	kernel(kernelSpec{name: "gemmKernelIQ4XSNEONDot", pre: "gx", acc: 26, blk: iq4xs, blockB: 1600,
		setup: func() {
			p("MOVD $iq4kvk<>(SB), R15")
			p("VLD1 (R15), [V30.B16]")
		}})
	if err := os.WriteFile("gemmk_arm64.s", out.Bytes(), 0o644); err != nil {
		panic(err)
	}
}
