//go:build ignore

// gengemmvnni writes gemmvnni_amd64.s: the avxvnni path's packed MatMul
// kernels (gemmvnni_amd64.go), YMM forms of the AVX-512 VNNI kernels for
// CPUs with AVX2 and AVX-VNNI but no AVX-512 (Intel Alder Lake and later).
// Run with go generate ./kernels/.
//
// Go's assembler knows VPDPBUSD and VPDPWSSD only in their EVEX (AVX-512)
// encodings, which fault on those CPUs even with Y registers, so vex below
// writes the VEX (AVX-VNNI) encodings as BYTE directives, each followed by
// a comment with the instruction. TestVNNIEncoding checks every one of them
// against GNU as.
package main

import (
	"bytes"
	"fmt"
	"os"
)

var out bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&out, "\t"+format+"\n", args...) }

func label(l string) { fmt.Fprintf(&out, "%s:\n", l) }

// vex writes the VEX.256.66.0F38.W0 instruction op (0x50 VPDPBUSD, 0x52
// VPDPWSSD) with Go's operand order: dst += dot(v, rm), where for VPDPBUSD
// v holds the unsigned bytes and rm the signed ones. Register forms only:
// three-byte VEX prefix C4, then R̄ X̄ B̄ m-mmmm (map 0F38 = 00010), then
// W v̄v̄v̄v̄ L pp (W0, L1 = 256 bits, pp 01 = 66), the opcode and ModRM
// (mod 11, reg = dst, rm).
func vex(op byte, rm, v, dst int) {
	names := map[byte]string{0x50: "VPDPBUSD", 0x52: "VPDPWSSD"}
	b1 := byte(0x02 | 0x40)
	if dst < 8 {
		b1 |= 0x80
	}
	if rm < 8 {
		b1 |= 0x20
	}
	b2 := byte((^v&15)<<3 | 0x04 | 0x01)
	modrm := byte(0xC0 | (dst&7)<<3 | rm&7)
	p("BYTE $0xc4; BYTE $0x%02x; BYTE $0x%02x; BYTE $0x%02x; BYTE $0x%02x // %s Y%d, Y%d, Y%d (VEX)",
		b1, b2, op, modrm, names[op], rm, v, dst)
}

func dpbusd(rm, v, dst int) { vex(0x50, rm, v, dst) }
func dpwssd(rm, v, dst int) { vex(0x52, rm, v, dst) }

// Registers (T ≤ 6 tokens): the int32 accumulators of token t are
// Y(2t) (rows 0..7) and Y(2t+1) (rows 8..15); Y12, Y13 the weight
// vectors' halves (or a scale, a sum being finished), Y14 the broadcast
// activation dword, Y15 a scale or temporary. Everything else lives in the
// frame: the f32 sums of token t at 64t(SP) (fsum), the K-quant kernels'
// int32 super-block sums at 384+64t(SP) (isum).
func acc(t, h int) int { return 2*t + h }

const (
	wLo, wHi, bc, tmp = 12, 13, 14, 15
	maxT              = 6
)

// tok is token t's activation (or prep) address at byte offset off: DI +
// t·R9 for tokens 0..2, DX + (t−3)·R9 (DX = DI + 3·R9) for tokens 3..5.
func tok(t, off int) string {
	base := "DI"
	if t >= 3 {
		base, t = "DX", t-3
	}
	return fmt.Sprintf("%d(%s)%s", off, base, []string{"", "(R9*1)", "(R9*2)"}[t])
}

// fsum and isum are token t's half h of the f32 and int32 sums in the
// frame.
func fsum(t, h int) string { return fmt.Sprintf("%d(SP)", 64*t+32*h) }
func isum(t, h int) string {
	if isumRegs {
		return fmt.Sprintf("Y%d", 6+2*t+h)
	}
	return fmt.Sprintf("%d(SP)", 64*maxT+64*t+32*h)
}

// isumRegs keeps the int32 super-block sums in Y6..Y11 instead of the
// frame (kernels of at most three tokens at a time: fewer stores, and the
// K-quant kernels measured faster so).
var isumRegs bool

// masks sets Y(lo), Y(hi) to the lane masks of rows 0..7, 8..15 from the
// row bitmask argument.
func masks(lo, hi int) {
	p("VPBROADCASTD mask+72(FP), Y%d", hi)
	p("VPAND vnniBits<>+0(SB), Y%d, Y%d", hi, lo)
	p("VPCMPEQD vnniBits<>+0(SB), Y%d, Y%d", lo, lo)
	p("VPAND vnniBits<>+32(SB), Y%d, Y%d", hi, hi)
	p("VPCMPEQD vnniBits<>+32(SB), Y%d, Y%d", hi, hi)
}

// dots sets acc(t) (after init) += Σ_j VPDPBUSD(weight vector v0+j at
// 64(v0+j)(SI), token t's dword at aoff+4j), j < nv.
func dots(T, v0, nv, aoff int, init func(t int)) {
	for t := 0; t < T; t++ {
		init(t)
	}
	for j := 0; j < nv; j++ {
		p("VMOVDQU %d(SI), Y%d", 64*(v0+j), wLo)
		p("VMOVDQU %d(SI), Y%d", 64*(v0+j)+32, wHi)
		for t := 0; t < T; t++ {
			p("VPBROADCASTD %s, Y%d", tok(t, aoff+4*j), bc)
			dpbusd(bc, wLo, acc(t, 0))
			dpbusd(bc, wHi, acc(t, 1))
		}
	}
}

func zero(t int) {
	for h := 0; h < 2; h++ {
		p("VPXOR Y%d, Y%d, Y%d", acc(t, h), acc(t, h), acc(t, h))
	}
}

// scale multiplies acc(t) by the int32 scales at off(SI) (srad: the high
// int16 of (sc, sc) pairs, sign-extended; else int32 already) and adds it
// to the token's isum (sets it when first).
func scale(T, off int, srad, first bool) {
	for h := 0; h < 2; h++ {
		sc := fmt.Sprintf("%d(SI)", off+32*h)
		if srad {
			p("VPSRAD $16, %s, Y%d", sc, tmp)
			sc = fmt.Sprintf("Y%d", tmp)
		}
		for t := 0; t < T; t++ {
			a := acc(t, h)
			if isumRegs && first {
				p("VPMULLD %s, Y%d, %s", sc, a, isum(t, h))
				continue
			}
			p("VPMULLD %s, Y%d, Y%d", sc, a, a)
			if isumRegs {
				p("VPADDD Y%d, %s, %s", a, isum(t, h), isum(t, h))
				continue
			}
			if !first {
				p("VPADDD %s, Y%d, Y%d", isum(t, h), a, a)
			}
			p("VMOVDQU Y%d, %s", a, isum(t, h))
		}
	}
}

// pairs sets acc(t) = Σ_k VPDPWSSD(int16 pairs at off+64k(SI), the
// token's bsums 2k, 2k+1), k < 8.
func pairs(T, off int) {
	for t := 0; t < T; t++ {
		zero(t)
	}
	for k := 0; k < 8; k++ {
		p("VMOVDQU %d(SI), Y%d", off+64*k, wLo)
		p("VMOVDQU %d(SI), Y%d", off+64*k+32, wHi)
		for t := 0; t < T; t++ {
			p("VPBROADCASTD %s, Y%d", tok(t, 260+4*k), bc)
			dpwssd(bc, wLo, acc(t, 0))
			dpwssd(bc, wHi, acc(t, 1))
		}
	}
}

// finish adds fl(d_w·d_a)·float(isum) to token t's f32 sums, d_w at
// doff(SI), d_a at token t's aoff, and when dminoff ≥ 0 subtracts
// fl(dmin·d_a)·float(acc(t)) (the min sums): the AVX2 and AVX-512 kernels'
// float steps (each FMA rounds once, whichever operand is the addend).
func finish(T, doff, dminoff, aoff int) {
	for h := 0; h < 2; h++ {
		for t := 0; t < T; t++ {
			p("VBROADCASTSS %s, Y%d", tok(t, aoff), bc)
			p("VMULPS %d(SI), Y%d, Y%d", doff+32*h, bc, tmp)
			f := fmt.Sprintf("Y%d", wLo)
			if isumRegs {
				f = isum(t, h)
			} else {
				p("VMOVDQU %s, %s", isum(t, h), f)
			}
			p("VCVTDQ2PS %s, %s", f, f)
			p("VFMADD213PS %s, Y%d, %s", fsum(t, h), tmp, f)
			if dminoff >= 0 {
				a := acc(t, h)
				p("VMULPS %d(SI), Y%d, Y%d", dminoff+32*h, bc, tmp)
				p("VCVTDQ2PS Y%d, Y%d", a, a)
				p("VFNMADD231PS Y%d, Y%d, %s", tmp, a, f)
			}
			p("VMOVUPS %s, %s", f, fsum(t, h))
		}
	}
}

// Super-block bodies of the K-quant layouts (gemmk.go, gemmkq2q3.go): the
// activation is Q8_K (d at 0, quants at 4, bsums at 260).
func q4k(T int) {
	for s := 0; s < 8; s++ {
		dots(T, 8*s, 8, 4+32*s, zero)
		scale(T, 4096+64*s, true, s == 0)
	}
	pairs(T, 4608)
	finish(T, 5120, 5184, 0)
}

func q6k(T int) {
	for g := 0; g < 16; g++ {
		dots(T, 4*g, 4, 4+16*g, zero)
		scale(T, 4096+64*g, true, g == 0)
	}
	pairs(T, 5120)
	for t := 0; t < T; t++ {
		for h := 0; h < 2; h++ {
			p("VPSLLD $5, Y%d, Y%d", acc(t, h), acc(t, h))
			if isumRegs {
				p("VPSUBD Y%d, %s, %s", acc(t, h), isum(t, h), isum(t, h))
				continue
			}
			p("VMOVDQU %s, Y%d", isum(t, h), wLo)
			p("VPSUBD Y%d, Y%d, Y%d", acc(t, h), wLo, wLo)
			p("VMOVDQU Y%d, %s", wLo, isum(t, h))
		}
	}
	finish(T, 5632, -1, 0)
}

func q2k(T int) {
	for g := 0; g < 16; g++ {
		dots(T, 4*g, 4, 4+16*g, zero)
		scale(T, 4096+64*g, true, g == 0)
	}
	pairs(T, 5120)
	finish(T, 5632, 5696, 0)
}

// iq4xs is the byte layout of gemmiq4xs8_amd64.go against its token-major
// prep: sub-block s's weights at 576s, scales at 576s+512, d at 4608; the
// prep's quants at 36s, −128·Σa at 36s+32, d_a at 288.
func iq4xs(T int) {
	for s := 0; s < 8; s++ {
		dots(T, 9*s, 8, 36*s, func(t int) {
			p("VPBROADCASTD %s, Y%d", tok(t, 36*s+32), acc(t, 0))
			p("VMOVDQA Y%d, Y%d", acc(t, 0), acc(t, 1))
		})
		scale(T, 576*s+512, false, s == 0)
	}
	finish(T, 4608, -1, 288)
}

// kind is one kernel: its body per block (T tokens), packed bytes and
// activation (or prep) bytes per block, and whether it prefetches.
type kind struct {
	name, doc    string
	blockB, actB int
	prepByToken  bool // DI walks a token-major prep (a unused)
	pf           bool
	body         func(T int)
	groups       []int // token counts per step, largest first
	isumRegs     bool  // int32 sums in registers for groups of ≤ 3 tokens
}

// The token counts the kernels step by, largest first: the prefetching
// kernels' are counted by gemmvnni_amd64.go's vnniGroups. The K-quant
// kernels take three (their int32 sums in registers): six, with the sums in
// the frame, measured 0.93–1.39× avx2 against three's 1.04–1.40× on Zen 5
// (BenchmarkGemmVNNIAlt, a loaded machine).
var (
	groups6 = []int{6, 3, 2, 1}
	groups3 = []int{3, 2, 1}
)

// pf3 prefetches three lines from R8 and advances it by pfstep (none when
// pfstep is zero).
func pf3(l string) {
	p("MOVQ pfstep+96(FP), R10")
	p("TESTQ R10, R10")
	p("JZ %s", l)
	p("PREFETCHT0 (R8)")
	p("PREFETCHT0 64(R8)")
	p("PREFETCHT0 128(R8)")
	p("ADDQ R10, R8")
	label(l)
}

// q40 is the 32-element layout's block (gemm.go: eight vectors, the 16 d_w
// as f32 at 512) against Q8_0 activations (quants at 2) with the prep at
// R11 (token t's −off·Σa at 8t, d_a at 8t+4): acc = −off·Σa + Σ VPDPBUSD,
// then f += d_a·(d_w·float(acc)), gemmKernelQ4PFAVX2's float steps.
func q40(T int) {
	dots(T, 0, 8, 2, func(t int) {
		p("VPBROADCASTD %d(R11), Y%d", 8*t, acc(t, 0))
		p("VMOVDQA Y%d, Y%d", acc(t, 0), acc(t, 1))
	})
	for t := 0; t < T; t++ {
		for h := 0; h < 2; h++ {
			a := acc(t, h)
			p("VCVTDQ2PS Y%d, Y%d", a, a)
			p("VMULPS %d(SI), Y%d, Y%d", 512+32*h, a, a)
		}
		p("VBROADCASTSS %d(R11), Y%d", 8*t+4, bc)
		for h := 0; h < 2; h++ {
			p("VFMADD213PS %s, Y%d, Y%d", fsum(t, h), bc, acc(t, h))
			p("VMOVUPS Y%d, %s", acc(t, h), fsum(t, h))
		}
	}
}

func kernel(k kind) {
	n := k.name
	args := "nblk int, pw *byte, a *byte, as int, prep *byte, pstride int, y *float32, ys int, ntok int, mask int, first int"
	argB := 88
	if k.pf {
		args += ", pf *byte, pfstep int"
		argB = 104
	}
	fmt.Fprintf(&out, "\n// func %s(%s)\n//\n", n, args)
	for _, l := range bytes.Split([]byte(k.doc), []byte("\n")) {
		fmt.Fprintf(&out, "// %s\n", l)
	}
	// Not NOSPLIT: the frame (f32 and int32 sums of six tokens) is too
	// close to the linker's nosplit limit.
	fmt.Fprintf(&out, "TEXT ·%s(SB), 0, $%d-%d\n", n, 2*64*maxT, argB)
	if k.prepByToken {
		p("MOVQ prep+32(FP), R12")
		p("MOVQ pstride+40(FP), R9")
	} else {
		p("MOVQ a+16(FP), R12")
		p("MOVQ as+24(FP), R9")
		p("MOVQ prep+32(FP), R13")
	}
	p("MOVQ y+48(FP), R14")
	p("MOVQ ys+56(FP), BX")
	p("MOVQ ntok+64(FP), AX")
	if k.pf {
		p("MOVQ pf+88(FP), R8")
	}
	groups := k.groups
	for i, T := range groups {
		isumRegs = k.isumRegs && T <= 3
		pre := fmt.Sprintf("%s_%d", n, T)
		next := n + "_done"
		if i+1 < len(groups) {
			next = fmt.Sprintf("%s_%d", n, groups[i+1])
		}
		label(pre)
		p("CMPQ AX, $%d", T)
		p("JLT %s", next)
		// The f32 sums: y's (masked: lanes ≥ nr read as zero), or zero.
		p("MOVQ first+80(FP), DX")
		p("TESTQ DX, DX")
		p("JNZ %s_zero", pre)
		masks(wLo, wHi)
		p("MOVQ R14, DX")
		for t := 0; t < T; t++ {
			if t > 0 {
				p("ADDQ BX, DX")
			}
			for h := 0; h < 2; h++ {
				p("VMASKMOVPS %d(DX), Y%d, Y%d", 32*h, []int{wLo, wHi}[h], bc)
				p("VMOVUPS Y%d, %s", bc, fsum(t, h))
			}
		}
		p("JMP %s_start", pre)
		label(pre + "_zero")
		p("VXORPS Y%d, Y%d, Y%d", bc, bc, bc)
		for t := 0; t < T; t++ {
			for h := 0; h < 2; h++ {
				p("VMOVUPS Y%d, %s", bc, fsum(t, h))
			}
		}
		label(pre + "_start")
		p("MOVQ nblk+0(FP), CX")
		p("MOVQ pw+8(FP), SI")
		p("MOVQ R12, DI")
		if T > 3 {
			p("LEAQ (R12)(R9*2), DX")
			p("ADDQ R9, DX")
		}
		if !k.prepByToken {
			p("MOVQ R13, R11")
		}
		p("TESTQ CX, CX")
		p("JZ %s_store", pre)
		label(pre + "_loop")
		if k.pf {
			pf3(pre + "_pf")
		}
		k.body(T)
		p("ADDQ $%d, SI", k.blockB)
		p("ADDQ $%d, DI", k.actB)
		if T > 3 {
			p("ADDQ $%d, DX", k.actB)
		}
		if !k.prepByToken {
			p("ADDQ pstride+40(FP), R11")
		}
		p("DECQ CX")
		p("JNZ %s_loop", pre)
		label(pre + "_store")
		masks(wLo, wHi)
		p("MOVQ R14, DX")
		for t := 0; t < T; t++ {
			if t > 0 {
				p("ADDQ BX, DX")
			}
			for h := 0; h < 2; h++ {
				p("VMOVUPS %s, Y%d", fsum(t, h), bc)
				p("VMASKMOVPS Y%d, Y%d, %d(DX)", bc, []int{wLo, wHi}[h], 32*h)
			}
		}
		p("LEAQ (DX)(BX*1), R14")
		switch T {
		case 1:
			p("ADDQ R9, R12")
		case 3, 6:
			p("LEAQ (R9)(R9*2), DX")
			if T == 6 {
				p("ADDQ DX, DX")
			}
			p("ADDQ DX, R12")
		default:
			p("LEAQ (R12)(R9*%d), R12", T)
		}
		if !k.prepByToken {
			p("ADDQ $%d, R13", 8*T)
		}
		p("SUBQ $%d, AX", T)
		p("JMP %s", pre)
	}
	label(n + "_done")
	p("VZEROUPPER")
	p("RET")
}

const kdoc = `The gemmKernel contract for the %s super-block layout (prep unused),
bit-identical to %s: the same exact int32 sums (VPDPBUSD of the
unsigned quants with the signed activation bytes cannot overflow: each
sub-block's sum is below 2^16 in magnitude) and the same float steps.
Three tokens at a time (int32 sums in Y6..Y11, f32 sums in the frame),
then two, then one.`

func main() {
	out.WriteString(`// Code generated by gengemmvnni.go; DO NOT EDIT.

#include "textflag.h"

// The avxvnni path's packed MatMul kernels (gemmvnni_amd64.go): the
// AVX-512 VNNI kernels' arithmetic on YMM registers with the VEX
// (AVX-VNNI) VPDPBUSD / VPDPWSSD, for CPUs without AVX-512. Go's assembler
// only encodes their EVEX forms, so each is written as BYTE directives with
// the instruction in a comment (gengemmvnni.go; TestVNNIEncoding checks
// the bytes against GNU as). Weights are the AVX2 packed layouts, 16 rows
// as two YMM halves (rows 0..7, 8..15).

// vnniBits: dword lane r = 1<<r (rows 0..7), then 1<<(8+r) (rows 8..15).
DATA vnniBits<>+0(SB)/4, $0x1
DATA vnniBits<>+4(SB)/4, $0x2
DATA vnniBits<>+8(SB)/4, $0x4
DATA vnniBits<>+12(SB)/4, $0x8
DATA vnniBits<>+16(SB)/4, $0x10
DATA vnniBits<>+20(SB)/4, $0x20
DATA vnniBits<>+24(SB)/4, $0x40
DATA vnniBits<>+28(SB)/4, $0x80
DATA vnniBits<>+32(SB)/4, $0x100
DATA vnniBits<>+36(SB)/4, $0x200
DATA vnniBits<>+40(SB)/4, $0x400
DATA vnniBits<>+44(SB)/4, $0x800
DATA vnniBits<>+48(SB)/4, $0x1000
DATA vnniBits<>+52(SB)/4, $0x2000
DATA vnniBits<>+56(SB)/4, $0x4000
DATA vnniBits<>+60(SB)/4, $0x8000
GLOBL vnniBits<>(SB), RODATA|NOPTR, $64
`)
	kernel(kind{
		name: "gemmKernelQ40VNNI",
		doc: `gemmKernelQ4PFAVX2's contract for gemm.go's 32-element layout (Q4_0
with off 8, Q8_0 with off 128), bit-identical to it for Q4_0: the
accumulator starts at the prep's −off·Σa and VPDPBUSD adds Σ w·a exactly
(|w·a| ≤ 255·128 per product, 32 per block), then the same float steps.
Six tokens at a time, then three, two, one.
Prefetches three lines from pf on at every block iteration, advancing by
pfstep (0: none).`,
		blockB: 576, actB: 34, pf: true, body: q40, groups: groups6,
	})
	kernel(kind{name: "gemmKernelQ4KVNNI", doc: fmt.Sprintf(kdoc, "Q4_K (and Q5_K)", "gemmKernelQ4KAVX512"),
		blockB: 5248, actB: 292, body: q4k, groups: groups3, isumRegs: true})
	kernel(kind{name: "gemmKernelQ6KVNNI", doc: fmt.Sprintf(kdoc, "Q6_K (and Q3_K)", "gemmKernelQ6KAVX512"),
		blockB: 5696, actB: 292, body: q6k, groups: groups3, isumRegs: true})
	kernel(kind{name: "gemmKernelQ2KVNNI", doc: fmt.Sprintf(kdoc, "Q2_K", "gemmKernelQ2KAVX512"),
		blockB: 5760, actB: 292, body: q2k, groups: groups3, isumRegs: true})
	kernel(kind{
		name: "gemmKernelIQ4XS8VNNI",
		doc: `gemmKernelIQ4XS8AVX512's contract (token t's prep block i at prep +
t·pstride + 296·i, a unused), bit-identical to it (same int32 sums, same
float steps). Six tokens at a time, then three, two, one. Prefetches
three lines from pf on at every super-block iteration, advancing by
pfstep (0: none).`,
		blockB: 4672, actB: 296, prepByToken: true, pf: true, body: iq4xs, groups: groups6, isumRegs: true,
	})
	if err := os.WriteFile("gemmvnni_amd64.s", out.Bytes(), 0o644); err != nil {
		panic(err)
	}
}
